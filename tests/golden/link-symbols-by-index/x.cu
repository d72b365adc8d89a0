// Instances x#0 and x#1 once both got the slot table pl_slots_x_0, the name of x_0's table too.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);

PL_COMPONENT(x_main) {
  if (threadIdx.x % 32 == 0) ctx.smem[ctx.slots->smem[0] + ctx.slots->instance] = 1;
}
