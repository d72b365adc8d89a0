#include "pipelink/device.cuh"
PL_COMPONENT(b_main) { ctx.smem[1] = 2; }
