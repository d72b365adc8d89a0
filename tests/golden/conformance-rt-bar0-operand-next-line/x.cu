// bar.sync with its operand on the next line
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; asm volatile("bar.sync\n0;" ::: "memory"); }
