// A main loop built to store H = silu(gate) * up [128 x 104] in its accumulator stage (as wgmma_gu.cu
// with -DGU_SWIGLU=1), linked under a contract that says the gate and up blocks [128 x 208]. The
// tensor's name, the warps, the arrive mode and the facts are the same in both builds: only the
// cols record tells them apart, and a consumer reading 208 columns would read half garbage.
#include "pipelink/device.cuh"
PL_WARPS(p_main, 1);
PL_ARRIVE(p_main, acc, one);
PL_COLS(p_main, acc, tile, 104);
PL_COMPONENT(p_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  w.tensor<unsigned>(ctx, 0)[ctx.thread()] = 1;
  if (ctx.thread() == 0) w.commit();
}
