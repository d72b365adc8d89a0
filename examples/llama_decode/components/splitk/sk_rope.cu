// sk_rope — rope-team. The combine side of the split-K decode QKV GEMM, with RoPE and the KV-cache
// append folded in, so that the decode step needs no separate RoPE kernel between the QKV GEMM
// and the attention.
//
// Per tile (K chunk t.m, column tile t.n) it adds the f32 partial tile into y as sk_red does
// (red.global.add.v4.f32), then counts its arrival: every thread fences (membar.gl) its
// reductions, the component's named barrier joins its 64 threads, and thread 0 adds 1 to
// count[t.n]; a barrier reduction (bar.red.or) tells all 64 whether that add was the column
// tile's last (K / k_chunk adds). If so, y's 64 columns hold their full sums: the 64 threads
// fence again, read them (ld.global.cg, from L2, as float4: four vector pairs per thread in
// flight at once), round each to bf16 (what a bf16 GEMM output holds) and, the column tile being one head,
//   q heads (t.n < q_heads):              rotate-half RoPE at pos, to q_out[m, t.n, :];
//   k heads (q_heads <= t.n < + kv_heads): RoPE, to k_cache[m, head, pos, :];
//   v heads (the rest):                    as is, to v_cache[m, head, pos, :];
// each RoPE product and their sum rounded once, in f32, as llama_rope_append (rest_kernels.cu)
// and PyTorch's fp32 formula do. It writes zeros back to those y columns and sets count[t.n] back
// to 0, so y and count are zero again when the kernel ends, ready for the next layer's QKV GEMM.
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
  const unsigned n = ctx.threads(), tid = ctx.thread();
  const unsigned tiles_per_col = K / PL_FACT(k_chunk);  // the arrivals that complete a column tile
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
    C::barrier::arrive_sync::sync(ctx);  // every thread's reductions fenced
    int last = 0;
    if (tid == 0) {
      // acq_rel at gpu scope: releases this block's reductions (ordered before it by the fences and
      // the barrier) and, for the last block, acquires every other block's
      unsigned old;
      asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(count + t.n) : "memory");
      last = old == tiles_per_col - 1u;
    }
    // bar.red.or over the component's 64 threads: all learn thread 0's answer
    asm volatile("{\n .reg .pred p, q;\n setp.ne.s32 p, %1, 0;\n bar.red.or.pred q, %2, %3, p;\n selp.s32 %0, 1, 0, q;\n}"
                 : "=r"(last) : "r"(last), "r"(C::barrier::arrive_sync::id(ctx)), "r"(ctx.slots->bar_threads[C::barrier::arrive_sync::index])
                 : "memory");
    if (!last) continue;
    __threadfence();
    const unsigned head = t.n;
    // Rows are read as float4 (4 columns) and written as 4 bf16 (8 bytes); kBatch vectors per
    // thread are loaded before any is used, so at M = 64 a q or k head (512 vector pairs) takes
    // two L2 round trips per thread and a v head (1024 vectors) two, where scalar loads took 4.
    const unsigned vecs = cols / 4, hvecs = half / 4;  // float4s per row, per half row
    if (head < q_heads + kv_heads) {
      unsigned short* base = head < q_heads ? q_out + size_t(head) * cols : k_cache + (size_t(head - q_heads) * max_ctx + pos) * cols;
      const size_t row_stride = head < q_heads ? size_t(q_heads) * cols : size_t(kv_heads) * max_ctx * cols;
      constexpr unsigned kBatch = 4;  // pairs of float4 per thread in flight (8 spill at 96 registers)
      for (unsigned e0 = tid; e0 < valid * hvecs; e0 += n * kBatch) {
        float4 x0[kBatch], x1[kBatch];
#pragma unroll
        for (unsigned j = 0; j < kBatch; ++j) {
          const unsigned e = e0 + j * n;
          if (e < valid * hvecs) {
            const float4* row = reinterpret_cast<const float4*>(y + size_t(e / hvecs) * N + col0);
            x0[j] = __ldcg(row + e % hvecs);
            x1[j] = __ldcg(row + e % hvecs + hvecs);
          }
        }
#pragma unroll
        for (unsigned j = 0; j < kBatch; ++j) {
          const unsigned e = e0 + j * n;
          if (e < valid * hvecs) {
            const unsigned m = e / hvecs, d = 4 * (e % hvecs);
            float4* row = reinterpret_cast<float4*>(y + size_t(m) * N + col0);
            __stcg(row + d / 4, make_float4(0.f, 0.f, 0.f, 0.f));
            __stcg(row + (d + half) / 4, make_float4(0.f, 0.f, 0.f, 0.f));
            const float a[4] = {x0[j].x, x0[j].y, x0[j].z, x0[j].w}, b[4] = {x1[j].x, x1[j].y, x1[j].z, x1[j].w};
            unsigned short o0[4], o1[4];
#pragma unroll
            for (unsigned i = 0; i < 4; ++i) {
              const float ar = from_bf16(to_bf16(a[i])), br = from_bf16(to_bf16(b[i]));
              o0[i] = to_bf16(__fadd_rn(__fmul_rn(ar, cs[d + i]), __fmul_rn(-br, sn[d + i])));
              o1[i] = to_bf16(__fadd_rn(__fmul_rn(br, cs[d + i + half]), __fmul_rn(ar, sn[d + i + half])));
            }
            unsigned short* dst = base + m * row_stride;
            *reinterpret_cast<uint2*>(dst + d) = make_uint2(o0[0] | (unsigned(o0[1]) << 16), o0[2] | (unsigned(o0[3]) << 16));
            *reinterpret_cast<uint2*>(dst + d + half) = make_uint2(o1[0] | (unsigned(o1[1]) << 16), o1[2] | (unsigned(o1[3]) << 16));
          }
        }
      }
    } else {
      const unsigned vh = head - q_heads - kv_heads;
      constexpr unsigned kBatch = 4;  // float4 per thread in flight
      for (unsigned e0 = tid; e0 < valid * vecs; e0 += n * kBatch) {
        float4 x[kBatch];
#pragma unroll
        for (unsigned j = 0; j < kBatch; ++j) {
          const unsigned e = e0 + j * n;
          if (e < valid * vecs) x[j] = __ldcg(reinterpret_cast<const float4*>(y + size_t(e / vecs) * N + col0) + e % vecs);
        }
#pragma unroll
        for (unsigned j = 0; j < kBatch; ++j) {
          const unsigned e = e0 + j * n;
          if (e < valid * vecs) {
            const unsigned m = e / vecs, d = 4 * (e % vecs);
            __stcg(reinterpret_cast<float4*>(y + size_t(m) * N + col0 + d), make_float4(0.f, 0.f, 0.f, 0.f));
            const unsigned lo = to_bf16(x[j].x) | (unsigned(to_bf16(x[j].y)) << 16), hi = to_bf16(x[j].z) | (unsigned(to_bf16(x[j].w)) << 16);
            *reinterpret_cast<uint2*>(v_cache + ((size_t(m) * kv_heads + vh) * max_ctx + pos) * cols + d) = make_uint2(lo, hi);
          }
        }
      }
    }
    if (tid == 0) count[t.n] = 0u;  // read again only by a later kernel
  }
}
