// bar.sync 1-1 is barrier 0; the diagnostic says id 1
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; asm volatile("bar.sync 1-1;" ::: "memory"); }
