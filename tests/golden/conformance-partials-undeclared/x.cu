// Uses the partials workspace (publish, wait, read) though its contract declares no partial_bytes.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  pl::Unit u;
  float s = 0.f;
  for (unsigned i = 0; pl::unit_at(ctx, i, u); ++i) {
    s += float(u.k_end - u.k_begin);
    if (!u.emit) {
      pl::partials<float>(ctx, blockIdx.x)[threadIdx.x] = s;
      if (threadIdx.x == 0) pl::partials_publish(ctx);
      continue;
    }
    for (unsigned b = u.peer_begin; b < u.peer_end; ++b) {
      if (threadIdx.x == 0) pl::partials_wait(ctx, b);
      __syncwarp();
      s += __ldcg(pl::partials<const float>(ctx, b) + threadIdx.x);
      __syncwarp();
      if (threadIdx.x == 0) pl::partials_consumed(ctx, b);
    }
    if (threadIdx.x == 0) ctx.ptr<float>(1)[u.tile.linear] = s;
  }
}
