// an invalid instruction in inline asm: NVRTC and the LTO link pass it, ptxas rejects it
#include "pipelink/device.cuh"
PL_WARPS(x_main, 2);
PL_COMPONENT(x_main) { pl::named_barrier_sync(ctx.slots->bar[0], 64); asm volatile("bogus.instr.u32 %0;" :: "r"(threadIdx.x)); }
