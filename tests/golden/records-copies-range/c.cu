// The consumer: waits for a stage and releases it.
#include "pipelink/device.cuh"
PL_WARPS(c_main, 1);
PL_ARRIVE(c_main, ab, one);
PL_COMPONENT(c_main) {
  pl::PipeReader r(ctx, 0);
  r.wait();
  if (ctx.thread() == 0) r.release();
}
