// wgmma_gu_swap — gemm-team. The gate/up main loop for decode batches of up to 16 rows, with the
// wgmma operands swapped.
//
// Consumer of the "ab" pipe, producer of the "acc" pipe; one warpgroup. The stage is the one the
// 16 x 104 build of wgmma_gu consumes (contract_small16.toml): an A slice X [16 x 64] and a B
// slice [208 x 64] (rows [0, 104) the gate block, [104, 208) the up block), both K-major in the
// 128-byte swizzle. wgmma_gu multiplies m64 rows of X by the B slice, so 48 of its 64 rows are
// padding and three quarters of its tensor work is thrown away; at decode sizes that work holds
// each stage longer before it is released, and fewer stages are in flight (bench/stream: 4.23
// against 4.30 TB/s for the same packed stream). Here W's rows are the wgmma's M and X's rows its
// N: per k16 step four m64n16k16 over the B slice's row groups [0, 64), [40, 104), [104, 168),
// [144, 208) (the second and fourth overlap the first and third by 24 rows, so no group reads
// past its block; the overlapped rows are computed twice and stored once), all of them real.
//
// At the end of a tile the accumulators (acc row = W row, acc column = X row) are rounded to bf16
// and stored transposed into the "acc" stage, row-major [16 x 208]: gate in columns [0, 104), up
// in [104, 208), as wgmma_gu writes it, so the SwiGLU and the store are unchanged.
//
// Compile-time constants: the contract's provided tile (PL_PROVIDE_FROM_CONTRACT: the records come
// from the contract's own values, so they cannot differ); the row groups assume 16 x 104 x 64.
#define PL_PROVIDE_FROM_CONTRACT
#include "wgmma_gu_swap.contract.h"

#include "wgmma_ops.cuh"

namespace wgmma_gu_swap {
namespace C = pl_contract::wgmma_gu_swap_main;
constexpr unsigned kTileM = C::provided::tile_m, kTileN = C::provided::tile_n, kTileK = C::provided::tile_k;
static_assert(kTileM == 16 && kTileN == 104 && kTileK == 64, "the m64 row groups below are laid out for 16 x 104 x 64");
// First W row of each m64 group in the B slice, and the first of its rows it stores (the
// overlapped rows of groups 1 and 3 are stored by groups 0 and 2).
constexpr unsigned kGroups = 4;
__host__ __device__ constexpr unsigned group_row(unsigned g) { return g / 2 * kTileN + g % 2 * (kTileN - 64); }
__host__ __device__ constexpr unsigned group_own(unsigned g) { return g % 2 ? 64 - (kTileN - 64) : 0; }
static_assert(group_row(1) % 8 == 0 && group_row(2) % 8 == 0 && group_row(3) % 8 == 0,
              "each group starts on an 8-row swizzle atom (1024 bytes), where its descriptor's swizzle phase is 0");

__device__ __forceinline__ void store_bf16(unsigned char* p, float v) {
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(v));
  *reinterpret_cast<unsigned short*>(p) = h;
}
}  // namespace wgmma_gu_swap

// The swizzles the code compiles in: the operands' descriptors (desc_sw128), the acc stage's
// plain row-major stores.
PL_SWIZZLE(wgmma_gu_swap_main, ab, a, 128);
PL_SWIZZLE(wgmma_gu_swap_main, ab, b, 128);
PL_SWIZZLE(wgmma_gu_swap_main, acc, tile, 0);
PL_COLS(wgmma_gu_swap_main, acc, tile, 2 * wgmma_gu_swap::kTileN);

PL_COMPONENT(wgmma_gu_swap_main) {
  using namespace wgmma_gu_swap;
  const unsigned lane = threadIdx.x & 31u, warp = ctx.warp();
  const unsigned k_tiles = C::param::K::get(ctx) / kTileK;

  C::In_ab ab(ctx);
  C::Out_acc out(ctx);
  float acc[kGroups][8];
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      ab.wait();
      const unsigned a = pl::smem_addr(ab.a<unsigned char>(ctx));
      const unsigned b = pl::smem_addr(ab.b<unsigned char>(ctx));
      wgmma_fence();
#pragma unroll
      for (unsigned k = 0; k < kTileK / 16; ++k) {
        const int scale = (kt > 0 || k > 0) ? 1 : 0;  // the first step of a tile overwrites
#pragma unroll
        for (unsigned g = 0; g < kGroups; ++g)
          wgmma_m64n16k16(acc[g], desc_sw128(b + group_row(g) * 128u + k * 32u), desc_sw128(a + k * 32u), scale);
      }
      wgmma_commit();
      wgmma_wait_all();
#pragma unroll
      for (unsigned g = 0; g < kGroups; ++g) fence_operands(acc[g]);
      ab.release(ctx);  // arrive = "warp": the stage's wgmma reads are complete
      ab.advance();
    }
    // Accumulator register 4j + 2h + e of group g is W row group_row(g) + 16 warp + lane / 4 + 8h
    // (the tile's column), X row 8j + 2 (lane % 4) + e (the tile's row).
    out.acquire();
    unsigned char* stage = out.tile<unsigned char>(ctx);
    constexpr unsigned row_bytes = 2u * kTileN * 2u;
#pragma unroll
    for (unsigned g = 0; g < kGroups; ++g)
#pragma unroll
      for (unsigned h = 0; h < 2; ++h) {
        const unsigned r = warp * 16u + (lane >> 2) + 8u * h;  // within the group
        if (r < group_own(g)) continue;
        const unsigned col = group_row(g) + r;
#pragma unroll
        for (unsigned j = 0; j < 2; ++j)
#pragma unroll
          for (unsigned e = 0; e < 2; ++e)
            store_bf16(stage + (8u * j + 2u * (lane & 3u) + e) * row_bytes + col * 2u, acc[g][4 * j + 2 * h + e]);
      }
    // arrive = "one": each thread fences its stores (the store may read "acc" through the async
    // proxy), named barrier wg_sync, then thread 0 arrives.
    out.commit(ctx);
    out.advance();
  }
}
