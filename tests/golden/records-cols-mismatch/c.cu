#include "pipelink/device.cuh"
PL_WARPS(c_main, 1);
PL_ARRIVE(c_main, acc, one);
PL_COMPONENT(c_main) {
  pl::PipeReader r(ctx, 0);
  r.wait();
  if (ctx.thread() == 0) r.release();
}
