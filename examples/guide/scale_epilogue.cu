// scale_epilogue — the walkthrough of docs/components.md. An epilogue between the Qwen main loop
// (wgmma_gu) and the TMA store (tma_store): out = gate * scale.
//
// Consumer of the "acc" pipe: one bf16 tile [tile_m x 2 tile_n] per tile, gate in columns
// [0, tile_n), up in [tile_n, 2 tile_n) (see wgmma_gu.cu). Producer of the "out" pipe: bf16 stages
// [64 x tile_n], tile_m / 64 of them per tile, each written to global memory by tma_store.
// For each element: out = bf16(float(gate) * scale), scale an f32 kernel parameter. The up half
// of the tile is not read. Rows at or past M (padding of a partial tile) are skipped; the store
// clips them anyway.
#include "pipelink/device.cuh"

// Facts other components provide (wgmma_gu compiles them in); read at link time.
PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);

namespace scale_epilogue {
// Indices in contract declaration order: [[port]] acc, out; [[param]] M, scale.
enum : unsigned { kPortAcc = 0, kPortOut = 1 };
enum : unsigned { kParamM = 0, kParamScale = 1 };
constexpr unsigned kWarps = 2;     // [warps] count
constexpr unsigned kOutRows = 64;  // rows of one "out" stage: the store's box height

__device__ __forceinline__ unsigned scale2(unsigned g, float s) {
  const float lo = __uint_as_float(g << 16) * s, hi = __uint_as_float(g & 0xFFFF0000u) * s;
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
}  // namespace scale_epilogue

// What this code compiles in, checked against contract.toml by the linker.
PL_WARPS(scale_epilogue_main, scale_epilogue::kWarps);
PL_REGISTERS(scale_epilogue_main, 40);    // built and linked with a 40-register budget: no spills
PL_ARRIVE(scale_epilogue_main, acc, warp);  // lane 0 of each warp releases "acc"
PL_ARRIVE(scale_epilogue_main, out, warp);  // lane 0 of each warp commits "out"
PL_ROWS(scale_epilogue_main, out, tile, scale_epilogue::kOutRows);

PL_COMPONENT(scale_epilogue_main) {
  using namespace scale_epilogue;
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n);
  const unsigned chunks = tile_n / 8;  // 16-byte chunks (8 bf16) per output row
  const unsigned M = ctx.u32(kParamM);
  const float scale = __uint_as_float(ctx.u32(kParamScale));  // an f32 param: its bits in the low word
  pl::PipeReader in(ctx, kPortAcc);
  pl::PipeWriter out(ctx, kPortOut);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    in.wait();
    const unsigned char* acc = in.tensor<unsigned char>(ctx, 0);
    for (unsigned part = 0; part < tile_m / kOutRows; ++part) {
      out.acquire();
      uint4* dst = out.tensor<uint4>(ctx, 0);
      const unsigned first = t.m * tile_m + part * kOutRows;
      const unsigned rows = first >= M ? 0u : (M - first < kOutRows ? M - first : kOutRows);
      for (unsigned v = ctx.thread(); v < rows * chunks; v += ctx.threads()) {
        const unsigned row = part * kOutRows + v / chunks, c = v % chunks;
        const uint4 g = *reinterpret_cast<const uint4*>(acc + (row * 2u * tile_n + c * 8u) * 2u);
        dst[v] = make_uint4(scale2(g.x, scale), scale2(g.y, scale), scale2(g.z, scale), scale2(g.w, scale));
      }
      pl::fence_async_shared();  // tma_store reads "out" through the async proxy
      __syncwarp();              // every lane stored and fenced before lane 0 arrives
      if ((threadIdx.x & 31u) == 0) out.commit();  // arrive = "warp"
      out.advance();
    }
    __syncwarp();
    if ((threadIdx.x & 31u) == 0) in.release();  // arrive = "warp"
    in.advance();
  }
}
