// swiglu.cu — the baseline activation of the Qwen3-32B MLP benchmark, compiled on its own to a cubin
// (nvcc -cubin -arch sm_90a) and loaded by bench_qwen_mlp through the driver API. (Random fill,
// the per-element checks and the timing spin are bench/common/bench_util.cu's.)
//
//   swiglu_bf16       the baseline activation after the cuBLASLt GEMM: GU [M, 2I] bf16 -> H [M, I]
//                     bf16, H = silu(GU[:, :I]) * GU[:, I:], fp32 math, 16-byte loads and stores
//   swiglu_ref_f32    the same on fp32 data, for the fp32 reference H32
//
// Every kernel uses a grid-stride loop, so the host picks any grid. All entry points have C
// linkage so the host finds them by name.
#include <cuda_bf16.h>

#include <cstdint>

namespace {

// silu(g) * u in fp32. expf (not __expf): the activation is memory bound, accuracy is free.
__device__ __forceinline__ float swiglu(float g, float u) { return g / (1.f + expf(-g)) * u; }

}  // namespace

// GU [M, 2I] bf16 (gate columns [0, I), up columns [I, 2I)) -> H [M, I] bf16. Each step of a
// thread handles 8 consecutive columns: one 16-byte load of gate, one of up, one 16-byte store.
// Requires I % 8 == 0 and 16-byte aligned gu and h (the host checks I; cuMemAlloc aligns).
extern "C" __global__ void swiglu_bf16(const __nv_bfloat16* __restrict__ gu, __nv_bfloat16* __restrict__ h, unsigned M,
                                       unsigned I) {
  const unsigned vecs_per_row = I / 8;
  const size_t total = size_t(M) * vecs_per_row;
  for (size_t v = size_t(blockIdx.x) * blockDim.x + threadIdx.x; v < total; v += size_t(gridDim.x) * blockDim.x) {
    const size_t row = v / vecs_per_row;
    const size_t col = (v % vecs_per_row) * 8;
    const __nv_bfloat16* g_src = gu + row * 2 * I + col;
    uint4 gv = *reinterpret_cast<const uint4*>(g_src);
    uint4 uv = *reinterpret_cast<const uint4*>(g_src + I);
    const __nv_bfloat162* g2 = reinterpret_cast<const __nv_bfloat162*>(&gv);
    const __nv_bfloat162* u2 = reinterpret_cast<const __nv_bfloat162*>(&uv);
    uint4 hv;
    __nv_bfloat162* h2 = reinterpret_cast<__nv_bfloat162*>(&hv);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 g = __bfloat1622float2(g2[j]);
      const float2 u = __bfloat1622float2(u2[j]);
      h2[j] = __floats2bfloat162_rn(swiglu(g.x, u.x), swiglu(g.y, u.y));
    }
    *reinterpret_cast<uint4*>(h + row * I + col) = hv;
  }
}

// The fp32 reference: GU32 [M, 2I] fp32 -> H32 [M, I] fp32, 4 columns per step (I % 4 == 0).
extern "C" __global__ void swiglu_ref_f32(const float* __restrict__ gu, float* __restrict__ h, unsigned M, unsigned I) {
  const unsigned vecs_per_row = I / 4;
  const size_t total = size_t(M) * vecs_per_row;
  for (size_t v = size_t(blockIdx.x) * blockDim.x + threadIdx.x; v < total; v += size_t(gridDim.x) * blockDim.x) {
    const size_t row = v / vecs_per_row;
    const size_t col = (v % vecs_per_row) * 4;
    const float4 g = *reinterpret_cast<const float4*>(gu + row * 2 * I + col);
    const float4 u = *reinterpret_cast<const float4*>(gu + row * 2 * I + I + col);
    *reinterpret_cast<float4*>(h + row * I + col) =
        make_float4(swiglu(g.x, u.x), swiglu(g.y, u.y), swiglu(g.z, u.z), swiglu(g.w, u.w));
  }
}
