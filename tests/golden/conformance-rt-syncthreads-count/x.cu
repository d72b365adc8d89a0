// __syncthreads_count(): bar.red.popc on barrier 0
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { int n = __syncthreads_count(ctx.smem[1]); ctx.smem[ctx.slots->smem[0]] = n; }
