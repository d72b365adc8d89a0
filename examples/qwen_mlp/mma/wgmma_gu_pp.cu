// wgmma_gu_pp — gemm-team. The Hopper main loop of the gate/up GEMM in ping-pong (session 12).
//
// Consumer of the "ab" pipe, producer of the "acc" pipe, like wgmma_gu.cu, but the two instances
// (one warpgroup each) do not split a tile between them: they take the block's tiles in turn,
// instance i the tiles i, i + 2, ... of pl::tile_at's sequence. A tile is 128 rows x (64 gate +
// 64 up) columns, computed whole by one warpgroup: per k16 step two m64n128k16 wgmma (rows 0-63
// and 64-127 of the A slice) over the stage's 128 B rows (gate block, then up block), 128 f32
// accumulators per thread. While one instance runs its tile's main loop the other writes its
// previous tile's accumulators to "acc", so the tensor pipe is not idle during the epilogue;
// within a tile one stage's wgmma group stays in flight (wgmma.wait_group 1) while the next is
// issued, and a stage is released once its group has completed.
//
// Every instance consumes every "ab" stage (the link's empty barrier counts both): the stages of
// the other instance's tiles are released as soon as they are full, without reading them, the
// first stages - 2 of them right after this instance's own main loop, before its epilogue (the
// loader refills a stage only when both instances released it, so releasing them after the
// epilogue would leave the other instance only the stages already loaded). Every
// instance also commits every tile's "acc" stage (its full barrier counts both): the tile's owner
// after writing the two panels, the other without writing (guarantees = writes_all holds: the
// owner writes all of the stage).
//
// "acc" is two 64-column panels [128 x 64] in the 128-byte swizzle (chunk c of row r at
// r * 128 + (c ^ r % 8) * 16): p0 the tile's columns [0, 64) (gate), p1 [64, 128) (up). The 8 rows
// one warp's store covers fall in 8 different 16-byte bank groups: no bank conflicts.
//
// The tile and the wgmma shapes are compile-time constants: this source compiles in exactly the
// contract's provided facts (PL_PROVIDE_FROM_CONTRACT), so they cannot differ from it.
#define PL_PROVIDE_FROM_CONTRACT
#include "wgmma_gu_pp.contract.h"  // pipelink header contract_pp.toml

#include "wgmma_ops.cuh"

