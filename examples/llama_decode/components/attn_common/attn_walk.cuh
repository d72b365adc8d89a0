// attn_walk.cuh — the attention walk that llama_decode's two attention cores share: core (a)
// (attn_core_a, attn-team) walks a whole context per block, core (b) (attn_core_split, flash-team)
// one split of it, and both build on this one piece of device code, as two teams would on a shared
// attention library. It is compiled into each core's own object (header only, no symbols of its
// own), so swapping the cores is still a relink of different objects.
//
// attend() walks key tiles [first, last) of the KV pipe for tile t's query heads (GQA: the heads
// of one KV head, head_dim 64), online softmax in fp32, and combines the block's warps through
// `comb` (sync() is the core's named barrier). It returns, for this thread's head h = warp and
// dims 2 lane, 2 lane + 1: the running max M (base 2), the sum lt and the unnormalized o0, o1.
//
// Work split inside a block: warp w owns key rows [16 w, 16 w + 16) of every 64-key stage and
// keeps its own running (m, l, o) over them; the 4 warps' states are combined once per tile, so
// no barrier is needed per key tile. Per 16 keys a warp runs tensor-core mma.m16n8k16 (bf16 in,
// fp32 accumulate), with the 4 query heads as the rows of the A operand (rows 4..15 are zero):
//   S[16 x 16 keys] = Q[16 x 64] K^T   4 k-steps x 2 key blocks; K^T fragments by ldmatrix
//   O[16 x 64]     += P[16 x 16] V      P (bf16 hi + lo) taken from S's accumulator layout as
//                                       the A operand; V fragments by ldmatrix.trans
// K and V stages are 128B-swizzled by the TMA (16-byte chunk c of row r at chunk c ^ (r & 7)),
// so the ldmatrix rows hit distinct banks. Lane (g = lane / 4, t = lane % 4) holds head g's scores
// for keys 2t, 2t + 1, 8 + 2t, 9 + 2t of its warp's 16 and head g's output for dims 8 nb + 2t,
// + 1 (nb = 0..7); lanes with g >= 4 compute on zero rows and are ignored.
// Softmax in base 2: scores are scaled by log2(e) / sqrt(head_dim) in fp32; P enters the mma as
// two bf16 parts (hi + lo), so the P V product keeps fp32-like precision. Keys at or past L get
// probability 0, and their V rows are zeroed in the stage before the P V product (stale cache
// rows may hold anything, and 0 x NaN is NaN inside an mma).
#pragma once
#include "pipelink/device.cuh"

