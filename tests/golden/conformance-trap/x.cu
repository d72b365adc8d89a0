// trap outside a PL_CHECKED build ends one warp role while the others wait on it.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { if (ctx.smem[ctx.slots->smem[0]] == 7) __trap(); ctx.smem[ctx.slots->smem[0]] = 1; }
