// __syncthreads() inside a __noinline__ helper the component calls
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
namespace xh { __device__ __noinline__ void sync_all() { __syncthreads(); } }
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; xh::sync_all(); }
