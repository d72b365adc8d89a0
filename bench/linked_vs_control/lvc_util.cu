// lvc_util.cu — helper kernels of bench_lvc (linked vs control), compiled on their own to a cubin
// (nvcc -cubin -arch sm_90a) and loaded through the driver API. C linkage: found by name.
//
//   fill_random_bf16  N(0,1) * scale from a counter-based hash (the same generator as
//                     bench/qwen_mlp/swiglu.cu): bf16 inputs made on the GPU, never zeros
//   fill_random_f32   the same in fp32 (the MoE router logits)
//   diff_words        compares two buffers of 32-bit words: how many differ, and how many of the
//                     first buffer's bf16 (or fp32) elements are NaN (unwritten: outputs are
//                     poisoned with 0xFF bytes first)
//   gpu_spin          keeps the stream busy for a while, so that the host enqueues a whole timing
//                     round ahead of the GPU and no launch latency falls inside a timed region
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
  const float u1 = (float((r >> 40) & 0xFFFFFF) + 1.f) * (1.f / 16777216.f);
  const float u2 = float(r & 0xFFFFFF) * (1.f / 16777216.f);
  return sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
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

// a, b: n 32-bit words. result[0] += words where a != b; result[1] += NaN elements of a, read as
// bf16 pairs (elem_bytes 2) or fp32 (elem_bytes 4). The host zeroes result first.
extern "C" __global__ void diff_words(const unsigned* __restrict__ a, const unsigned* __restrict__ b, unsigned long long n,
                                      unsigned elem_bytes, unsigned long long* result) {
  unsigned long long diff = 0, nan = 0;
  for (unsigned long long i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const unsigned x = a[i];
    diff += x != b[i];
    if (elem_bytes == 4) {
      nan += (x & 0x7F800000u) == 0x7F800000u && (x & 0x007FFFFFu);
    } else {
      const unsigned lo = x & 0xFFFFu, hi = x >> 16;
      nan += ((lo & 0x7F80u) == 0x7F80u && (lo & 0x7Fu)) + ((hi & 0x7F80u) == 0x7F80u && (hi & 0x7Fu));
    }
  }
  for (int off = 16; off > 0; off >>= 1) {
    diff += __shfl_down_sync(0xffffffffu, diff, off);
    nan += __shfl_down_sync(0xffffffffu, nan, off);
  }
  if ((threadIdx.x & 31u) == 0) {
    if (diff) atomicAdd(&result[0], diff);
    if (nan) atomicAdd(&result[1], nan);
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
