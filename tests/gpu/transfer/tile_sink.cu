// Test component (GPU transfer test): reads each tile from the "t" pipe in the layout its
// contract declares (column-major, 128-byte swizzle) and stores it row-major to `out`.
#include "pipelink/device.cuh"

PL_FACT_DECL(unsigned, rows);
PL_FACT_DECL(unsigned, cols);

PL_WARPS(tile_sink_main, 2);
PL_ARRIVE(tile_sink_main, t, warp);

PL_COMPONENT(tile_sink_main) {
  const unsigned rows = PL_FACT(rows), cols = PL_FACT(cols);
  float* out = ctx.ptr<float>(0);
  const unsigned N = ctx.u32(2);
  pl::PipeReader r(ctx, 0);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    r.wait();
    const unsigned char* x = r.tensor<unsigned char>(ctx, 0);
    for (unsigned e = ctx.thread(); e < rows * cols; e += ctx.threads()) {
      const unsigned row = e / cols, c = e % cols;
      unsigned byte = (c * rows + row) * 4u;  // column-major
      byte ^= ((byte >> 7) & 7u) << 4;        // 128B swizzle: 16-byte chunk ^= 128-byte row % 8
      out[(t.m * rows + row) * N + t.n * cols + c] = *reinterpret_cast<const float*>(x + byte);
    }
    __syncwarp();
    if ((threadIdx.x & 31u) == 0) r.release();
    r.advance();
  }
}