namespace llama_attn {
constexpr unsigned kKvTile = 64;
constexpr float kScale = 0.18033688011112042f;  // log2(e) / sqrt(64)
constexpr float kMinit = -1.0e30f;               // finite: exp2(m_old - m_new) never NaN

__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ void mma_bf16(float (&c)[4], unsigned a0, unsigned a2, unsigned b0, unsigned b1) {
  // A rows 8..15 (a1, a3) are zero: only 4 heads
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void ldsm_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
}
__device__ __forceinline__ void ldsm_x4_t(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
}
// Byte offset of 16-byte chunk c of row r in a 128B-swizzled tile of 128-byte rows.
__device__ __forceinline__ unsigned swz(unsigned r, unsigned c) { return r * 128u + ((c ^ (r & 7u)) << 4); }

// The comb region a core declares: per warp m[heads], l[heads] (8 floats) and o[heads][head_dim].
template <unsigned kHeadDim, unsigned kHeads>
__host__ __device__ constexpr unsigned comb_stride() { return 8 + kHeads * kHeadDim; }

struct Partial {
  unsigned h;      // this thread's head (= its warp)
  float M, lt;     // running max (base 2) and sum of the head
  float o0, o1;    // unnormalized output, dims 2 lane and 2 lane + 1
};

template <unsigned kHeadDim, unsigned kHeads, unsigned kWarps, class KvIn, class Sync>
__device__ __forceinline__ Partial attend(const pl::Ctx& ctx, KvIn& kv, const pl::bf16* qg, const pl::Tile& t,
                                          unsigned first, unsigned last, unsigned L, float* comb, Sync sync) {
  constexpr unsigned kWarpKeys = kKvTile / kWarps;  // 16
  constexpr unsigned kCombStride = comb_stride<kHeadDim, kHeads>();
  static_assert(kHeadDim == 64 && kHeads == 4 && kWarps == 4 && kWarpKeys == 16,
                "the fragment mapping is written for 4 heads x 64 dims, 4 warps of 16 keys");
  const unsigned warp = ctx.warp(), lane = threadIdx.x & 31u;
  const unsigned g = lane >> 2, tq = lane & 3u;
  const float kNegInf = __int_as_float(0xff800000);
  // ldmatrix row addresses: lane's matrix mi = lane / 8 and row lane % 8 of it
  const unsigned mi = lane >> 3, lrow = lane & 7u;
  const unsigned k_row = warp * kWarpKeys + (mi >> 1) * 8 + lrow, k_chunk = mi & 1u;  // K: (key block, dim chunk)
  const unsigned v_row = warp * kWarpKeys + (mi & 1u) * 8 + lrow, v_chunk = mi >> 1;  // V: (key block, dim block)

  // Q fragments (A operand, row g = head g; dims 16 ks + 2 tq and 16 ks + 8 + 2 tq)
  unsigned qa[4][2];
  {
    const unsigned* qw = reinterpret_cast<const unsigned*>(qg + static_cast<unsigned long long>(t.m) * kHeads * kHeadDim);
#pragma unroll
    for (unsigned ks = 0; ks < 4; ++ks) {
      qa[ks][0] = g < kHeads ? qw[g * 32 + ks * 8 + tq] : 0u;
      qa[ks][1] = g < kHeads ? qw[g * 32 + ks * 8 + 4 + tq] : 0u;
    }
  }
  float m = kMinit, l = 0.f;
  float o[8][4];
#pragma unroll
  for (unsigned nb = 0; nb < 8; ++nb) o[nb][0] = o[nb][1] = o[nb][2] = o[nb][3] = 0.f;

  for (unsigned j = first; j < last; ++j) {
    kv.wait();
    const unsigned key0 = j * kKvTile + warp * kWarpKeys;  // first key of this warp's rows
    const unsigned nvalid = key0 >= L ? 0u : (L - key0 < kWarpKeys ? L - key0 : kWarpKeys);
    if (nvalid > 0) {  // warp-uniform
      unsigned char* vtile = kv.template v<unsigned char>(ctx);
      if (nvalid < kWarpKeys) {  // zero the V rows of keys past L (this warp's rows only)
        uint4* vz = reinterpret_cast<uint4*>(vtile + (warp * kWarpKeys + nvalid) * 128u);
        for (unsigned e = lane; e < (kWarpKeys - nvalid) * 8u; e += 32u) vz[e] = make_uint4(0u, 0u, 0u, 0u);
        __syncwarp();
      }
      const unsigned kbase = pl::smem_addr(kv.template k<unsigned char>(ctx)), vbase = pl::smem_addr(vtile);
      float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
      for (unsigned ks = 0; ks < 4; ++ks) {
        unsigned b00, b01, b10, b11;  // key block 0: dims chunk 2ks, 2ks+1; key block 1: the same
        ldsm_x4(kbase + swz(k_row, 2 * ks + k_chunk), b00, b01, b10, b11);
        mma_bf16(s[0], qa[ks][0], qa[ks][1], b00, b01);
        mma_bf16(s[1], qa[ks][0], qa[ks][1], b10, b11);
      }
      // head g, keys 2tq, 2tq+1 (block 0) and 8+2tq, 9+2tq (block 1) of the warp's 16
      float x[4] = {s[0][0] * kScale, s[0][1] * kScale, s[1][0] * kScale, s[1][1] * kScale};
      const unsigned kk[4] = {2 * tq, 2 * tq + 1, 8 + 2 * tq, 9 + 2 * tq};
      float mx = kNegInf;
#pragma unroll
      for (unsigned e = 0; e < 4; ++e) mx = kk[e] < nvalid ? fmaxf(mx, x[e]) : mx;
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m, mx);
      const float alpha = exp2f(m - m_new);
      float p[4];
#pragma unroll
      for (unsigned e = 0; e < 4; ++e) p[e] = kk[e] < nvalid ? exp2f(x[e] - m_new) : 0.f;
      // P as bf16 hi + lo parts (P = hi + lo to about 2^-16 relative): two mma per product, so
      // P V is as exact as with fp32 P (one bf16 P, as flash kernels use, flipped near-tie argmaxes)
      const unsigned pa0 = pack_bf16x2(p[0], p[1]), pa2 = pack_bf16x2(p[2], p[3]);
      const unsigned pb0 = pack_bf16x2(p[0] - __uint_as_float(pa0 << 16), p[1] - __uint_as_float(pa0 & 0xFFFF0000u));
      const unsigned pb2 = pack_bf16x2(p[2] - __uint_as_float(pa2 << 16), p[3] - __uint_as_float(pa2 & 0xFFFF0000u));
      l = l * alpha + (p[0] + p[1]) + (p[2] + p[3]);
      m = m_new;
#pragma unroll
      for (unsigned nb = 0; nb < 8; ++nb) { o[nb][0] *= alpha; o[nb][1] *= alpha; }
#pragma unroll
      for (unsigned dp = 0; dp < 4; ++dp) {
        unsigned v0, v1, v2, v3;  // dim block 2dp: keys 0-7, 8-15; dim block 2dp+1: the same
        ldsm_x4_t(vbase + swz(v_row, 2 * dp + v_chunk), v0, v1, v2, v3);
        mma_bf16(o[2 * dp], pa0, pa2, v0, v1);
        mma_bf16(o[2 * dp], pb0, pb2, v0, v1);
        mma_bf16(o[2 * dp + 1], pa0, pa2, v2, v3);
        mma_bf16(o[2 * dp + 1], pb0, pb2, v2, v3);
      }
    }
    kv.release(ctx);  // arrive = "warp": __syncwarp(), lane 0 arrives
    kv.advance();
  }