namespace wgmma_gu_pp {
namespace C = pl_contract::wgmma_gu_pp_main;
constexpr unsigned kTileM = C::provided::tile_m, kTileN = C::provided::tile_n, kTileK = C::provided::tile_k;
static_assert(kTileM == 128 && kTileN == 64 && kTileK == 64,
              "two m64n128k16 per k16 step: 128 rows, 64 gate + 64 up columns, 64-wide K slices of 128 bytes");
constexpr unsigned kAcc = 2 * kTileN / 2;  // f32 accumulators per thread per m64 half (m64n128: 64)

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Accumulator (n8 block j, register 4j + 2h + e) of a m64n128 wgmma is row 16 warp + lane/4 + 8h
// of its half, column 8j + 2 (lane % 4) + e: blocks 0-7 the gate panel, 8-15 the up panel.
__device__ __forceinline__ void store_half(unsigned char* p0, unsigned char* p1, const float (&d)[kAcc], unsigned row0,
                                           unsigned warp, unsigned lane) {
  const unsigned r = row0 + warp * 16u + (lane >> 2);
#pragma unroll
  for (unsigned j = 0; j < kAcc / 4; ++j) {
    unsigned char* const panel = j < 8u ? p0 : p1;
#pragma unroll
    for (unsigned h = 0; h < 2; ++h) {
      const unsigned off = pl::sw128_offset(r + 8u * h, j % 8u) + 4u * (lane & 3u);
      *reinterpret_cast<unsigned*>(panel + off) = pack_bf16(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
    }
  }
}
// The same positions, zero.
__device__ __forceinline__ void store_zero(unsigned char* p0, unsigned char* p1, unsigned row0, unsigned warp, unsigned lane) {
  const unsigned r = row0 + warp * 16u + (lane >> 2);
#pragma unroll
  for (unsigned j = 0; j < kAcc / 4; ++j)
#pragma unroll
    for (unsigned h = 0; h < 2; ++h)
      *reinterpret_cast<unsigned*>((j < 8u ? p0 : p1) + pl::sw128_offset(r + 8u * h, j % 8u) + 4u * (lane & 3u)) = 0u;
}
}  // namespace wgmma_gu_pp

// The "acc" panels this code writes (the store's geometry, compiled in): [128 x 64] each.
PL_ROWS(wgmma_gu_pp_main, acc, p0, wgmma_gu_pp::kTileM);
PL_ROWS(wgmma_gu_pp_main, acc, p1, wgmma_gu_pp::kTileM);
PL_COLS(wgmma_gu_pp_main, acc, p0, 64);
PL_COLS(wgmma_gu_pp_main, acc, p1, 64);
// The swizzles it compiles in: the operands' descriptors (desc_sw128), the panels' stores (sw128_offset).
PL_SWIZZLE(wgmma_gu_pp_main, ab, a, 128);
PL_SWIZZLE(wgmma_gu_pp_main, ab, b, 128);
PL_SWIZZLE(wgmma_gu_pp_main, acc, p0, 128);
PL_SWIZZLE(wgmma_gu_pp_main, acc, p1, 128);

PL_FACT_DECL(unsigned, stages);

PL_COMPONENT(wgmma_gu_pp_main) {
  using namespace wgmma_gu_pp;
  const unsigned lane = threadIdx.x & 31u, warp = ctx.warp();
  const unsigned me = ctx.slots->instance;  // 0 or 1: this warpgroup's turn is every other tile
  const unsigned k_tiles = C::param::K::get(ctx) / kTileK;
  // The next tile's stages released before the epilogue: stages - 2 (the contract asks stages >= 3;
  // at the end of the main loop the loader is filling the ring's slots with the next tile's first
  // stages, the last of them just freed).
  const unsigned early = min(k_tiles, PL_FACT(stages) - 2u);  // stages - 1: level (session 12, pp5)
  unsigned released = 0;  // stages of the current (other instance's) tile already released
  C::In_ab ab(ctx);
  C::In_ab done(ctx);  // one stage behind ab within a tile: the stage whose wgmma group completed
  C::Out_acc out(ctx);
  float lo[kAcc], hi[kAcc];  // rows 0-63 and 64-127 of the tile
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    if ((i & 1u) != me) {
      // The other instance's tile: each stage is released once full (the loader refills a stage
      // only when both instances released it), then this instance's arrival on the tile's "acc".
      for (unsigned kt = released; kt < k_tiles; ++kt) {
        ab.wait();
        ab.release(ctx);
        ab.advance();
        done.advance();
      }
      released = 0;
      out.acquire();
      out.commit(ctx);
      out.advance();
      continue;
    }
    // Whether a tile follows (the other instance's), asked here while no accumulator is live: the
    // scheduler's call would otherwise cost spills around it.
    pl::Tile next;
    const bool has_next = pl::tile_at(ctx, i + 1, next);
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      ab.wait();
      const unsigned a = pl::smem_addr(ab.a<unsigned char>(ctx));
      const unsigned b = pl::smem_addr(ab.b<unsigned char>(ctx));
      wgmma_fence();
#pragma unroll
      for (unsigned k = 0; k < kTileK / 16; ++k) {
        const int scale = (kt > 0 || k > 0) ? 1 : 0;  // the tile's first step overwrites
        wgmma_m64n128k16(lo, desc_sw128(a + k * 32u), desc_sw128(b + k * 32u), scale);
        wgmma_m64n128k16(hi, desc_sw128(a + 64u * 128u + k * 32u), desc_sw128(b + k * 32u), scale);
      }
      wgmma_commit();
      if (kt > 0) {
        wgmma_wait_one();  // the previous stage's group is complete: its operands may be overwritten
        fence_operands(lo);
        fence_operands(hi);
        done.release(ctx);  // arrive = "warp": __syncwarp(), lane 0
        done.advance();
      }
      ab.advance();
    }
    wgmma_wait_all();
    fence_operands(lo);
    fence_operands(hi);
    if (k_tiles > 0) {
      done.release(ctx);
      done.advance();
    }
    if (has_next) {  // the other instance's tile: its first stages, before the epilogue
      for (released = 0; released < early; ++released) {
        ab.wait();
        ab.release(ctx);
        ab.advance();
        done.advance();
      }
    }
    out.acquire();
    unsigned char* const p0 = out.p0<unsigned char>(ctx);
    unsigned char* const p1 = out.p1<unsigned char>(ctx);
    if (k_tiles > 0) {
      store_half(p0, p1, lo, 0u, warp, lane);
      store_half(p0, p1, hi, 64u, warp, lane);
    } else {  // K < 64: no slice was multiplied, the tile is zero (not the registers' leftovers)
      store_zero(p0, p1, 0u, warp, lane);
      store_zero(p0, p1, 64u, warp, lane);
    }
    // arrive = "one" per warpgroup: each thread fences its stores (the consumer may read "acc"
    // through the async proxy, a TMA store), named barrier wg_sync, then thread 0 arrives.
    out.commit(ctx);
    out.advance();
  }
}
