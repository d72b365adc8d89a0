// Reads tile_q, which alpha provides; each instance writes its own byte.
#include "pipelink/device.cuh"
PL_FACT_DECL(unsigned, tile_q);
PL_WARPS(beta_main, 1);

PL_COMPONENT(beta_main) {
  if (threadIdx.x % 32 == 0) ctx.smem[ctx.slots->smem[0] + ctx.slots->instance] = PL_FACT(tile_q);
}
