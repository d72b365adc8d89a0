// moe_a_loader — dispatch-team. TMA loads of the expert-sorted activation rows (the SwiGLU output
// Hm, contiguous per expert) into the "ab" pipe's A slice for the down projection. One thread;
// writes only tensor "a" (the weights come from moe_w_loader on the same pipe).
// Assumes: a_map is a 2-D tensor map over Hm [rows, K] bf16, box {tile_k, tile_m}, 128B swizzle.
#include "pipelink/device.cuh"

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_k);

namespace moe_a_loader {
enum : unsigned { kParamA = 0, kParamK = 1 };
enum : unsigned { kPortAB = 0 };
enum : unsigned { kTensorA = 0 };
}  // namespace moe_a_loader

// What this code compiles in, checked against a_loader.toml by the linker.
PL_PROVIDE(moe_a_loader_main, expert_align, 128);  // its TMA boxes never straddle two experts' rows
PL_WARPS(moe_a_loader_main, 1);
PL_INSTANCES(moe_a_loader_main, 1);
PL_REGISTERS(moe_a_loader_main, 40);
PL_ARRIVE(moe_a_loader_main, ab, one);

PL_COMPONENT(moe_a_loader_main) {
  using namespace moe_a_loader;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* map = ctx.tmap(kParamA);
  pl::prefetch_tmap(map);
  const unsigned k_tiles = ctx.u32(kParamK) / PL_FACT(tile_k);
  pl::PipeWriter w(ctx, kPortAB);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i)
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      w.acquire();
      w.expect_tx();  // this producer's bytes only: the link counts the tensors it writes
      pl::tma_load_2d(w.tensor<unsigned char>(ctx, kTensorA), map, w.full_bar(), int(kt * PL_FACT(tile_k)), int(t.m * PL_FACT(tile_m)));
      w.advance();
    }
}
