// A 2-block cluster loader: "a" into its own stage, its half of "b" into both blocks.
#include "pipelink/device.cuh"
PL_WARPS(loader_main, 1);
PL_ARRIVE(loader_main, ab, one);
PL_COMPONENT(loader_main) {
  if ((threadIdx.x & 31u) != 0) return;
  pl::PipeWriter w(ctx, 0);
  const pl::TensorMap* map = ctx.tmap(0);
  for (unsigned s = 0; s < 4; ++s) {
    w.acquire();
    w.expect_tx();
    pl::tma_load_2d(w.tensor<unsigned char>(ctx, 0), map, w.full_bar(), 0, 0);
    pl::tma_load_2d_multicast(w.tensor<unsigned char>(ctx, 1) + w.multicast_part() * 512u, map, w.full_bar(), 0,
                              static_cast<int>(w.multicast_part() * 4u), w.multicast_mask());
    w.advance();
  }
}
