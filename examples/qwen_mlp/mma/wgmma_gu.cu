// wgmma_gu — gemm-team. The Hopper main loop of the gate/up GEMM.
//
// Consumer of the "ab" pipe, producer of the "acc" pipe. Each instance is one warpgroup and
// computes a 64-row part of a tile_m x (2 * tile_n) tile of X · W^T with wgmma (bf16 in, fp32
// accumulate). The large-M variant (tile_m = 128) splits the tile by rows: instance i owns rows
// [64 i, 64 i + 64). The small-M variant (-DGU_SPLIT_N=1, tile_m = 64) splits it by columns:
// instance i owns columns [i tile_n / 2, (i + 1) tile_n / 2) of both blocks. A stage holds an A slice [tile_m x 64]
// and a B slice [2 tile_n x 64] (rows [0, tile_n) = gate block, [tile_n, 2 tile_n) = up block),
// both K-major with the 128-byte swizzle TMA writes. Per k16 step the warpgroup issues one
// m64n{tile_n}k16 wgmma for the gate block and one for the up block, or with -DGU_PAIR=1 (the
// 128 x 104 / 112 / 120 builds) one m64n{2 tile_n}k16 over both.
//
// At the end of a tile it rounds both accumulators to bf16 and stores them into the "acc" stage,
// row-major [tile_m x 2 tile_n]: gate in columns [0, tile_n), up in [tile_n, 2 tile_n). Whoever
// consumes "acc" (a SwiGLU epilogue, or a TMA store for the plain GEMM) is the link's business.
// Built with -DGU_SWIGLU=1 (below) it stores H = silu(gate) * up [tile_m x tile_n] instead.
//
// Compile-time constants (wgmma shapes and register arrays need immediates): kTileM, kTileN and
// kTileK are what the contract provides as tile_m, tile_n, tile_k. Variants (one contract each):
//   contract.toml         tile 128 x 128, two warpgroups split by rows (the default macros)
//   contract_medium.toml  tile 128 x 104, -DGU_TILE_N=104 -DGU_PAIR=1: 247 column tiles instead of
//                         200, so M = 256 and 1024 fill the 132 SMs in whole waves
//   contract_medium_swf.toml  the same tile with -DGU_SWIGLU=1: the SwiGLU in this epilogue, H in the
//                         "acc" stage (the fused kernel at 64 < M <= 1024 in sessions 16-20; one of
//                         three widths the benches choose from there since)
//   contract_narrow.toml  tile 128 x 80, -DGU_TILE_N=80: 320 column tiles, M = 256 in 4.85 waves
//   contract_n120.toml    tile 128 x 120, -DGU_TILE_N=120 -DGU_PAIR=1 (m64n240k16): 214 column
//                         tiles, M = 384 in 4.86 rounds (128 x 104: 5.61); contract_n120_swf.toml
//                         with -DGU_SWIGLU=1
//   contract_n112.toml    tile 128 x 112 the same way (m64n224k16): 229 column tiles, M = 512 in
//                         6.94 rounds (128 x 104: 7.48); contract_n112_swf.toml
//   contract_small.toml   tile 64 x 104, one warpgroup, -DGU_TILE_N=104 -DGU_SPLIT_N=1
//                         -DGU_INSTANCES=1: decode-sized M, where the weight stream is the cost
//   contract_small16.toml tile 16 x 104, one warpgroup, -DGU_TILE_N=104 -DGU_SPLIT_N=1
//                         -DGU_INSTANCES=1 -DGU_TILE_M=16: decode batches of up to 16 rows
//   contract_small64.toml tile 64 x 64, one warpgroup, -DGU_TILE_N=64 -DGU_SPLIT_N=1
//                         -DGU_INSTANCES=1: the Llama-1B gate/up (N = 8192) in 128 tiles, one
//                         wave on 132 SMs (64 x 104 gives 79)
// and the MoE layer's ../../moe/gemm/mma_gu.toml and mma_down.toml use the default object;
//   ../../moe/gemm/mma_gu64.toml, mma_down64.toml  tile 64 x 128, two warpgroups split by columns,
//                         -DGU_TILE_N=128 -DGU_SPLIT_N=1 -DGU_INSTANCES=2: the MoE layer in 64-row
//                         tiles (half the padding of 128-row experts at few tokens per expert)
//
// wgmma_gu.contract.h is generated from the contracts scripts/regen_headers.sh lists for it
// (pipelink header): their common part, i.e. the names and order of the param, ports,
// tensors and barrier, the arrive modes, and [warps] count. What differs between them (the tile,
// the instances, the register budget) is compiled in from the -D switches below, so this source
// declares those records itself, from the constants it uses.
// -DGU_ACC_PANELS=1 (contract_sw.toml, ../../moe/gemm/mma_down_sw.toml; header wgmma_gu_sw.contract.h):
// the "acc" stage is four 64-column panels [tile_m x 64], each in the 128-byte swizzle (chunk c of
// row r at r * 128 + (c ^ r % 8) * 16). In the row-major stage the 8 rows one warp store covers are
// 2 * tile_n * 2 bytes apart, a multiple of 128, so all 32 lanes hit the same 4 banks: an 8-way
// conflict on every accumulator store. In the panels the 8 rows' chunks land in 8 different
// 16-byte bank groups. The 128 x 128 tile split by rows (the default macros) and the 64 x 128 tile
// split by columns over two warpgroups (../../moe/gemm/mma_gu64_sw.toml, mma_down64_sw.toml).
#ifndef GU_ACC_PANELS
#define GU_ACC_PANELS 0
#endif
#if GU_ACC_PANELS
#define PL_OWN_INSTANCES  // declared below from the constants the code uses, as for the other variants
#define PL_OWN_REGISTERS
#include "wgmma_gu_sw.contract.h"
#else
#include "wgmma_gu.contract.h"
#endif

