// Test component (GPU transfer test, session 12): one thread TMA-loads tile t of an f32 input
// [M, N] into the "t" pipe, in the swizzle its contract declares (the host builds in_map with the
// same swizzle: 64 or 32 bytes, box = the tile). The linker's generated transfer then reads the
// stage with its own swizzle helper (pl_swz64 / pl_swz32) into the sink's layout, so the test checks
// the generated code against what TMA actually wrote, not against a formula of the test's own.
#include "tma_source.contract.h"  // pipelink header tma_source_64.toml

PL_FACT_DECL(unsigned, rows);
PL_FACT_DECL(unsigned, cols);

PL_PROVIDE_LINKED(tma_source_main, rows);
PL_PROVIDE_LINKED(tma_source_main, cols);

PL_COMPONENT(tma_source_main) {
  namespace C = pl_contract::tma_source_main;
  if (threadIdx.x % 32u != 0) return;
  const pl::TensorMap* map = C::param::in_map::get(ctx);
  pl::prefetch_tmap(map);
  C::Out_t w(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    w.acquire();
    w.expect_tx();
    pl::tma_load_2d(w.x(ctx), map, w.full_bar(), static_cast<int>(t.n * PL_FACT(cols)), static_cast<int>(t.m * PL_FACT(rows)));
    w.advance();
  }
}
