// moe_w_loader — gemm-team. TMA loads of one expert's weight rows into the "ab" pipe's B slice.
// The expert of an m-tile is tile_expert[t.m] (written by routing); its rows start at
// e * expert_rows. Like gu_loader, a stage gets two blocks of tile_n rows: t.n * n_step + (0..tile_n)
// and the same plus b_stride (gate and up rows for the gate/up projection; two adjacent blocks for
// the down projection). One thread; writes only tensor "b".
// Assumes: w_map is a 2-D tensor map over all experts' weights [E * expert_rows, K] bf16, box
// {tile_k, tile_n}, 128B swizzle.
#include "moe_w_loader.contract.h"  // pipelink header w_loader.toml: names, pipe operations, records

PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);

// What this code compiles in beyond the header's records, checked against w_loader.toml.
PL_PROVIDE_LINKED(moe_w_loader_main, stages);  // the ring's depth comes from the slots
PL_COPIES(moe_w_loader_main, w_map, 2);  // the stage's W slice in two blocks of tile_n rows (checked against the box)

PL_COMPONENT(moe_w_loader_main) {
  namespace C = pl_contract::moe_w_loader_main;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* map = C::param::w_map::get(ctx);
  pl::prefetch_tmap(map);
  const int* tile_expert = C::param::tile_expert::get<const int>(ctx);
  const unsigned tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  const unsigned k_tiles = C::param::K::get(ctx) / tile_k, n_step = C::param::n_step::get(ctx), b_stride = C::param::b_stride::get(ctx);
  const unsigned expert_rows = C::param::expert_rows::get(ctx);
  C::Out_ab w(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const int row = int(unsigned(tile_expert[t.m]) * expert_rows + t.n * n_step);
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      w.acquire();
      w.expect_tx();
      unsigned char* b = w.b<unsigned char>(ctx);  // the stage holds a (the dispatch owner's) and b (ours)
      pl::tma_load_2d(b, map, w.full_bar(), int(kt * tile_k), row);
      pl::tma_load_2d(b + tile_n * tile_k * 2u, map, w.full_bar(), int(kt * tile_k), row + int(b_stride));
      w.advance();
    }
  }
}
