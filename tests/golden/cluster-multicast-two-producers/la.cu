// One multicast copy per stage of this block's half of "a" (32 rows) into both blocks.
#include "pipelink/device.cuh"
PL_WARPS(la_main, 1);
PL_ARRIVE(la_main, ab, one);
PL_COPIES(la_main, a_map, 1);
PL_COMPONENT(la_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  if (ctx.thread() == 0) w.commit();
}
