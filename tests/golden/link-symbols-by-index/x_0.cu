#include "pipelink/device.cuh"
PL_WARPS(x0_main, 1);

PL_COMPONENT(x0_main) {
  if (threadIdx.x % 32 == 0) ctx.smem[ctx.slots->smem[0]] = 2;
}
