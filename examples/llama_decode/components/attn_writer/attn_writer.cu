// attn_writer — io-team. Writes the attention output of one (sequence, KV head) tile.
//
// Consumes "o": per tile one stage holding the 4 query heads' normalized output, bf16 [4, 64]
// (512 bytes), and a flag (flag[0] != 0: the stage holds the tile's final output; a split core
// sets it only in the split that combined the head). Each of the 32 lanes stores 16 bytes to
// attn_out + t.m * 256 elements: attn_out is bf16 [B, 32 * 64] row-major, and tile t.m =
// sequence * 8 + KV head covers query heads 4 * (t.m % 8) + [0, 4) of row t.m / 8.
#include "attn_writer.contract.h"

namespace attn_writer {
constexpr unsigned kQPerKv = 4, kHeadDim = 64;
constexpr unsigned kTileElems = kQPerKv * kHeadDim;  // 256 bf16 = 32 lanes x 16 bytes
}  // namespace attn_writer

PL_USE(attn_writer_main, q_per_kv, attn_writer::kQPerKv);
PL_USE(attn_writer_main, head_dim, attn_writer::kHeadDim);

PL_COMPONENT(attn_writer_main) {
  namespace C = pl_contract::attn_writer_main;
  using namespace attn_writer;
  const unsigned lane = threadIdx.x & 31u;
  pl::bf16* out = C::param::attn_out::get<pl::bf16>(ctx);
  C::In_o in(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    in.wait();
    if (in.flag(ctx)[0] != 0) {
      const uint4 v = in.o<uint4>(ctx)[lane];
      reinterpret_cast<uint4*>(out + static_cast<unsigned long long>(t.m) * kTileElems)[lane] = v;
    }
    in.release(ctx);  // arrive = "warp": __syncwarp(), lane 0 arrives
    in.advance();
  }
}
