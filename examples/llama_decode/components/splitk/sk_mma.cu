// sk_mma — gemm-team. The Hopper main loop of the split-K decode GEMM.
//
// Consumer of the "ab" pipe, producer of the "acc" pipe. One warpgroup computes a 64 x 64 tile of
// X · W^T over one K chunk of the link's tile sequence (tile (t.m, t.n): K chunk t.m, columns
// t.n * 64): per stage, four m64n64k16 wgmma steps (bf16 in, f32 accumulate) from an A slice
// X [64 x 64] and a B slice W [64 x 64], both K-major with the 128-byte swizzle TMA writes.
// At the end of the chunk it stores the f32 accumulators, unrounded, into the "acc" stage,
// row-major [64 x 64]: a partial sum, which the consumer of "acc" adds up across the chunks.
//
// Compile-time constants (the wgmma shape and the accumulator array need immediates): kTileM,
// kTileN, kTileK are what the contract provides as tile_m, tile_n and tile_k. The chunk length
// (k_chunk) is the link's; the number of stages per tile is k_chunk / tile_k.
#include "sk_mma.contract.h"  // pipelink header sk_mma.toml: names, pipe operations, records

#include "../../../qwen_mlp/mma/wgmma_ops.cuh"  // gemm-team's generated wgmma wrappers (gen_wgmma.py): m64n64k16

PL_FACT_DECL(unsigned, k_chunk);

namespace sk_mma {
constexpr unsigned kTileM = 64, kTileN = 64, kTileK = 64;
constexpr unsigned kAcc = kTileN / 2;  // f32 accumulator registers per thread
// The descriptor (desc_sw128), fence / commit / wait and fence_operands: wgmma_ops.cuh.
}  // namespace sk_mma

// What this code compiles in beyond the header's records, checked against the contract.
PL_PROVIDE(sk_mma_main, tile_m, sk_mma::kTileM);
PL_PROVIDE(sk_mma_main, tile_n, sk_mma::kTileN);
PL_SWIZZLE(sk_mma_main, ab, a, 128);  // the wgmma descriptors (desc_sw128)
PL_SWIZZLE(sk_mma_main, ab, b, 128);
PL_PROVIDE(sk_mma_main, tile_k, sk_mma::kTileK);

PL_COMPONENT(sk_mma_main) {
  using namespace sk_mma;
  namespace C = pl_contract::sk_mma_main;
  const unsigned lane = threadIdx.x & 31u, warp = ctx.warp();
  const unsigned k_tiles = PL_FACT(k_chunk) / kTileK;

  C::In_ab ab(ctx);
  C::Out_acc out(ctx);
  float d[kAcc];
#pragma unroll
  for (unsigned i = 0; i < kAcc; ++i) d[i] = 0.f;
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      ab.wait();
      const unsigned a = pl::smem_addr(ab.a<unsigned char>(ctx));
      const unsigned b = pl::smem_addr(ab.b<unsigned char>(ctx));
      wgmma_fence();
#pragma unroll
      for (unsigned k = 0; k < kTileK / 16; ++k)
        wgmma_m64n64k16(d, desc_sw128(a + k * 32u), desc_sw128(b + k * 32u), (kt > 0 || k > 0) ? 1 : 0);
      wgmma_commit();
      wgmma_wait_all();
      fence_operands(d);
      ab.release(ctx);  // arrive = "warp": the stage's wgmma reads are complete
      ab.advance();
    }
    // Accumulator register 4j + 2h + e is row 16 warp + lane/4 + 8h, column 8j + 2 (lane % 4) + e.
    out.acquire();
    float* stage = out.tile<float>(ctx);
    const unsigned r = warp * 16u + (lane >> 2);
#pragma unroll
    for (unsigned j = 0; j < kAcc / 4; ++j) {
      const unsigned col = 8u * j + 2u * (lane & 3u);
#pragma unroll
      for (unsigned h = 0; h < 2; ++h)
        *reinterpret_cast<float2*>(stage + (r + 8u * h) * kTileN + col) = make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
    }
    out.commit(ctx);  // arrive = "one" per warpgroup: fence, wg_sync, thread 0 arrives
    out.advance();
  }
}
