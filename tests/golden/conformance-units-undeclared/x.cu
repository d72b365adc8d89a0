// Walks work units (k ranges of a tile), but its contract does not say so.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  pl::Unit u;
  unsigned s = 0;
  for (unsigned i = 0; pl::unit_at(ctx, i, u); ++i) s += u.k_end - u.k_begin;
  if (threadIdx.x == 0) *ctx.ptr<unsigned>(1) = s;
}
