// sk_loader — io-team. The TMA producer of the split-K decode GEMM's "ab" pipe.
//
// Decode GEMMs have few rows (M = the batch, at most 64) and narrow outputs (N = 2048 or 3072),
// so a tile per output column block alone gives 32-48 blocks on 132 SMs, each streaming a long
// slice of W. This loader splits K as well: the link's tile sequence runs over (K, N) in steps of
// (k_chunk, tile_n), and tile (t.m, t.n) streams the K columns [t.m k_chunk, (t.m + 1) k_chunk)
// of W's rows [t.n tile_n, (t.n + 1) tile_n) and of every row of X, tile_k columns per stage.
// The partial products are summed by whoever consumes the main loop's output (sk_red.cu).
//
// Assumes: x_map / w_map are 2-D tensor maps over X [M, K] and W [N, K] (bf16), boxes
// {tile_k, tile_m} and {tile_k, tile_n}, 128-byte swizzle; K % k_chunk == 0. X's rows past M
// read as zeros (TMA out-of-bounds fill). One thread issues everything.
//
// Programmatic dependent launch: the contract says pdl_wait = "own", so in a --pdl link this code
// executes the dependency wait itself (pl::pdl_wait()), after it has started the weight stream.
// sk_loader.contract.h: generated from sk_loader.toml and sk_loader_k1024.toml (pipelink header;
// they differ only in the facts they provide, which this code reads from the link).
#include "sk_loader.contract.h"
#ifdef SK_L2_PREFETCH
#include "../l2_prefetch.cuh"
#endif

PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);
PL_FACT_DECL(unsigned, k_chunk);
PL_FACT_DECL(unsigned, stages);

// What this code reads from the link rather than compiling in, checked against the contracts.
PL_PROVIDE_LINKED(sk_loader_main, stages);
PL_PROVIDE_LINKED(sk_loader_main, k_chunk);
PL_COPIES(sk_loader_main, x_map, 1);  // one X and one W box per stage (checked against the contract's boxes)
PL_COPIES(sk_loader_main, w_map, 1);

PL_COMPONENT(sk_loader_main) {
  namespace C = pl_contract::sk_loader_main;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* x_map = C::param::x_map::get(ctx);
  const pl::TensorMap* w_map = C::param::w_map::get(ctx);
  pl::prefetch_tmap(x_map);
  pl::prefetch_tmap(w_map);
  const unsigned tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k), k_chunk = PL_FACT(k_chunk);
  const unsigned k_tiles = k_chunk / tile_k;

  C::Out_ab w(ctx);
  // Before the dependency wait (the contract's pdl_wait = "own"): the W slices of the first
  // tile's first stages. No earlier kernel writes W, so under --pdl they stream while the
  // previous kernel (the one that writes X) still runs. X follows once pl::pdl_wait() returns.
  C::Out_ab early = w;  // the same stages again, for their X slices
  unsigned pre = 0;
  pl::Tile t;
  if (pl::tile_at(ctx, 0, t)) {
    pre = k_tiles < PL_FACT(stages) ? k_tiles : PL_FACT(stages);
    for (unsigned kt = 0; kt < pre; ++kt) {
      w.acquire();  // the ring's first round: free at once
      w.expect_tx();
      pl::tma_load_2d(w.b<unsigned char>(ctx), w_map, w.full_bar(), static_cast<int>(t.m * k_chunk + kt * tile_k),
                      static_cast<int>(t.n * tile_n));
      w.advance();
    }
  }
  pl::pdl_wait();
  for (unsigned kt = 0; kt < pre; ++kt) {
    pl::tma_load_2d(early.a<unsigned char>(ctx), x_map, early.full_bar(), static_cast<int>(t.m * k_chunk + kt * tile_k), 0);
    early.advance();
  }

  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const int row_b = static_cast<int>(t.n * tile_n);
    const unsigned k_base = t.m * k_chunk;
    for (unsigned kt = i == 0 ? pre : 0; kt < k_tiles; ++kt) {
      const int k0 = static_cast<int>(k_base + kt * tile_k);
      w.acquire();
      w.expect_tx();
      pl::tma_load_2d(w.a<unsigned char>(ctx), x_map, w.full_bar(), k0, 0);
      pl::tma_load_2d(w.b<unsigned char>(ctx), w_map, w.full_bar(), k0, row_b);
      w.advance();
    }
  }
#ifdef SK_L2_PREFETCH
  // sk_loader_pf.toml: params 3-6 (pf0, pf0_bytes, pf1, pf1_bytes): this block's share of two
  // regions a later kernel reads, once this block's last load is issued (l2_prefetch.cuh).
  llama_l2::prefetch_share(ctx.ptr<const char>(3), ctx.u32(4));
  llama_l2::prefetch_share(ctx.ptr<const char>(5), ctx.u32(6));
#endif
}
