// The code declares nothing: the required records (provided facts, warps) are missing.
#include "pipelink/device.cuh"
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; }
