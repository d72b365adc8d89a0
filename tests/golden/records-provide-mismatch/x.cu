// The contract provides tile_n = 128; the object was rebuilt for 104 (code changed, contract stale).
#include "pipelink/device.cuh"
constexpr unsigned kTileN = 104;  // was 128; the contract was not updated
PL_PROVIDE(x_main, tile_n, kTileN);
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { if (threadIdx.x < kTileN / 4) ctx.smem[ctx.slots->smem[0] + threadIdx.x] = 1; }
