// A component issues its own setmaxnreg.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { asm volatile("setmaxnreg.inc.sync.aligned.u32 232;"); ctx.smem[ctx.slots->smem[0]] = 1; }
