// A component hard-codes named barrier 1 instead of using the id the linker allocated.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; asm volatile("bar.sync 1, 64;" ::: "memory"); }