#include "wgmma_ops.cuh"

#ifndef GU_TILE_N
#define GU_TILE_N 128
#endif
// -DGU_SWIGLU=1 (contract_medium_swf.toml; the row-major tiles split by rows): the SwiGLU in the
// main loop's own epilogue, from the f32 accumulators (an element's gate and up are in the same
// thread's registers), and the "acc" stage holds H [tile_m x tile_n] bf16, row-major: half the bytes
// of gate and up, and no SwiGLU warps or out stage, so the 128 x 104 tile keeps its 4-stage ring.
#ifndef GU_SWIGLU
#define GU_SWIGLU 0
#endif
#ifndef GU_SPLIT_N
#define GU_SPLIT_N 0
#endif
#ifndef GU_INSTANCES
#define GU_INSTANCES 2
#endif
// -DGU_INFLIGHT=1: keep one stage's wgmma group in flight while the next stage's is issued; a
// stage is released once wgmma.wait_group 1 says its group completed (../cluster/mma.toml).
#ifndef GU_INFLIGHT
#define GU_INFLIGHT 0
#endif
// -DGU_PAIR=1 (the tiles split by rows, tile_n 128, 120, 112 or 104): each k16 step issues one
// m64n{2 tile_n}k16 over the gate and up blocks together (they are adjacent rows of the B slice)
// instead of two m64n{tile_n}k16, so the warpgroup reads its A slice once per step.
#ifndef GU_PAIR
#define GU_PAIR 0
#endif
// (-DGU_FLAT=1, the 2 tile_n accumulator columns stored in order for the 128 x 200 GEMM probe of
// sessions 21-22 (tile_n = 100): added in 0c1fed5, removed with that probe.)
// -DGU_UNITS=1 (contract_*_sk.toml: [tiles] k_extent, k_tile, partial_bytes): walks work units
// (pl::unit_at) instead of whole tiles, so a link under --tile-schedule stream-k may split a tile's
// k slices across blocks. A unit that does not hold the tile's first slice stores its f32
// accumulators to its block's partial slot (fragment order: register j of thread t at j * 128 + t,
// gate then up; partial_bytes = 4 * 2 * kAcc * 128 = 512 * tile_n) and emits nothing; the unit
// holding the first slice adds its peers' partials before it emits the tile as usual.
#ifndef GU_UNITS
#define GU_UNITS 0
#endif
static_assert(!(GU_UNITS && GU_INFLIGHT), "GU_UNITS with GU_INFLIGHT: the in-flight release would start at k_begin 0");

