// The code compiled in tile_m = 64 for a fact it uses; the link resolves tile_m = 128.
#include "pipelink/device.cuh"
PL_PROVIDE_LINKED(x_main, tile_m);   // and reads it from the link (below)
PL_FACT_DECL(unsigned, tile_m);
PL_USE(x_main, tile_m, 64);
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = static_cast<unsigned char>(PL_FACT(tile_m)); }
