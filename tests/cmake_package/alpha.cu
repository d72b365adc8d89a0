// Provides tile_q, compiled in from ALPHA_TILE_Q (the contract's defines: pipelink_add_component
// builds the object with them when it is given no DEFINES), and marks tile_q bytes of its region.
#include "pipelink/device.cuh"
#ifndef ALPHA_TILE_Q
#error "alpha.cu built without its contract's defines"
#endif
constexpr unsigned kTileQ = ALPHA_TILE_Q;
PL_PROVIDE(alpha_main, tile_q, kTileQ);
PL_WARPS(alpha_main, 1);

PL_COMPONENT(alpha_main) {
  if (threadIdx.x % 32 < kTileQ) ctx.smem[ctx.slots->smem[0] + threadIdx.x % 32] = 1;
}
