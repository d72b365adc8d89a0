// tile_writer — epilogue-team.
//
// Consumer of the "c" pipe: for every output tile it waits for a finished [tile_m x tile_n] fp32
// stage (row-major, no swizzle) and copies it to C (fp32, row-major, ldc = N) at rows
// t.m * tile_m + r, columns t.n * tile_n + c. All threads of the instance copy float4 by float4,
// a warp covering consecutive 16-byte chunks of a row (coalesced global stores, conflict-free
// shared loads). Rows / columns are bounds-checked against M / N; when N % 4 != 0 (rows not
// 16-byte aligned) it falls back to scalar stores. Each warp releases the stage once (arrive =
// "warp").
//
// Assumes: tile_n % 4 == 0 and C is 16-byte aligned.
#include "pipelink/device.cuh"

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);

// Names live in a namespace of their own: the monolithic control compiles every component
// source as one program.
namespace tile_writer {
enum : unsigned { kParamC = 0, kParamM = 1, kParamN = 2 };  // [[param]] order
enum : unsigned { kPortC = 0 };                             // [[port]] order
enum : unsigned { kTensorC = 0 };
}  // namespace tile_writer

// What this code compiles in, checked against contract.toml by the linker.
PL_WARPS(tile_writer_main, 2);
PL_REGISTERS(tile_writer_main, 40);
PL_ARRIVE(tile_writer_main, c, warp);

PL_COMPONENT(tile_writer_main) {
  using namespace tile_writer;
  float* C = ctx.ptr<float>(kParamC);
  const unsigned M = ctx.u32(kParamM), N = ctx.u32(kParamN);
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n);
  const unsigned vec_per_row = tile_n / 4, vecs = tile_m * vec_per_row;
  const bool aligned = (N & 3u) == 0;

  pl::PipeReader r(ctx, kPortC);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    r.wait();
    const float4* src = r.tensor<float4>(ctx, kTensorC);
    const unsigned row0 = t.m * tile_m, col0 = t.n * tile_n;
#pragma unroll 4
    for (unsigned v = ctx.thread(); v < vecs; v += ctx.threads()) {
      const unsigned row = row0 + v / vec_per_row;
      const unsigned col = col0 + (v % vec_per_row) * 4;
      if (row >= M || col >= N) continue;
      const float4 x = src[v];
      float* dst = C + static_cast<unsigned long long>(row) * N + col;
      if (aligned && col + 4 <= N) {
        *reinterpret_cast<float4*>(dst) = x;
      } else {
        dst[0] = x.x;
        if (col + 1 < N) dst[1] = x.y;
        if (col + 2 < N) dst[2] = x.z;
        if (col + 3 < N) dst[3] = x.w;
      }
    }
    __syncwarp();                                 // all lanes of this warp read the stage
    if ((threadIdx.x & 31u) == 0) r.release();    // arrive = "warp"
    r.advance();
  }
}
