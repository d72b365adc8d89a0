// Test component (GPU transfer test): one warp writes tile t's element (r, c) = t.m * 1e6 +
// t.n * 1e4 + r * 100 + c into the "t" pipe in row-major order, then commits the stage.
#include "tile_source.contract.h"  // pipelink header source.toml: names, pipe operations, records

PL_FACT_DECL(unsigned, rows);
PL_FACT_DECL(unsigned, cols);

PL_PROVIDE_LINKED(tile_source_main, rows);
PL_PROVIDE_LINKED(tile_source_main, cols);

PL_COMPONENT(tile_source_main) {
  const unsigned rows = PL_FACT(rows), cols = PL_FACT(cols), lane = threadIdx.x & 31u;
  pl_contract::tile_source_main::Out_t w(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    w.acquire();
    float* x = w.x(ctx);
    for (unsigned e = lane; e < rows * cols; e += 32) {
      const unsigned r = e / cols, c = e % cols;
      x[r * cols + c] = t.m * 1e6f + t.n * 1e4f + r * 100.f + c;
    }
    w.commit(ctx);  // arrive = "one", one warp: fence, __syncwarp(), lane 0
    w.advance();
  }
}