// -DGU_TILE_M=16 (contract_small16.toml; the one-warpgroup small-M tile only): the tile has 16 rows
// of X (a 2 KB A slice per stage, the TMA box as tall as a decode batch, no zero-filled rows). The
// m64 wgmma still reads 64 rows from the A slice's address: rows 16-63 are the first bytes of the
// stage's B slice, and the accumulator rows they produce are never stored.
#ifndef GU_TILE_M
#define GU_TILE_M 0
#endif
static_assert(GU_TILE_M == 0 || (GU_TILE_M == 16 && GU_SPLIT_N && GU_INSTANCES == 1 && !GU_ACC_PANELS && !GU_UNITS),
              "GU_TILE_M=16: the one-warpgroup small-M tile, row-major acc stage, whole tiles");

static_assert(!GU_SWIGLU || (!GU_ACC_PANELS && !GU_SPLIT_N && !GU_UNITS), "GU_SWIGLU: the row-major tile split by rows, whole tiles");
// -DGU_OVERLAP=1 (contract_sw_sk_ov.toml: the fused split-k kernel selected at M > 1024 since
// session 18; the split-k panel build only): the tile boundary overlapped. A tile's last
// stage commits its gate and up groups apart and stores gate while up still runs; the next tile's
// first stage issues its gate group before the previous up is stored. The loop is rotated so that
// an iteration ends after a unit's first stage: no join of the control flow ever sees a group in
// flight (with flags instead, ptxas serialized every wgmma: results/s18/ov1).
#ifndef GU_OVERLAP
#define GU_OVERLAP 0
#endif
static_assert(!GU_OVERLAP || (GU_ACC_PANELS && GU_UNITS && !GU_PAIR && !GU_SPLIT_N && !GU_INFLIGHT && !GU_SWIGLU && GU_TILE_N == 128),
              "GU_OVERLAP: the split-k panel kernels (128 x 128, four 64-column panels)");

namespace wgmma_gu {
constexpr unsigned kInstances = GU_INSTANCES;
constexpr bool kSplitN = GU_SPLIT_N != 0;
constexpr unsigned kTileM = GU_TILE_M ? GU_TILE_M : kSplitN ? 64 : 128, kTileN = GU_TILE_N, kTileK = 64;
constexpr unsigned kCols = kSplitN ? kTileN / kInstances : kTileN;  // columns per block per warpgroup
constexpr unsigned kAcc = kCols / 2;  // f32 accumulator registers per thread per block
static_assert(GU_TILE_M || kTileM == (kSplitN ? 64u : 64u * kInstances), "64 rows per warpgroup");
static_assert(kTileK * 2 == 128, "K slices are 128 bytes: one 128-byte swizzle row");
static_assert(!GU_PAIR || ((kTileN == 128 || kTileN == 120 || kTileN == 112 || kTileN == 104) && !kSplitN && !GU_TILE_M),
              "GU_PAIR: the tiles split by rows, tile_n 128, 120, 112 or 104 (the pair wrappers gen_wgmma.py writes)");
static_assert(kTileN % 8 == 0, "the gate / up stores take whole n8 groups: tile_n % 8 == 0");

namespace C = pl_contract::wgmma_gu_main;

// desc_sw128, wgmma_fence / _commit / _wait_all / _wait_one and fence_operands: wgmma_ops.cuh.

#if GU_PAIR
// One k16 step over both blocks: columns [0, tile_n) of the accumulator in gate, the rest in up.
__device__ __forceinline__ void mma_pair(float (&g)[kAcc], float (&u)[kAcc], unsigned long long da, unsigned long long db, int scale_d) {
#if GU_TILE_N == 128
  wgmma_m64n256k16_pair(g, u, da, db, scale_d);
#elif GU_TILE_N == 120
  wgmma_m64n240k16_pair(g, u, da, db, scale_d);
#elif GU_TILE_N == 112
  wgmma_m64n224k16_pair(g, u, da, db, scale_d);
#else
  wgmma_m64n208k16_pair(g, u, da, db, scale_d);
#endif
}
#endif
#if !(GU_PAIR && (GU_TILE_N == 112 || GU_TILE_N == 120))  // these blocks are only built as a pair
__device__ __forceinline__ void mma_step(float (&d)[kAcc], unsigned long long da, unsigned long long db, int scale_d) {
#if GU_TILE_N == 128 && !GU_SPLIT_N
  wgmma_m64n128k16(d, da, db, scale_d);
#elif (GU_TILE_N == 208 && GU_SPLIT_N && GU_INSTANCES == 2) || (GU_TILE_N == 104 && GU_SPLIT_N && GU_INSTANCES == 1) || \
    (GU_TILE_N == 104 && !GU_SPLIT_N)
  wgmma_m64n104k16(d, da, db, scale_d);
#elif GU_TILE_N == 80 && !GU_SPLIT_N
  wgmma_m64n80k16(d, da, db, scale_d);
#elif (GU_TILE_N == 64 && GU_SPLIT_N && GU_INSTANCES == 1) || (GU_TILE_N == 128 && GU_SPLIT_N && GU_INSTANCES == 2)
  wgmma_m64n64k16(d, da, db, scale_d);
#else
#error "generate the wgmma wrapper for this tile (gen_wgmma.py) and add it here"
#endif
}
#endif

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
// silu(g) u = (g / 2) (1 + tanh(g / 2)) u in fp32 from the unrounded accumulators: one MUFU op
// (tanh.approx.f32) where g / (1 + e^-g) takes two (ex2, rcp). This runs while the tensor pipe waits
// for the epilogue: the tanh form was 1.1% faster at M = 1024 (results/s16/swft). Its error is
// bounded relative to tanh (< 2^-10.9), not to silu: for g << 0, where 1 + tanh(g / 2) is small,
// the bound on h's error is about 2.4e-4 |g u| rather than relative to h. Measured over the benches'
// data (every element of H at M = 16 ... 8192) the worst error is 0.247 of the per-element tolerance,
// the same as the exact form's; operands with heavier tails than these would want the exact form.
__device__ __forceinline__ float silu_mul(float g, float u) {
  const float hg = 0.5f * g;
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(hg));
  return fmaf(hg, t, hg) * u;
}
}  // namespace wgmma_gu

