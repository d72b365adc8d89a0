// sk_red — combine-team. Adds the split-K GEMM's partial tiles into an f32 output:
// y[m, t.n cols + c] += tile[m, c] for the rows m < M, with f32 vector reductions in L2
// (red.global.add.v4.f32). The K chunks of one column block land in different tiles, so the sum
// is order-independent up to f32 rounding. y must be zero before the kernel; in the decode step
// the kernel that reads y zeroes it (examples/llama_decode/rest/rest_kernels.cu).
//
// Consumer of "acc" (f32 [rows x cols] from the main loop, any shape: it reads the stage shape
// from the port); the tile's column origin is t.n * cols.
//
// Assumes (the host's side, trapped in a PL_CHECKED build): M <= rows (the rows past a stage's
// are not added), N % 4 == 0 and y 16-byte aligned (red.global.add.v4.f32 writes 16-byte vectors).
#include "sk_red.contract.h"  // pipelink header sk_red.toml: names, pipe operations, records

namespace sk_red {
__device__ __forceinline__ void red_add4(float* p, float4 v) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}
}  // namespace sk_red

PL_COMPONENT(sk_red_main) {
  using namespace sk_red;
  namespace C = pl_contract::sk_red_main;
  float* y = C::param::y::get<float>(ctx);
  const unsigned M = C::param::M::get(ctx), N = C::param::N::get(ctx);
  C::In_out r(ctx);  // the "out" pipe, bound to the main loop's "acc" by --connect out=acc
  const unsigned rows = r.rows(C::In_out::tensor::tile::index), cols = r.cols(C::In_out::tensor::tile::index);
  const unsigned chunks = cols / 4, valid = M < rows ? M : rows;
#ifdef PL_CHECKED
  // What the host must guarantee (sk_red.toml): every row of y in one stage, whole 16-byte vectors.
  if (M > rows || N % 4u != 0 || cols % 4u != 0 || (reinterpret_cast<unsigned long long>(y) & 15u) != 0) {
    if (ctx.thread() == 0)
      printf("sk_red: M = %u rows for %u-row stages, N = %u, y = %p: needs M <= rows, N %% 4 == 0, y 16-byte aligned\n",
             M, rows, N, static_cast<void*>(y));
    __trap();
  }
#endif
  const unsigned n = ctx.threads(), tid = ctx.thread();
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    r.wait();
    const float4* src = r.tile<const float4>(ctx);
    const unsigned col0 = t.n * cols;
    for (unsigned e = tid; e < valid * chunks; e += n) {
      const unsigned m = e / chunks, c = e % chunks;
      if (col0 + 4 * c < N) red_add4(y + size_t(m) * N + col0 + 4 * c, src[m * chunks + c]);
    }
    r.release(ctx);  // arrive = "warp": __syncwarp(), lane 0
    r.advance();
  }
}
