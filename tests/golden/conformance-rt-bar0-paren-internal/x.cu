// bar.sync (0); makes the scan throw (internal: stoll)
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; asm volatile("bar.sync (0);" ::: "memory"); }
