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
// sk_loader.contract.h: generated from sk_loader.toml and sk_loader_k1024.toml (pipelink header;
// they differ only in the facts they provide, which this code reads from the link).
#include "sk_loader.contract.h"

PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);
PL_FACT_DECL(unsigned, k_chunk);

// What this code reads from the link rather than compiling in, checked against the contracts.
PL_PROVIDE_LINKED(sk_loader_main, stages);
PL_PROVIDE_LINKED(sk_loader_main, k_chunk);

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
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const int row_b = static_cast<int>(t.n * tile_n);
    const unsigned k_base = t.m * k_chunk;
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      const int k0 = static_cast<int>(k_base + kt * tile_k);
      w.acquire();
      w.expect_tx();
      pl::tma_load_2d(w.a<unsigned char>(ctx), x_map, w.full_bar(), k0, 0);
      pl::tma_load_2d(w.b<unsigned char>(ctx), w_map, w.full_bar(), k0, row_b);
      w.advance();
    }
  }
}
