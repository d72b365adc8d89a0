// moe_gather — dispatch-team. Gathers each expert tile's routed token rows of X into the "ab"
// pipe's A slice (the GEMM's activations), one tile_k-wide K slice per stage.
//
// A tile's rows are the expert's sorted rows m0 .. m0 + kTileM - 1 (128, or 64 with -DGATHER_TILE_M=64); row_token[m0 + r] is the token whose
// X row goes there (-1 for padding: zeros). 128 threads copy 16-byte chunks with cp.async,
// 8 threads per row so each warp instruction reads 4 whole 128-byte row slices, and place them in
// the 128-byte-swizzled layout wgmma reads (chunk c of row r at r * 128 + (c ^ r % 8) * 16).
// Each thread's copies arrive on the stage's full mbarrier when they land (cp.async.mbarrier
// .arrive.noinc): the port declares arrive = "thread" and writes only tensor "a"; the weights
// come from another producer on the same pipe.
// moe_gather.contract.h: pipelink header gather.toml (names, pipe operations, records). The warp
// count is compiled in from GATHER_WARPS (register array sizes), not from the header, so this
// source declares PL_WARPS itself, from that constant.
#define PL_OWN_WARPS
#include "moe_gather.contract.h"

PL_FACT_DECL(unsigned, tile_k);

namespace moe_gather {
#ifndef GATHER_WARPS
#define GATHER_WARPS 4  // compiled in (register array sizes); the contract's [warps] count must agree
#endif
// Rows per tile, compiled in (the token array's size): 128 (gather.toml) or 64 (gather64.toml,
// -DGATHER_TILE_M=64). Each expert's rows are padded to it, so it is also expert_align.
#ifndef GATHER_TILE_M
#define GATHER_TILE_M 128
#endif
constexpr unsigned kTileM = GATHER_TILE_M, kThreads = 32 * GATHER_WARPS, kRowsPerPass = kThreads / 8, kPasses = kTileM / kRowsPerPass;

__device__ __forceinline__ void cp_async_16(unsigned dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}
__device__ __forceinline__ void arrive_when_landed(unsigned mbar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(mbar) : "memory");
}
}  // namespace moe_gather

// What this code compiles in beyond the header's records, checked against gather.toml.
PL_PROVIDE(moe_gather_main, expert_align, moe_gather::kTileM);
PL_USE(moe_gather_main, tile_m, moe_gather::kTileM);
PL_WARPS(moe_gather_main, GATHER_WARPS);

PL_COMPONENT(moe_gather_main) {
  using namespace moe_gather;
  namespace C = pl_contract::moe_gather_main;
  const unsigned short* X = C::param::x::get<const unsigned short>(ctx);
  const int* row_token = C::param::row_token::get<const int>(ctx);
  const unsigned K = C::param::K::get(ctx), tile_k = PL_FACT(tile_k);
  const unsigned k_tiles = K / tile_k;
  const unsigned tid = ctx.thread(), chunk = tid % 8, r0 = tid / 8;

  C::Out_ab w(ctx);  // arrive = "thread": every thread's cp.async group arrives on full_bar()
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const unsigned m0 = t.m * kTileM;
    int token[kPasses];
#pragma unroll
    for (unsigned j = 0; j < kPasses; ++j) token[j] = row_token[m0 + r0 + kRowsPerPass * j];
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      w.acquire();
      const unsigned a = pl::smem_addr(w.a<unsigned char>(ctx));
#pragma unroll
      for (unsigned j = 0; j < kPasses; ++j) {
        const unsigned r = r0 + kRowsPerPass * j;
        const int tok = token[j];
        const unsigned short* src = X + (tok >= 0 ? size_t(tok) * K : 0) + kt * tile_k + chunk * 8;
        cp_async_16(a + r * 128u + ((chunk ^ (r & 7u)) << 4), src, tok >= 0);
      }
      arrive_when_landed(w.full_bar());
      w.advance();
    }
  }
}
