#include "pipelink/device.cuh"
PL_WARPS(p_main, 1);
PL_ARRIVE(p_main, t, one);
PL_COMPONENT(p_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  w.tensor<float>(ctx, 0)[ctx.thread()] = 1.f;
  if (ctx.thread() == 0) w.commit();
}
