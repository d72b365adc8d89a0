// swiglu.cu — the helper kernels of the Qwen3-32B MLP benchmark, compiled on their own to a cubin
// (nvcc -cubin -arch sm_90a) and loaded by bench_qwen_mlp through the driver API.
//
//   swiglu_bf16       the baseline activation after the cuBLASLt GEMM: GU [M, 2I] bf16 -> H [M, I]
//                     bf16, H = silu(GU[:, :I]) * GU[:, I:], fp32 math, 16-byte loads and stores
//   swiglu_ref_f32    the same on fp32 data, for the fp32 reference H32
//   fill_random_bf16  N(0,1) * scale from a counter-based hash (no curand): inputs made on the GPU
//   compare_bf16_f32  sum (out-ref)^2, sum ref^2, max |out-ref| and the NaN count of a bf16 output
//                     against an fp32 reference (NaN = unwritten: outputs are poisoned with 0xFF)
//   gpu_spin          keeps the stream busy for a while, so that the host enqueues a timing round
//                     ahead of the GPU and no launch latency falls between a run's events
//
// Every kernel uses a grid-stride loop, so the host picks any grid. All entry points have C
// linkage so the host finds them by name.
#include <cuda_bf16.h>

#include <cstdint>

namespace {

// silu(g) * u in fp32. expf (not __expf): the activation is memory bound, accuracy is free.
__device__ __forceinline__ float swiglu(float g, float u) { return g / (1.f + expf(-g)) * u; }

// splitmix64: a counter-based generator, element i of stream `seed` is a pure function of both.
__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

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

// p[i] = bf16(scale * z_i), z_i ~ N(0,1) by Box-Muller on two 24-bit uniforms of mix64(seed, i).
extern "C" __global__ void fill_random_bf16(__nv_bfloat16* p, unsigned long long n, unsigned long long seed, float scale) {
  const unsigned long long key = mix64(seed);
  for (unsigned long long i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const unsigned long long r = mix64(key ^ (i * 0xD1B54A32D192ED03ull));
    const float u1 = (float((r >> 40) & 0xFFFFFF) + 1.f) * (1.f / 16777216.f);  // (0, 1]: log is finite
    const float u2 = float(r & 0xFFFFFF) * (1.f / 16777216.f);                 // [0, 1)
    const float z = sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
    p[i] = __float2bfloat16_rn(scale * z);
  }
}

// Accumulates over out[0..n) (bf16) against ref[0..n) (fp32):
//   sums[0] += sum (out-ref)^2 and sums[1] += sum ref^2 over the elements where out is not NaN,
//   *nans += number of NaN outputs, *max_abs = max |out-ref| (as float bits; non-negative floats
//   order like their bit patterns). The host zeroes the four accumulators first.
// Block size must be a multiple of 32 and at most 1024.
extern "C" __global__ void compare_bf16_f32(const __nv_bfloat16* __restrict__ out, const float* __restrict__ ref,
                                            unsigned long long n, double* sums, unsigned long long* nans,
                                            unsigned* max_abs) {
  double d2 = 0, r2 = 0;
  unsigned long long bad = 0;
  float mx = 0.f;
  for (unsigned long long i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float o = __bfloat162float(out[i]);
    const float r = ref[i];
    if (isnan(o)) {
      ++bad;
      continue;
    }
    const double d = double(o) - double(r);
    d2 += d * d;
    r2 += double(r) * double(r);
    mx = fmaxf(mx, fabsf(o - r));
  }
  // Warp reduction, then one value per warp through shared memory, then the first warp.
  for (int off = 16; off > 0; off >>= 1) {
    d2 += __shfl_down_sync(0xffffffffu, d2, off);
    r2 += __shfl_down_sync(0xffffffffu, r2, off);
    bad += __shfl_down_sync(0xffffffffu, bad, off);
    mx = fmaxf(mx, __shfl_down_sync(0xffffffffu, mx, off));
  }
  __shared__ double s_d2[32], s_r2[32];
  __shared__ unsigned long long s_bad[32];
  __shared__ float s_mx[32];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  if (lane == 0) {
    s_d2[warp] = d2;
    s_r2[warp] = r2;
    s_bad[warp] = bad;
    s_mx[warp] = mx;
  }
  __syncthreads();
  if (warp != 0) return;
  d2 = lane < warps ? s_d2[lane] : 0;
  r2 = lane < warps ? s_r2[lane] : 0;
  bad = lane < warps ? s_bad[lane] : 0;
  mx = lane < warps ? s_mx[lane] : 0.f;
  for (int off = 16; off > 0; off >>= 1) {
    d2 += __shfl_down_sync(0xffffffffu, d2, off);
    r2 += __shfl_down_sync(0xffffffffu, r2, off);
    bad += __shfl_down_sync(0xffffffffu, bad, off);
    mx = fmaxf(mx, __shfl_down_sync(0xffffffffu, mx, off));
  }
  if (lane == 0) {
    atomicAdd(&sums[0], d2);
    atomicAdd(&sums[1], r2);
    atomicAdd(nans, bad);
    atomicMax(max_abs, __float_as_uint(mx));
  }
}

// One thread spins on the global timer for `ns` nanoseconds. Launch with 1 block of 1 thread.
extern "C" __global__ void gpu_spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
