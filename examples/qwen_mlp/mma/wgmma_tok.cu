// wgmma_tok — gemm-team. The plain gate/up GEMM's main loop with the tokens as the wgmma N.
//
// Consumer of the "ab" pipe, producer of the "acc" pipe; two instances, one warpgroup each. A tile
// is tile_m tokens (rows of X) x 2 tile_n columns of the output (tile_n = 64: two 64-row blocks of
// W, the stage's B slice rows [0, 64) and [64, 128)). Instance i multiplies block i of W (the
// wgmma's M, 64 rows) by the tile's tokens (its N, tile_m of them): per k16 step one
// m64n{tile_m}k16 with both operands K-major in the 128-byte swizzle TMA writes. wgmma_gu puts X's
// rows on the M side, so its tiles are 64 or 128 tokens tall and the last row of tiles is padding
// wherever M is not a multiple of them (M = 960: 7.5 tiles of 128); here the token tile is any
// multiple of 8 up to 256 (M = 960 = 6 x 160, 320 = 2 x 160, 576 = 4 x 144).
//
// At the end of a tile the accumulator (row = W row of the block, column = token) is rounded to
// bf16 and stored transposed (stmatrix .trans) into the "acc" stage: panel i [tile_m x 64] holds
// block i, token-major, in the 128-byte swizzle (chunk c of row r at r * 128 + (c ^ r % 8) * 16, so
// the eight token rows one 8 x 8 store writes land in eight different bank groups). A TMA store
// of two 64-column panels (tma_store -DTMA_STORE_PANELS=2) writes block i to output columns
// t.n * 128 + 64 i: the plain GEMM over W's rows in order (the loader's n_step = 128, b_stride = 64).
// With n_step = 64 and b_stride = I the blocks are a gate and its up block, and the SwiGLU warps
// (swiglu_epilogue -DSWIGLU_PANELS=2 -DSWIGLU_ROWS16=1; -DSWIGLU_ROWS8=1 where tile_m is an odd multiple
// of 8) read the two panels: the fused kernel.
//
// Compile-time constants (wgmma shapes and register arrays need immediates): -DTOK_TILE_M (the
// tokens, 32, 48, 64, 128, 136, 144, 152, 160, 168, 176, 200, 208, 216, 224 or 240: gen_wgmma.py's list); tile_n = 64, tile_k = 64. The records below
// declare them, so an object links only under a contract providing the same values.
//
// -DTOK_UNITS=1 (contract_tok*_sk.toml: [tiles] k_extent, k_tile, partial_bytes): walks work units
// (pl::unit_at), so a link under --tile-schedule stream-k or split-k may cut the tiles of the last
// partial round along k. 400 column tiles are 3 rounds of 132 and 4 tiles: every token tile count
// leaves a few tiles for a last round, which then runs as short k pieces across the SMs. A unit that
// does not hold its tile's first slice stores its f32 accumulators as its block's partial
// (register j of thread t at j * 128 + t; partial_bytes = 4 * kAcc * 128 = 256 * tile_m) and emits
// nothing; the unit holding the first slice adds its peers' partials, in block order, then emits.
// -DTOK_WB=2 (contract_tok144w_sk.toml, header wgmma_tok_w.contract.h; session 29): each instance
// multiplies two 64-row W blocks by the tokens (two m64n{tile_m}k16 per k16 step, one accumulator
// array each), so a tile is tile_m tokens x 256 output columns (tile_n = 128: the stage's B slice is
// 256 rows) and the X slice of a stage is read for twice the work: the W-rows x tokens tile shape
// cuBLASLt's fastest kernel took at M = 136 / 1290 / 2440 (256 x 136, 256 x 144). The acc stage is four
// 64-column panels (panel 2 i + j: instance i, block j), stored by tma_store -DTMA_STORE_PANELS=1.
#ifndef TOK_WB
#define TOK_WB 1
#endif
#if TOK_WB == 2
#include "wgmma_tok_w.contract.h"  // pipelink header contract_tok144w_sk.toml
#else
#include "wgmma_tok.contract.h"
#endif

