// scale_epilogue — the walkthrough of docs/components.md. An epilogue between the Qwen main loop
// (wgmma_gu) and the TMA store (tma_store): out = gate * scale.
//
// Consumer of the "acc" pipe: one bf16 tile [tile_m x 2 tile_n] per tile, gate in columns
// [0, tile_n), up in [tile_n, 2 tile_n) (see wgmma_gu.cu). Producer of the "out" pipe: bf16 stages
// [64 x tile_n], tile_m / 64 of them per tile, each written to global memory by tma_store.
// For each element: out = bf16(float(gate) * scale), scale an f32 kernel parameter. The up half
// of the tile is not read. Rows at or past M (padding of a partial tile) are skipped; the store
// clips them anyway.
// scale_epilogue.contract.h is generated from contract.toml (pipelink header; regenerate with
// scripts/regen_headers.sh): the contract's names, typed accessors, pipe operations that arrive
// as each port's `arrive` says, and the records PL_WARPS, PL_REGISTERS, PL_ARRIVE.
#include "scale_epilogue.contract.h"

// Facts other components provide (wgmma_gu compiles them in); read at link time.
PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);

namespace scale_epilogue {
namespace C = pl_contract::scale_epilogue_main;
constexpr unsigned kOutRows = C::Out_out::tensor::tile::rows;  // rows of one "out" stage (64): the store's box height

__device__ __forceinline__ unsigned scale2(unsigned g, float s) {
  const float lo = __uint_as_float(g << 16) * s, hi = __uint_as_float(g & 0xFFFF0000u) * s;
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
}  // namespace scale_epilogue

// What this code compiles in beyond the header's records, checked against contract.toml.
PL_ROWS(scale_epilogue_main, out, tile, scale_epilogue::kOutRows);

PL_COMPONENT(scale_epilogue_main) {
  using namespace scale_epilogue;
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n);
  const unsigned chunks = tile_n / 8;  // 16-byte chunks (8 bf16) per output row
  const unsigned M = C::param::M::get(ctx);
  const float scale = C::param::scale::get(ctx);  // an f32 param
  C::In_acc in(ctx);
  C::Out_out out(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    in.wait();
    const unsigned char* acc = in.tile<unsigned char>(ctx);
    for (unsigned part = 0; part < tile_m / kOutRows; ++part) {
      out.acquire();
      uint4* dst = out.tile<uint4>(ctx);
      const unsigned first = t.m * tile_m + part * kOutRows;
      const unsigned rows = first >= M ? 0u : (M - first < kOutRows ? M - first : kOutRows);
      for (unsigned v = ctx.thread(); v < rows * chunks; v += ctx.threads()) {
        const unsigned row = part * kOutRows + v / chunks, c = v % chunks;
        const uint4 g = *reinterpret_cast<const uint4*>(acc + (row * 2u * tile_n + c * 8u) * 2u);
        dst[v] = make_uint4(scale2(g.x, scale), scale2(g.y, scale), scale2(g.z, scale), scale2(g.w, scale));
      }
      out.commit(ctx);  // arrive = "warp": each lane fences its stores (tma_store reads "out" through
                        // the async proxy), __syncwarp(), then lane 0 arrives
      out.advance();
    }
    in.release(ctx);  // arrive = "warp": __syncwarp(), then lane 0
    in.advance();
  }
}
