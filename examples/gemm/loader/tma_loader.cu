// tma_loader — io-team.
//
// Producer of the GEMM's "ab" pipe: for every output tile of the kernel's tile sequence it
// streams the K dimension in tile_k-wide slices, loading an A slice [tile_m x tile_k] and a
// B slice [tile_n x tile_k] (both bf16, K contiguous) into one pipe stage with two 2-D TMA loads
// that complete on the stage's "full" mbarrier (transaction bytes announced by expect_tx()).
//
// Assumes: params a_map / b_map are 2-D tensor maps built by the host with globalDim {K, M} /
// {K, N} and box {tile_k, tile_m} / {tile_k, tile_n}, no swizzle; K % tile_k == 0 (the host
// checks it). Only lane 0 of the single warp works; the other lanes return at once.
// Names, accessors and records come from tma_loader.contract.h, generated from contract.toml
// (pipelink header; scripts/regen_headers.sh): PL_WARPS, PL_REGISTERS and PL_ARRIVE(ab, one)
// are the contract's, so the code cannot restate them wrongly.
#include "tma_loader.contract.h"

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);

// What this code compiles in beyond the header's records, checked against contract.toml.
PL_PROVIDE_LINKED(tma_loader_main, stages);  // the ring's depth comes from the slots
PL_COPIES(tma_loader_main, a_map, 1);  // one box each per stage (checked against the contract's boxes)
PL_COPIES(tma_loader_main, b_map, 1);

PL_COMPONENT(tma_loader_main) {
  namespace C = pl_contract::tma_loader_main;
  if ((threadIdx.x & 31u) != 0) return;  // one elected thread issues every TMA

  const pl::TensorMap* a_map = C::param::a_map::get(ctx);
  const pl::TensorMap* b_map = C::param::b_map::get(ctx);
  pl::prefetch_tmap(a_map);
  pl::prefetch_tmap(b_map);

  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  const unsigned k_tiles = C::param::K::get(ctx) / tile_k;

  C::Out_ab w(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const int row_a = static_cast<int>(t.m * tile_m);
    const int row_b = static_cast<int>(t.n * tile_n);
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      w.acquire();    // wait until every consumer released this stage
      w.expect_tx();  // arrive once, announcing this stage's bytes
      const int k0 = static_cast<int>(kt * tile_k);
      pl::tma_load_2d(w.a<unsigned char>(ctx), a_map, w.full_bar(), k0, row_a);
      pl::tma_load_2d(w.b<unsigned char>(ctx), b_map, w.full_bar(), k0, row_b);
      w.advance();
    }
  }
}
