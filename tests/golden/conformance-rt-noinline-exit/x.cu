// exit inside a __noinline__ helper the component calls
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
namespace xh { __device__ __noinline__ void die() { asm volatile("exit;"); } }
PL_COMPONENT(x_main) { if (ctx.smem[1] == 7) xh::die(); ctx.smem[ctx.slots->smem[0]] = 1; }
