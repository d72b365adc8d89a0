// pdl_wait = "own", and the trigger comes before the wait: the next grid could be scheduled
// before this one's predecessor has completed.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  ctx.smem[ctx.slots->smem[0]] = 1;
}
