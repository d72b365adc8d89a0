// attn_core_split — flash-team. Decode attention core (b): split-KV flash-decoding. The tile
// sequence has S splits per (sequence, KV head); the block of split t.n walks key tiles
// [t.n * chunk, min(ntiles, (t.n + 1) * chunk)) (the loader's range), for the KV head's 4 query
// heads (GQA 32 / 8, head_dim 64), online softmax in fp32 through the walk core (a) uses
// (../attn_common/attn_walk.cuh).
// Its partial state (o unnormalized, m, l per head) goes to the workspace `ws`; after a
// __threadfence() thread 0 counts the split in cnt[t.m]; the split that arrives last (count S - 1)
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
    __stcg(mine + 2 * lane, o0);
    __stcg(mine + 2 * lane + 1, o1);
    if (lane == 0) { __stcg(mine + kHeadDim, M); __stcg(mine + kHeadDim + 1, lt); }
    __threadfence();
    C::barrier::core_sync::sync(ctx);
    unsigned* last_flag = C::smem::last::at<unsigned>(ctx);
    const unsigned tid = ctx.thread();
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
