#include "pipelink/device.cuh"
PL_WARPS(mma_main, 4);
PL_ARRIVE(mma_main, ab, warp);
PL_COMPONENT(mma_main) {
  pl::PipeReader r(ctx, 0);
  r.wait();
  if ((threadIdx.x & 31u) == 0) r.release();
}
