#include "pipelink/device.cuh"
PL_WARPS(loader_main, 4);
PL_REGISTERS(loader_main, 40);
PL_ARRIVE(loader_main, ab, warp);
PL_COMPONENT(loader_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  w.tensor<unsigned short>(ctx, 0)[ctx.thread()] = 1;
  __syncwarp();
  if ((threadIdx.x & 31u) == 0) w.commit();
}
