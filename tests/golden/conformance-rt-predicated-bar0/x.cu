// predicated @p bar.sync 0
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; asm volatile("{ .reg .pred p; setp.eq.u32 p, 1, 1; @p bar.sync 0; }" ::: "memory"); }
