// mlp_loader — io-team. The TMA producer of the fused decode MLP.
//
// The link's tile sequence runs over the FFN columns in tiles of tile_n (one row tile: M <= 64).
// For tile t it fills
//   "gu": K / tile_k stages of X [tile_m x tile_k] (rows past M read as zeros) and W_gu's gate rows
//         [t.n tile_n, + tile_n) then up rows [b_stride + t.n tile_n, + tile_n) of the same K slice;
//   "dn": hidden / dn_n stages of W_down's rows [c dn_n, + dn_n) over its K columns
//         [t.n tile_n, + tile_k) (tile_n == tile_k: the tile's slice of the intermediate).
// Programmatic dependent launch: the contract says pdl_wait = "own"; before pl::pdl_wait() it
// requests the W_gu slices of the first "gu" stages and the first "dn" stages (no earlier kernel
// writes the weights), and X after it.
//
// Assumes: K % tile_k == 0, hidden % dn_n == 0, tile_n == tile_k; one thread issues everything.
#include "mlp_loader.contract.h"
#ifdef MLP_L2_PREFETCH
#include "../l2_prefetch.cuh"
#endif

PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);
PL_FACT_DECL(unsigned, dn_n);
PL_FACT_DECL(unsigned, gu_stages);
PL_FACT_DECL(unsigned, dn_stages);

PL_PROVIDE_LINKED(mlp_loader_main, gu_stages);
PL_PROVIDE_LINKED(mlp_loader_main, dn_stages);
PL_COPIES(mlp_loader_main, x_map, 1);    // per stage: X in one box, the gate/up W slice in two blocks of
PL_COPIES(mlp_loader_main, wgu_map, 2);  // tile_n rows, the down W slice in one (checked against the boxes)
PL_COPIES(mlp_loader_main, wd_map, 1);

PL_COMPONENT(mlp_loader_main) {
  namespace C = pl_contract::mlp_loader_main;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* x_map = C::param::x_map::get(ctx);
  const pl::TensorMap* wgu_map = C::param::wgu_map::get(ctx);
  const pl::TensorMap* wd_map = C::param::wd_map::get(ctx);
  pl::prefetch_tmap(x_map);
  pl::prefetch_tmap(wgu_map);
  pl::prefetch_tmap(wd_map);
  const unsigned K = C::param::K::get(ctx), b_stride = C::param::b_stride::get(ctx), hidden = C::param::hidden::get(ctx);
  const unsigned tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k), dn_n = PL_FACT(dn_n);
  const unsigned k_tiles = K / tile_k, n_chunks = hidden / dn_n;
#ifdef PL_CHECKED
  if (K % tile_k != 0 || hidden % dn_n != 0 || tile_n != tile_k) {
    printf("mlp_loader: K = %u (tile_k %u), hidden = %u (dn_n %u), tile_n %u: needs multiples and tile_n == tile_k\n", K, tile_k,
           hidden, dn_n, tile_n);
    __trap();
  }
#endif
  const unsigned gu_bytes_b = tile_n * tile_k * 2u;  // one of the two W_gu halves of a stage

  C::Out_gu gu(ctx);
  C::Out_dn dn(ctx);
  C::Out_gu gu_early = gu;  // the same first stages again, for their X slices after the wait
  unsigned pre_gu = 0, pre_dn = 0;
  pl::Tile t;
  if (pl::tile_at(ctx, 0, t)) {
    pre_gu = k_tiles < PL_FACT(gu_stages) ? k_tiles : PL_FACT(gu_stages);
    pre_dn = n_chunks < PL_FACT(dn_stages) ? n_chunks : PL_FACT(dn_stages);
    for (unsigned kt = 0; kt < pre_gu; ++kt) {
      gu.acquire();  // the ring's first round: free at once
      gu.expect_tx();
      unsigned char* b = gu.b<unsigned char>(ctx);
      pl::tma_load_2d(b, wgu_map, gu.full_bar(), static_cast<int>(kt * tile_k), static_cast<int>(t.n * tile_n));
      pl::tma_load_2d(b + gu_bytes_b, wgu_map, gu.full_bar(), static_cast<int>(kt * tile_k), static_cast<int>(b_stride + t.n * tile_n));
      gu.advance();
    }
    for (unsigned c = 0; c < pre_dn; ++c) {
      dn.acquire();
      dn.expect_tx();
      pl::tma_load_2d(dn.b<unsigned char>(ctx), wd_map, dn.full_bar(), static_cast<int>(t.n * tile_n), static_cast<int>(c * dn_n));
      dn.advance();
    }
  }
  pl::pdl_wait();
  for (unsigned kt = 0; kt < pre_gu; ++kt) {
    pl::tma_load_2d(gu_early.a<unsigned char>(ctx), x_map, gu_early.full_bar(), static_cast<int>(kt * tile_k), 0);
    gu_early.advance();
  }

  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    for (unsigned kt = i == 0 ? pre_gu : 0; kt < k_tiles; ++kt) {
      const int k0 = static_cast<int>(kt * tile_k);
      gu.acquire();
      gu.expect_tx();
      unsigned char* b = gu.b<unsigned char>(ctx);
      pl::tma_load_2d(gu.a<unsigned char>(ctx), x_map, gu.full_bar(), k0, 0);
      pl::tma_load_2d(b, wgu_map, gu.full_bar(), k0, static_cast<int>(t.n * tile_n));
      pl::tma_load_2d(b + gu_bytes_b, wgu_map, gu.full_bar(), k0, static_cast<int>(b_stride + t.n * tile_n));
      gu.advance();
    }
    for (unsigned c = i == 0 ? pre_dn : 0; c < n_chunks; ++c) {
      dn.acquire();
      dn.expect_tx();
      pl::tma_load_2d(dn.b<unsigned char>(ctx), wd_map, dn.full_bar(), static_cast<int>(t.n * tile_n), static_cast<int>(c * dn_n));
      dn.advance();
    }
  }
#ifdef MLP_L2_PREFETCH
  // mlp_loader_g6d5_pf.toml: params 6-9 (pf0, pf0_bytes, pf1, pf1_bytes): this block's share of
  // two regions a later kernel reads, once this block's last load is issued (l2_prefetch.cuh).
  llama_l2::prefetch_share(ctx.ptr<const char>(6), ctx.u32(7));
  llama_l2::prefetch_share(ctx.ptr<const char>(8), ctx.u32(9));
#endif
}
