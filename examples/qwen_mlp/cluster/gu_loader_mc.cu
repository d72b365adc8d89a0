// gu_loader_mc — io-team. The TMA producer of the gate/up GEMM's "ab" pipe in a 2-block cluster.
//
// Like gu_loader (../loader/gu_loader.cu), for every tile it streams K in tile_k-wide slices: one
// A slice X[t.m * tile_m + (0..tile_m), k0 + (0..tile_k)] and two B blocks of tile_n rows of W,
// rows t.n * n_step + (0..tile_n) and the same plus b_stride. The contract says b follows n
// (tile_coords = ["n"]): the link gives a cluster's blocks tiles with the same t.n in any order, so
// both need the same B blocks: the block with multicast part p copies B block p into the stage of
// every block of its group (multicast mask from the link), and its own A slice into its own stage.
// Each block's full barrier receives A (local) + B block 0 + B block 1 (one of them from the peer):
// the stage's bytes, which the local expect_tx announces (tx bytes from the link). The stage may
// be refilled only when the consumers of both blocks released it: the empty barrier counts both
// (the linker's arrival count, and pl::PipeReader's remote release).
//
// Assumes: as gu_loader; the group has 1 or 2 blocks (a B block per part).
#include "gu_loader_mc.contract.h"

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);

PL_PROVIDE_LINKED(gu_loader_mc_main, stages);

PL_COMPONENT(gu_loader_mc_main) {
  namespace C = pl_contract::gu_loader_mc_main;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* x_map = C::param::x_map::get(ctx);
  const pl::TensorMap* w_map = C::param::w_map::get(ctx);
  pl::prefetch_tmap(x_map);
  pl::prefetch_tmap(w_map);
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  const unsigned k_tiles = C::param::K::get(ctx) / tile_k;
  const unsigned n_step = C::param::n_step::get(ctx), b_stride = C::param::b_stride::get(ctx);
  const unsigned b_block_bytes = tile_n * tile_k * 2u;

  C::Out_ab w(ctx);
  const unsigned parts = w.multicast_blocks(), part = w.multicast_part(), mask = w.multicast_mask();
#ifdef PL_CHECKED
  if (parts > 2) asm volatile("trap;");  // one B block per part: groups of 1 or 2 blocks
  if (C::param::K::get(ctx) % tile_k != 0) asm volatile("trap;");  // K / tile_k slices would drop K's tail
#endif
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const int row_a = static_cast<int>(t.m * tile_m);
    const int row_b = static_cast<int>(t.n * n_step);
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      const int k0 = static_cast<int>(kt * tile_k);
      w.acquire();  // released by the consumers of every block of the group
      w.expect_tx();
      unsigned char* b = w.b<unsigned char>(ctx);
      pl::tma_load_2d(w.a<unsigned char>(ctx), x_map, w.full_bar(), k0, row_a);
      for (unsigned j = 0; j < 2; ++j) {
        if (j % parts != part) continue;
        const int row = row_b + static_cast<int>(j * b_stride);
        if (parts > 1) pl::tma_load_2d_multicast(b + j * b_block_bytes, w_map, w.full_bar(), k0, row, mask);
        else pl::tma_load_2d(b + j * b_block_bytes, w_map, w.full_bar(), k0, row);
      }
      w.advance();
    }
  }
}