// What this code compiles in beyond the header's records (PL_WARPS, PL_ARRIVE for ab and acc),
// checked against each variant's contract by the linker: the values that differ between them.
PL_PROVIDE(wgmma_gu_main, tile_m, wgmma_gu::kTileM);
PL_PROVIDE(wgmma_gu_main, tile_n, wgmma_gu::kTileN);
PL_PROVIDE(wgmma_gu_main, tile_k, wgmma_gu::kTileK);
PL_INSTANCES(wgmma_gu_main, wgmma_gu::kInstances);
// The accumulators fit in 216 (MoE runs it with 216, Qwen with 232); the SwiGLU epilogue's build
// takes 218 (ptxas, fused_medium_swf.map), so it asks for the next setmaxnreg step.
PL_REGISTERS(wgmma_gu_main, GU_SWIGLU ? 224 : 216);
// The "acc" stage's tensors as this build writes them. The row-major and the panel builds have the
// same warps, instances, arrive modes and provided facts, so without these records an object of
// one links under a contract of the other and the stage is written in a layout its consumer does
// not read: the linker refuses a record naming a tensor the contract's port does not have.
#if GU_UNITS
// pl::unit_partials's layout: gate and up, kAcc f32 per thread, the warpgroup's 128 threads
PL_PARTIAL_BYTES(wgmma_gu_main, 2 * wgmma_gu::kAcc * wgmma_gu::C::barrier::wg_sync::threads * 4);
#endif
// The swizzles the code compiles in: the operands' wgmma descriptors (desc_sw128), the acc stage's
// stores (sw128_offset for the panels, plain row-major otherwise).
PL_SWIZZLE(wgmma_gu_main, ab, a, 128);
PL_SWIZZLE(wgmma_gu_main, ab, b, 128);
#if GU_ACC_PANELS
PL_SWIZZLE(wgmma_gu_main, acc, p0, 128);
PL_SWIZZLE(wgmma_gu_main, acc, p1, 128);
PL_SWIZZLE(wgmma_gu_main, acc, p2, 128);
PL_SWIZZLE(wgmma_gu_main, acc, p3, 128);
#else
PL_SWIZZLE(wgmma_gu_main, acc, tile, 0);
#endif
#if GU_ACC_PANELS
PL_COLS(wgmma_gu_main, acc, p0, 64);
PL_COLS(wgmma_gu_main, acc, p1, 64);
PL_COLS(wgmma_gu_main, acc, p2, 64);
PL_COLS(wgmma_gu_main, acc, p3, 64);
#else
PL_COLS(wgmma_gu_main, acc, tile, (GU_SWIGLU ? 1 : 2) * wgmma_gu::kTileN);
#endif

