// Producer built with PL_CHECKED (here by a #define; usually -D PL_CHECKED), linked without it.
#define PL_CHECKED
#include "pipelink/device.cuh"
PL_WARPS(p_main, 2);
PL_ARRIVE(p_main, t, warp);
PL_COMPONENT(p_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  w.tensor<float>(ctx, 0)[ctx.thread()] = 1.f;
  __syncwarp();
  if ((threadIdx.x & 31u) == 0) w.commit();
}
