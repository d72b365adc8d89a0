// A 2-block cluster loader walking the link's tile sequence: "a" (rows of tile m) into its own
// stage, its half of "b" (rows of tile n) into both blocks of the group.
#include "pipelink/device.cuh"
PL_WARPS(loader_main, 1);
PL_ARRIVE(loader_main, ab, one);
PL_COMPONENT(loader_main) {
  if ((threadIdx.x & 31u) != 0) return;
  pl::PipeWriter w(ctx, 0);
  const pl::TensorMap* map = ctx.tmap(0);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    w.acquire();
    w.expect_tx();
    pl::tma_load_2d(w.tensor<unsigned char>(ctx, 0), map, w.full_bar(), 0, static_cast<int>(t.m * 8u));
    pl::tma_load_2d_multicast(w.tensor<unsigned char>(ctx, 1) + w.multicast_part() * 512u, map, w.full_bar(), 0,
                              static_cast<int>(t.n * 8u + w.multicast_part() * 4u), w.multicast_mask());
    w.advance();
  }
}
