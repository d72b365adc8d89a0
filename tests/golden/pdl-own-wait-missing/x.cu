// A component says pdl_wait = "own" but never calls pl::pdl_wait().
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; }
