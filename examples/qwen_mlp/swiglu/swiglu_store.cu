// swiglu_store — activation-team. SwiGLU and its TMA store, in the "acc" stage itself.
//
// Consumer of the "acc" pipe: one bf16 tile [tile_m x 2 tile_n], row-major, gate in columns
// [0, tile_n), up in [tile_n, 2 tile_n). For each element h = silu(g) * u = g / (1 + e^-g) * u in
// fp32, rounded to bf16 (swiglu_epilogue's arithmetic), written over g: every 16-byte chunk of H
// is read (g, u) and written (h) by the same thread, so no thread waits for another before the
// store. Then one TMA store of a 3-D box (tile_n, 2, tile_m) whose smem layout is the stage's
// (row r, half s, column c at ((r * 2 + s) * tile_n + c) * 2): out_map's second dimension has size
// 1, so the up half (s = 1) falls outside H and is clipped; rows past M are clipped too. The
// stage is released (arrive = "one") once the store has read it.
//
// Writing into a stage it consumes is this component's business only while it holds the stage
// (between wait and release); the producer refills it only after the release.
#include "swiglu_store.contract.h"  // pipelink header contract_store.toml

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);

namespace swiglu_store {
namespace C = pl_contract::swiglu_store_main;
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
}  // namespace swiglu_store

PL_SWIZZLE(swiglu_store_main, acc, tile, 0);  // row-major 16-byte chunks

PL_COMPONENT(swiglu_store_main) {
  using namespace swiglu_store;
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n);
  const unsigned chunks = tile_n / 8;  // 16-byte chunks of a row's gate (and up) half
  const unsigned M = C::param::M::get(ctx);
  const pl::TensorMap* map = C::param::out_map::get(ctx);
  if (ctx.thread() == 0) pl::prefetch_tmap(map);
  C::In_acc in(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    in.wait();
    unsigned char* acc = in.tile<unsigned char>(ctx);
    const unsigned first = t.m * tile_m;
    const unsigned rows = first >= M ? 0u : (M - first < tile_m ? M - first : tile_m);
    for (unsigned v = ctx.thread(); v < rows * chunks; v += ctx.threads()) {
      uint4* g = reinterpret_cast<uint4*>(acc + ((v / chunks) * 2u * tile_n + (v % chunks) * 8u) * 2u);
      const uint4 gv = *g, uv = *reinterpret_cast<const uint4*>(reinterpret_cast<const unsigned char*>(g) + tile_n * 2u);
      *g = make_uint4(swiglu2(gv.x, uv.x), swiglu2(gv.y, uv.y), swiglu2(gv.z, uv.z), swiglu2(gv.w, uv.w));
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the stores, visible to the TMA store
    C::barrier::sw_sync::sync(ctx);
    if (ctx.thread() == 0) {
      if (rows > 0) {
        asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];"
                     ::"l"(map), "r"(pl::smem_addr(acc)), "r"(static_cast<int>(t.n * tile_n)), "r"(0), "r"(static_cast<int>(first))
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");  // the stage may be refilled
      }
      in.release_elected();
    }
    in.advance();
  }
  if (ctx.thread() == 0) asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");  // writes complete before exit
}
