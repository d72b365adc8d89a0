// bench_util.cu — the helper kernels of the benchmark harness (bench/common/bench.h, class Util),
// compiled on their own to a cubin (nvcc -cubin -arch sm_90a) and loaded through the driver API.
// C linkage: found by name. Every kernel uses a grid-stride loop, so the host picks any grid.
//
//   fill_random_bf16, fill_random_f32   scale * N(0,1) from a counter-based hash (splitmix64 and
//                                       Box-Muller): element i of stream `seed` is a pure function
//                                       of both, so every contender sees the same data, never zeros
//   check_tol_bf16, check_tol_f32       per-element tolerance of an output (bf16 or fp32) against an
//                                       fp32 reference: |out - ref| <= atol + rtol * |ref|
//   gpu_spin                            keeps the stream busy for a while (timing rounds)
#include <cuda_bf16.h>

#include <cstdint>

namespace {

__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ float normal_of(unsigned long long key, unsigned long long i) {
  const unsigned long long r = mix64(key ^ (i * 0xD1B54A32D192ED03ull));
  const float u1 = (float((r >> 40) & 0xFFFFFF) + 1.f) * (1.f / 16777216.f);  // (0, 1]: log is finite
  const float u2 = float(r & 0xFFFFFF) * (1.f / 16777216.f);                 // [0, 1)
  return sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
}

// acc layout (the host zeroes it): [0] double sum (out-ref)^2, [1] double sum ref^2,
// [2] u64 NaN outputs, [3] u64 elements over tolerance, [4] u64 worst key = (err/tol as float bits)
// << 32 | element index (n < 2^32), [5] u32 max |out - ref| as float bits.
template <typename T>
__device__ __forceinline__ float load_out(const T* p, unsigned long long i);
template <>
__device__ __forceinline__ float load_out<__nv_bfloat16>(const __nv_bfloat16* p, unsigned long long i) {
  return __bfloat162float(p[i]);
}
template <>
__device__ __forceinline__ float load_out<float>(const float* p, unsigned long long i) {
  return p[i];
}

template <typename T>
__device__ void check_tol(const T* __restrict__ out, const float* __restrict__ ref, unsigned long long n, float atol,
                          float rtol, unsigned long long* acc) {
  double d2 = 0, r2 = 0;
  unsigned long long nans = 0, over = 0, worst = 0;
  float mx = 0.f;
  for (unsigned long long i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float o = load_out(out, i), r = ref[i];
    if (isnan(o)) {
      ++nans;
      continue;
    }
    const float err = fabsf(o - r);
    const float tol = atol + rtol * fabsf(r);
    float ratio = tol > 0.f ? err / tol : (err > 0.f ? INFINITY : 0.f);
    if (isnan(ratio)) ratio = INFINITY;  // an infinite output
    over += ratio > 1.f;
    const unsigned long long key = (static_cast<unsigned long long>(__float_as_uint(ratio)) << 32) | (i & 0xFFFFFFFFull);
    worst = key > worst ? key : worst;
    mx = fmaxf(mx, err);
    const double d = double(o) - double(r);
    d2 += d * d;
    r2 += double(r) * double(r);
  }
  for (int off = 16; off > 0; off >>= 1) {
    d2 += __shfl_down_sync(0xffffffffu, d2, off);
    r2 += __shfl_down_sync(0xffffffffu, r2, off);
    nans += __shfl_down_sync(0xffffffffu, nans, off);
    over += __shfl_down_sync(0xffffffffu, over, off);
    const unsigned long long w = __shfl_down_sync(0xffffffffu, worst, off);
    worst = w > worst ? w : worst;
    mx = fmaxf(mx, __shfl_down_sync(0xffffffffu, mx, off));
  }
  if ((threadIdx.x & 31u) == 0) {
    double* dacc = reinterpret_cast<double*>(acc);
    atomicAdd(&dacc[0], d2);
    atomicAdd(&dacc[1], r2);
    if (nans) atomicAdd(&acc[2], nans);
    if (over) atomicAdd(&acc[3], over);
    atomicMax(&acc[4], worst);
    atomicMax(reinterpret_cast<unsigned*>(&acc[5]), __float_as_uint(mx));  // non-negative floats order as their bits
  }
}

}  // namespace

extern "C" __global__ void fill_random_bf16(__nv_bfloat16* p, unsigned long long n, unsigned long long seed, float scale) {
  const unsigned long long key = mix64(seed);
  for (unsigned long long i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16_rn(scale * normal_of(key, i));
}

extern "C" __global__ void fill_random_f32(float* p, unsigned long long n, unsigned long long seed, float scale) {
  const unsigned long long key = mix64(seed);
  for (unsigned long long i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = scale * normal_of(key, i);
}

extern "C" __global__ void check_tol_bf16(const __nv_bfloat16* __restrict__ out, const float* __restrict__ ref,
                                          unsigned long long n, float atol, float rtol, unsigned long long* acc) {
  check_tol(out, ref, n, atol, rtol, acc);
}

extern "C" __global__ void check_tol_f32(const float* __restrict__ out, const float* __restrict__ ref, unsigned long long n,
                                         float atol, float rtol, unsigned long long* acc) {
  check_tol(out, ref, n, atol, rtol, acc);
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
