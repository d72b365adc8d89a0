// The code declares a port and a fact its contract does not state.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_ARRIVE(x_main, out, warp);
PL_PROVIDE(x_main, stages, 4);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; }
