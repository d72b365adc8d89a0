// Per stage: one gate box through wg_map into rows [0, 32) of b, one up box through wu_map into
// rows [32, 64): one copy per map.
#include "pipelink/device.cuh"
PL_WARPS(loader_main, 1);
PL_ARRIVE(loader_main, ab, one);
PL_COPIES(loader_main, wg_map, 1);
PL_COPIES(loader_main, wu_map, 1);
PL_COMPONENT(loader_main) {
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* wg = ctx.tmap(0);
  const pl::TensorMap* wu = ctx.tmap(1);
  pl::PipeWriter w(ctx, 0);
  for (unsigned s = 0; s < 4; ++s) {
    w.acquire();
    w.expect_tx();
    unsigned char* b = w.tensor<unsigned char>(ctx, 0);
    pl::tma_load_2d(b, wg, w.full_bar(), 0, static_cast<int>(s * 32));
    pl::tma_load_2d(b + 32 * 128, wu, w.full_bar(), 0, static_cast<int>(s * 32));
    w.advance();
  }
}
