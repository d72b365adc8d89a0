// mlp_mma — gemm-team. The Hopper main loop of the fused decode MLP: gate/up, SwiGLU and the down
// projection of one 64-column slice of the intermediate, without the intermediate leaving registers.
//
// Per tile t (FFN columns [64 t.n, + 64)), one warpgroup:
//   1. G | U = X W_gu^T over K: per "gu" stage four m64n128k16 wgmma steps (A = X [64 x 64],
//      B = the stage's 64 gate + 64 up rows), f32 accumulators: G in registers 0..31, U in 32..63.
//   2. H = bf16(silu(bf16(G)) * bf16(U)) (fp32 in between: the arithmetic of swiglu_epilogue),
//      packed two per register in the layout of a wgmma A operand: the accumulator of an
//      m64nN wgmma holds, per 8-column group j, rows g and g + 8 (g = 16 warp + lane / 4) at
//      columns 8 j + 2 (lane % 4) + {0, 1}, and an m64k16 A fragment holds the same rows at
//      columns 2 (lane % 4) + {0, 1} and + 8: groups 2 s and 2 s + 1 make k-step s.
//   3. For each "dn" stage (W_down rows [128 c, + 128) over this tile's 64 intermediate columns):
//      four m64n128k16 wgmma steps with A from registers (H) and B from the stage, then the f32
//      partial of y[:, 128 c .. + 128) added into y with red.global.add.v2.f32 for rows < M.
//      Every tile adds into every output column, so y must be zero first (its reader zeroes it).
//
// Compile-time constants (wgmma shapes, register arrays): kTileM, kTileN, kTileK, kDnN are what
// the contract provides.
#include "mlp_mma.contract.h"

#include "../../../qwen_mlp/mma/wgmma_ops.cuh"  // gemm-team's generated wgmma wrappers: m64n128k16 (SS and RS)
#include "mlp_math.cuh"  // the SwiGLU into A fragments and the down partials' addition (shared with mlp_umma.cu)

namespace mlp_mma {
constexpr unsigned kTileM = 64, kTileN = 64, kTileK = 64, kDnN = 128;
using mlp_math::kAcc;   // m64n128 f32 accumulators per thread: 64
using mlp_math::kDAcc;  // 64
static_assert(kTileN == mlp_math::kTileN && kDnN == mlp_math::kDnN, "mlp_math.cuh's shapes");

// desc_sw128, wgmma_fence / _commit / _wait_all, fence_operands and wgmma_rs_m64n128k16 (A from
// registers): gemm-team's wgmma_ops.cuh.
}  // namespace mlp_mma

PL_PROVIDE(mlp_mma_main, tile_m, mlp_mma::kTileM);
PL_PROVIDE(mlp_mma_main, tile_n, mlp_mma::kTileN);
PL_PROVIDE(mlp_mma_main, tile_k, mlp_mma::kTileK);
PL_PROVIDE(mlp_mma_main, dn_n, mlp_mma::kDnN);
PL_SWIZZLE(mlp_mma_main, gu, a, 128);  // the wgmma descriptors (desc_sw128)
PL_SWIZZLE(mlp_mma_main, gu, b, 128);
PL_SWIZZLE(mlp_mma_main, dn, b, 128);

PL_COMPONENT(mlp_mma_main) {
  using namespace mlp_mma;
  namespace C = pl_contract::mlp_mma_main;
  const unsigned lane = threadIdx.x & 31u, warp = ctx.warp() & 3u;
  const unsigned K = C::param::K::get(ctx), hidden = C::param::hidden::get(ctx), M = C::param::M::get(ctx);
  float* y = C::param::y::get<float>(ctx);
  const unsigned k_tiles = K / kTileK, n_chunks = hidden / kDnN;
#ifdef PL_CHECKED
  if (M > kTileM || (reinterpret_cast<unsigned long long>(y) & 7u) != 0) {
    if (ctx.thread() == 0) printf("mlp_mma: M = %u rows (at most %u), y = %p (8-byte aligned)\n", M, kTileM, static_cast<void*>(y));
    __trap();
  }
#endif
  C::In_gu gu(ctx);
  C::In_dn dn(ctx);
  const unsigned r0 = warp * 16u + (lane >> 2), col2 = 2u * (lane & 3u);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    // 1. G | U
    float acc[kAcc];
#pragma unroll
    for (unsigned j = 0; j < kAcc; ++j) acc[j] = 0.f;
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      gu.wait();
      const unsigned a = pl::smem_addr(gu.a<unsigned char>(ctx));
      const unsigned b = pl::smem_addr(gu.b<unsigned char>(ctx));
      wgmma_fence();
#pragma unroll
      for (unsigned k = 0; k < kTileK / 16; ++k)
        wgmma_m64n128k16(acc, desc_sw128(a + k * 32u), desc_sw128(b + k * 32u), (kt > 0 || k > 0) ? 1 : 0);
      wgmma_commit();
      wgmma_wait_all();
      fence_operands(acc);
      gu.release(ctx);
      gu.advance();
    }
    // 2. H in A-fragment registers (mlp_math.cuh)
    unsigned h[kTileN / 16][4];
    mlp_math::swiglu_fragments(acc, h);
    // 3. y += H W_down^T, 128 output columns per stage
    for (unsigned c = 0; c < n_chunks; ++c) {
      float d[kDAcc];
#pragma unroll
      for (unsigned j = 0; j < kDAcc; ++j) d[j] = 0.f;
      dn.wait();
      const unsigned b = pl::smem_addr(dn.b<unsigned char>(ctx));
      wgmma_fence();
#pragma unroll
      for (unsigned s = 0; s < kTileN / 16; ++s) wgmma_rs_m64n128k16(d, h[s], desc_sw128(b + s * 32u), s > 0 ? 1 : 0);
      wgmma_commit();
      wgmma_wait_all();
      fence_operands(d);
      dn.release(ctx);
      dn.advance();
      mlp_math::add_down_partial(y, d, r0, M, hidden, c, col2);
    }
  }
}
