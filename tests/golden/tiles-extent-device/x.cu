// Counts the tiles it is given (the extent M comes from device memory, read by the tile sequence).
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_PROVIDE(x_main, tile_m, 64);
PL_PROVIDE(x_main, tile_n, 64);
PL_COMPONENT(x_main) {
  pl::Tile t;
  unsigned n = 0;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) ++n;
  if ((threadIdx.x & 31u) == 0) atomicAdd(ctx.ptr<unsigned>(1), n);
}
