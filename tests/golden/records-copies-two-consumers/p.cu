#include "pipelink/device.cuh"
PL_WARPS(p_main, 1);
PL_ARRIVE(p_main, out, one);
PL_COMPONENT(p_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  if (ctx.thread() == 0) w.commit();
}
