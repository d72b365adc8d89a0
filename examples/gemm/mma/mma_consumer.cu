// mma_consumer — gemm-team.
//
// One instance = one warpgroup (4 warps). The link holds two instances; instance i computes
// rows [64*i, 64*i + 64) of every 128x128 output tile, warp w of it the 16 rows starting at
// 64*i + 16*w, across all 128 columns, with mma.sync m16n8k16 (bf16 in, fp32 accumulate).
//
// Per tile: for each tile_k slice of the "ab" pipe: wait, two k16 steps (A fragments and B
// fragments by ldmatrix), release the stage (one arrival per warp). Then acquire a "c" stage,
// store the fp32 accumulators into it, sync the warpgroup on the named barrier "wg_sync" and
// let thread 0 of the instance commit (one arrival per instance).
//
// Assumes: the stage tensors are plain row-major, no swizzle: a = [128][32] bf16 (64-byte rows),
// b = [128][32] bf16 ([n][k], i.e. B^T, exactly mma's "col" operand), c = [128][128] f32;
// every tensor offset is 16-byte aligned (ldmatrix, vector stores); K % kTileK == 0.
// kTileM / kTileN / kTileK are this owner's facts tile_m / tile_n / tile_k (see contract.toml):
// they size register arrays, so they are compile-time constants here, taken from the contract
// through mma_consumer.contract.h (pipelink header). The code compiles in exactly those
// constants, so the records of the provided facts come from them too (PL_PROVIDE_FROM_CONTRACT).
#define PL_PROVIDE_FROM_CONTRACT
#include "mma_consumer.contract.h"

// Names live in a namespace of their own: the monolithic control compiles every component
// source as one program.
namespace mma_consumer {
namespace C = pl_contract::mma_consumer_main;

constexpr unsigned kTileM = C::provided::tile_m, kTileN = C::provided::tile_n, kTileK = C::provided::tile_k;
constexpr unsigned kWarps = C::warps, kInstances = C::instances;
constexpr unsigned kWarpRows = 16;                             // mma M
constexpr unsigned kInstanceRows = kWarps * kWarpRows;         // 64
constexpr unsigned kNTiles = kTileN / 8;                       // n8 tiles per warp: 16
constexpr unsigned kKSteps = kTileK / 16;                      // k16 steps per stage: 2
constexpr unsigned kRowBytes = kTileK * 2;                     // a / b row pitch: 64 bytes
static_assert(kInstances * kInstanceRows == kTileM, "instances x warps x 16 rows must cover tile_m");
static_assert(kTileN % 16 == 0 && kTileK % 16 == 0, "tile_n, tile_k must be multiples of 16");

// Four 8x8 b16 matrices; lane l gives the address of row (l % 8) of matrix (l / 8) and receives,
// in register j, elements (l / 4, 2 * (l % 4) + {0, 1}) of matrix j.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void st_shared_v2(unsigned addr, float x, float y) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

}  // namespace mma_consumer

#ifdef PL_CHECKED
PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);
#endif

PL_COMPONENT(mma_consumer_main) {
  using namespace mma_consumer;
#ifdef PL_CHECKED
  if (PL_FACT(tile_m) != kTileM || PL_FACT(tile_n) != kTileN || PL_FACT(tile_k) != kTileK ||
      ctx.slots->instances != kInstances || ctx.slots->warps != kWarps)
    __trap();
#endif
  const unsigned lane = threadIdx.x & 31u;
  const unsigned row0 = ctx.slots->instance * kInstanceRows + ctx.warp() * kWarpRows;  // warp's first row
  const unsigned k_tiles = C::param::K::get(ctx) / kTileK;

  // ldmatrix row addresses (byte offsets inside a stage tensor, for k step 0).
  // A (x4 -> a[0..3] = rows 0-7/k 0-7, rows 8-15/k 0-7, rows 0-7/k 8-15, rows 8-15/k 8-15):
  //   matrix j = lane / 8: row = (j & 1) * 8 + lane % 8, k = (j >> 1) * 8.
  const unsigned a_off = (row0 + ((lane >> 3) & 1u) * 8 + (lane & 7u)) * kRowBytes + (lane >> 4) * 16;
  // B (x4 -> b[0..1] = n 0-7 at k 0-7 / k 8-15, b[2..3] = n 8-15 at k 0-7 / k 8-15):
  //   matrix j = lane / 8: n = (j >> 1) * 8 + lane % 8, k = (j & 1) * 8.
  const unsigned b_off = ((lane >> 4) * 8 + (lane & 7u)) * kRowBytes + ((lane >> 3) & 1u) * 16;

  C::In_ab ab(ctx);
  C::Out_c cw(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    float acc[kNTiles][4];
#pragma unroll
    for (unsigned n = 0; n < kNTiles; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;

    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      ab.wait();
      const unsigned a_base = pl::smem_addr(ab.a<unsigned char>(ctx)) + a_off;
      const unsigned b_base = pl::smem_addr(ab.b<unsigned char>(ctx)) + b_off;
#pragma unroll
      for (unsigned ks = 0; ks < kKSteps; ++ks) {
        unsigned a[4];
        ldmatrix_x4(a, a_base + ks * 32);
#pragma unroll
        for (unsigned np = 0; np < kNTiles / 2; ++np) {  // two n8 tiles per ldmatrix.x4
          unsigned b[4];
          ldmatrix_x4(b, b_base + np * 16 * kRowBytes + ks * 32);
          mma_bf16_16816(acc[2 * np], a, b[0], b[1]);
          mma_bf16_16816(acc[2 * np + 1], a, b[2], b[3]);
        }
      }
      ab.release(ctx);  // arrive = "warp": after __syncwarp() (every lane's ldmatrix is done), lane 0
      ab.advance();
    }

    // Epilogue: accumulator (n tile j, reg 2h + e) is C[row0 + lane/4 + 8h][8j + 2(lane%4) + e].
    cw.acquire();
    const unsigned c_base = pl::smem_addr(cw.c(ctx)) +
                            ((row0 + (lane >> 2)) * kTileN + (lane & 3u) * 2) * 4;
#pragma unroll
    for (unsigned n = 0; n < kNTiles; ++n) {
      st_shared_v2(c_base + n * 8 * 4, acc[n][0], acc[n][1]);
      st_shared_v2(c_base + (8 * kTileN + n * 8) * 4, acc[n][2], acc[n][3]);
    }
    cw.commit(ctx);  // arrive = "one": fence, named barrier wg_sync, then thread 0 of the instance
    cw.advance();
  }
}
