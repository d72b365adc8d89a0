// 128 float accumulators live across a loop: far more than 40 registers per thread.
#include "pipelink/device.cuh"
PL_WARPS(heavy_main, 4);
PL_REGISTERS(heavy_main, 40);
PL_COMPONENT(heavy_main) {
  float acc[128];
  const float* in = reinterpret_cast<const float*>(ctx.smem);
#pragma unroll
  for (int j = 0; j < 128; ++j) acc[j] = in[j * 32 + threadIdx.x % 32];
  for (int k = 0; k < 64; ++k) {
#pragma unroll
    for (int j = 0; j < 128; ++j) acc[j] = acc[j] * in[(k + j) % 256] + acc[(j + 1) % 128];
  }
  float* out = reinterpret_cast<float*>(ctx.smem);
#pragma unroll
  for (int j = 0; j < 128; ++j) out[j * 128 + threadIdx.x] = acc[j];
}
