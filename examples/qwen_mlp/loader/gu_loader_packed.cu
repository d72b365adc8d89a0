// gu_loader_packed — io-team. The producer of the gate/up GEMM's "ab" pipe from a packed W.
//
// gu_loader reads each stage's two W blocks with TMA boxes: tile_n rows, 128 bytes of each, rows
// 10 KB apart in W. On the H200 that reading is slower than a contiguous one of the same bytes
// (bench/stream: 4.17 against 4.34 TB/s with the 16 x 104 main loop's wgmma on every stage), so
// this loader reads a W packed once, ahead of time, by gu_pack_w below: the bytes of stage (tile
// n, k slice kt) lie contiguous, in the order and the 128-byte swizzle that the TMA boxes would
// have written into the stage. A stage is X's slice (TMA, as gu_loader) and one 1-D bulk copy.
// The stage's bytes are those gu_loader writes, so the main loop and the epilogue do not change.
//
// The packed layout depends on tile_n and tile_k, which the link fixes, and on K, N and the row
// pairing (n_step, b_stride), which the host gives. gu_pack_w is compiled in the same object and
// reads the same facts (PL_FACT), so the pack of a link's cubin has that link's tile; launch it
// from the cubin you will launch (pipelink::Module::module(), Python kernel.function("gu_pack_w",
// ...)). The pack writes a header before the data, 64 KB with its padding (kPackMagic, tile_n,
// tile_k, K, N, n_step, b_stride, W's rows, the data's bytes as two words), and the loader keeps
// gu_loader's params K, N, n_step and b_stride: a checked build (PL_CHECKED) compares them with
// the header and traps with a message on a difference, so a pack made for another tile, shape or
// pairing is refused there instead of read (a release build trusts it, as it trusts a tensor map).
//
// Packed layout, after the header: for tile n in [0, ceil(N / tile_n)), k slice kt in [0, K /
// tile_k), block j (0 gate, 1 up), row r in [0, tile_n): 128 bytes at ((n * k_tiles + kt) * 2 + j)
// * tile_n * 128 + r * 128, its 16-byte chunk c holding W[n * n_step + j * b_stride + r, kt * 64 +
// 8 (c ^ r % 8) ..] (zeros past W's last row, as TMA's out-of-bounds fill). n_step and b_stride are
// gu_loader's: for the fused gate/up SwiGLU n_step = tile_n, b_stride = I; for the plain GEMM over
// all of W n_step = 2 tile_n, b_stride = tile_n. Bytes in all: 65536 + ceil(N / tile_n) * (K /
// tile_k) * 2 * tile_n * tile_k * 2.
//
// (A build walking work units for split-k links, measured level with the TMA loader at M >= 1024
// where W is read from the L2, is in commit 5bdec2f.)
//
// Assumes: x_map is a 2-D tensor map over X [M, K] (bf16), box {tile_k, tile_m}, 128-byte swizzle;
// K % tile_k == 0; the stage's b tensor starts 1024-byte aligned (the linker aligns swizzled
// tensors to the swizzle's 8-row atom) and tile_n % 8 == 0 (so the up block does too).
#include "gu_loader_packed.contract.h"

PL_FACT_DECL(unsigned, tile_m);
PL_FACT_DECL(unsigned, tile_n);
PL_FACT_DECL(unsigned, tile_k);
PL_FACT_DECL(unsigned, stages);

namespace gu_packed {
constexpr unsigned kPackMagic = 0x32574B50u;  // "PKW2": the 64 KB header with the data's size (PKW1 had 64 bytes)
// The data starts 64 KB in, so every stage's chunk keeps the alignment it has from the allocation's
// base (chunks are multiples of 2 KB): with a 64-byte header (every chunk then only 64-byte
// aligned) the 16 x 104 GEMM ran 25% slower at M = 16 on the H200 (results/qwen_s13/run7_misaligned).
constexpr unsigned kHeaderBytes = 65536;
}  // namespace gu_packed

PL_PROVIDE_LINKED(gu_loader_packed_main, stages);  // the ring's depth comes from the slots
// The b blocks' 128-byte swizzle is compiled in (gu_pack_w writes it); X's comes from x_map.
PL_SWIZZLE(gu_loader_packed_main, ab, b, 128);

