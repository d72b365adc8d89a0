// Provides tile_q, compiled in, and marks tile_q bytes of its region.
#include "pipelink/device.cuh"
constexpr unsigned kTileQ = 32;
PL_PROVIDE(alpha_main, tile_q, kTileQ);
PL_WARPS(alpha_main, 1);

PL_COMPONENT(alpha_main) {
  if (threadIdx.x % 32 < kTileQ) ctx.smem[ctx.slots->smem[0] + threadIdx.x % 32] = 1;
}
