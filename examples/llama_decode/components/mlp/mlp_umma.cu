// mlp_umma — gemm-team. The Hopper main loop of the fused decode MLP with one weight ring
// (mlp_uloader.cu): the arithmetic of mlp_mma.cu (gate/up, SwiGLU in registers, down with A from
// registers, f32 partials added into y), for batches of at most 8 rows.
//
// X comes once per kernel ("x" pipe): K / 64 blocks of 8 rows x 64 columns, 1 KB each. The A
// operand of K step kt is block kt read with a stride of 0 between 8-row groups (the wgmma
// descriptor's stride byte offset), so the m64 operand's rows 8 g + r all read row r: output rows
// 8..63 repeat rows 0..7 and are not stored. The weight stages of a tile come in order from the
// "w" ring: K / 64 gate/up stages, then hidden / 128 down stages.
#include "mlp_umma.contract.h"
#include "../../../qwen_mlp/mma/wgmma_ops.cuh"  // gemm-team's generated wgmma wrappers: m64n128k16 (SS and RS)
#include "mlp_math.cuh"  // the SwiGLU into A fragments and the down partials' addition (shared with mlp_mma.cu)

namespace mlp_umma {
constexpr unsigned kTileM = 64, kTileN = 64, kTileK = 64, kDnN = 128;
constexpr unsigned kXRowsPerStep = 8;      // X rows held per K step: M <= 8
using mlp_math::kAcc;   // m64n128 f32 accumulators per thread: 64
using mlp_math::kDAcc;  // 64
static_assert(kTileN == mlp_math::kTileN && kDnN == mlp_math::kDnN, "mlp_math.cuh's shapes");

// 128B-swizzled K-major operand whose 8-row groups all start at smem_addr (stride byte offset 0)
__device__ __forceinline__ unsigned long long desc_sw128_rows8(unsigned smem_addr) {
  return static_cast<unsigned long long>((smem_addr & 0x3FFFFu) >> 4) | (1ull << 16) | (1ull << 62);
}
}  // namespace mlp_umma

PL_PROVIDE(mlp_umma_main, tile_m, mlp_umma::kTileM);
PL_PROVIDE(mlp_umma_main, tile_n, mlp_umma::kTileN);
PL_PROVIDE(mlp_umma_main, tile_k, mlp_umma::kTileK);
PL_PROVIDE(mlp_umma_main, dn_n, mlp_umma::kDnN);
PL_SWIZZLE(mlp_umma_main, x, x, 128);  // the wgmma descriptors (desc_sw128_rows8, desc_sw128)
PL_SWIZZLE(mlp_umma_main, w, b, 128);

PL_COMPONENT(mlp_umma_main) {
  using namespace mlp_umma;
  namespace C = pl_contract::mlp_umma_main;
  const unsigned lane = threadIdx.x & 31u, warp = ctx.warp() & 3u;
  const unsigned K = C::param::K::get(ctx), hidden = C::param::hidden::get(ctx), M = C::param::M::get(ctx);
  float* y = C::param::y::get<float>(ctx);
  const unsigned k_tiles = K / kTileK, n_chunks = hidden / kDnN;
#ifdef PL_CHECKED
  if (M > kXRowsPerStep || (reinterpret_cast<unsigned long long>(y) & 7u) != 0) {
    if (ctx.thread() == 0) printf("mlp_umma: M = %u rows (at most %u), y = %p (8-byte aligned)\n", M, kXRowsPerStep, static_cast<void*>(y));
    __trap();
  }
#endif
  C::In_x xin(ctx);
  C::In_w w(ctx);
  const unsigned r0 = warp * 16u + (lane >> 2), col2 = 2u * (lane & 3u);
  xin.wait();  // X, once: every tile reads it
  const unsigned xa = pl::smem_addr(xin.x<unsigned char>(ctx));
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    // 1. G | U
    float acc[kAcc];
#pragma unroll
    for (unsigned j = 0; j < kAcc; ++j) acc[j] = 0.f;
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      w.wait();
      const unsigned a = xa + kt * kXRowsPerStep * kTileK * 2u;
      const unsigned b = pl::smem_addr(w.b<unsigned char>(ctx));
      wgmma_fence();
#pragma unroll
      for (unsigned k = 0; k < kTileK / 16; ++k)
        wgmma_m64n128k16(acc, desc_sw128_rows8(a + k * 32u), desc_sw128(b + k * 32u), (kt > 0 || k > 0) ? 1 : 0);
      wgmma_commit();
      wgmma_wait_all();
      fence_operands(acc);
      w.release(ctx);
      w.advance();
    }
    // 2. H in A-fragment registers (mlp_math.cuh)
    unsigned h[kTileN / 16][4];
    mlp_math::swiglu_fragments(acc, h);
    // 3. y += H W_down^T, 128 output columns per stage
    for (unsigned c = 0; c < n_chunks; ++c) {
      float d[kDAcc];
#pragma unroll
      for (unsigned j = 0; j < kDAcc; ++j) d[j] = 0.f;
      w.wait();
      const unsigned b = pl::smem_addr(w.b<unsigned char>(ctx));
      wgmma_fence();
#pragma unroll
      for (unsigned s = 0; s < kTileN / 16; ++s) wgmma_rs_m64n128k16(d, h[s], desc_sw128(b + s * 32u), s > 0 ? 1 : 0);
      wgmma_commit();
      wgmma_wait_all();
      fence_operands(d);
      w.release(ctx);
      w.advance();
      mlp_math::add_down_partial(y, d, r0, M, hidden, c, col2);
    }
  }
  xin.release(ctx);
  xin.advance();
}
