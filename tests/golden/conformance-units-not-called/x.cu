// Declares k_extent (it says it runs k ranges), but walks whole tiles.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  pl::Tile t;
  unsigned s = 0;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) s += t.m;
  if (threadIdx.x == 0) *ctx.ptr<unsigned>(1) = s;
}
