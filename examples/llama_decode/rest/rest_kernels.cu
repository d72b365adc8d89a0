// Plain (not linked) CUDA kernels for the parts of the Llama-3.2-1B decode step between the GEMMs
// and the attention, each replacing a chain of PyTorch elementwise kernels (issue 8):
//
//   llama_add_rmsnorm   x (+)= delta (bf16 add, as torch's x + y), then h = RMSNorm(x) * w with
//                       torch's roundings: fp32 mean of squares, (x * rsqrt(mean + eps)) rounded
//                       to bf16, times w rounded to bf16. flags bit 1: gather x = embed[tok[b]]
//                       first (the embedding, layer 0); bit 0: add delta (the residual).
//   llama_rope_append   RoPE (rotate-half, fp32, cos/sin tables from the model) of q and k from
//                       the QKV GEMM's output; q to a [B, 32, 64] buffer, k and v appended to the
//                       layer's cache at `pos`. Products and the sum rounded separately
//                       (__fmul_rn / __fadd_rn) as torch's three elementwise kernels do.
//   llama_add_rmsnorm_r{2,4,8}, llama_add_rmsnorm_f32_r{2,4,8}
//                       the same norms with 2, 4 or 8 rows per block (fewer blocks at B >= 16).
//   llama_silu_mul      silu(gate) * up in bf16 (torch's F.silu then *), for the step variant
//                       that keeps the gate/up GEMM in cuBLAS.
//   llama_add_rmsnorm_f32, llama_rope_append_f32
//                       the same two kernels reading the GEMM output from an f32 buffer that the
//                       linked split-K GEMM (components/splitk) accumulates into: each value is
//                       rounded to bf16 first (what a bf16 GEMM output holds), and the buffer is
//                       set back to zero once read, ready for the next split-K GEMM into it.
//
// Shapes are Llama-3.2-1B's, compiled in: hidden 2048, 32 query heads, 8 KV heads, head_dim 64.
// Built with: nvcc -cubin -O3 -arch=sm_90a rest_kernels.cu -o rest.cubin (examples/CMakeLists.txt).
//
// With -DLLAMA_PDL (rest_pdl.cubin) every kernel starts with griddepcontrol.wait and then
// griddepcontrol.launch_dependents, for programmatic dependent launch (pipelink.Function's
// launch(..., pdl=True)): it may then start while the previous kernel on the stream still runs,
// and the wait comes before its first global memory access, as in a PipeLink --pdl entry. The
// trigger follows the wait, so the next kernel's blocks can be scheduled (and run their own
// prologue up to their wait) while this one works, and a chain keeps at most two kernels resident.
// With -DLLAMA_PDL_TRIGGER_FIRST as well (rest_pdl_tf.cubin) the trigger comes first: the next
// kernel may launch while this one still waits for its predecessor, so a linked GEMM after it
// (pdl_wait = "own") starts its weight stream before the kernel before this one has ended. Still
// safe: the next kernel's own wait returns only when this kernel has completed, which it does only
// after its wait returned, i.e. after its predecessor completed and its writes became visible.
#include <cuda_bf16.h>
#include <stdint.h>

