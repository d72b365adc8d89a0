// moe_combine — combine-team. Adds each expert row's down-projection output into its token's
// result row: y[token, n0 + c] += tile[r, c] (fp32 vector reductions in L2, red.global.add.v4.f32).
// A token's 8 expert rows land in different tiles, so their sum is order-independent up to fp32
// rounding. Padding rows (token -1) are skipped. y must be zero before the kernel (the host
// clears it as part of the layer).
//
// Consumer of "acc" (bf16 [rows x cols] from the down-projection main loop, any shape: it reads the
// stage shape from the port); the tile's column origin is t.n * cols.
#include "moe_combine.contract.h"  // pipelink header contract.toml: names, pipe operations, records

PL_FACT_DECL(unsigned, tile_m);

namespace moe_combine {
__device__ __forceinline__ void red_add4(float* p, float a, float b, float c, float d) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}
__device__ __forceinline__ float lo(unsigned v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float hi(unsigned v) { return __uint_as_float(v & 0xFFFF0000u); }
}  // namespace moe_combine

PL_COMPONENT(moe_combine_main) {
  using namespace moe_combine;
  namespace C = pl_contract::moe_combine_main;
  float* y = C::param::y::get<float>(ctx);
  const int* row_token = C::param::row_token::get<const int>(ctx);
  const unsigned hidden = C::param::hidden::get(ctx);
  C::In_out r(ctx);  // the "out" pipe, bound to the main loop's "acc" by --connect out=acc
  const unsigned rows = r.rows(C::In_out::tensor::tile::index), cols = r.cols(C::In_out::tensor::tile::index), chunks = cols / 8;
  const unsigned tile_m = PL_FACT(tile_m);
  // Warp w takes rows w, w + W, w + 2W, ... (W warps); a row is one warp's contiguous run of
  // 16-byte chunks. The rows' tokens are loaded 32 at a time, one per lane (the first 32 before
  // the stage is waited for), and handed to the warp by a shuffle: one global load's latency per
  // 32 rows, not one per row.
  const unsigned lane = ctx.thread() & 31, warp = ctx.warp(), W = ctx.threads() / 32, group = 32 * W;
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const int* tokens = row_token + size_t(t.m) * tile_m;
    int tok = warp + W * lane < rows ? tokens[warp + W * lane] : -1;
    r.wait();
    const uint4* src = r.tile<const uint4>(ctx);
    for (unsigned g = 0; g < rows; g += group) {
      if (g != 0) tok = g + warp + W * lane < rows ? tokens[g + warp + W * lane] : -1;
#pragma unroll 1
      for (unsigned j = 0; j < 32; ++j) {
        const unsigned row = g + warp + W * j;
        const int token = __shfl_sync(0xffffffffu, tok, j);
        if (row >= rows || token < 0) continue;  // the same for the whole warp
        float* dst_row = y + size_t(token) * hidden + t.n * cols;
        for (unsigned c = lane; c < chunks; c += 32) {
          const uint4 x = src[row * chunks + c];
          float* dst = dst_row + c * 8;
          red_add4(dst, lo(x.x), hi(x.x), lo(x.y), hi(x.y));
          red_add4(dst + 4, lo(x.z), hi(x.z), lo(x.w), hi(x.w));
        }
      }
    }
    r.release(ctx);  // arrive = "warp": __syncwarp(), lane 0
    r.advance();
  }
}
