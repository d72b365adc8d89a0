// A TMA producer that records one copy per stage through each map, under a contract that names no
// tensor for w_map: nothing states what w_map copies, so its record is refused (x_map's agrees).
#include "pipelink/device.cuh"
PL_WARPS(p_main, 1);
PL_ARRIVE(p_main, ab, one);
PL_COPIES(p_main, x_map, 1);
PL_COPIES(p_main, w_map, 1);
PL_COMPONENT(p_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  if (ctx.thread() == 0) w.commit();
}
