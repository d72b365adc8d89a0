// A warpgroup role that keeps 64 float accumulators live: about 80 registers per thread.
#include "pipelink/device.cuh"
PL_WARPS(math_main, 4);
PL_REGISTERS(math_main, 168);
PL_COMPONENT(math_main) {
  float acc[64];
  const float* in = reinterpret_cast<const float*>(ctx.smem);
#pragma unroll
  for (int j = 0; j < 64; ++j) acc[j] = in[j * 32 + threadIdx.x % 32];
  for (int k = 0; k < 32; ++k) {
#pragma unroll
    for (int j = 0; j < 64; ++j) acc[j] = acc[j] * in[(k + j) % 256] + acc[(j + 1) % 64];
  }
  float* out = reinterpret_cast<float*>(ctx.smem);
#pragma unroll
  for (int j = 0; j < 64; ++j) out[j * 128 + threadIdx.x % 128] = acc[j];
}
