// barrier.sync.aligned 0 (refused: coverage)
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; asm volatile("barrier.sync.aligned 0;" ::: "memory"); }
