// barrier 0 through a register set by mov
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; asm volatile("{ .reg .b32 r; mov.u32 r, 0; bar.sync r; }" ::: "memory"); }
