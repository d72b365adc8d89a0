// moe_a_loader — dispatch-team. TMA loads of the expert-sorted activation rows (the SwiGLU output
// Hm, contiguous per expert) into the "ab" pipe's A slice for the down projection. One thread;
// writes only tensor "a" (the weights come from moe_w_loader on the same pipe).
// Assumes: a_map is a 2-D tensor map over Hm [rows, K] bf16, box {tile_k, tile_m}, 128B swizzle.
#include "moe_a_loader.contract.h"  // pipelink header a_loader.toml: names, pipe operations, records

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_k);

// What this code compiles in beyond the header's records, checked against a_loader.toml.
// -DA_LOADER_ALIGN=64 (a_loader64.toml): the layer with 64-row tiles.
#ifndef A_LOADER_ALIGN
#define A_LOADER_ALIGN 128
#endif
PL_PROVIDE(moe_a_loader_main, expert_align, A_LOADER_ALIGN);  // its TMA boxes never straddle two experts' rows
PL_COPIES(moe_a_loader_main, a_map, 1);  // the stage's X slice in one box

PL_COMPONENT(moe_a_loader_main) {
  namespace C = pl_contract::moe_a_loader_main;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* map = C::param::a_map::get(ctx);
  pl::prefetch_tmap(map);
  const unsigned k_tiles = C::param::K::get(ctx) / PL_FACT(tile_k);
  C::Out_ab w(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i)
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      w.acquire();
      w.expect_tx();  // this producer's bytes only: the link counts the tensors it writes
      pl::tma_load_2d(w.a<unsigned char>(ctx), map, w.full_bar(), int(kt * PL_FACT(tile_k)), int(t.m * PL_FACT(tile_m)));
      w.advance();
    }
}