namespace {
constexpr int kHidden = 2048, kQH = 32, kKVH = 8, kHD = 64, kFFN = 8192;
constexpr float kEps = 1e-5f;

__device__ __forceinline__ float bf(const __nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ __nv_bfloat16 tobf(const float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ void pdl_prologue() {
#if defined(LLAMA_PDL) && defined(LLAMA_PDL_TRIGGER_FIRST)
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#elif defined(LLAMA_PDL)
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
}  // namespace

namespace {
// The 8 values of delta at [b, c0, c0 + 8) as bf16: a bf16 row as is; an f32 split-K accumulator
// rounded to bf16, then zeroed.
__device__ __forceinline__ uint4 load_delta(const __nv_bfloat16* delta, size_t at) {
  return *reinterpret_cast<const uint4*>(delta + at);
}
__device__ __forceinline__ uint4 load_delta(float* delta, size_t at) {
  float4* p = reinterpret_cast<float4*>(delta + at);
  const float4 a = p[0], b = p[1];
  p[0] = make_float4(0.f, 0.f, 0.f, 0.f);
  p[1] = make_float4(0.f, 0.f, 0.f, 0.f);
  uint4 r;
  __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&r);
  e[0] = tobf(a.x), e[1] = tobf(a.y), e[2] = tobf(a.z), e[3] = tobf(a.w);
  e[4] = tobf(b.x), e[5] = tobf(b.y), e[6] = tobf(b.z), e[7] = tobf(b.w);
  return r;
}

// One block of 256 threads per row; each thread owns 8 consecutive elements (one 16-byte vector).
template <class Delta>
__device__ __forceinline__ void add_rmsnorm(__nv_bfloat16* __restrict__ x, Delta* __restrict__ delta,
                                            const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ h,
                                            const int64_t* __restrict__ tok, const __nv_bfloat16* __restrict__ embed,
                                            unsigned flags) {
  const int b = blockIdx.x, t = threadIdx.x;
  __nv_bfloat16* xr = x + size_t(b) * kHidden;
  const int c0 = t * 8;
  uint4 xv;
  if (flags & 2u)
    xv = *reinterpret_cast<const uint4*>(embed + size_t(tok[b]) * kHidden + c0);
  else
    xv = *reinterpret_cast<const uint4*>(xr + c0);
  __nv_bfloat16* xe = reinterpret_cast<__nv_bfloat16*>(&xv);
  if (flags & 1u) {
    const uint4 dv = load_delta(delta, size_t(b) * kHidden + c0);
    const __nv_bfloat16* de = reinterpret_cast<const __nv_bfloat16*>(&dv);
#pragma unroll
    for (int i = 0; i < 8; ++i) xe[i] = tobf(bf(xe[i]) + bf(de[i]));
  }
  if (flags & 3u) *reinterpret_cast<uint4*>(xr + c0) = xv;
  float ss = 0.f;
#pragma unroll
  for (int i = 0; i < 8; ++i) ss += bf(xe[i]) * bf(xe[i]);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  __shared__ float red[8];
  if ((t & 31) == 0) red[t >> 5] = ss;
  __syncthreads();
  float tot = 0.f;
#pragma unroll
  for (int i = 0; i < 8; ++i) tot += red[i];
  const float r = rsqrtf(tot / float(kHidden) + kEps);
  const uint4 wv = *reinterpret_cast<const uint4*>(w + c0);
  const __nv_bfloat16* we = reinterpret_cast<const __nv_bfloat16*>(&wv);
  uint4 hv;
  __nv_bfloat16* he = reinterpret_cast<__nv_bfloat16*>(&hv);
#pragma unroll
  for (int i = 0; i < 8; ++i) he[i] = tobf(bf(tobf(__fmul_rn(bf(xe[i]), r))) * bf(we[i]));
  *reinterpret_cast<uint4*>(h + size_t(b) * kHidden + c0) = hv;
}

// The same for R rows per block (rows blockIdx.x * R + r < B), every row's loads issued before
// any is used: B = 64 then takes 64 / R blocks. Under PDL the next kernel can start only once every
// block of this one has been scheduled (and, trigger first, triggered), and a block of a linked
// GEMM leaves no registers free on its SM, so one block per row waited for 64 of the previous
// GEMM's blocks to leave; R rows per block need 64 / R. The arithmetic of each row is the
// one-row kernel's, so h and x are bit-identical.
template <int R>
__device__ __forceinline__ void load_delta_rows(const __nv_bfloat16* delta, size_t at, uint4 (&dv)[R], int rows) {
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (r < rows) dv[r] = *reinterpret_cast<const uint4*>(delta + at + size_t(r) * kHidden);
}
template <int R>
__device__ __forceinline__ void load_delta_rows(float* delta, size_t at, uint4 (&dv)[R], int rows) {
  float4 a[R], b[R];
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (r < rows) {
      const float4* p = reinterpret_cast<const float4*>(delta + at + size_t(r) * kHidden);
      a[r] = p[0], b[r] = p[1];
    }
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (r < rows) {
      float4* p = reinterpret_cast<float4*>(delta + at + size_t(r) * kHidden);
      p[0] = make_float4(0.f, 0.f, 0.f, 0.f);
      p[1] = make_float4(0.f, 0.f, 0.f, 0.f);
      __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&dv[r]);
      e[0] = tobf(a[r].x), e[1] = tobf(a[r].y), e[2] = tobf(a[r].z), e[3] = tobf(a[r].w);
      e[4] = tobf(b[r].x), e[5] = tobf(b[r].y), e[6] = tobf(b[r].z), e[7] = tobf(b[r].w);
    }
}

template <int R, class Delta>
__device__ __forceinline__ void add_rmsnorm_rows(__nv_bfloat16* __restrict__ x, Delta* __restrict__ delta,
                                                 const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ h,
                                                 const int64_t* __restrict__ tok, const __nv_bfloat16* __restrict__ embed,
                                                 unsigned flags, unsigned B) {
  const int b0 = blockIdx.x * R, t = threadIdx.x, c0 = t * 8;
  const int rows = min(R, int(B) - b0);
  uint4 xv[R], dv[R];
#pragma unroll
  for (int r = 0; r < R; ++r)
    if (r < rows)
      xv[r] = (flags & 2u) ? *reinterpret_cast<const uint4*>(embed + size_t(tok[b0 + r]) * kHidden + c0)
                           : *reinterpret_cast<const uint4*>(x + size_t(b0 + r) * kHidden + c0);
  if (flags & 1u) load_delta_rows<R>(delta, size_t(b0) * kHidden + c0, dv, rows);
  const uint4 wv = *reinterpret_cast<const uint4*>(w + c0);
  __shared__ float red[R][8];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    __nv_bfloat16* xe = reinterpret_cast<__nv_bfloat16*>(&xv[r]);
    float ss = 0.f;
    if (r < rows) {
      if (flags & 1u) {
        const __nv_bfloat16* de = reinterpret_cast<const __nv_bfloat16*>(&dv[r]);
#pragma unroll
        for (int i = 0; i < 8; ++i) xe[i] = tobf(bf(xe[i]) + bf(de[i]));
      }
      if (flags & 3u) *reinterpret_cast<uint4*>(x + size_t(b0 + r) * kHidden + c0) = xv[r];
#pragma unroll
      for (int i = 0; i < 8; ++i) ss += bf(xe[i]) * bf(xe[i]);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if ((t & 31) == 0) red[r][t >> 5] = ss;
  }
  __syncthreads();
  const __nv_bfloat16* we = reinterpret_cast<const __nv_bfloat16*>(&wv);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r >= rows) break;
    float tot = 0.f;
#pragma unroll
    for (int i = 0; i < 8; ++i) tot += red[r][i];
    const float rs = rsqrtf(tot / float(kHidden) + kEps);
    const __nv_bfloat16* xe = reinterpret_cast<const __nv_bfloat16*>(&xv[r]);
    uint4 hv;
    __nv_bfloat16* he = reinterpret_cast<__nv_bfloat16*>(&hv);
#pragma unroll
    for (int i = 0; i < 8; ++i) he[i] = tobf(bf(tobf(__fmul_rn(bf(xe[i]), rs))) * bf(we[i]));
    *reinterpret_cast<uint4*>(h + size_t(b0 + r) * kHidden + c0) = hv;
  }
}