  // Combine the 4 warps' states: warp w's m, l (summed over the row's 4 lanes) and o into "comb".
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  float* cw = comb + warp * kCombStride;
  if (g < kHeads) {
    if (tq == 0) { cw[g] = m; cw[4 + g] = l; }
#pragma unroll
    for (unsigned nb = 0; nb < 8; ++nb)
      reinterpret_cast<float2*>(cw + 8 + g * kHeadDim + nb * 8)[tq] = make_float2(o[nb][0], o[nb][1]);
  }
  sync();
  const unsigned h = warp;  // this thread's output: head `warp`, dims 2 lane, 2 lane + 1
  float M = kMinit;
#pragma unroll
  for (unsigned w = 0; w < kWarps; ++w) M = fmaxf(M, comb[w * kCombStride + h]);
  float lt = 0.f, o0 = 0.f, o1 = 0.f;
#pragma unroll
  for (unsigned w = 0; w < kWarps; ++w) {
    const float* c = comb + w * kCombStride;
    const float sc = exp2f(c[h] - M);
    const float2 ow = reinterpret_cast<const float2*>(c + 8 + h * kHeadDim)[lane];
    lt = fmaf(c[4 + h], sc, lt);
    o0 = fmaf(ow.x, sc, o0);
    o1 = fmaf(ow.y, sc, o1);
  }
  return Partial{h, M, lt, o0, o1};
}
}  // namespace llama_attn