PL_COMPONENT(gu_loader_packed_main) {
  namespace C = pl_contract::gu_loader_packed_main;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* x_map = C::param::x_map::get(ctx);
  pl::prefetch_tmap(x_map);
  const unsigned char* packed = C::param::w_packed::get<const unsigned char>(ctx);
  const unsigned tile_m = PL_FACT(tile_m), tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  const unsigned k_tiles = C::param::K::get(ctx) / tile_k;  // the contracts' per_tile
#ifdef PL_CHECKED
  if (C::param::K::get(ctx) % tile_k != 0) asm volatile("trap;");  // K / tile_k slices would drop K's tail
  if (tile_n % 8u != 0 || tile_k * 2u != 128u) asm volatile("trap;");
  {
    const unsigned* h = reinterpret_cast<const unsigned*>(packed);
    // the data's bytes this launch reads: ceil(N / tile_n) tiles of K / tile_k stages of 2 tile_n rows
    const unsigned long long bytes = static_cast<unsigned long long>((C::param::N::get(ctx) + tile_n - 1) / tile_n) *
                                     (C::param::K::get(ctx) / tile_k) * 2ull * tile_n * tile_k * 2ull;
    const unsigned want[10] = {gu_packed::kPackMagic, tile_n, tile_k, C::param::K::get(ctx), C::param::N::get(ctx),
                               C::param::n_step::get(ctx), C::param::b_stride::get(ctx), h[7] /* W's rows: the pack's own */,
                               static_cast<unsigned>(bytes), static_cast<unsigned>(bytes >> 32)};
    for (unsigned i = 0; i < 10; ++i)
      if (h[i] != want[i]) {
        if (blockIdx.x == 0)
          printf("gu_loader_packed: w_packed was not packed for this launch: header word %u (magic, tile_n, tile_k, K, N, "
                 "n_step, b_stride, rows, bytes lo, bytes hi) is %u, the launch has %u\n", i, h[i], want[i]);
        asm volatile("trap;");
      }
  }
#endif
  packed += gu_packed::kHeaderBytes;
  const unsigned chunk = 2u * tile_n * tile_k * 2u;  // the stage's b tensor: gate and up blocks

  C::Out_ab w(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    const unsigned char* src = packed + static_cast<unsigned long long>(t.n) * k_tiles * chunk;
    const int row_a = static_cast<int>(t.m * tile_m);
    for (unsigned kt = 0; kt < k_tiles; ++kt) {
      w.acquire();
      w.expect_tx();
      pl::tma_load_2d(w.a<unsigned char>(ctx), x_map, w.full_bar(), static_cast<int>(kt * tile_k), row_a);
      pl::bulk_load(w.b<unsigned char>(ctx), src + static_cast<unsigned long long>(kt) * chunk, chunk, w.full_bar());
      w.advance();
    }
  }
}

// Writes the packed W of this link (layout above) from W [w_rows, K] bf16, row-major, into
// `packed`, a buffer of packed_bytes (traps if that is less than the header and the data). Any
// grid and block size (grid-stride over 16-byte chunks); N is the tile sequence's extent the
// loader's link is launched with, n_step and b_stride as above. Run once per weight, not per launch.
extern "C" __global__ void gu_pack_w(const uint4* __restrict__ w, unsigned w_rows, unsigned K, unsigned N, unsigned n_step,
                                     unsigned b_stride, uint4* __restrict__ packed, unsigned long long packed_bytes) {
  const unsigned tile_n = PL_FACT(tile_n), tile_k = PL_FACT(tile_k);
  // Rows of W are 16-byte multiples and W 16-byte aligned (the uint4 reads), whole k slices: as a
  // TMA map of W would require; checked always (the pack runs once).
  if (K % tile_k != 0 || reinterpret_cast<unsigned long long>(w) % 16u != 0 || reinterpret_cast<unsigned long long>(packed) % 16u != 0)
    asm volatile("trap;");
  const unsigned long long k_tiles = K / tile_k, n_tiles = (N + tile_n - 1) / tile_n;
  const unsigned chunks_per_row = tile_k / 8u;   // 16-byte chunks of one row's k slice (8)
  const unsigned long long row_chunks = K / 8u;  // of one row of W
  const unsigned long long total = n_tiles * k_tiles * 2ull * tile_n * chunks_per_row;
  if (packed_bytes < gu_packed::kHeaderBytes + total * 16u) asm volatile("trap;");  // the buffer is too small
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const unsigned long long bytes = total * 16u;
    const unsigned h[10] = {gu_packed::kPackMagic, tile_n, tile_k, K, N, n_step, b_stride, w_rows, static_cast<unsigned>(bytes),
                            static_cast<unsigned>(bytes >> 32)};
    for (unsigned i = 0; i < 16; ++i) reinterpret_cast<unsigned*>(packed)[i] = i < 10 ? h[i] : 0u;
  }
  packed += gu_packed::kHeaderBytes / 16u;
  for (unsigned long long o = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; o < total;
       o += static_cast<unsigned long long>(gridDim.x) * blockDim.x) {
    const unsigned c = static_cast<unsigned>(o % chunks_per_row);
    unsigned long long q = o / chunks_per_row;
    const unsigned r = static_cast<unsigned>(q % tile_n);
    q /= tile_n;
    const unsigned j = static_cast<unsigned>(q % 2u);
    q /= 2u;
    const unsigned long long kt = q % k_tiles, n = q / k_tiles;
    const unsigned long long row = n * n_step + j * b_stride + r;
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (row < w_rows) v = w[row * row_chunks + kt * chunks_per_row + (c ^ (r % 8u))];
    packed[o] = v;
  }
}
