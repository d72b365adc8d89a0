// sk_rope — rope-team. The combine side of the split-K decode QKV GEMM, with RoPE and the KV-cache
// append folded in, so that the decode step needs no separate RoPE kernel between the QKV GEMM
// and the attention.
//
// Per tile (K chunk t.m, column tile t.n) it adds the f32 partial tile into y as sk_red does
// (red.global.add.v4.f32), then counts its arrival: each of its warps fences its reductions and
// adds 1 to count[t.n]. The warp that brings the count to (K / k_chunk) * warps is the last to
// add into that column tile, so y's 64 columns hold their full sums: that warp reads them (from
// L2), rounds each to bf16 (what a bf16 GEMM output holds) and, the column tile being one head,
//   q heads (t.n < q_heads):              rotate-half RoPE at pos, to q_out[m, t.n, :];
//   k heads (q_heads <= t.n < + kv_heads): RoPE, to k_cache[m, head, pos, :];
//   v heads (the rest):                    as is, to v_cache[m, head, pos, :];
// each RoPE product and their sum rounded once, in f32, as llama_rope_append (rest_kernels.cu)
// and PyTorch's fp32 formula do. It writes zeros back to those y columns and sets count[t.n] back
// to 0, so y and count are zero again when the kernel ends, ready for the next layer's QKV GEMM.
//
// Ordering: every lane fences (membar.gl) after its reductions and before its warp's counter add;
// the last warp fences after the add and reads y with ld.global.cg, so the sums it reads include
// every other warp's reductions.
//
// Assumes (the host's side, trapped in a PL_CHECKED build): M <= rows, 64-column tiles,
// N == (q_heads + 2 kv_heads) * 64, K % k_chunk == 0, y 16-byte aligned, pos < max_ctx and a
// cos/sin row for pos.
#include "sk_rope.contract.h"  // pipelink header sk_rope.toml: names, pipe operations, records

PL_FACT_DECL(unsigned, k_chunk);

namespace sk_rope {
__device__ __forceinline__ void red_add4(float* p, float4 v) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}
// bf16 as its 16 bits (no cuda_bf16.h: the monolithic control compiles this under NVRTC too)
__device__ __forceinline__ unsigned short to_bf16(float v) {
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(v));
  return r;
}
__device__ __forceinline__ float from_bf16(unsigned short b) { return __uint_as_float(static_cast<unsigned>(b) << 16); }
// y's sum rounded to bf16 (as a float), and zero written back
__device__ __forceinline__ float take(float* p) {
  const float v = __ldcg(p);
  __stcg(p, 0.f);
  return from_bf16(to_bf16(v));
}
}  // namespace sk_rope

PL_COMPONENT(sk_rope_main) {
  using namespace sk_rope;
  namespace C = pl_contract::sk_rope_main;
  float* y = C::param::y::get<float>(ctx);
  unsigned* count = C::param::count::get<unsigned>(ctx);
  const unsigned M = C::param::M::get(ctx), N = C::param::N::get(ctx), K = C::param::K::get(ctx);
  const unsigned q_heads = C::param::q_heads::get(ctx), kv_heads = C::param::kv_heads::get(ctx);
  const unsigned pos = C::param::pos::get(ctx), max_ctx = C::param::max_ctx::get(ctx);
  const float* cos_t = C::param::cos_t::get<const float>(ctx);
  const float* sin_t = C::param::sin_t::get<const float>(ctx);
  unsigned short* q_out = C::param::q_out::get<unsigned short>(ctx);  // bf16 bits
  unsigned short* k_cache = C::param::k_cache::get<unsigned short>(ctx);
  unsigned short* v_cache = C::param::v_cache::get<unsigned short>(ctx);
  C::In_out r(ctx);  // the "out" pipe, bound to the main loop's "acc" by --connect out=acc
  const unsigned rows = r.rows(C::In_out::tensor::tile::index), cols = r.cols(C::In_out::tensor::tile::index);
  const unsigned chunks = cols / 4, valid = M < rows ? M : rows;
  const unsigned n = ctx.threads(), tid = ctx.thread(), lane = tid & 31u;
  const unsigned arrivals = (K / PL_FACT(k_chunk)) * (n / 32u);
#ifdef PL_CHECKED
  if (M > rows || cols != 64u || N != (q_heads + 2u * kv_heads) * cols || K % PL_FACT(k_chunk) != 0u || pos >= max_ctx ||
      (reinterpret_cast<unsigned long long>(y) & 15u) != 0) {
    if (tid == 0)
      printf("sk_rope: M = %u (rows %u), cols %u, N = %u (q_heads %u, kv_heads %u), K = %u (k_chunk %u), pos %u (max_ctx %u), "
             "y = %p\n", M, rows, cols, N, q_heads, kv_heads, K, PL_FACT(k_chunk), pos, max_ctx, static_cast<void*>(y));
    __trap();
  }
#endif
  const float* cs = cos_t + size_t(pos) * cols;
  const float* sn = sin_t + size_t(pos) * cols;
  const unsigned half = cols / 2;
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    r.wait();
    const float4* src = r.tile<const float4>(ctx);
    const unsigned col0 = t.n * cols;
    for (unsigned e = tid; e < valid * chunks; e += n) {
      const unsigned m = e / chunks, c = e % chunks;
      red_add4(y + size_t(m) * N + col0 + 4 * c, src[m * chunks + c]);
    }
    r.release(ctx);  // arrive = "warp": __syncwarp(), lane 0
    r.advance();

    __threadfence();
    __syncwarp();
    unsigned last = 0;
    if (lane == 0) last = atomicAdd(count + t.n, 1u) == arrivals - 1u;
    if (!__shfl_sync(0xffffffffu, last, 0)) continue;
    __threadfence();
    const unsigned head = t.n;
    if (head < q_heads + kv_heads) {
      for (unsigned e = lane; e < valid * half; e += 32) {
        const unsigned m = e / half, d = e % half;
        float* row = y + size_t(m) * N + col0;
        const float x0 = take(row + d), x1 = take(row + d + half);
        const float o0 = __fadd_rn(__fmul_rn(x0, cs[d]), __fmul_rn(-x1, sn[d]));
        const float o1 = __fadd_rn(__fmul_rn(x1, cs[d + half]), __fmul_rn(x0, sn[d + half]));
        unsigned short* dst = head < q_heads ? q_out + (size_t(m) * q_heads + head) * cols
                                            : k_cache + ((size_t(m) * kv_heads + (head - q_heads)) * max_ctx + pos) * cols;
        dst[d] = to_bf16(o0);
        dst[d + half] = to_bf16(o1);
      }
    } else {
      const unsigned vh = head - q_heads - kv_heads;
      for (unsigned e = lane; e < valid * cols; e += 32) {
        const unsigned m = e / cols, d = e % cols;
        v_cache[((size_t(m) * kv_heads + vh) * max_ctx + pos) * cols + d] = to_bf16(take(y + size_t(m) * N + col0 + d));
      }
    }
    __syncwarp();
    if (lane == 0) count[t.n] = 0u;  // read again only by a later kernel
  }
}
