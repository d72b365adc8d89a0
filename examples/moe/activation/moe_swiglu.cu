// moe_swiglu — activation-team. SwiGLU and the routing-weight scale between the expert gate/up
// GEMM and the store: h = silu(g) * u * w[row], in fp32, rounded to bf16.
//
// Consumer of "acc" (bf16 [tile_m x 2 tile_n]: gate columns, then up columns, of tile_m expert
// rows), producer of "out" (bf16 [out_rows x tile_n], tile_m / out_rows stages per tile; the stage
// height is read from the port, a link-time value). row_weight[r] is the
// routing weight of sorted row r (0 for padding rows, whose output is then 0). Scaling here is
// exact for the layer: the down projection is linear, so w * down(h) = down(w * h).
#include "pipelink/device.cuh"

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);

namespace moe_swiglu {
enum : unsigned { kPortAcc = 0, kPortOut = 1 };
enum : unsigned { kParamRowWeight = 0 };

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

// What this code compiles in, checked against contract.toml by the linker.
PL_PROVIDE_LINKED(moe_swiglu_main, out_rows);  // read from the out port's slots
PL_WARPS(moe_swiglu_main, 2);
PL_REGISTERS(moe_swiglu_main, 40);
PL_ARRIVE(moe_swiglu_main, acc, warp);
// MOE_SWIGLU_COMMIT_ONCE (used only by the modified-facts experiment's code-only cases): the
// owner's edit that commits each out stage once per instance, after a named barrier, instead of
// once per warp. Its declaration follows the code; the contract is left as it was.
#ifdef MOE_SWIGLU_COMMIT_ONCE
PL_ARRIVE(moe_swiglu_main, out, one);
#else
PL_ARRIVE(moe_swiglu_main, out, warp);
#endif

PL_COMPONENT(moe_swiglu_main) {
  using namespace moe_swiglu;
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n), chunks = tile_n / 8;
  const float* row_weight = ctx.ptr<const float>(kParamRowWeight);
  pl::PipeReader in(ctx, kPortAcc);
  pl::PipeWriter out(ctx, kPortOut);
  const unsigned out_rows = out.p->rows[0];
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    in.wait();
    const unsigned char* acc = in.tensor<unsigned char>(ctx, 0);
    for (unsigned part = 0; part < tile_m / out_rows; ++part) {
      out.acquire();
      uint4* dst = out.tensor<uint4>(ctx, 0);
      for (unsigned v = ctx.thread(); v < out_rows * chunks; v += ctx.threads()) {
        const unsigned row = part * out_rows + v / chunks, c = v % chunks;
        const float w = row_weight[t.m * tile_m + row];
        const uint4 g = *reinterpret_cast<const uint4*>(acc + (row * 2u * tile_n + c * 8u) * 2u);
        const uint4 u = *reinterpret_cast<const uint4*>(acc + (row * 2u * tile_n + tile_n + c * 8u) * 2u);
        dst[v] = make_uint4(act2(g.x, u.x, w), act2(g.y, u.y, w), act2(g.z, u.z, w), act2(g.w, u.w, w));
      }
      pl::fence_async_shared();  // "out" is read by a TMA store (async proxy)
#ifdef MOE_SWIGLU_COMMIT_ONCE
      __syncwarp();
      if (ctx.thread() == 0) out.commit();
#else
      __syncwarp();
      if ((threadIdx.x & 31u) == 0) out.commit();
#endif
      out.advance();
    }
    __syncwarp();
    if ((threadIdx.x & 31u) == 0) in.release();
    in.advance();
  }
}
