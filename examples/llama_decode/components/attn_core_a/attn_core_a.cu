// attn_core_a — attn-team. Decode attention core (a): one block per (sequence, KV head), walking
// the whole context for the KV head's 4 query heads (GQA 32 / 8, head_dim 64), online softmax in
// fp32. Launched with S = 1 (one split): the range it walks is the loader's, computed the same
// way, so a launch with S > 1 cannot hang it (but then each split would write a partial result
// as final: S = 1 is this core's launch rule, see examples/llama_decode/select.json).
//
// The walk over the key tiles (tensor-core QK^T and PV, online softmax, the warps' combine) is
// ../attn_common/attn_walk.cuh, shared with core (b); this core normalizes and writes the result.
#define PL_PROVIDE_FROM_CONTRACT  // head_dim, q_per_kv: the code compiles in C::provided::*
#include "attn_core_a.contract.h"
#include "../attn_common/attn_walk.cuh"

namespace attn_core_a {
namespace C = pl_contract::attn_core_a_main;
using namespace llama_attn;
constexpr unsigned kHeadDim = C::provided::head_dim;  // 64
constexpr unsigned kHeads = C::provided::q_per_kv;    // 4
}  // namespace attn_core_a

PL_USE(attn_core_a_main, kv_tile, attn_core_a::kKvTile);

PL_COMPONENT(attn_core_a_main) {
  using namespace attn_core_a;
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
    const float inv = 1.f / r.lt;
    out.acquire();
    out.o<unsigned>(ctx)[r.h * 32 + lane] = pack_bf16x2(r.o0 * inv, r.o1 * inv);
    if (ctx.thread() == 0) out.flag(ctx)[0] = 1;
    out.commit(ctx);  // arrive = "one": fence, sync the instance, thread 0 arrives
    out.advance();
  }
}