// qkv [B, 3072] = [q (32 x 64) | k (8 x 64) | v (8 x 64)]: element i of row b, as bf16; an f32
// split-K accumulator is rounded, then zeroed (each element is read by exactly one thread).
__device__ __forceinline__ float take(const __nv_bfloat16* row, int i) { return bf(row[i]); }
__device__ __forceinline__ float take(float* row, int i) {
  const float v = row[i];
  row[i] = 0.f;
  return bf(tobf(v));
}

template <class T>
__device__ __forceinline__ void rope_append(T* __restrict__ qkv, const float* __restrict__ cos_t,
                                            const float* __restrict__ sin_t, unsigned pos,
                                            __nv_bfloat16* __restrict__ q_out, __nv_bfloat16* __restrict__ K,
                                            __nv_bfloat16* __restrict__ V, unsigned max_ctx) {
  const int b = blockIdx.x;
  T* row = qkv + size_t(b) * (kQH + 2 * kKVH) * kHD;
  const float* cs = cos_t + size_t(pos) * kHD;
  const float* sn = sin_t + size_t(pos) * kHD;
  constexpr int kHalf = kHD / 2;
  // (head, d) pairs, d < 32: q heads 0..31, then k heads 32..39.
  for (int i = threadIdx.x; i < (kQH + kKVH) * kHalf; i += blockDim.x) {
    const int hd = i / kHalf, d = i % kHalf;
    const float x0 = take(row, hd * kHD + d), x1 = take(row, hd * kHD + d + kHalf);
    const float o0 = __fadd_rn(__fmul_rn(x0, cs[d]), __fmul_rn(-x1, sn[d]));
    const float o1 = __fadd_rn(__fmul_rn(x1, cs[d + kHalf]), __fmul_rn(x0, sn[d + kHalf]));
    __nv_bfloat16* dst;
    if (hd < kQH) {
      dst = q_out + (size_t(b) * kQH + hd) * kHD;
    } else {
      dst = K + ((size_t(b) * kKVH + (hd - kQH)) * max_ctx + pos) * kHD;
    }
    dst[d] = tobf(o0);
    dst[d + kHalf] = tobf(o1);
  }
  for (int i = threadIdx.x; i < kKVH * kHD; i += blockDim.x) {
    const int hd = i / kHD, d = i % kHD;
    V[((size_t(b) * kKVH + hd) * max_ctx + pos) * kHD + d] = tobf(take(row, (kQH + kKVH + hd) * kHD + d));
  }
}
}  // namespace

