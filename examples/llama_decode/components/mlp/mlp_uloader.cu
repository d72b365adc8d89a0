// mlp_uloader — io-team. The TMA producer of the fused decode MLP (mlp_umma.cu) for batches of at
// most 8 rows, with one weight ring for both phases of a tile.
//
// mlp_loader.cu fills two rings: "gu" (X and W_gu slices) and "dn" (W_down slices). In each phase
// only one of them streams, so a block has 96 or 80 KB of weights in flight out of the 176 KB of
// shared memory the two hold, and at B = 1 a block's stream is limited by its bytes in flight
// (smaller rings were 4-11% slower, session 7). Here:
//   "x": X once per kernel: K / 64 steps of 8 rows x 64 columns (1 KB each, 128B-swizzled, the
//        rows past M read as zeros), at row 8 kt; the main loop reads each 1 KB block as all 64
//        rows of its A operand (a wgmma descriptor with stride 0 between 8-row groups), so rows
//        8..63 repeat rows 0..7 and their results are not stored: M <= 8.
//   "w": per tile (FFN columns [64 t.n, + 64)), K / 64 gate/up stages (64 gate + 64 up rows of
//        W_gu over 64 K columns) and then hidden / 128 down stages (128 rows of W_down over the
//        tile's 64 columns), all 16 KB, in one ring of w_stages.
// Before the dependency wait (pdl_wait = "own") it requests the first ring's worth of weight
// stages (no earlier kernel writes the weights); X, which the previous kernel writes, after it.
//
// Assumes: x_map over X [M, K] bf16, box (8, 64); wgu_map over W_gu [2 b_stride, K], box (64, 64);
// wd_map over W_down [hidden, N], box (128, 64); all 128B swizzle; K = 8 x_rows; hidden % 128 == 0.
#define PL_PROVIDE_FROM_CONTRACT  // w_stages, x_rows: compiled in as C::provided::*
#include "mlp_uloader.contract.h"

PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);
PL_FACT_DECL(unsigned, dn_n);

PL_COMPONENT(mlp_uloader_main) {
  namespace C = pl_contract::mlp_uloader_main;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* x_map = C::param::x_map::get(ctx);
  const pl::TensorMap* wgu_map = C::param::wgu_map::get(ctx);
  const pl::TensorMap* wd_map = C::param::wd_map::get(ctx);
  pl::prefetch_tmap(x_map);
  pl::prefetch_tmap(wgu_map);
  pl::prefetch_tmap(wd_map);
  const unsigned K = C::param::K::get(ctx), b_stride = C::param::b_stride::get(ctx), hidden = C::param::hidden::get(ctx);
  const unsigned tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k), dn_n = PL_FACT(dn_n);
  const unsigned k_tiles = K / tile_k, per_tile = k_tiles + hidden / dn_n;
  constexpr unsigned kWStages = C::provided::w_stages, kXRows = C::provided::x_rows;
  (void)kXRows;  // (read in PL_CHECKED builds)
#ifdef PL_CHECKED
  if (K % tile_k != 0 || k_tiles * 8u != kXRows || hidden % dn_n != 0 || 2u * tile_n != dn_n || tile_n != tile_k) {
    printf("mlp_uloader: K = %u (tile_k %u, x_rows %u: K must be x_rows / 8 steps), hidden = %u (dn_n %u), tile_n %u "
           "(== tile_k, dn_n / 2)\n", K, tile_k, kXRows, hidden, dn_n, tile_n);
    __trap();
  }
#endif
  C::Out_w w(ctx);
  // stage s of tile t: gate/up step s for s < k_tiles, else down chunk s - k_tiles
  auto issue = [&](const pl::Tile& t, unsigned s) {
    w.acquire();
    w.expect_tx();
    unsigned char* b = w.b<unsigned char>(ctx);
    if (s < k_tiles) {
      pl::tma_load_2d(b, wgu_map, w.full_bar(), static_cast<int>(s * tile_k), static_cast<int>(t.n * tile_n));
      pl::tma_load_2d(b + tile_n * tile_k * 2u, wgu_map, w.full_bar(), static_cast<int>(s * tile_k),
                      static_cast<int>(b_stride + t.n * tile_n));
    } else {
      pl::tma_load_2d(b, wd_map, w.full_bar(), static_cast<int>(t.n * tile_n), static_cast<int>((s - k_tiles) * dn_n));
    }
    w.advance();
  };
  pl::Tile t;
  unsigned pre = 0;
  if (pl::tile_at(ctx, 0, t)) {
    pre = per_tile < kWStages ? per_tile : kWStages;  // the ring's first round: free at once
    for (unsigned s = 0; s < pre; ++s) issue(t, s);
  }
  pl::pdl_wait();
  {
    C::Out_x x(ctx);
    x.acquire();
    x.expect_tx();
    unsigned char* xs = x.x<unsigned char>(ctx);
    for (unsigned kt = 0; kt < k_tiles; ++kt)
      pl::tma_load_2d(xs + kt * 8u * tile_k * 2u, x_map, x.full_bar(), static_cast<int>(kt * tile_k), 0);
    x.advance();
  }
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i)
    for (unsigned s = i == 0 ? pre : 0; s < per_tile; ++s) issue(t, s);
}
