// mlp_math.cuh — gemm-team. The arithmetic the fused decode MLP's two main loops (mlp_mma.cu, two
// rings; mlp_umma.cu, one ring) share, compiled into each object (header only, no symbols): the
// SwiGLU of a tile's gate/up accumulators into wgmma A fragments, and the down partials' addition
// into y. Shapes: tile 64 x 64 (FFN columns), down stages of 128 output columns.
#pragma once

namespace mlp_math {
constexpr unsigned kTileN = 64, kDnN = 128;
constexpr unsigned kAcc = 2 * kTileN / 2;  // m64n128 f32 accumulators per thread (gate | up): 64
constexpr unsigned kDAcc = kDnN / 2;       // m64n128 down accumulators per thread: 64

__device__ __forceinline__ float bf16_round(float v) {
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(v));
  return __uint_as_float(static_cast<unsigned>(r) << 16);
}
__device__ __forceinline__ unsigned pack(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ float silu_mul(float g, float u) { return __fdividef(g, 1.f + __expf(-g)) * u; }
__device__ __forceinline__ void red_add2(float* p, float x, float y) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(x), "f"(y) : "memory");
}

// H = bf16(silu(bf16(G)) * bf16(U)) (fp32 in between: the arithmetic of swiglu_epilogue), packed
// two per register in the layout of a wgmma A operand: the accumulator of an m64nN wgmma holds,
// per 8-column group j, rows g and g + 8 (g = 16 warp + lane / 4) at columns 8 j + 2 (lane % 4) +
// {0, 1}, and an m64k16 A fragment holds the same rows at columns 2 (lane % 4) + {0, 1} and + 8:
// groups 2 s and 2 s + 1 make k-step s.
__device__ __forceinline__ void swiglu_fragments(const float (&acc)[kAcc], unsigned (&h)[kTileN / 16][4]) {
#pragma unroll
  for (unsigned s = 0; s < kTileN / 16; ++s) {
#pragma unroll
    for (unsigned q = 0; q < 2; ++q) {     // group 2s + q
#pragma unroll
      for (unsigned hh = 0; hh < 2; ++hh) {  // row g (+8 hh)
        const unsigned j = 4u * (2u * s + q) + 2u * hh;
        const float h0 = silu_mul(bf16_round(acc[j]), bf16_round(acc[kAcc / 2 + j]));
        const float h1 = silu_mul(bf16_round(acc[j + 1]), bf16_round(acc[kAcc / 2 + j + 1]));
        h[s][2u * q + hh] = pack(h0, h1);
      }
    }
  }
}

// y[row, 128 c + column] += the down stage's f32 partial d, for this thread's rows r0, r0 + 8 that
// are below M (col2 = 2 (lane % 4): the thread's column pair within each 8-column group).
__device__ __forceinline__ void add_down_partial(float* y, const float (&d)[kDAcc], unsigned r0, unsigned M, unsigned hidden,
                                                 unsigned c, unsigned col2) {
#pragma unroll
  for (unsigned hh = 0; hh < 2; ++hh) {
    const unsigned row = r0 + 8u * hh;
    if (row < M) {
      float* out = y + static_cast<unsigned long long>(row) * hidden + c * kDnN + col2;
#pragma unroll
      for (unsigned j = 0; j < kDAcc / 4; ++j) red_add2(out + 8u * j, d[4u * j + 2u * hh], d[4u * j + 2u * hh + 1u]);
    }
  }
}
}  // namespace mlp_math
