// attn_o_writer — proj-team. The decode attention's output writer with the O projection folded
// in: it fills attn_writer's place in a link with the split-KV core (attn_core_split), so the
// decode step needs no O GEMM kernel (and no kernel boundary) between the attention and the next
// RMSNorm. For B = 1 that is one PDL hand-off less per layer.
//
// Tile (t.m, t.n) = (sequence b and KV head g, split n), one tile per block. The KV head's 4 query
// heads are W_o's input columns [256 g, 256 g + 256); split n takes W_o's rows (output columns)
// [n hidden / S, (n + 1) hidden / S) and, for the row b of y, adds
//     y[b, j] += sum_i o[b, 256 g + i] * W_o[j, 256 g + i]
// with red.global.add.f32, in f32 (the O GEMM's split-K sums are f32 adds into y as well).
//
// The combined output of a head group exists only in the block whose split combined it (the core's
// "o" stage with flag = 1); the other S - 1 blocks get it through global memory: the combining
// block stores it to attn_out[t.m] and releases ready[t.m] = 1 (gpu scope); the others acquire
// ready[t.m] and read attn_out. Every block then counts itself in done[t.m]; the last resets
// ready and done to zero for the next launch (which starts after this grid has completed).
//
// Before its dependency wait (pdl_wait = "own") the block requests its first two pieces of W_o
// rows (o_rows each, TMA, 64 KB per piece): W_o is a weight, no earlier kernel writes it, so under
// --pdl the bytes arrive while the kernels before it still run, beside the KV the loader requests.
//
// Assumes (the host's side; a PL_CHECKED build traps on more than one tile per block, on zero
// kv_heads or S, and on a wait for ready[t.m] that lasts about a second, i.e. a grid that was not
// resident at once; the rest is not checked):
//   - one tile per block (grid = BH * S) and every block of the grid resident at once: a block
//     that waits for ready[t.m] holds its SM until the split that combines arrives, so the host
//     may launch this link only when BH * S blocks fit on the GPU together (the selection rule
//     uses it at B = 1 with BH * S <= the SM count);
//   - wo_map: 2-D tensor map over W_o [hidden, kv_heads * 256] bf16, box (256 columns, o_rows
//     rows), no swizzle; y f32 [B, hidden]; attn_out bf16 [BH, 256] (16-byte aligned);
//   - ready and done zero before the first launch.
#define PL_PROVIDE_FROM_CONTRACT  // o_rows: compiled in as C::provided::o_rows
#include "attn_o_writer.contract.h"

namespace attn_o_writer {
namespace C = pl_contract::attn_o_writer_main;
constexpr unsigned kQPerKv = 4, kHeadDim = 64;
constexpr unsigned kCols = kQPerKv * kHeadDim;  // 256 W_o columns per tile: 32 lanes x 8 bf16
constexpr unsigned kRows = C::provided::o_rows;  // W_o rows per piece (one buffer half)
constexpr unsigned kPieceBytes = kRows * kCols * 2u;
static_assert(kRows % 32u == 0u, "a piece is whole groups of 32 rows (one lane per row after the reduction)");

// The two bf16 of a 32-bit word as floats (exact: a bf16 is the high half of an f32).
__device__ __forceinline__ float lo_f(unsigned u) { return __uint_as_float(u << 16); }
__device__ __forceinline__ float hi_f(unsigned u) { return __uint_as_float(u & 0xffff0000u); }

// a[i] on lane l: this lane's share of row i's dot product. Returns, on lane l, the whole sum of
// row l (31 shuffles: each step halves the rows a lane holds and doubles the lanes summed).
__device__ __forceinline__ float transpose_reduce(float (&a)[32], unsigned lane) {
#pragma unroll
  for (unsigned off = 16; off >= 1; off >>= 1) {
    const bool upper = (lane & off) != 0u;
#pragma unroll
    for (unsigned i = 0; i < off; ++i) {
      const float send = upper ? a[i] : a[i + off];
      const float keep = upper ? a[i + off] : a[i];
      a[i] = keep + __shfl_xor_sync(0xffffffffu, send, off);
    }
  }
  return a[0];
}

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void st_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
}  // namespace attn_o_writer

PL_USE(attn_o_writer_main, q_per_kv, attn_o_writer::kQPerKv);
PL_USE(attn_o_writer_main, head_dim, attn_o_writer::kHeadDim);

