// Reads nothing an earlier kernel writes before pl::pdl_wait(), then writes its flag.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  pl::pdl_wait();
  ctx.smem[ctx.slots->smem[0]] = 1;
}
