// Reads fact tile_q, which its own contract provides.
#include "pipelink/device.cuh"
PL_FACT_DECL(unsigned, tile_q);
PL_PROVIDE_LINKED(entry_x, tile_q);
PL_WARPS(entry_x, 1);

PL_COMPONENT(entry_x) {
  if (threadIdx.x < PL_FACT(tile_q)) ctx.smem[threadIdx.x] = 1;
}
