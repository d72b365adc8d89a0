// Test component (GPU transfer test): one warp writes tile t's element (r, c) = t.m * 1e6 +
// t.n * 1e4 + r * 100 + c into the "t" pipe in row-major order, then commits the stage.
#include "pipelink/device.cuh"

PL_FACT_DECL(unsigned, rows);
PL_FACT_DECL(unsigned, cols);

PL_PROVIDE_LINKED(tile_source_main, rows);
PL_PROVIDE_LINKED(tile_source_main, cols);
PL_WARPS(tile_source_main, 1);
PL_ARRIVE(tile_source_main, t, one);

PL_COMPONENT(tile_source_main) {
  const unsigned rows = PL_FACT(rows), cols = PL_FACT(cols), lane = threadIdx.x & 31u;
  pl::PipeWriter w(ctx, 0);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    w.acquire();
    float* x = w.tensor<float>(ctx, 0);
    for (unsigned e = lane; e < rows * cols; e += 32) {
      const unsigned r = e / cols, c = e % cols;
      x[r * cols + c] = t.m * 1e6f + t.n * 1e4f + r * 100.f + c;
    }
    __syncwarp();
    if (lane == 0) w.commit();
    w.advance();
  }
}
