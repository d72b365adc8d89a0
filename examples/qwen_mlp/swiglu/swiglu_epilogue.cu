// swiglu_epilogue — activation-team. SwiGLU between the GEMM and the store.
//
// Consumer of the "acc" pipe (one bf16 tile [tile_m x 2 tile_n]: gate in columns [0, tile_n),
// up in [tile_n, 2 tile_n)), producer of the "out" pipe (bf16 [64 x tile_n] stages, two per
// tile_m = 128 tile; [16 x tile_n] with SWIGLU_ROWS16, [8 x tile_n] with SWIGLU_ROWS8). For each element h = silu(g) * u =
// g / (1 + e^-g) * u in fp32, rounded to bf16: the same arithmetic as a SwiGLU applied to a bf16 GEMM output. 16-byte shared loads and
// stores, consecutive threads on consecutive 16-byte chunks of a row. Rows at or past M (padding
// of a partial tile, which the store clips anyway) are skipped.
//
// With -DSWIGLU_PANELS=1 (contract_sw.toml, header swiglu_epilogue_sw.contract.h) "acc" is four
// 64-column panels [tile_m x 64] in the 128-byte swizzle (a main loop built with -DGU_ACC_PANELS=1):
// gate chunk c of a row is chunk c % 8 of panel c / 8, up chunk c of panel 2 + c / 8; tile_n = 128.
#ifndef SWIGLU_PANELS
#define SWIGLU_PANELS 0
#endif
// With -DSWIGLU_ROWS16=1 (contract_r16.toml, header swiglu_epilogue_r16.contract.h) the "out" stages
// have 16 rows, for the 16-row decode tile (tile_m = 16).
#ifndef SWIGLU_ROWS16
#define SWIGLU_ROWS16 0
#endif
#ifndef SWIGLU_ROWS8
#define SWIGLU_ROWS8 0
#endif
// With -DSWIGLU_PANELS=2 (contract_pp.toml, header swiglu_epilogue_sw2.contract.h) "acc" is two
// such panels, gate p0 and up p1 (the ping-pong main loop's tile); tile_n = 64.
// Both, -DSWIGLU_PANELS=2 -DSWIGLU_ROWS16=1 (contract_tok.toml, header swiglu_epilogue_sw2r16.contract.h):
// the token-tile main loop's two panels (tile_m = 144 / 160 / 176 / 208 / 224) into 16-row "out" stages.
// -DSWIGLU_PANELS=1 -DSWIGLU_ROWS16=1 (contract_tokw.toml, header swiglu_epilogue_swr16.contract.h): the
// 256-column token tile's four panels (tile_m = 144, tile_n = 128) into 16-row "out" stages.
// -DSWIGLU_PANELS=2 -DSWIGLU_ROWS8=1 (contract_tok_r8.toml, header swiglu_epilogue_sw2r8.contract.h; session
// 31): the same two panels for the 136- / 152- / 168- / 200- / 216-token tiles (tile_m an odd multiple of 8)
// into 8-row "out" stages.
#if SWIGLU_PANELS == 2 && SWIGLU_ROWS8
#include "swiglu_epilogue_sw2r8.contract.h"  // pipelink header contract_tok_r8.toml
#elif SWIGLU_PANELS == 2 && SWIGLU_ROWS16
#include "swiglu_epilogue_sw2r16.contract.h"  // pipelink header contract_tok.toml
#elif SWIGLU_PANELS == 2
#include "swiglu_epilogue_sw2.contract.h"  // pipelink header contract_pp.toml
#elif SWIGLU_PANELS && SWIGLU_ROWS16
#include "swiglu_epilogue_swr16.contract.h"  // pipelink header contract_tokw.toml
#elif SWIGLU_PANELS
#include "swiglu_epilogue_sw.contract.h"  // pipelink header contract_sw.toml
#elif SWIGLU_ROWS16
#include "swiglu_epilogue_r16.contract.h"  // pipelink header contract_r16.toml
#else
#include "swiglu_epilogue.contract.h"  // pipelink header contract.toml: names, pipe operations, records
#endif

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);