#include "wgmma_ops.cuh"

#ifndef TOK_TILE_M
#define TOK_TILE_M 160
#endif
#ifndef TOK_UNITS
#define TOK_UNITS 0
#endif
// TOK_INFLIGHT (default 1): a stage's wgmma group stays in flight while the next stage's is issued;
// the stage is released once wgmma.wait_group 1 says its group completed. A warpgroup's group per
// stage is 4 x m64n{tile_m}k16 (wgmma_gu's: 8 x m64n128k16 or 4 x m64n256k16), so waiting for it to
// drain before the next stage's wait and issue leaves the tensor pipe idle for a larger share.
// -DTOK_INFLIGHT=0: the whole stage completes before its release (session 22's loop).
#ifndef TOK_INFLIGHT
#define TOK_INFLIGHT 1
#endif

namespace wgmma_tok {
constexpr unsigned kBlocks = TOK_WB;  // 64-row W blocks per instance
static_assert(kBlocks == 1 || kBlocks == 2, "TOK_WB: one or two W blocks per instance");
constexpr unsigned kTileM = TOK_TILE_M, kTileN = 64 * kBlocks, kTileK = 64;
constexpr unsigned kAcc = kTileM / 2;  // f32 accumulator registers per thread: m64 x n{tile_m}
static_assert(kTileM % 8 == 0 && kTileM <= 256, "tokens: a multiple of 8 (the wgmma's N; one n8 block per 8 x 8 pair of matrices), at most 256");
static_assert(kTileK * 2 == 128, "K slices are 128 bytes: one 128-byte swizzle row");
namespace C = pl_contract::wgmma_tok_main;

__device__ __forceinline__ void mma(float (&d)[kAcc], unsigned long long da, unsigned long long db, int scale_d) {
#if TOK_TILE_M == 240
  wgmma_m64n240k16(d, da, db, scale_d);
#elif TOK_TILE_M == 224
  wgmma_m64n224k16(d, da, db, scale_d);
#elif TOK_TILE_M == 216
  wgmma_m64n216k16(d, da, db, scale_d);
#elif TOK_TILE_M == 208
  wgmma_m64n208k16(d, da, db, scale_d);
#elif TOK_TILE_M == 200
  wgmma_m64n200k16(d, da, db, scale_d);
#elif TOK_TILE_M == 176
  wgmma_m64n176k16(d, da, db, scale_d);
#elif TOK_TILE_M == 168
  wgmma_m64n168k16(d, da, db, scale_d);
#elif TOK_TILE_M == 160
  wgmma_m64n160k16(d, da, db, scale_d);
#elif TOK_TILE_M == 152
  wgmma_m64n152k16(d, da, db, scale_d);
#elif TOK_TILE_M == 144
  wgmma_m64n144k16(d, da, db, scale_d);
#elif TOK_TILE_M == 136
  wgmma_m64n136k16(d, da, db, scale_d);
#elif TOK_TILE_M == 128
  wgmma_m64n128k16(d, da, db, scale_d);
#elif TOK_TILE_M == 64
  wgmma_m64n64k16(d, da, db, scale_d);
#elif TOK_TILE_M == 48
  wgmma_m64n48k16(d, da, db, scale_d);
#elif TOK_TILE_M == 32
  wgmma_m64n32k16(d, da, db, scale_d);
#else
#error "generate the wgmma wrapper for this token tile (gen_wgmma.py) and add it here"
#endif
}

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
// Four 8 x 8 b16 matrices, each thread holding row lane / 4, columns 2 (lane % 4) + {0, 1} of each
// (an accumulator fragment), stored transposed: row q of matrix m (= column q of the fragment) at
// the shared address lane 8 m + q gives.
__device__ __forceinline__ void stmatrix_x4_trans(unsigned addr, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1), "r"(r2),
               "r"(r3)
               : "memory");
}
// Accumulator register 4 j + 2 h + e: W row 16 warp + 8 h + lane / 4, token 8 j + 2 (lane % 4) + e.
// As stmatrix_x4_trans, two matrices: lanes 0-15 give the addresses (matrix lane / 8).
__device__ __forceinline__ void stmatrix_x2_trans(unsigned addr, unsigned r0, unsigned r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(addr), "r"(r0), "r"(r1) : "memory");
}
// One x4 store covers n8 blocks j and j + 1, both halves h: matrix m = 2 (j' - j) + h; its row q
// (token 8 j' + q) holds W rows 16 warp + 8 h + (0..7), chunk 2 warp + h of the panel's row. With an
// odd count of n8 blocks (136 / 152 tokens: 17 / 19) the last block is one x2 store (matrix h).
__device__ __forceinline__ void store_panel(unsigned panel, const float (&d)[kAcc], unsigned warp, unsigned lane) {
  const unsigned m = lane >> 3, q = lane & 7u;
  constexpr unsigned kPairs = kTileM / 16u;
  if constexpr (kTileM % 16u != 0) {
    constexpr unsigned j = 2u * kPairs;
    const unsigned token = 8u * j + q, chunk = 2u * warp + (m & 1u);
    stmatrix_x2_trans(panel + pl::sw128_offset(token, chunk), pack_bf16(d[4 * j], d[4 * j + 1]), pack_bf16(d[4 * j + 2], d[4 * j + 3]));
  }
#pragma unroll
  for (unsigned j = 0; j < 2u * kPairs; j += 2) {
    const unsigned token = 8u * (j + (m >> 1)) + q, chunk = 2u * warp + (m & 1u);
    stmatrix_x4_trans(panel + pl::sw128_offset(token, chunk), pack_bf16(d[4 * j], d[4 * j + 1]),
                      pack_bf16(d[4 * j + 2], d[4 * j + 3]), pack_bf16(d[4 * j + 4], d[4 * j + 5]),
                      pack_bf16(d[4 * j + 6], d[4 * j + 7]));
  }
}
}  // namespace wgmma_tok

