// gu_loader — io-team. The TMA producer of the gate/up GEMM's "ab" pipe.
//
// For every tile of the link's tile sequence it streams K in tile_k-wide slices. Each stage gets
// one A slice X[t.m * tile_m + (0..tile_m), k0 + (0..tile_k)] and two B blocks of tile_n rows of
// W each: rows t.n * n_step + (0..tile_n) and the same plus b_stride. For the fused gate/up
// SwiGLU, n_step = tile_n and b_stride = I (gate rows, then the matching up rows); for a plain
// GEMM over all of W, n_step = 2 tile_n and b_stride = tile_n (two adjacent blocks).
// All three copies complete on the stage's full mbarrier; the byte count comes from the link.
//
// Assumes: x_map / w_map are 2-D tensor maps over X [M, K] and W [rows, K] (bf16), boxes
// {tile_k, tile_m} and {tile_k, tile_n}, 128-byte swizzle; K % tile_k == 0. Rows past M read
// as zeros (TMA out-of-bounds fill). One thread issues everything.
#include "pipelink/device.cuh"

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);

namespace gu_loader {
enum : unsigned { kParamX = 0, kParamW = 1, kParamK = 2, kParamNStep = 3, kParamBStride = 4 };
enum : unsigned { kPortAB = 0 };
enum : unsigned { kTensorA = 0, kTensorB = 1 };
}  // namespace gu_loader

// What this code compiles in, checked against the contracts by the linker.
PL_PROVIDE_LINKED(gu_loader_main, stages);  // the ring's depth comes from the slots
PL_WARPS(gu_loader_main, 1);
PL_REGISTERS(gu_loader_main, 40);
PL_ARRIVE(gu_loader_main, ab, one);  // one thread: expect_tx

PL_COMPONENT(gu_loader_main) {
  using namespace gu_loader;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* x_map = ctx.tmap(kParamX);
  const pl::TensorMap* w_map = ctx.tmap(kParamW);
  pl::prefetch_tmap(x_map);
  pl::prefetch_tmap(w_map);
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  const unsigned k_tiles = ctx.u32(kParamK) / tile_k;
  const unsigned n_step = ctx.u32(kParamNStep), b_stride = ctx.u32(kParamBStride);
  const unsigned b_block_bytes = tile_n * tile_k * 2u;

  pl::PipeWriter w(ctx, kPortAB);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const int row_a = static_cast<int>(t.m * tile_m);
    const int row_b = static_cast<int>(t.n * n_step);
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      const int k0 = static_cast<int>(kt * tile_k);
      w.acquire();
      w.expect_tx();
      unsigned char* b = w.tensor<unsigned char>(ctx, kTensorB);
      pl::tma_load_2d(w.tensor<unsigned char>(ctx, kTensorA), x_map, w.full_bar(), k0, row_a);
      pl::tma_load_2d(b, w_map, w.full_bar(), k0, row_b);
      pl::tma_load_2d(b + b_block_bytes, w_map, w.full_bar(), k0, row_b + static_cast<int>(b_stride));
      w.advance();
    }
  }
}
