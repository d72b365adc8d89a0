// attn_core_split — flash-team. Decode attention core (b): split-KV flash-decoding. The tile
// sequence has S splits per (sequence, KV head); the block of split t.n walks key tiles
// [t.n * chunk, min(ntiles, (t.n + 1) * chunk)) (the loader's range), for the KV head's 4 query
// heads (GQA 32 / 8, head_dim 64), online softmax in fp32 exactly as core (a) does inside a block.
// Its partial state (o unnormalized, m, l per head) goes to the workspace `ws`; after a
// __threadfence() thread 0 counts the split in cnt[t.m]; the split that arrives last (count S - 1)
// resets the counter to 0 (so the next launch, or graph replay, starts from zero), reads every
// split's partial through L2 and writes the combined, normalized output into the "o" stage with
// flag = 1. The other splits commit their "o" stage with flag = 0 (the writer skips it).
// Needs: cnt zeroed once before the first launch; ws of BH * S * 4 * 66 floats.
#define PL_PROVIDE_FROM_CONTRACT  // head_dim, q_per_kv: the code compiles in C::provided::*
#include "attn_core_split.contract.h"

namespace attn_core_split {
namespace C = pl_contract::attn_core_split_main;
constexpr unsigned kHeadDim = C::provided::head_dim;  // 64
constexpr unsigned kHeads = C::provided::q_per_kv;    // 4
constexpr unsigned kKvTile = 64;
constexpr unsigned kWarpKeys = kKvTile / C::warps;    // 16
constexpr unsigned kCombStride = 8 + kHeads * kHeadDim;  // floats per warp in "comb": m[4], l[4], o[4][64]
constexpr float kScale = 0.18033688011112042f;       // log2(e) / sqrt(64)
constexpr float kMinit = -1.0e30f;                    // finite: exp2(m_old - m_new) never NaN
static_assert(kHeadDim == 64 && kHeads == 4 && C::warps == 4, "the lane mapping is written for 4 heads x 64 dims, 4 warps");

__device__ __forceinline__ float bf_lo(unsigned w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf_hi(unsigned w) { return __uint_as_float(w & 0xFFFF0000u); }
__device__ __forceinline__ unsigned pack_bf16x2(float lo, float hi) {
  unsigned r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ unsigned q4_index(unsigned d) { return d + (d >> 3); }  // padding: 72 float4
__device__ __forceinline__ float warp_max(float v) {
  for (unsigned off = 2; off < 32; off <<= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (unsigned off = 1; off < 32; off <<= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}
}  // namespace attn_core_split

PL_USE(attn_core_split_main, kv_tile, attn_core_split::kKvTile);

PL_COMPONENT(attn_core_split_main) {
  using namespace attn_core_split;
  const unsigned L = C::param::L::get(ctx), S = C::param::S::get(ctx);
  const pl::bf16* qg = C::param::q::get<pl::bf16>(ctx);
  float4* q4 = C::smem::q4::at<float4>(ctx);
  float* comb = C::smem::comb::at<float>(ctx);
  const unsigned warp = ctx.warp(), lane = threadIdx.x & 31u, tid = ctx.thread();
  float4* ps = C::smem::p::at<float4>(ctx) + warp * kWarpKeys;
  const unsigned row = warp * kWarpKeys + (lane >> 1), half = lane & 1u;
  const unsigned ntiles = (L + kKvTile - 1) / kKvTile;
  const unsigned chunk = (ntiles + S - 1) / S;
  const float kNegInf = __int_as_float(0xff800000);

  C::In_kv kv(ctx);
  C::Out_o out(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    {  // q of the 4 heads, scaled, as float4 per dim: thread = (head tid / 32, dims 2 lane, 2 lane + 1)
      const unsigned* qw = reinterpret_cast<const unsigned*>(qg + static_cast<unsigned long long>(t.m) * kHeads * kHeadDim);
      const unsigned h = tid >> 5, w = qw[h * 32 + lane];
      float* qf = reinterpret_cast<float*>(q4);
      qf[q4_index(2 * lane) * 4 + h] = bf_lo(w) * kScale;
      qf[q4_index(2 * lane + 1) * 4 + h] = bf_hi(w) * kScale;
    }
    C::barrier::core_sync::sync(ctx);

    float m[kHeads], l[kHeads], o[kHeads][2];
#pragma unroll
    for (unsigned h = 0; h < kHeads; ++h) { m[h] = kMinit; l[h] = 0.f; o[h][0] = 0.f; o[h][1] = 0.f; }
    const unsigned first = t.n * chunk;
    const unsigned last = first + chunk < ntiles ? first + chunk : ntiles;
    for (unsigned j = first; j < last; ++j) {
      kv.wait();
      const unsigned key0 = j * kKvTile + warp * kWarpKeys;  // first key of this warp's rows
      const unsigned nvalid = key0 >= L ? 0u : (L - key0 < kWarpKeys ? L - key0 : kWarpKeys);
      if (nvalid > 0) {  // warp-uniform
        const uint4* krow = reinterpret_cast<const uint4*>(kv.k<unsigned char>(ctx) + row * (kHeadDim * 2) + half * kHeadDim);
        float s[kHeads] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (unsigned c = 0; c < 4; ++c) {
          const unsigned cc = (c + row) & 3u;  // staggered by row: no bank conflicts
          const uint4 kk = krow[cc];
          const unsigned kw[4] = {kk.x, kk.y, kk.z, kk.w};
          const unsigned base = half * 32 + cc * 8;
#pragma unroll
          for (unsigned e = 0; e < 4; ++e) {
            const float k0 = bf_lo(kw[e]), k1 = bf_hi(kw[e]);
            const float4 qa = q4[q4_index(base + 2 * e)], qb = q4[q4_index(base + 2 * e + 1)];
            s[0] = fmaf(qa.x, k0, fmaf(qb.x, k1, s[0]));
            s[1] = fmaf(qa.y, k0, fmaf(qb.y, k1, s[1]));
            s[2] = fmaf(qa.z, k0, fmaf(qb.z, k1, s[2]));
            s[3] = fmaf(qa.w, k0, fmaf(qb.w, k1, s[3]));
          }
        }
        const bool valid = (lane >> 1) < nvalid;
        float p[kHeads];
#pragma unroll
        for (unsigned h = 0; h < kHeads; ++h) {
          s[h] += __shfl_xor_sync(0xffffffffu, s[h], 1);
          const float mx = warp_max(valid ? s[h] : kNegInf);
          const float m_new = fmaxf(m[h], mx);
          const float alpha = exp2f(m[h] - m_new);
          p[h] = valid ? exp2f(s[h] - m_new) : 0.f;
          l[h] = l[h] * alpha + (half == 0 ? p[h] : 0.f);
          o[h][0] *= alpha;
          o[h][1] *= alpha;
          m[h] = m_new;
        }
        if (half == 0) ps[lane >> 1] = make_float4(p[0], p[1], p[2], p[3]);
        __syncwarp();
        const unsigned* vb = reinterpret_cast<const unsigned*>(kv.v<unsigned char>(ctx) + warp * kWarpKeys * (kHeadDim * 2));
        for (unsigned r = 0; r < nvalid; ++r) {
          const float4 pr = ps[r];
          const unsigned vw = vb[r * 32 + lane];
          const float v0 = bf_lo(vw), v1 = bf_hi(vw);
          o[0][0] = fmaf(pr.x, v0, o[0][0]); o[0][1] = fmaf(pr.x, v1, o[0][1]);
          o[1][0] = fmaf(pr.y, v0, o[1][0]); o[1][1] = fmaf(pr.y, v1, o[1][1]);
          o[2][0] = fmaf(pr.z, v0, o[2][0]); o[2][1] = fmaf(pr.z, v1, o[2][1]);
          o[3][0] = fmaf(pr.w, v0, o[3][0]); o[3][1] = fmaf(pr.w, v1, o[3][1]);
        }
      }
      kv.release(ctx);  // arrive = "warp": __syncwarp(), lane 0 arrives (also orders ps reuse)
      kv.advance();
    }

    // Combine the 4 warps' states: warp w's m, l (summed over its lanes) and o into "comb".
    float* cw = comb + warp * kCombStride;
#pragma unroll
    for (unsigned h = 0; h < kHeads; ++h) {
      const float lsum = warp_sum(l[h]);
      if (lane == 0) { cw[h] = m[h]; cw[4 + h] = lsum; }
      reinterpret_cast<float2*>(cw + 8 + h * kHeadDim)[lane] = make_float2(o[h][0], o[h][1]);
    }
    C::barrier::core_sync::sync(ctx);
    const unsigned h = warp;  // this thread's output: head `warp`, dims 2 lane, 2 lane + 1
    float M = kMinit;
#pragma unroll
    for (unsigned w = 0; w < C::warps; ++w) M = fmaxf(M, comb[w * kCombStride + h]);
    float lt = 0.f, o0 = 0.f, o1 = 0.f;
#pragma unroll
    for (unsigned w = 0; w < C::warps; ++w) {
      const float* c = comb + w * kCombStride;
      const float sc = exp2f(c[h] - M);
      const float2 ow = reinterpret_cast<const float2*>(c + 8 + h * kHeadDim)[lane];
      lt = fmaf(c[4 + h], sc, lt);
      o0 = fmaf(ow.x, sc, o0);
      o1 = fmaf(ow.y, sc, o1);
    }
    // This split's partial state to the workspace, then count the split.
    float* wsb = C::param::ws::get<float>(ctx);
    unsigned* cnt = C::param::cnt::get<unsigned>(ctx);
    constexpr unsigned kPart = kHeadDim + 2;  // o[64], m, l per (tile, split, head)
    const unsigned long long head_row = static_cast<unsigned long long>(t.m) * S * kHeads;
    float* mine = wsb + (head_row + static_cast<unsigned long long>(t.n) * kHeads + h) * kPart;
    __stcg(mine + 2 * lane, o0);
    __stcg(mine + 2 * lane + 1, o1);
    if (lane == 0) { __stcg(mine + kHeadDim, M); __stcg(mine + kHeadDim + 1, lt); }
    __threadfence();
    C::barrier::core_sync::sync(ctx);
    unsigned* last_flag = C::smem::last::at<unsigned>(ctx);
    if (tid == 0) {
      const unsigned before = atomicAdd(cnt + t.m, 1u);
      const unsigned is_last = before == S - 1 ? 1u : 0u;
      if (is_last) atomicExch(cnt + t.m, 0u);
      *last_flag = is_last;
    }
    C::barrier::core_sync::sync(ctx);
    const bool is_last = *last_flag != 0;
    out.acquire();
    if (is_last) {
      __threadfence();
      float Mt = kMinit;
      for (unsigned sp = 0; sp < S; ++sp) Mt = fmaxf(Mt, __ldcg(wsb + (head_row + sp * kHeads + h) * kPart + kHeadDim));
      float lsum = 0.f, a0 = 0.f, a1 = 0.f;
      for (unsigned sp = 0; sp < S; ++sp) {
        const float* part = wsb + (head_row + sp * kHeads + h) * kPart;
        const float sc = exp2f(__ldcg(part + kHeadDim) - Mt);
        lsum = fmaf(__ldcg(part + kHeadDim + 1), sc, lsum);
        a0 = fmaf(__ldcg(part + 2 * lane), sc, a0);
        a1 = fmaf(__ldcg(part + 2 * lane + 1), sc, a1);
      }
      const float inv = 1.f / lsum;
      out.o<unsigned>(ctx)[h * 32 + lane] = pack_bf16x2(a0 * inv, a1 * inv);
    }
    if (tid == 0) out.flag(ctx)[0] = is_last ? 1 : 0;
    out.commit(ctx);  // arrive = "one": fence, sync the instance, thread 0 arrives
    out.advance();
  }
}