#if TOK_UNITS
PL_PARTIAL_BYTES(wgmma_tok_main, wgmma_tok::kBlocks * wgmma_tok::kAcc * wgmma_tok::C::barrier::wg_sync::threads * 4);  // pl::unit_partials: kAcc f32 per thread per block
#endif
PL_PROVIDE(wgmma_tok_main, tile_m, wgmma_tok::kTileM);
PL_PROVIDE(wgmma_tok_main, tile_n, wgmma_tok::kTileN);
PL_PROVIDE(wgmma_tok_main, tile_k, wgmma_tok::kTileK);
// The operands' wgmma descriptors (desc_sw128) and the acc panels' stores (sw128_offset).
PL_SWIZZLE(wgmma_tok_main, ab, a, 128);
PL_SWIZZLE(wgmma_tok_main, ab, b, 128);
PL_SWIZZLE(wgmma_tok_main, acc, p0, 128);
PL_SWIZZLE(wgmma_tok_main, acc, p1, 128);
PL_COLS(wgmma_tok_main, acc, p0, 64);
PL_COLS(wgmma_tok_main, acc, p1, 64);
#if TOK_WB == 2
PL_SWIZZLE(wgmma_tok_main, acc, p2, 128);
PL_SWIZZLE(wgmma_tok_main, acc, p3, 128);
PL_COLS(wgmma_tok_main, acc, p2, 64);
PL_COLS(wgmma_tok_main, acc, p3, 64);
#endif

