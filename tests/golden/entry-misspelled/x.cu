// Defines entry_x; its contract (x.toml) names entry_y.
#include "pipelink/device.cuh"
PL_PROVIDE_LINKED(entry_x, tile_q);
PL_WARPS(entry_x, 1);
PL_COMPONENT(entry_x) { ctx.smem[0] = 1; }
