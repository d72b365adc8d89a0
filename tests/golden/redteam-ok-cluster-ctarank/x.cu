// %cluster_ctarank (refused: coverage)
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); ctx.smem[ctx.slots->smem[0]] = r; }
