#include "pipelink/device.cuh"
PL_FACT_DECL(unsigned, width);
PL_PROVIDE(ptx_entry, width, 64);
PL_WARPS(ptx_entry, 1);
PL_COMPONENT(ptx_entry) { if (threadIdx.x < PL_FACT(width)) ctx.smem[threadIdx.x] = 1; }
