// WRONG on purpose: per stage, two 32-row boxes through EACH map (4 copies = 2 x the stage's
// 8192 bytes, into rows 0..127 of a 64-row tensor: past b, and twice the tx bytes announced).
#include "pipelink/device.cuh"
PL_WARPS(loader_main, 1);
PL_ARRIVE(loader_main, ab, one);
PL_COPIES(loader_main, wg_map, 2);
PL_COPIES(loader_main, wu_map, 2);
PL_COMPONENT(loader_main) {
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* wg = ctx.tmap(0);
  const pl::TensorMap* wu = ctx.tmap(1);
  pl::PipeWriter w(ctx, 0);
  for (unsigned s = 0; s < 4; ++s) {
    w.acquire();
    w.expect_tx();
    unsigned char* b = w.tensor<unsigned char>(ctx, 0);
    for (unsigned j = 0; j < 2; ++j) {
      pl::tma_load_2d(b + j * 32 * 128, wg, w.full_bar(), 0, static_cast<int>(j * 32));
      pl::tma_load_2d(b + (2 + j) * 32 * 128, wu, w.full_bar(), 0, static_cast<int>(j * 32));
    }
    w.advance();
  }
}
