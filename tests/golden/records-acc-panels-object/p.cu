// A main loop built to write its accumulator stage as four 128B-swizzled 64-column panels (as
// wgmma_gu.cu with -DGU_ACC_PANELS=1), linked under a contract that still says the row-major tile.
// Warps, arrive mode and facts are the same in both builds: only the panel records tell them apart.
#include "pipelink/device.cuh"
PL_WARPS(p_main, 1);
PL_ARRIVE(p_main, acc, one);
PL_COLS(p_main, acc, p0, 64);
PL_COLS(p_main, acc, p1, 64);
PL_COLS(p_main, acc, p2, 64);
PL_COLS(p_main, acc, p3, 64);
PL_COMPONENT(p_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  for (unsigned k = 0; k < 4; ++k) w.tensor<unsigned>(ctx, k)[ctx.thread()] = k;
  if (ctx.thread() == 0) w.commit();
}
