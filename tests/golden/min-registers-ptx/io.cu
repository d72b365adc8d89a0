// A one-warp role with little state.
#include "pipelink/device.cuh"
PL_WARPS(io_main, 1);
PL_REGISTERS(io_main, 40);
PL_COMPONENT(io_main) {
  float* out = reinterpret_cast<float*>(ctx.smem);
  out[8192 + threadIdx.x % 32] = 1.0f;
}