#if GU_OVERLAP
PL_COMPONENT(wgmma_gu_main) {
  using namespace wgmma_gu;
  const unsigned lane = threadIdx.x & 31u, warp = ctx.warp();
  const unsigned row0 = ctx.slots->instance * 64u, col0 = 0u;
  const unsigned tid = threadIdx.x & 127u;
  C::In_ab ab(ctx);
  C::In_ab done(ctx);  // the oldest stage not yet released (one behind ab across an overlapped end)
  C::Out_acc out(ctx);
  float gate[kAcc], up[kAcc];

  auto issue = [&](float (&d)[kAcc], unsigned blk, unsigned a, unsigned b, bool first) {
#pragma unroll
    for (unsigned k = 0; k < kTileK / 16; ++k)
      mma_step(d, desc_sw128(a + k * 32u), desc_sw128(b + (blk + col0) * 128u + k * 32u), (first && k == 0) ? 0 : 1);
  };
  auto release = [&]() {
    done.release(ctx);
    done.advance();
  };
  // A whole stage: both groups, completed, released.
  auto stage = [&](bool first) {
    ab.wait();
    const unsigned a = pl::smem_addr(ab.a<unsigned char>(ctx)) + row0 * 128u, b = pl::smem_addr(ab.b<unsigned char>(ctx));
    wgmma_fence();
    issue(gate, 0, a, b, first);
    issue(up, kTileN, a, b, first);
    wgmma_commit();
    wgmma_wait_all();
    fence_operands(gate);
    fence_operands(up);
    release();
    ab.advance();
  };
  auto store_block = [&](const float (&d)[kAcc], bool is_up) {
    unsigned char* const q0 = is_up ? out.p2<unsigned char>(ctx) : out.p0<unsigned char>(ctx);
    unsigned char* const q1 = is_up ? out.p3<unsigned char>(ctx) : out.p1<unsigned char>(ctx);
    const unsigned r = row0 + warp * 16u + (lane >> 2);
#pragma unroll
    for (unsigned j = 0; j < kAcc / 4; ++j) {
      unsigned char* const panel = j / 8u ? q1 : q0;
#pragma unroll
      for (unsigned h = 0; h < 2; ++h)
        *reinterpret_cast<unsigned*>(panel + pl::sw128_offset(r + 8u * h, j % 8u) + 4u * (lane & 3u)) =
            pack_bf16(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
    }
  };
  // A unit's end without overlap (as the plain build): partials, or the peers' sum, then both blocks.
  auto end_plain = [&](const pl::Unit& u) {
    if (!pl::unit_partials<C::barrier::wg_sync>(ctx, u, tid, gate, up)) return;  // the split-k end: a piece another block emits
    out.acquire();
    store_block(gate, false);
    store_block(up, true);
    out.commit(ctx);
    out.advance();
  };

  pl::Unit u;
  unsigned i = 0;
  bool have = pl::unit_at(ctx, i, u);
  if (have && u.k_end > u.k_begin) stage(true);
  while (have) {
    const unsigned n = u.k_end - u.k_begin;  // this unit's first stage is done (if it has one)
    const bool overlap = u.emit && u.peer_end == u.peer_begin && n >= 2;
    for (unsigned kt = u.k_begin + 1; kt + (overlap ? 1u : 0u) < u.k_end; ++kt) stage(false);
    pl::Unit next;
    if (overlap) {
      // The last stage: gate, then up, as two groups; gate stored while up runs.
      ab.wait();
      {
        const unsigned a = pl::smem_addr(ab.a<unsigned char>(ctx)) + row0 * 128u, b = pl::smem_addr(ab.b<unsigned char>(ctx));
        wgmma_fence();
        issue(gate, 0, a, b, false);
        wgmma_commit();
        issue(up, kTileN, a, b, false);
        wgmma_commit();
      }
      ab.advance();
      wgmma_wait_one();
      fence_operands(gate);
      out.acquire();
      store_block(gate, false);
      have = pl::unit_at(ctx, ++i, next);
      if (have && next.k_end > next.k_begin) {
        // The next unit's first stage: its gate group runs while this tile's up is stored.
        ab.wait();
        const unsigned a = pl::smem_addr(ab.a<unsigned char>(ctx)) + row0 * 128u, b = pl::smem_addr(ab.b<unsigned char>(ctx));
        wgmma_fence();
        issue(gate, 0, a, b, true);
        wgmma_commit();
        wgmma_wait_one();  // this tile's up group
        fence_operands(up);
        release();         // this tile's last stage
        store_block(up, true);
        out.commit(ctx);
        out.advance();
        wgmma_fence();
        issue(up, kTileN, a, b, true);
        wgmma_commit();
        wgmma_wait_all();
        fence_operands(gate);
        fence_operands(up);
        release();
        ab.advance();
      } else {
        wgmma_wait_all();
        fence_operands(up);
        release();
        store_block(up, true);
        out.commit(ctx);
        out.advance();
      }
    } else {
      end_plain(u);
      have = pl::unit_at(ctx, ++i, next);
      if (have && next.k_end > next.k_begin) stage(true);
    }
    u = next;
  }
}
#else
PL_COMPONENT(wgmma_gu_main) {
  using namespace wgmma_gu;
  const unsigned lane = threadIdx.x & 31u, warp = ctx.warp();
  const unsigned k_tiles = C::param::K::get(ctx) / kTileK;
  // This warpgroup's part of the tile: 64 rows from row0, kCols columns of each block from col0.
  const unsigned row0 = kSplitN ? 0u : ctx.slots->instance * 64u;
  const unsigned col0 = kSplitN ? ctx.slots->instance * kCols : 0u;

  C::In_ab ab(ctx);
#if defined(PL_CHECKED) && GU_TILE_M
  // The m64 wgmma reads 64 rows (8 KB) from the 16-row X slice's address: they must lie in the stage.
  if (ab.pipe.p->tensor[C::In_ab::tensor::a::index] + 64u * 128u > ab.pipe.p->stage_bytes) asm volatile("trap;");
#endif
#if GU_INFLIGHT
  C::In_ab done(ctx);  // one stage behind ab: the stage whose wgmma group has completed
#endif
  C::Out_acc out(ctx);
  float gate[kAcc], up[kAcc];
#if GU_UNITS
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
      const unsigned a = pl::smem_addr(ab.a<unsigned char>(ctx)) + row0 * 128u;
      const unsigned b = pl::smem_addr(ab.b<unsigned char>(ctx));
      wgmma_fence();
#pragma unroll
      for (unsigned k = 0; k < kTileK / 16; ++k) {
        const int scale = (kt > k_first || k > 0) ? 1 : 0;  // the first step of a tile (a unit) overwrites
#if GU_PAIR
        // one m64n{2 tile_n}k16 over both blocks (rows [0, 2 tile_n) of the B slice: gate, then up), A read once
        mma_pair(gate, up, desc_sw128(a + k * 32u), desc_sw128(b + k * 32u), scale);
#else
        mma_step(gate, desc_sw128(a + k * 32u), desc_sw128(b + col0 * 128u + k * 32u), scale);
        mma_step(up, desc_sw128(a + k * 32u), desc_sw128(b + (kTileN + col0) * 128u + k * 32u), scale);
#endif
      }
      wgmma_commit();
#if GU_INFLIGHT
      if (kt > 0) {
        wgmma_wait_one();  // the previous stage's group is complete: its operands may be overwritten
        fence_operands(gate);
        fence_operands(up);
        done.release(ctx);
        done.advance();
      }
      ab.advance();
    }
    wgmma_wait_all();
    fence_operands(gate);
    fence_operands(up);
#if GU_UNITS
    if (u.k_end > u.k_begin) {
#else
    if (k_tiles > 0) {
#endif
      done.release(ctx);
      done.advance();
    }
#else
      wgmma_wait_all();
      fence_operands(gate);
      fence_operands(up);
      ab.release(ctx);  // arrive = "warp": the stage's wgmma reads are complete; __syncwarp(), lane 0
      ab.advance();
    }
#endif

#if GU_UNITS
    // the split-k end (partial layout: gate then up, register j of thread t at j * 128 + t)
    if (!pl::unit_partials<C::barrier::wg_sync>(ctx, u, threadIdx.x & 127u, gate, up)) continue;  // a piece another block emits
#endif
    // Accumulator (n8 block j, register 4j + 2h + e) is row row0 + 16 warp + lane/4 + 8h, column
    // col0 + 8j + 2 (lane % 4) + e of each block.
#if GU_ACC_PANELS
    static_assert(kTileN == 128 && (!kSplitN || kInstances == 2),
                  "acc panels: the 128-column blocks, split by rows (128 x 128) or by columns over two warpgroups (64 x 128)");
    out.acquire();
    {
      // Panel p holds the tile's columns [64 p, 64 p + 64): gate in panels 0-1, up in 2-3. Split by
      // columns, warpgroup i owns columns [64 i, 64 i + 64) of each block: panels i and 2 + i.
      unsigned char* const p0 = out.p0<unsigned char>(ctx);
      unsigned char* const p1 = out.p1<unsigned char>(ctx);
      unsigned char* const p2 = out.p2<unsigned char>(ctx);
      unsigned char* const p3 = out.p3<unsigned char>(ctx);
      const unsigned r = row0 + warp * 16u + (lane >> 2);
#pragma unroll
      for (unsigned j = 0; j < kAcc / 4; ++j) {  // n8 block j: columns col0 + 8j .., chunk j % 8 of panel (col0 + 8j) / 64
        const unsigned pg = (col0 >> 6) + j / 8u;  // 0 or 1
        unsigned char* const g_panel = pg ? p1 : p0;
        unsigned char* const u_panel = pg ? p3 : p2;
#pragma unroll
        for (unsigned h = 0; h < 2; ++h) {
          const unsigned row = r + 8u * h;
          const unsigned off = pl::sw128_offset(row, j % 8u) + 4u * (lane & 3u);
          *reinterpret_cast<unsigned*>(g_panel + off) = pack_bf16(gate[4 * j + 2 * h], gate[4 * j + 2 * h + 1]);
          *reinterpret_cast<unsigned*>(u_panel + off) = pack_bf16(up[4 * j + 2 * h], up[4 * j + 2 * h + 1]);
        }
      }
    }
    out.commit(ctx);
    out.advance();
#else
#if GU_SWIGLU
    out.acquire();
    {
      unsigned char* stage = out.tile<unsigned char>(ctx);
      const unsigned r = row0 + warp * 16u + (lane >> 2);
      const unsigned row_bytes = kTileN * 2u;  // H: tile_n bf16 per row
#pragma unroll
      for (unsigned j = 0; j < kAcc / 4; ++j) {
#pragma unroll
        for (unsigned h = 0; h < 2; ++h)
          *reinterpret_cast<unsigned*>(stage + (r + 8u * h) * row_bytes + (8u * j + 2u * (lane & 3u)) * 2u) =
              pack_bf16(silu_mul(gate[4 * j + 2 * h], up[4 * j + 2 * h]), silu_mul(gate[4 * j + 2 * h + 1], up[4 * j + 2 * h + 1]));
      }
    }
    out.commit(ctx);
    out.advance();
#else
    out.acquire();
    unsigned char* stage = out.tile<unsigned char>(ctx);
    const unsigned r = row0 + warp * 16u + (lane >> 2);
    const unsigned row_bytes = 2u * kTileN * 2u;
#pragma unroll
    for (unsigned j = 0; j < kAcc / 4; ++j) {
      const unsigned col = col0 + 8u * j + 2u * (lane & 3u);
#pragma unroll
      for (unsigned h = 0; h < 2; ++h) {
        if (GU_TILE_M && r + 8u * h >= kTileM) continue;  // a row past the 16-row tile: not in the stage
        unsigned* g = reinterpret_cast<unsigned*>(stage + (r + 8u * h) * row_bytes + col * 2u);
        unsigned* u = reinterpret_cast<unsigned*>(stage + (r + 8u * h) * row_bytes + (kTileN + col) * 2u);
        *g = pack_bf16(gate[4 * j + 2 * h], gate[4 * j + 2 * h + 1]);
        *u = pack_bf16(up[4 * j + 2 * h], up[4 * j + 2 * h + 1]);
      }
    }
    // arrive = "one" per warpgroup: each thread fences its stores (the consumer may read "acc"
    // through the async proxy, a TMA store), named barrier wg_sync, then thread 0 arrives.
    out.commit(ctx);
    out.advance();
#endif  // GU_SWIGLU
#endif
  }
}
#endif  // GU_OVERLAP
