// Helper kernels of bench_cluster (nvcc -cubin; loaded through the driver API):
//   fill_normal_bf16   x[i] = scale * N(0, 1), from a counter-based hash (Box-Muller), per seed
//   check_elementwise  per element: |out - ref| <= atol + rtol * |ref|; counts NaNs and violations,
//                      max |out - ref|, and the first violating index
//   spin               busy-waits `ns` nanoseconds (a timing round's head start)
#include <cuda_bf16.h>
#include <stdint.h>

__device__ __forceinline__ uint32_t mix(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

extern "C" __global__ void fill_normal_bf16(__nv_bfloat16* x, unsigned long long n, unsigned long long seed, float scale) {
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x) {
    const uint32_t a = mix(seed * 0x9e3779b97f4a7c15ull + 2 * i), b = mix(seed * 0x9e3779b97f4a7c15ull + 2 * i + 1);
    const float u1 = (a + 1.0f) * 2.3283064e-10f, u2 = b * 2.3283064e-10f;
    x[i] = __float2bfloat16(scale * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

// counters: [0] NaNs, [1] violations, [2] max |out - ref| (float bits), [3] first violation (low), [4] (high)
extern "C" __global__ void check_elementwise(const __nv_bfloat16* out, const float* ref, unsigned long long n, float atol,
                                             float rtol, unsigned long long* counters) {
  unsigned long long nans = 0, bad = 0;
  float mx = 0;
  for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x) {
    const float o = __bfloat162float(out[i]), r = ref[i];
    if (isnan(o)) { ++nans; continue; }
    const float d = fabsf(o - r);
    mx = fmaxf(mx, d);
    if (!(d <= atol + rtol * fabsf(r))) {
      ++bad;
      atomicMin(&counters[3], i);
    }
  }
  if (nans) atomicAdd(&counters[0], nans);
  if (bad) atomicAdd(&counters[1], bad);
  atomicMax(reinterpret_cast<unsigned*>(&counters[2]), __float_as_uint(mx));
}

extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (;;) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 >= ns) break;
  }
}
