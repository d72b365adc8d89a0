// A cluster-agnostic consumer: PipeReader::release reaches every block of the multicast group.
#include "pipelink/device.cuh"
PL_WARPS(mma_main, 4);
PL_ARRIVE(mma_main, ab, warp);
PL_COMPONENT(mma_main) {
  pl::PipeReader r(ctx, 0);
  for (unsigned s = 0; s < 4; ++s) {
    r.wait();
    __syncwarp();
    if ((threadIdx.x & 31u) == 0) r.release();
    r.advance();
  }
}
