// A cluster-agnostic consumer walking the link's tile sequence.
#include "pipelink/device.cuh"
PL_WARPS(mma_main, 4);
PL_ARRIVE(mma_main, ab, warp);
PL_COMPONENT(mma_main) {
  pl::PipeReader r(ctx, 0);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    r.wait();
    __syncwarp();
    if ((threadIdx.x & 31u) == 0) r.release();
    r.advance();
  }
}
