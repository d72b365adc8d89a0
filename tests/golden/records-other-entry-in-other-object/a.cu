// Component b declares none of its records; a.cu declares b's [warps] record for it.
#include "pipelink/device.cuh"
PL_WARPS(a_main, 1);
PL_WARPS(b_main, 1);   // b's record, placed in a's object
PL_COMPONENT(a_main) { ctx.smem[0] = 1; }
