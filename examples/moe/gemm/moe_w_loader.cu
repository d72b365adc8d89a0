// moe_w_loader — gemm-team. TMA loads of one expert's weight rows into the "ab" pipe's B slice.
// The expert of an m-tile is tile_expert[t.m] (written by routing); its rows start at
// e * expert_rows. Like gu_loader, a stage gets two blocks of tile_n rows: t.n * n_step + (0..tile_n)
// and the same plus b_stride (gate and up rows for the gate/up projection; two adjacent blocks for
// the down projection). One thread; writes only tensor "b".
// Assumes: w_map is a 2-D tensor map over all experts' weights [E * expert_rows, K] bf16, box
// {tile_k, tile_n}, 128B swizzle.
#include "pipelink/device.cuh"

PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);

namespace moe_w_loader {
enum : unsigned { kParamW = 0, kParamTileExpert = 1, kParamK = 2, kParamNStep = 3, kParamBStride = 4, kParamExpertRows = 5 };
enum : unsigned { kPortAB = 0 };
enum : unsigned { kTensorB = 1 };  // the stage holds a (the dispatch owner's) and b (ours)
}  // namespace moe_w_loader

// What this code compiles in, checked against w_loader.toml by the linker.
PL_PROVIDE_LINKED(moe_w_loader_main, stages);  // the ring's depth comes from the slots
PL_WARPS(moe_w_loader_main, 1);
PL_INSTANCES(moe_w_loader_main, 1);
PL_REGISTERS(moe_w_loader_main, 40);
PL_ARRIVE(moe_w_loader_main, ab, one);

PL_COMPONENT(moe_w_loader_main) {
  using namespace moe_w_loader;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* map = ctx.tmap(kParamW);
  pl::prefetch_tmap(map);
  const int* tile_expert = ctx.ptr<const int>(kParamTileExpert);
  const unsigned tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  const unsigned k_tiles = ctx.u32(kParamK) / tile_k, n_step = ctx.u32(kParamNStep), b_stride = ctx.u32(kParamBStride);
  const unsigned expert_rows = ctx.u32(kParamExpertRows);
  pl::PipeWriter w(ctx, kPortAB);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const int row = int(unsigned(tile_expert[t.m]) * expert_rows + t.n * n_step);
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      w.acquire();
      w.expect_tx();
      unsigned char* b = w.tensor<unsigned char>(ctx, kTensorB);
      pl::tma_load_2d(b, map, w.full_bar(), int(kt * tile_k), row);
      pl::tma_load_2d(b + tile_n * tile_k * 2u, map, w.full_bar(), int(kt * tile_k), row + int(b_stride));
      w.advance();
    }
  }
}
