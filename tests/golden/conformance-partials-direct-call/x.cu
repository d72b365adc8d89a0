// Calls the link's pl_partials_flag directly and writes through it, though its contract declares no
// partial_bytes (data-parallel: the pointer is null, so it writes only where it gets one).
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  pl::Unit u;
  unsigned s = 0;
  for (unsigned i = 0; pl::unit_at(ctx, i, u); ++i) s += u.k_end - u.k_begin;
  if (threadIdx.x == 0) {
    if (unsigned* f = pl_partials_flag(ctx.args, blockIdx.x, 0)) *f = s;
    *ctx.ptr<unsigned>(1) = s;
  }
}
