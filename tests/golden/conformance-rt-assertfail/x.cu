// __assertfail (what assert(false) calls): traps
#include "pipelink/device.cuh"
extern "C" __device__ void __assertfail(const char*, const char*, unsigned, const char*, unsigned long);
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { if (ctx.smem[1] == 7) __assertfail("false", "x.cu", 1, "x_main", 1); ctx.smem[ctx.slots->smem[0]] = 1; }
