// A TMA producer that copies each of its two tensors in one box per stage (the records below), under a
// contract whose w_map box is half of "b": the link must refuse w_map's record (x_map's agrees).
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
