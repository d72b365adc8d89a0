// moe_w_loader_packed — gemm-team. moe_w_loader reading the experts' weights packed, one contiguous
// bulk copy per stage (see qwen_mlp/loader/gu_loader_packed.cu for why, and docs/components.md 5.8).
//
// The expert of an m-tile is tile_expert[t.m] (written by routing). The stage's B slice holds two
// blocks of tile_n rows of that expert, as moe_w_loader's two TMA boxes write them: rows
// e * expert_rows + t.n * n_step + j * b_stride + (0..tile_n) for j = 0, 1, k slice kt, in the
// 128-byte swizzle. moe_pack_w below lays them out: stage (e, n, kt) at
// ((e * n_tiles + n) * k_tiles + kt) * 2 * tile_n * 128 bytes, n_tiles = ceil(N / tile_n), each
// 128-byte row's 16-byte chunk c holding W[row, kt * 64 + 8 (c ^ r % 8) ..] (zeros past the last
// expert's last row, as TMA's out-of-bounds fill). n_step and b_stride are moe_w_loader's: gate/up
// n_step = tile_n, b_stride = I; down n_step = 2 tile_n, b_stride = tile_n.
// The pack reads the link's tile_n and tile_k (PL_FACT) and writes a header before the data (64 KB with its padding)
// (magic, tile_n, tile_k, K, N, n_step, b_stride, expert_rows, n_experts, the data's bytes as two
// words); the loader keeps
// moe_w_loader's params, and a checked build (PL_CHECKED) traps with a message where they differ
// from the header (a pack made for another tile, shape or pairing). Data offsets below are after
// the header.
// Assumes: K % tile_k == 0, tile_k = 64, tile_n % 8 == 0; writes only tensor "b" (the dispatch
// owner's loader writes "a").
#include "moe_w_loader_packed.contract.h"

PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);

namespace moe_packed {
constexpr unsigned kPackMagic = 0x32454B50u;  // "PKE2": the 64 KB header with the data's size
constexpr unsigned kHeaderBytes = 65536;  // the data keeps the allocation's alignment (see gu_loader_packed.cu)
}  // namespace moe_packed

PL_PROVIDE_LINKED(moe_w_loader_packed_main, stages);  // the ring's depth comes from the slots
PL_SWIZZLE(moe_w_loader_packed_main, ab, b, 128);      // moe_pack_w compiles the swizzle in

PL_COMPONENT(moe_w_loader_packed_main) {
  namespace C = pl_contract::moe_w_loader_packed_main;
  if ((threadIdx.x & 31u) != 0) return;
  const unsigned char* packed = C::param::w_packed::get<const unsigned char>(ctx);
  const int* tile_expert = C::param::tile_expert::get<const int>(ctx);
  const unsigned tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  const unsigned k_tiles = C::param::K::get(ctx) / tile_k;
  const unsigned n_tiles = (C::param::N::get(ctx) + tile_n - 1) / tile_n;
#ifdef PL_CHECKED
  if (C::param::K::get(ctx) % tile_k != 0 || tile_n % 8u != 0 || tile_k * 2u != 128u) asm volatile("trap;");
  {
    const unsigned* h = reinterpret_cast<const unsigned*>(packed);
    // the data's bytes for n_experts (the pack's own word 8) of this launch's tiles
    const unsigned long long bytes = static_cast<unsigned long long>(h[8]) * ((C::param::N::get(ctx) + tile_n - 1) / tile_n) *
                                     (C::param::K::get(ctx) / tile_k) * 2ull * tile_n * tile_k * 2ull;
    const unsigned want[11] = {moe_packed::kPackMagic, tile_n, tile_k, C::param::K::get(ctx), C::param::N::get(ctx),
                               C::param::n_step::get(ctx), C::param::b_stride::get(ctx), C::param::expert_rows::get(ctx), h[8],
                               static_cast<unsigned>(bytes), static_cast<unsigned>(bytes >> 32)};
    for (unsigned i = 0; i < 11; ++i)
      if (h[i] != want[i]) {
        if (blockIdx.x == 0)
          printf("moe_w_loader_packed: w_packed was not packed for this launch: header word %u (magic, tile_n, tile_k, K, N, "
                 "n_step, b_stride, expert_rows, experts, bytes lo, bytes hi) is %u, the launch has %u\n", i, h[i], want[i]);
        asm volatile("trap;");
      }
  }
#endif
  packed += moe_packed::kHeaderBytes;
  const unsigned chunk = 2u * tile_n * tile_k * 2u;
  C::Out_ab w(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const unsigned long long stage0 = (static_cast<unsigned long long>(static_cast<unsigned>(tile_expert[t.m])) * n_tiles + t.n) * k_tiles;
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      w.acquire();
      w.expect_tx();
      pl::bulk_load(w.b<unsigned char>(ctx), packed + (stage0 + kt) * chunk, chunk, w.full_bar());
      w.advance();
    }
  }
}

// Packs W [n_experts * expert_rows, K] bf16 (row-major) for this link's loader into `packed`, a
// buffer of packed_bytes (traps if that is less than the header and the data). Any grid and
// block size; run once per weight.
extern "C" __global__ void moe_pack_w(const uint4* __restrict__ w, unsigned n_experts, unsigned expert_rows, unsigned K, unsigned N,
                                      unsigned n_step, unsigned b_stride, uint4* __restrict__ packed, unsigned long long packed_bytes) {
  const unsigned tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  if (K % tile_k != 0 || reinterpret_cast<unsigned long long>(w) % 16u != 0 || reinterpret_cast<unsigned long long>(packed) % 16u != 0)
    asm volatile("trap;");
  const unsigned long long k_tiles = K / tile_k, n_tiles = (N + tile_n - 1) / tile_n;
  const unsigned long long w_rows = static_cast<unsigned long long>(n_experts) * expert_rows;
  const unsigned chunks_per_row = tile_k / 8u;
  const unsigned long long row_chunks = K / 8u;
  const unsigned long long total = n_experts * n_tiles * k_tiles * 2ull * tile_n * chunks_per_row;
  if (packed_bytes < moe_packed::kHeaderBytes + total * 16u) asm volatile("trap;");  // the buffer is too small
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const unsigned long long bytes = total * 16u;
    const unsigned h[11] = {moe_packed::kPackMagic, tile_n, tile_k, K, N, n_step, b_stride, expert_rows, n_experts,
                            static_cast<unsigned>(bytes), static_cast<unsigned>(bytes >> 32)};
    for (unsigned i = 0; i < 16; ++i) reinterpret_cast<unsigned*>(packed)[i] = i < 11 ? h[i] : 0u;
  }
  packed += moe_packed::kHeaderBytes / 16u;
  for (unsigned long long o = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; o < total;
       o += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const unsigned c = static_cast<unsigned>(o % chunks_per_row);
    unsigned long long q = o / chunks_per_row;
    const unsigned r = static_cast<unsigned>(q % tile_n);
    q /= tile_n;
    const unsigned j = static_cast<unsigned>(q % 2u);
    q /= 2u;
    const unsigned long long kt = q % k_tiles;
    q /= k_tiles;
    const unsigned long long n = q % n_tiles, e = q / n_tiles;
    const unsigned long long row = e * expert_rows + n * n_step + j * b_stride + r;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (row < w_rows) v = w[row * row_chunks + kt * chunks_per_row + (c ^ (r % 8u))];
    packed[o] = v;
  }
}
