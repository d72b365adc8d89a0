#include "pipelink/device.cuh"
PL_WARPS(a_main, 1);
PL_COMPONENT(a_main) { ctx.smem[0] = 1; }