extern "C" __global__ void __launch_bounds__(256)
llama_add_rmsnorm(__nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ delta,
                  const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ h,
                  const int64_t* __restrict__ tok, const __nv_bfloat16* __restrict__ embed, unsigned flags) {
  pdl_prologue();
  add_rmsnorm(x, delta, w, h, tok, embed, flags);
}

extern "C" __global__ void __launch_bounds__(256)
llama_add_rmsnorm_f32(__nv_bfloat16* __restrict__ x, float* __restrict__ delta,
                      const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ h,
                      const int64_t* __restrict__ tok, const __nv_bfloat16* __restrict__ embed, unsigned flags) {
  pdl_prologue();
  add_rmsnorm(x, delta, w, h, tok, embed, flags);
}

// R rows per block (add_rmsnorm_rows): grid ceil(B / R), 256 threads; the host picks R
// (decode.LinkedStep(norm_rows=R)).
#define LLAMA_NORM_ROWS(R)                                                                                           \
  extern "C" __global__ void __launch_bounds__(256) llama_add_rmsnorm_r##R(                                           \
      __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ delta, const __nv_bfloat16* __restrict__ w,   \
      __nv_bfloat16* __restrict__ h, const int64_t* __restrict__ tok, const __nv_bfloat16* __restrict__ embed,        \
      unsigned flags, unsigned B) {                                                                                 \
    pdl_prologue();                                                                                                 \
    add_rmsnorm_rows<R>(x, delta, w, h, tok, embed, flags, B);                                                      \
  }                                                                                                                 \
  extern "C" __global__ void __launch_bounds__(256) llama_add_rmsnorm_f32_r##R(                                       \
      __nv_bfloat16* __restrict__ x, float* __restrict__ delta, const __nv_bfloat16* __restrict__ w,                  \
      __nv_bfloat16* __restrict__ h, const int64_t* __restrict__ tok, const __nv_bfloat16* __restrict__ embed,        \
      unsigned flags, unsigned B) {                                                                                 \
    pdl_prologue();                                                                                                 \
    add_rmsnorm_rows<R>(x, delta, w, h, tok, embed, flags, B);                                                      \
  }
LLAMA_NORM_ROWS(2)
LLAMA_NORM_ROWS(4)
LLAMA_NORM_ROWS(8)
#undef LLAMA_NORM_ROWS

// One block of 256 threads per sequence b. qkv [B, 3072] = [q (32 x 64) | k (8 x 64) | v (8 x 64)];
// K, V: the layer's caches [B, 8, max_ctx, 64]; q_out [B, 32, 64].
extern "C" __global__ void __launch_bounds__(256)
llama_rope_append(const __nv_bfloat16* __restrict__ qkv, const float* __restrict__ cos_t, const float* __restrict__ sin_t,
                  unsigned pos, __nv_bfloat16* __restrict__ q_out, __nv_bfloat16* __restrict__ K,
                  __nv_bfloat16* __restrict__ V, unsigned max_ctx) {
  pdl_prologue();
  rope_append(qkv, cos_t, sin_t, pos, q_out, K, V, max_ctx);
}

// The same, qkv an f32 split-K accumulator [B, 3072] (zeroed as it is read).
extern "C" __global__ void __launch_bounds__(256)
llama_rope_append_f32(float* __restrict__ qkv, const float* __restrict__ cos_t, const float* __restrict__ sin_t,
                      unsigned pos, __nv_bfloat16* __restrict__ q_out, __nv_bfloat16* __restrict__ K,
                      __nv_bfloat16* __restrict__ V, unsigned max_ctx) {
  pdl_prologue();
  rope_append(qkv, cos_t, sin_t, pos, q_out, K, V, max_ctx);
}

// gu [B, 2 * 8192] = [gate | up] -> out [B, 8192]; grid (B * 8192 / 256), 256 threads.
extern "C" __global__ void __launch_bounds__(256)
llama_silu_mul(const __nv_bfloat16* __restrict__ gu, __nv_bfloat16* __restrict__ out, unsigned B) {
  pdl_prologue();
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= B * kFFN) return;
  const unsigned b = i / kFFN, j = i % kFFN;
  const float g = bf(gu[size_t(b) * 2 * kFFN + j]);
  const __nv_bfloat16 s = tobf(g / (1.0f + expf(-g)));
  out[i] = tobf(bf(s) * bf(gu[size_t(b) * 2 * kFFN + kFFN + j]));
}
