// __syncthreads() inside a component: barrier 0, which the other warp roles never reach.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; __syncthreads(); }
