// Walks its tiles (the extent M from device memory), then waits itself: pdl_wait = "own".
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_PROVIDE(x_main, tile_m, 64);
PL_PROVIDE(x_main, tile_n, 64);
PL_COMPONENT(x_main) {
  pl::Tile t;
  unsigned n = 0;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) ++n;
  pl::pdl_wait();
  if ((threadIdx.x & 31u) == 0) atomicAdd(ctx.ptr<unsigned>(1), n);
}
