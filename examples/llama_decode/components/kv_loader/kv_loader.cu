// kv_loader — io-team. The TMA producer of the decode attention's "kv" pipe.
//
// One tile of the link's sequence is (t.m, t.n) = (sequence * kv_heads + KV head, split). The
// context of L keys is cut into ceil(L / kv_tile) key tiles, and split t.n of S takes the key
// tiles [t.n * chunk, min(ntiles, (t.n + 1) * chunk)), chunk = ceil(ntiles / S). Every consumer of
// "kv" walks the same range (the attention cores compute it the same way). Each stage gets key
// tile j of K and of V: rows t.m * kv_stride + j * kv_tile + [0, kv_tile) of the 2-D maps.
//
// Assumes: k_map / v_map are 2-D tensor maps over one layer's cache viewed as bf16
// [B * kv_heads * kv_stride, head_dim], box {head_dim, kv_tile}, 128-byte swizzle (the
// contract's tensors). Keys past L are
// loaded (stale cache rows or TMA's zero fill past the end) and masked by the core. One thread.
//
// Programmatic dependent launch: the contract says pdl_wait = "own". Only the last L_new keys of
// the context (decode: key L - 1, the new token that the QKV kernel before this one appends) are
// written by a kernel that may still run, so under --pdl the key tiles wholly before key
// L - L_new of the block's first tile (at most the ring's depth of them) are requested before
// pl::pdl_wait(), and stream while that kernel finishes; the tile holding key L - L_new and every
// later one follow the wait. The caller must pass the true L_new: a smaller one would read keys
// before they are written.
#include "kv_loader.contract.h"

namespace kv_loader {
constexpr unsigned kKvTile = 64;  // the box rows the host must give the maps
}  // namespace kv_loader

PL_PROVIDE(kv_loader_main, kv_tile, kv_loader::kKvTile);
PL_PROVIDE_LINKED(kv_loader_main, kv_stages);  // the ring's depth comes from the slots
PL_COPIES(kv_loader_main, k_map, 1);  // one K and one V box per stage (checked against the contract's boxes)
PL_COPIES(kv_loader_main, v_map, 1);

PL_COMPONENT(kv_loader_main) {
  namespace C = pl_contract::kv_loader_main;
  using kv_loader::kKvTile;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* k_map = C::param::k_map::get(ctx);
  const pl::TensorMap* v_map = C::param::v_map::get(ctx);
  pl::prefetch_tmap(k_map);
  pl::prefetch_tmap(v_map);
  const unsigned L = C::param::L::get(ctx), kv_stride = C::param::kv_stride::get(ctx), S = C::param::S::get(ctx);
  const unsigned L_new = C::param::L_new::get(ctx);
  const unsigned ntiles = (L + kKvTile - 1) / kKvTile;
  const unsigned chunk = (ntiles + S - 1) / S;
  // key tiles [0, settled) hold only keys before L - L_new: no kernel that may still run writes them
  const unsigned settled = L > L_new ? (L - L_new) / kKvTile : 0u;

  C::Out_kv w(ctx);
  auto load = [&](const pl::Tile& t, unsigned j) {
    const int row = static_cast<int>(t.m * kv_stride + j * kKvTile);
    w.acquire();
    w.expect_tx();
    pl::tma_load_2d(w.k<unsigned char>(ctx), k_map, w.full_bar(), 0, row);
    pl::tma_load_2d(w.v<unsigned char>(ctx), v_map, w.full_bar(), 0, row);
    w.advance();
  };
  // Before the dependency wait: the settled key tiles at the start of the block's first tile, at
  // most one ring round of them (those stages are free at once).
  unsigned pre = 0;
  pl::Tile t;
  if (pl::tile_at(ctx, 0, t)) {
    const unsigned first = t.n * chunk;
    const unsigned last = first + chunk < ntiles ? first + chunk : ntiles;
    while (first + pre < last && first + pre < settled && pre < w.pipe.p->stages) load(t, first + pre++);
  }
  pl::pdl_wait();
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const unsigned first = t.n * chunk;
    const unsigned last = first + chunk < ntiles ? first + chunk : ntiles;
    for (unsigned j = first + (i == 0 ? pre : 0u); j < last; ++j) load(t, j);
  }
}