PL_COMPONENT(attn_o_writer_main) {
  using namespace attn_o_writer;
  const unsigned warp = ctx.warp(), lane = threadIdx.x & 31u;
  pl::Tile t;
  if (!pl::tile_at(ctx, 0, t)) return;  // no tile, nothing to write (and no wait needed)
  const unsigned hidden = C::param::hidden::get(ctx), kv_heads = C::param::kv_heads::get(ctx);
  const unsigned S = C::param::S::get(ctx);
#ifdef PL_CHECKED
  pl::Tile t2;
  if (pl::tile_at(ctx, 1, t2) || kv_heads == 0u || S == 0u) {
    printf("attn_o_writer: block %d has more than one tile (grid < BH * S), or kv_heads = %u / S = %u is zero\n",
           blockIdx.x, kv_heads, S);
    __trap();
  }
#endif
  const unsigned b = t.m / kv_heads, g = t.m % kv_heads;
  const unsigned r0 = static_cast<unsigned>(static_cast<unsigned long long>(t.n) * hidden / S);
  const unsigned r1 = static_cast<unsigned>(static_cast<unsigned long long>(t.n + 1u) * hidden / S);
#ifdef ATTN_O_TIMING_NO_W
  const unsigned pieces = 0u;  // timing experiment only (attn_o_writer_nomv.toml): no W_o, no products
#else
  const unsigned pieces = (r1 - r0 + kRows - 1u) / kRows;
#endif
  const pl::TensorMap* wo_map = C::param::wo_map::get(ctx);
  pl::bf16* w = C::smem::w::at<pl::bf16>(ctx);
  auto request = [&](unsigned p) {  // piece p into half p % 2
    const unsigned bar = C::mbarrier::wbar::addr(ctx, p & 1u);
    pl::mbar_arrive_expect_tx(bar, kPieceBytes);
    pl::tma_load_2d(w + (p & 1u) * kRows * kCols, wo_map, bar, static_cast<int>(g * kCols), static_cast<int>(r0 + p * kRows));
  };
#ifndef ATTN_O_LATE
  if (warp == 0u && lane == 0u) {
    pl::prefetch_tmap(wo_map);
    for (unsigned p = 0; p < pieces && p < 2u; ++p) request(p);
  }
#endif
  pl::pdl_wait();  // below: ready, done, attn_out and y, which earlier kernels use too

  // The head group's output: from the core's stage in the combining block, else published.
  C::In_o in(ctx);
  in.wait();
  const bool combiner = in.flag(ctx)[0] != 0;
  uint4 ov = make_uint4(0u, 0u, 0u, 0u);
  if (combiner) ov = in.o<uint4>(ctx)[lane];
  in.release(ctx);
#ifdef ATTN_O_LATE  // timing experiment only (attn_o_writer_late.toml): W_o requested once the core is done
  if (warp == 0u && lane == 0u)
    for (unsigned p = 0; p < pieces && p < 2u; ++p) request(p);
#endif
  unsigned* ready = C::param::ready::get<unsigned>(ctx) + t.m;
  uint4* pub = C::param::attn_out::get<uint4>(ctx) + static_cast<unsigned long long>(t.m) * (kCols / 8u);
  if (combiner) {
    if (warp == 0u) {
      __stcg(pub + lane, ov);
      __threadfence();  // each lane's store before lane 0's release
      __syncwarp();
      if (lane == 0u) st_release(ready, 1u);
    }
  } else {
    if (warp == 0u && lane == 0u) {
#ifdef PL_CHECKED
      const long long start = clock64();
#endif
      while (ld_acquire(ready) == 0u) {
        __nanosleep(64);
#ifdef PL_CHECKED
        if (clock64() - start > (1ll << 31)) {
          printf("attn_o_writer: block %d waited ~1 s for (sequence, KV head) %u's combining split: is the grid of BH * S "
                 "blocks resident at once?\n", blockIdx.x, t.m);
          __trap();
        }
#endif
      }
    }
    C::barrier::wsync::sync(ctx);  // the acquire (thread 0) before every thread's read
    ov = __ldcg(pub + lane);
  }
  const unsigned ow[4] = {ov.x, ov.y, ov.z, ov.w};
  float of[8];
#pragma unroll
  for (unsigned k = 0; k < 4; ++k) of[2 * k] = lo_f(ow[k]), of[2 * k + 1] = hi_f(ow[k]);

  // y[b, j] += o . W_o[j, 256 g : 256 g + 256] for the rows of this split, a piece at a time;
  // warp v takes the piece's row groups v, v + 4, ... (32 rows each: one row per lane at the end).
  float* yb = C::param::y::get<float>(ctx) + static_cast<unsigned long long>(b) * hidden;
  for (unsigned p = 0; p < pieces; ++p) {
    pl::mbar_wait(C::mbarrier::wbar::addr(ctx, p & 1u), (p >> 1) & 1u);
    const uint4* wp = reinterpret_cast<const uint4*>(w + (p & 1u) * kRows * kCols);
    const unsigned base = r0 + p * kRows;
    for (unsigned grp = warp; grp < kRows / 32u; grp += C::warps) {
      if (base + grp * 32u >= r1) break;
      float acc[32];
#pragma unroll
      for (unsigned r = 0; r < 32; ++r) {
        const uint4 wv = wp[(grp * 32u + r) * (kCols / 8u) + lane];
        const unsigned ww[4] = {wv.x, wv.y, wv.z, wv.w};
        float s = 0.f;
#pragma unroll
        for (unsigned k = 0; k < 4; ++k) {
          s = fmaf(of[2 * k], lo_f(ww[k]), s);
          s = fmaf(of[2 * k + 1], hi_f(ww[k]), s);
        }
        acc[r] = s;
      }
      const float sum = transpose_reduce(acc, lane);
      const unsigned row = base + grp * 32u + lane;
      if (row < r1) atomicAdd(yb + row, sum);
    }
    if (p + 2u < pieces) {
      C::barrier::wsync::sync(ctx);  // every warp is done with this half before it is refilled
      if (warp == 0u && lane == 0u) request(p + 2u);
    }
  }

  // Count this split's read of the published output; the last resets the pair for the next launch.
  C::barrier::wsync::sync(ctx);
  if (warp == 0u && lane == 0u) {
    unsigned* done = C::param::done::get<unsigned>(ctx) + t.m;
    const unsigned before = atomicAdd(done, 1u);
    if (before == S - 1u) {
      *done = 0u;
      *ready = 0u;
    }
  }
}
