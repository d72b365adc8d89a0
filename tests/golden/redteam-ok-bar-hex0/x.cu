// bar.sync 0x0 (refused: coverage)
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; asm volatile("bar.sync 0x0;" ::: "memory"); }
