// __brkpt() (refused: coverage)
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { if (ctx.smem[1] == 7) __brkpt(); ctx.smem[ctx.slots->smem[0]] = 1; }
