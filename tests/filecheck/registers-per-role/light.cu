#include "pipelink/device.cuh"
PL_WARPS(light_main, 1);
PL_REGISTERS(light_main, 24);
PL_COMPONENT(light_main) { ctx.smem[threadIdx.x] = 1; }
