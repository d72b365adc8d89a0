// moe_swiglu — activation-team. SwiGLU and the routing-weight scale between the expert gate/up
// GEMM and the store: h = silu(g) * u * w[row], in fp32, rounded to bf16.
//
// Consumer of "acc" (bf16 [tile_m x 2 tile_n]: gate columns, then up columns, of tile_m expert
// rows), producer of "out" (bf16 [out_rows x tile_n], tile_m / out_rows stages per tile; the stage
// height is read from the port, a link-time value). row_weight[r] is the
// routing weight of sorted row r (0 for padding rows, whose output is then 0). Scaling here is
// exact for the layer: the down projection is linear, so w * down(h) = down(w * h).
// moe_swiglu.contract.h: pipelink header contract.toml (names, pipe operations, records). With
// MOE_SWIGLU_COMMIT_ONCE the code arrives on "out" its own way, so it declares that record itself.
#ifdef MOE_SWIGLU_COMMIT_ONCE
#define PL_OWN_ARRIVE_out
#endif
// With -DMOE_SWIGLU_PANELS=1 (contract_sw.toml, header moe_swiglu_sw.contract.h) "acc" is four
// 64-column panels [tile_m x 64] in the 128-byte swizzle (the main loop built with
// -DGU_ACC_PANELS=1): gate chunk c of a row is chunk c % 8 of panel c / 8, up chunk c of panel
// 2 + c / 8; tile_n = 128.
#ifndef MOE_SWIGLU_PANELS
#define MOE_SWIGLU_PANELS 0
#endif
#if MOE_SWIGLU_PANELS
#include "moe_swiglu_sw.contract.h"
#else
#include "moe_swiglu.contract.h"
#endif

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);

namespace moe_swiglu {

__device__ __forceinline__ float lo(unsigned v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float hi(unsigned v) { return __uint_as_float(v & 0xFFFF0000u); }
__device__ __forceinline__ float act(float g, float u, float w) { return __fdividef(g, 1.f + __expf(-g)) * u * w; }
__device__ __forceinline__ unsigned pack(float l, float h) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(h), "f"(l));
  return r;
}
__device__ __forceinline__ unsigned act2(unsigned g, unsigned u, float w) { return pack(act(lo(g), lo(u), w), act(hi(g), hi(u), w)); }
}  // namespace moe_swiglu

// What this code compiles in beyond the header's records, checked against contract.toml.
PL_PROVIDE_LINKED(moe_swiglu_main, out_rows);  // read from the out port's slots
// MOE_SWIGLU_COMMIT_ONCE (used only by the modified-facts experiment's code-only cases): the
// owner's edit that commits each out stage once per instance instead of once per warp, bypassing
// the generated commit(ctx). Its declaration follows the code; the contract is left as it was.
#ifdef MOE_SWIGLU_COMMIT_ONCE
PL_ARRIVE(moe_swiglu_main, out, one);
#endif
#if MOE_SWIGLU_PANELS
// The panels this build reads: without these records the object also links under the row-major
// contract (same warps, arrive modes and facts) and reads the row-major stage as panels.
PL_COLS(moe_swiglu_main, acc, p0, 64);
PL_COLS(moe_swiglu_main, acc, p1, 64);
PL_COLS(moe_swiglu_main, acc, p2, 64);
PL_COLS(moe_swiglu_main, acc, p3, 64);
PL_SWIZZLE(moe_swiglu_main, acc, p0, 128);  // read with sw128_offset
PL_SWIZZLE(moe_swiglu_main, acc, p1, 128);
PL_SWIZZLE(moe_swiglu_main, acc, p2, 128);
PL_SWIZZLE(moe_swiglu_main, acc, p3, 128);
#endif

PL_COMPONENT(moe_swiglu_main) {
  using namespace moe_swiglu;
  namespace C = pl_contract::moe_swiglu_main;
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n), chunks = tile_n / 8;
  const float* row_weight = C::param::row_weight::get<const float>(ctx);
  C::In_acc in(ctx);
  C::Out_out out(ctx);
  const unsigned out_rows = out.rows(C::Out_out::tensor::tile::index);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    in.wait();
#if MOE_SWIGLU_PANELS
    const unsigned char* p0 = in.p0<unsigned char>(ctx);
    const unsigned char* p1 = in.p1<unsigned char>(ctx);
    const unsigned char* p2 = in.p2<unsigned char>(ctx);
    const unsigned char* p3 = in.p3<unsigned char>(ctx);
#else
    const unsigned char* acc = in.tile<unsigned char>(ctx);
#endif
    for (unsigned part = 0; part < tile_m / out_rows; ++part) {
      out.acquire();
      uint4* dst = out.tile<uint4>(ctx);
      for (unsigned v = ctx.thread(); v < out_rows * chunks; v += ctx.threads()) {
        const unsigned row = part * out_rows + v / chunks, c = v % chunks;
        const float w = row_weight[t.m * tile_m + row];
#if MOE_SWIGLU_PANELS
        const unsigned off = pl::sw128_offset(row, c % 8u);
        const uint4 g = *reinterpret_cast<const uint4*>((c < 8u ? p0 : p1) + off);
        const uint4 u = *reinterpret_cast<const uint4*>((c < 8u ? p2 : p3) + off);
#else
        const uint4 g = *reinterpret_cast<const uint4*>(acc + (row * 2u * tile_n + c * 8u) * 2u);
        const uint4 u = *reinterpret_cast<const uint4*>(acc + (row * 2u * tile_n + tile_n + c * 8u) * 2u);
#endif
        dst[v] = make_uint4(act2(g.x, u.x, w), act2(g.y, u.y, w), act2(g.z, u.z, w), act2(g.w, u.w, w));
      }
#ifdef MOE_SWIGLU_COMMIT_ONCE
      pl::fence_async_shared();  // "out" is read by a TMA store (async proxy)
      __syncwarp();
      if (ctx.thread() == 0) out.pipe.commit();
#else
      out.commit(ctx);  // arrive = "warp": fence (a TMA store reads "out"), __syncwarp(), lane 0
#endif
      out.advance();
    }
    in.release(ctx);  // arrive = "warp": __syncwarp(), lane 0
    in.advance();
  }
}
