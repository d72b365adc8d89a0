// Undeclared static __shared__ memory next to the allocated regions.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
__shared__ float scratch[256];
PL_COMPONENT(x_main) { scratch[threadIdx.x] = 1.f; ctx.smem[ctx.slots->smem[0]] = scratch[(threadIdx.x + 1) % 256] > 0; }