PL_COMPONENT(wgmma_tok_main) {
  using namespace wgmma_tok;
  const unsigned lane = threadIdx.x & 31u, warp = ctx.warp() & 3u;
  const unsigned blk = ctx.slots->instance;  // W blocks: rows [kTileN blk, kTileN blk + kTileN) of the B slice
  const unsigned k_tiles = C::param::K::get(ctx) / kTileK;

  C::In_ab ab(ctx);
#if TOK_INFLIGHT
  // the oldest stage not yet released: one behind ab while a group is in flight (so the ring needs
  // 2 stages at least: the contracts' [use] stages = { min = 2 })
  C::In_ab done(ctx);
#endif
  C::Out_acc out(ctx);
  float d[kAcc];
#if TOK_WB == 2
  float d1[kAcc];  // the instance's second W block (rows 64 (2 blk + 1) of the B slice)
#endif
#if TOK_UNITS
  (void)k_tiles;
  pl::Unit u;
  for (unsigned i = 0; pl::unit_at(ctx, i, u); ++i) {
    const unsigned k_first = u.k_begin;
    for (unsigned kt = u.k_begin; kt < u.k_end; ++kt) {
#else
  constexpr unsigned k_first = 0;
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
#endif
      ab.wait();
      const unsigned a = pl::smem_addr(ab.a<unsigned char>(ctx));                        // X: the N operand
      const unsigned b = pl::smem_addr(ab.b<unsigned char>(ctx)) + blk * kTileN * 128u;  // W block: the M operand
      wgmma_fence();
#pragma unroll
      for (unsigned k = 0; k < kTileK / 16; ++k) {
        mma(d, desc_sw128(b + k * 32u), desc_sw128(a + k * 32u), (kt > k_first || k > 0) ? 1 : 0);
#if TOK_WB == 2
        mma(d1, desc_sw128(b + 64u * 128u + k * 32u), desc_sw128(a + k * 32u), (kt > k_first || k > 0) ? 1 : 0);
#endif
      }
      wgmma_commit();
#if TOK_INFLIGHT
      if (kt > k_first) {
        wgmma_wait_one();  // the previous stage's group completed: its operands may be overwritten
        fence_operands(d);
#if TOK_WB == 2
        fence_operands(d1);
#endif
        done.release(ctx);  // arrive = "warp"
        done.advance();
      }
      ab.advance();
    }
    wgmma_wait_all();
    fence_operands(d);
#if TOK_WB == 2
    fence_operands(d1);
#endif
#if TOK_UNITS
    if (u.k_end > u.k_begin) {
#else
    if (k_tiles > 0) {
#endif
      done.release(ctx);  // the last stage of the tile (the unit)
      done.advance();
    }
#else
      wgmma_wait_all();
      fence_operands(d);
#if TOK_WB == 2
      fence_operands(d1);
#endif
      ab.release(ctx);  // arrive = "warp": the stage's wgmma reads are complete
      ab.advance();
    }
#endif
#if TOK_UNITS
#if TOK_WB == 2
    if (!pl::unit_partials<C::barrier::wg_sync>(ctx, u, threadIdx.x & 127u, d, d1)) continue;
#else
    if (!pl::unit_partials<C::barrier::wg_sync>(ctx, u, threadIdx.x & 127u, d)) continue;  // the split-k end: a piece another block emits
#endif
#endif
    out.acquire();
#if TOK_WB == 2
    store_panel(pl::smem_addr(blk ? out.p2<unsigned char>(ctx) : out.p0<unsigned char>(ctx)), d, warp, lane);
    store_panel(pl::smem_addr(blk ? out.p3<unsigned char>(ctx) : out.p1<unsigned char>(ctx)), d1, warp, lane);
#else
    store_panel(pl::smem_addr(blk ? out.p1<unsigned char>(ctx) : out.p0<unsigned char>(ctx)), d, warp, lane);
#endif
    // arrive = "one" per warpgroup: each thread fences its stores (the TMA store reads the stage
    // through the async proxy), named barrier wg_sync, then thread 0 arrives.
    out.commit(ctx);
    out.advance();
  }
}