namespace swiglu_epilogue {
namespace C = pl_contract::swiglu_epilogue_main;
constexpr unsigned kOutRows = C::Out_out::tensor::tile::rows;  // 64, 16 (SWIGLU_ROWS16) or 8 (SWIGLU_ROWS8)

__device__ __forceinline__ float bf16_lo(unsigned v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf16_hi(unsigned v) { return __uint_as_float(v & 0xFFFF0000u); }
__device__ __forceinline__ float silu_mul(float g, float u) { return __fdividef(g, 1.f + __expf(-g)) * u; }
__device__ __forceinline__ unsigned pack(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ unsigned swiglu2(unsigned g, unsigned u) {
  return pack(silu_mul(bf16_lo(g), bf16_lo(u)), silu_mul(bf16_hi(g), bf16_hi(u)));
}
}  // namespace swiglu_epilogue

// What this code compiles in beyond the header's records, checked against contract.toml.
PL_ROWS(swiglu_epilogue_main, out, tile, swiglu_epilogue::kOutRows);
PL_SWIZZLE(swiglu_epilogue_main, out, tile, 0);  // row-major 16-byte chunk stores
#if SWIGLU_PANELS
PL_SWIZZLE(swiglu_epilogue_main, acc, p0, 128);  // sw128_offset
PL_SWIZZLE(swiglu_epilogue_main, acc, p1, 128);
#if SWIGLU_PANELS != 2
PL_SWIZZLE(swiglu_epilogue_main, acc, p2, 128);
PL_SWIZZLE(swiglu_epilogue_main, acc, p3, 128);
#endif
#else
PL_SWIZZLE(swiglu_epilogue_main, acc, tile, 0);
#endif
#if SWIGLU_PANELS
// The panels this build reads: without these records the object also links under the row-major
// contract (same warps, arrive modes and facts) and reads the row-major stage as panels.
PL_COLS(swiglu_epilogue_main, acc, p0, 64);
PL_COLS(swiglu_epilogue_main, acc, p1, 64);
#if SWIGLU_PANELS != 2
PL_COLS(swiglu_epilogue_main, acc, p2, 64);
PL_COLS(swiglu_epilogue_main, acc, p3, 64);
#endif
#endif

PL_COMPONENT(swiglu_epilogue_main) {
  using namespace swiglu_epilogue;
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n);
  const unsigned chunks = tile_n / 8;  // 16-byte chunks per output row
  const unsigned M = C::param::M::get(ctx);
  C::In_acc in(ctx);
  C::Out_out out(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    in.wait();
#if SWIGLU_PANELS == 2
    const unsigned char* p0 = in.p0<unsigned char>(ctx);
    const unsigned char* p1 = in.p1<unsigned char>(ctx);
#elif SWIGLU_PANELS
    const unsigned char* p0 = in.p0<unsigned char>(ctx);
    const unsigned char* p1 = in.p1<unsigned char>(ctx);
    const unsigned char* p2 = in.p2<unsigned char>(ctx);
    const unsigned char* p3 = in.p3<unsigned char>(ctx);
#else
    const unsigned char* acc = in.tile<unsigned char>(ctx);
#endif
    for (unsigned half = 0; half < tile_m / kOutRows; ++half) {
      out.acquire();
      uint4* dst = out.tile<uint4>(ctx);
      const unsigned first = t.m * tile_m + half * kOutRows;
      const unsigned rows = first >= M ? 0u : (M - first < kOutRows ? M - first : kOutRows);
      for (unsigned v = ctx.thread(); v < rows * chunks; v += ctx.threads()) {
        const unsigned row = half * kOutRows + v / chunks, c = v % chunks;
#if SWIGLU_PANELS == 2
        const unsigned off = pl::sw128_offset(row, c);  // tile_n = 64: chunks 0-7 of one panel each
        const uint4 g = *reinterpret_cast<const uint4*>(p0 + off);
        const uint4 u = *reinterpret_cast<const uint4*>(p1 + off);
#elif SWIGLU_PANELS
        const unsigned off = pl::sw128_offset(row, c % 8u);
        const uint4 g = *reinterpret_cast<const uint4*>((c < 8u ? p0 : p1) + off);
        const uint4 u = *reinterpret_cast<const uint4*>((c < 8u ? p2 : p3) + off);
#else
        const uint4 g = *reinterpret_cast<const uint4*>(acc + (row * 2u * tile_n + c * 8u) * 2u);
        const uint4 u = *reinterpret_cast<const uint4*>(acc + (row * 2u * tile_n + tile_n + c * 8u) * 2u);
#endif
        dst[v] = make_uint4(swiglu2(g.x, u.x), swiglu2(g.y, u.y), swiglu2(g.z, u.z), swiglu2(g.w, u.w));
      }
      out.commit(ctx);  // arrive = "warp": fence (a TMA store may read "out"), __syncwarp(), lane 0
      out.advance();
    }
    in.release(ctx);  // arrive = "warp": __syncwarp(), lane 0
    in.advance();
  }
}
