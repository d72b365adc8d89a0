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
#include "tile_writer.contract.h"  // pipelink header contract.toml: names, pipe operations, records

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);

PL_COMPONENT(tile_writer_main) {
  namespace P = pl_contract::tile_writer_main;
  float* C = P::param::C::get<float>(ctx);
  const unsigned M = P::param::M::get(ctx), N = P::param::N::get(ctx);
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n);
  const unsigned vec_per_row = tile_n / 4, vecs = tile_m * vec_per_row;
  const bool aligned = (N & 3u) == 0;

  P::In_c r(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    r.wait();
    const float4* src = r.c<float4>(ctx);
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
    r.release(ctx);  // arrive = "warp": __syncwarp() (all lanes read the stage), then lane 0
    r.advance();
  }
}
