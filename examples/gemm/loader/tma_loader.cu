// tma_loader — io-team.
//
// Producer of the GEMM's "ab" pipe: for every output tile of the kernel's tile sequence it
// streams the K dimension in tile_k-wide slices, loading an A slice [tile_m x tile_k] and a
// B slice [tile_n x tile_k] (both bf16, K contiguous) into one pipe stage with two 2-D TMA loads
// that complete on the stage's "full" mbarrier (transaction bytes announced by expect_tx()).
//
// Assumes: params a_map / b_map are 2-D tensor maps built by the host with globalDim {K, M} /
// {K, N} and box {tile_k, tile_m} / {tile_k, tile_n}, no swizzle; K % tile_k == 0 (the host
// checks it). Only lane 0 of the single warp works; the other lanes return at once.
#include "pipelink/device.cuh"

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);

// Names live in a namespace of their own: the monolithic control compiles every component
// source as one program.
namespace tma_loader {
enum : unsigned { kParamAMap = 0, kParamBMap = 1, kParamK = 2 };  // [[param]] order
enum : unsigned { kPortAB = 0 };                                   // [[port]] order
enum : unsigned { kTensorA = 0, kTensorB = 1 };                    // [[port.tensor]] order
}  // namespace tma_loader

// What this code compiles in, checked against contract.toml by the linker.
PL_PROVIDE_LINKED(tma_loader_main, stages);  // the ring's depth comes from the slots
PL_WARPS(tma_loader_main, 1);
PL_REGISTERS(tma_loader_main, 40);
PL_ARRIVE(tma_loader_main, ab, one);  // one thread: expect_tx

PL_COMPONENT(tma_loader_main) {
  using namespace tma_loader;
  if ((threadIdx.x & 31u) != 0) return;  // one elected thread issues every TMA

  const pl::TensorMap* a_map = ctx.tmap(kParamAMap);
  const pl::TensorMap* b_map = ctx.tmap(kParamBMap);
  pl::prefetch_tmap(a_map);
  pl::prefetch_tmap(b_map);

  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  const unsigned k_tiles = ctx.u32(kParamK) / tile_k;

  pl::PipeWriter w(ctx, kPortAB);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const int row_a = static_cast<int>(t.m * tile_m);
    const int row_b = static_cast<int>(t.n * tile_n);
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      w.acquire();    // wait until every consumer released this stage
      w.expect_tx();  // arrive once, announcing this stage's bytes
      const int k0 = static_cast<int>(kt * tile_k);
      pl::tma_load_2d(w.tensor<unsigned char>(ctx, kTensorA), a_map, w.full_bar(), k0, row_a);
      pl::tma_load_2d(w.tensor<unsigned char>(ctx, kTensorB), b_map, w.full_bar(), k0, row_b);
      w.advance();
    }
  }
}
