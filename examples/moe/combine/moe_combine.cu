// moe_combine — combine-team. Adds each expert row's down-projection output into its token's
// result row: y[token, n0 + c] += tile[r, c] (fp32 vector reductions in L2, red.global.add.v4.f32).
// A token's 8 expert rows land in different tiles, so their sum is order-independent up to fp32
// rounding. Padding rows (token -1) are skipped. y must be zero before the kernel (the host
// clears it as part of the layer).
//
// Consumer of "acc" (bf16 [rows x cols] from the down-projection main loop, any shape: it reads the
// stage shape from the port); the tile's column origin is t.n * cols.
#include "pipelink/device.cuh"

PL_FACT_DECL(unsigned, tile_m);

namespace moe_combine {
enum : unsigned { kParamY = 0, kParamRowToken = 1, kParamHidden = 2 };
enum : unsigned { kPortAcc = 0 };
__device__ __forceinline__ void red_add4(float* p, float a, float b, float c, float d) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}
__device__ __forceinline__ float lo(unsigned v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float hi(unsigned v) { return __uint_as_float(v & 0xFFFF0000u); }
}  // namespace moe_combine

// What this code compiles in, checked against contract.toml by the linker.
PL_WARPS(moe_combine_main, 2);
PL_REGISTERS(moe_combine_main, 40);
PL_ARRIVE(moe_combine_main, out, warp);

PL_COMPONENT(moe_combine_main) {
  using namespace moe_combine;
  float* y = ctx.ptr<float>(kParamY);
  const int* row_token = ctx.ptr<const int>(kParamRowToken);
  const unsigned hidden = ctx.u32(kParamHidden);
  pl::PipeReader r(ctx, kPortAcc);
  const unsigned rows = r.p->rows[0], cols = r.p->cols[0], chunks = cols / 8;
  const unsigned tile_m = PL_FACT(tile_m);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    r.wait();
    const uint4* src = r.tensor<const uint4>(ctx, 0);
    for (unsigned v = ctx.thread(); v < rows * chunks; v += ctx.threads()) {
      const unsigned row = v / chunks, c = v % chunks;
      const int token = row_token[t.m * tile_m + row];
      if (token < 0) continue;
      const uint4 x = src[v];
      float* dst = y + size_t(token) * hidden + t.n * cols + c * 8;
      red_add4(dst, lo(x.x), hi(x.x), lo(x.y), hi(x.y));
      red_add4(dst + 4, lo(x.z), hi(x.z), lo(x.w), hi(x.w));
    }
    __syncwarp();
    if ((threadIdx.x & 31u) == 0) r.release();
    r.advance();
  }
}
