// attn_core_split — flash-team. Decode attention core (b): split-KV flash-decoding. The tile
// sequence has S splits per (sequence, KV head); the block of split t.n walks key tiles
// [t.n * chunk, min(ntiles, (t.n + 1) * chunk)) (the loader's range), for the KV head's 4 query
// heads (GQA 32 / 8, head_dim 64), online softmax in fp32 through the walk core (a) uses
// (../attn_common/attn_walk.cuh).
// Its partial state (o unnormalized, m, l per head) goes to the workspace `ws`; thread 0 counts
// the split in cnt[t.m] (an acq_rel atomic after the instance's barrier); the split that arrives last (count S - 1)
// resets the counter to 0 (so the next launch, or graph replay, starts from zero), reads every
// split's partial through L2 and writes the combined, normalized output into the "o" stage with
// flag = 1. The other splits commit their "o" stage with flag = 0 (the writer skips it).
// Needs: cnt zeroed once before the first launch; ws of BH * S * 4 * 66 floats.
#define PL_PROVIDE_FROM_CONTRACT  // head_dim, q_per_kv: the code compiles in C::provided::*
#include "attn_core_split.contract.h"
#include "../attn_common/attn_walk.cuh"

namespace attn_core_split {
namespace C = pl_contract::attn_core_split_main;
using namespace llama_attn;
constexpr unsigned kHeadDim = C::provided::head_dim;  // 64
constexpr unsigned kHeads = C::provided::q_per_kv;    // 4
}  // namespace attn_core_split

PL_USE(attn_core_split_main, kv_tile, attn_core_split::kKvTile);

PL_COMPONENT(attn_core_split_main) {
  using namespace attn_core_split;
  const unsigned L = C::param::L::get(ctx), S = C::param::S::get(ctx);
  const pl::bf16* qg = C::param::q::get<pl::bf16>(ctx);
  float* comb = C::smem::comb::at<float>(ctx);
  const unsigned lane = threadIdx.x & 31u;
  const unsigned ntiles = (L + kKvTile - 1) / kKvTile;
  const unsigned chunk = (ntiles + S - 1) / S;

  C::In_kv kv(ctx);
  C::Out_o out(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const unsigned first = t.n * chunk;
    const unsigned last = first + chunk < ntiles ? first + chunk : ntiles;
    const Partial r = attend<kHeadDim, kHeads, C::warps>(ctx, kv, qg, t, first, last, L, comb,
                                                         [&] { C::barrier::core_sync::sync(ctx); });
    const unsigned h = r.h;
    const float M = r.M, lt = r.lt, o0 = r.o0, o1 = r.o1;
    // This split's partial state to the workspace, then count the split.
    float* wsb = C::param::ws::get<float>(ctx);
    unsigned* cnt = C::param::cnt::get<unsigned>(ctx);
    constexpr unsigned kPart = kHeadDim + 2;  // o[64], m, l per (tile, split, head)
    const unsigned long long head_row = static_cast<unsigned long long>(t.m) * S * kHeads;
    float* mine = wsb + (head_row + static_cast<unsigned long long>(t.n) * kHeads + h) * kPart;
    __stcg(reinterpret_cast<float2*>(mine) + lane, make_float2(o0, o1));
    if (lane == 0) { __stcg(mine + kHeadDim, M); __stcg(mine + kHeadDim + 1, lt); }
    // Count the split: the instance's barrier orders every thread's stores before thread 0's
    // atomic, whose release (gpu scope) publishes them; its acquire, and the barrier after it,
    // order the last split's reads of the other splits' partials after their releases.
    C::barrier::core_sync::sync(ctx);
    unsigned* last_flag = C::smem::last::at<unsigned>(ctx);
    const unsigned tid = ctx.thread();
    if (tid == 0) {
      unsigned before;
      asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(cnt + t.m) : "memory");
      const unsigned is_last = before == S - 1 ? 1u : 0u;
      if (is_last) atomicExch(cnt + t.m, 0u);  // for the next launch, which starts after this grid
      *last_flag = is_last;
    }
    C::barrier::core_sync::sync(ctx);
    const bool is_last = *last_flag != 0;
    out.acquire();
    if (is_last) {
      // Warp h combines head h's S partials, 32 splits per round: lane s reads split s's (m, l),
      // and o is read in groups of 16 splits whose loads are all issued before any is used (the
      // first group's together with (m, l)): for S <= 16 one trip to L2, not 2 S dependent ones.
      constexpr unsigned kGroup = 16;
      constexpr unsigned kSplitStride = kHeads * kPart;  // from split s's partial to split s + 1's
      const float* head_ws = wsb + (head_row + h) * kPart;
      float Mt = kMinit, lsum = 0.f, a0 = 0.f, a1 = 0.f;
      for (unsigned s0 = 0; s0 < S; s0 += 32) {
        const unsigned n = S - s0 < 32 ? S - s0 : 32u;
        const float* chunk_ws = head_ws + static_cast<unsigned long long>(s0) * kSplitStride;
        const float ms = lane < n ? __ldcg(chunk_ws + lane * kSplitStride + kHeadDim) : kMinit;
        const float ls = lane < n ? __ldcg(chunk_ws + lane * kSplitStride + kHeadDim + 1) : 0.f;
        float2 ov[kGroup];
        auto load_group = [&](unsigned u) {
#pragma unroll
          for (unsigned k = 0; k < kGroup; ++k)
            ov[k] = u + k < n ? __ldcg(reinterpret_cast<const float2*>(chunk_ws + (u + k) * kSplitStride) + lane)
                              : make_float2(0.f, 0.f);
        };
        load_group(0);
        float cm = ms;
#pragma unroll
        for (unsigned d = 16; d > 0; d >>= 1) cm = fmaxf(cm, __shfl_xor_sync(0xffffffffu, cm, d));
        const float Mn = fmaxf(Mt, cm);
        const float rescale = exp2f(Mt - Mn);
        const float sc = lane < n ? exp2f(ms - Mn) : 0.f;  // split s0 + lane's weight
        float lc = ls * sc;
#pragma unroll
        for (unsigned d = 16; d > 0; d >>= 1) lc += __shfl_xor_sync(0xffffffffu, lc, d);
        lsum = fmaf(lsum, rescale, lc);
        a0 *= rescale;
        a1 *= rescale;
        Mt = Mn;
        for (unsigned u = 0; u < n; u += kGroup) {
          if (u > 0) load_group(u);
#pragma unroll
          for (unsigned k = 0; k < kGroup; ++k) {
            const float w = __shfl_sync(0xffffffffu, sc, (u + k) & 31u);
            a0 = fmaf(ov[k].x, w, a0);
            a1 = fmaf(ov[k].y, w, a1);
          }
        }
      }
      const float inv = 1.f / lsum;
      out.o<unsigned>(ctx)[h * 32 + lane] = pack_bf16x2(a0 * inv, a1 * inv);
    }
    if (tid == 0) out.flag(ctx)[0] = is_last ? 1 : 0;
    out.commit(ctx);  // arrive = "one": fence, sync the instance, thread 0 arrives
    out.advance();
  }
}
