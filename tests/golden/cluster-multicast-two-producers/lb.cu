// One multicast copy per stage of this block's half of "b" (32 rows) into both blocks.
#include "pipelink/device.cuh"
PL_WARPS(lb_main, 1);
PL_ARRIVE(lb_main, ab, one);
PL_COPIES(lb_main, b_map, 1);
PL_COMPONENT(lb_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  if (ctx.thread() == 0) w.commit();
}
