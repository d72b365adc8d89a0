// PL_PROVIDE_LINKED says the code reads tile_n from the link; it compiled in 104 instead.
#include "pipelink/device.cuh"
PL_WARPS(p_main, 1);
PL_PROVIDE_LINKED(p_main, tile_n);   // claims to read tile_n from the link
PL_COMPONENT(p_main) { for (unsigned i = 0; i < 104; ++i) ctx.smem[i] = 1; }   // but compiled in 104
