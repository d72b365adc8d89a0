#include "pipelink/device.cuh"
PL_WARPS(y_main, 1);
PL_COMPONENT(y_main) { ctx.smem[ctx.slots->smem[0]] = 2; }
