// setmaxnreg inside a __noinline__ helper the component calls
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
namespace xh { __device__ __noinline__ void grow() { asm volatile("setmaxnreg.dec.sync.aligned.u32 24;" ::: "memory"); } }
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; xh::grow(); }
