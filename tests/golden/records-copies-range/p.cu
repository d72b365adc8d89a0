// x_map: 1 copy (right); w_map (box 32 rows of a 64-row tensor): 2^58 + 1 copies, whose rows
// (x 32) wrap around int64 to 64.
#include "pipelink/device.cuh"
PL_WARPS(p_main, 1);
PL_ARRIVE(p_main, ab, one);
PL_COPIES(p_main, x_map, 1);
PL_COPIES(p_main, w_map, 0x0800000000000002LL);
PL_COMPONENT(p_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  if (ctx.thread() == 0) w.commit();
}
