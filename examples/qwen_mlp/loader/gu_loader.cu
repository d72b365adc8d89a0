// gu_loader — io-team. The TMA producer of the gate/up GEMM's "ab" pipe.
//
// For every tile of the link's tile sequence it streams K in tile_k-wide slices. Each stage gets
// one A slice X[t.m * tile_m + (0..tile_m), k0 + (0..tile_k)] and two B blocks of tile_n rows of
// W each: rows t.n * n_step + (0..tile_n) and the same plus b_stride. For the fused gate/up
// SwiGLU, n_step = tile_n and b_stride = I (gate rows, then the matching up rows); for a plain
// GEMM over all of W, n_step = 2 tile_n and b_stride = tile_n (two adjacent blocks).
// All the copies complete on the stage's full mbarrier; the byte count comes from the link.
//
// Assumes: x_map / w_map are 2-D tensor maps over X [M, K] and W [rows, K] (bf16), boxes
// {tile_k, tile_m} and {tile_k, tile_n}, 128-byte swizzle;
// K % tile_k == 0 (the boxes come from the link: PL_COPIES below ties the copy count to them).
// Rows past M read as zeros (TMA out-of-bounds fill). One thread issues everything.
// gu_loader.contract.h: generated from contract.toml, contract_narrow.toml, contract_small.toml,
// contract_small64.toml and contract_small64_pdl.toml (pipelink header; they differ only in the
// stages they provide, which the code reads from the slots, and the last in pdl_wait): names, the ab port's expect_tx, and the records PL_WARPS, PL_REGISTERS, PL_ARRIVE.
#include "gu_loader.contract.h"

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);
PL_FACT_DECL(unsigned, stages);

// -DGU_PDL_PREFETCH=1 (contract_small64_pdl.toml, pdl_wait = "own"): under --pdl the W slices of
// the first tile's first stages are requested before the dependency wait (no earlier kernel
// writes W), the X slices after it.
#ifndef GU_PDL_PREFETCH
#define GU_PDL_PREFETCH 0
#endif
#ifndef GU_UNITS
#define GU_UNITS 0
#endif
// (-DGU_W_ONE_BOX=1, one W copy of 2 tile_n rows for the 128 x 200 GEMM probe of sessions 21-22: added in 0c1fed5,
// removed with that probe in session 22.)

// What this code compiles in beyond the header's records, checked against the contracts.
PL_PROVIDE_LINKED(gu_loader_main, stages);  // the ring's depth comes from the slots
// The copies per stage: X's slice in one, W's in two blocks of tile_n rows, checked against the
// boxes the contract's tensors and boxes resolve to.
PL_COPIES(gu_loader_main, x_map, 1);
PL_COPIES(gu_loader_main, w_map, 2);

PL_COMPONENT(gu_loader_main) {
  namespace C = pl_contract::gu_loader_main;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* x_map = C::param::x_map::get(ctx);
  const pl::TensorMap* w_map = C::param::w_map::get(ctx);
  pl::prefetch_tmap(x_map);
  pl::prefetch_tmap(w_map);
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  const unsigned k_tiles = C::param::K::get(ctx) / tile_k;  // the contracts' per_tile
#ifdef PL_CHECKED
  if (C::param::K::get(ctx) % tile_k != 0) asm volatile("trap;");  // K / tile_k slices would drop K's tail
#endif
  const unsigned n_step = C::param::n_step::get(ctx), b_stride = C::param::b_stride::get(ctx);
  const unsigned b_block_bytes = tile_n * tile_k * 2u;

  C::Out_ab w(ctx);
#if !GU_UNITS
  pl::Tile t;
  unsigned pre = 0;  // stages of the first tile whose W slices went out before the wait
#endif
#if GU_PDL_PREFETCH
  C::Out_ab early = w;
  if (pl::tile_at(ctx, 0, t)) {
    pre = k_tiles < PL_FACT(stages) ? k_tiles : PL_FACT(stages);
    const int row_b = static_cast<int>(t.n * n_step);
    for (unsigned kt = 0; kt < pre; ++kt) {
      w.acquire();  // the ring's first round: free at once
      w.expect_tx();
      unsigned char* b = w.b<unsigned char>(ctx);
      pl::tma_load_2d(b, w_map, w.full_bar(), static_cast<int>(kt * tile_k), row_b);
      pl::tma_load_2d(b + b_block_bytes, w_map, w.full_bar(), static_cast<int>(kt * tile_k), row_b + static_cast<int>(b_stride));
      w.advance();
    }
  }
  pl::pdl_wait();
  for (unsigned kt = 0; kt < pre; ++kt) {
    pl::tma_load_2d(early.a<unsigned char>(ctx), x_map, early.full_bar(), static_cast<int>(kt * tile_k), static_cast<int>(t.m * tile_m));
    early.advance();
  }
#endif
#if GU_UNITS
  // -DGU_UNITS=1 (contract_*_sk.toml, [tiles] k_extent): work units, k slices [k_begin, k_end) of
  // a tile, so a stream-k link may split a tile's slices across blocks.
  static_assert(!GU_PDL_PREFETCH, "GU_UNITS: without the PDL prefetch");
  (void)k_tiles;
  pl::Unit u;
  for (unsigned i = 0; pl::unit_at(ctx, i, u); ++i) {
    const pl::Tile& t = u.tile;
    const int row_a = static_cast<int>(t.m * tile_m);
    const int row_b = static_cast<int>(t.n * n_step);
    for (unsigned kt = u.k_begin; kt < u.k_end; ++kt) {
#else
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const int row_a = static_cast<int>(t.m * tile_m);
    const int row_b = static_cast<int>(t.n * n_step);
    for (unsigned kt = i == 0 ? pre : 0; kt < k_tiles; ++kt) {
#endif
      const int k0 = static_cast<int>(kt * tile_k);
      w.acquire();
      w.expect_tx();
      unsigned char* b = w.b<unsigned char>(ctx);
      pl::tma_load_2d(w.a<unsigned char>(ctx), x_map, w.full_bar(), k0, row_a);
      pl::tma_load_2d(b, w_map, w.full_bar(), k0, row_b);
      pl::tma_load_2d(b + b_block_bytes, w_map, w.full_bar(), k0, row_b + static_cast<int>(b_stride));
      w.advance();
    }
  }
}
