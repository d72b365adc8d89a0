// MoE routing kernels (Qwen3-30B-A3B: 128 experts, top-8, renormalized), a plain CUDA module the
// host launches before the linked expert kernels. Not a PipeLink component: routing decides how
// many rows each expert gets, and the linked kernels are launched over the result.
//
//   moe_topk     one warp per token: top-8 of the router logits, softmax over the chosen 8
//                (= the renormalized top-k of the full softmax), and a slot in its expert's list
//                (moe_topk_s: the experts' counters `stride` words apart)
//   moe_offsets  one block: each expert's row range, padded to `align` rows; the expert of every
//                tile_m-row tile; the total row count (moe_offsets_s: counters `stride` words apart)
//   moe_scatter  writes each routed (token, k) into its expert's rows: row_token, row_weight;
//                padding rows keep token -1 and weight 0 (the host clears them first)
//
// And, after the down kernel that stores each expert row's output (already scaled by its routing
// weight in the gate/up kernel) to Hd in the expert-sorted row order (down_store.cubin):
//   moe_topk_sum one block per token: y[t] = sum over its 8 (expert, slot) of Hd[row], in fp32,
//                row = offsets[expert] + slot, as moe_scatter placed it (moe_topk_sum_bf16: y in bf16)
//
// With -DMOE_PDL (routing_pdl.cubin) every kernel starts with griddepcontrol.launch_dependents and
// then griddepcontrol.wait, for programmatic dependent launch (bench/moe/bench_torch.py's PDL
// layer): the next kernel may launch while this one still waits; its own wait returns only once
// this one has completed, which it does only after its own wait returned.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__device__ __forceinline__ void moe_pdl_prologue() {
#ifdef MOE_PDL
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// counts[e * stride]: the kernels below with stride 1 (counts contiguous) and the _s ones with a
// stride from the host (32: each expert's counter in its own 128-byte line, so the T * 8 atomics
// are spread over 128 lines, i.e. over the L2's slices, instead of queueing on four lines).
__device__ __forceinline__ void moe_topk_body(const float* __restrict__ logits, unsigned T, unsigned E, unsigned* __restrict__ counts,
                                              unsigned stride, int* __restrict__ topk_expert, float* __restrict__ topk_weight,
                                              unsigned* __restrict__ topk_pos) {
  constexpr unsigned K = 8;
  const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31u;
  if (warp >= T) return;
  float v[4];  // E = 128: 4 logits per lane
#pragma unroll
  for (unsigned j = 0; j < 4; ++j) v[j] = logits[size_t(warp) * E + lane + 32 * j];
  float top_v[K];
  int top_e[K];
#pragma unroll
  for (unsigned k = 0; k < K; ++k) {
    float best = v[0];
    int be = lane;
#pragma unroll
    for (unsigned j = 1; j < 4; ++j)
      if (v[j] > best) { best = v[j]; be = lane + 32 * j; }
#pragma unroll
    for (unsigned off = 16; off > 0; off >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, best, off);
      const int oe = __shfl_xor_sync(0xffffffffu, be, off);
      if (ov > best || (ov == best && oe < be)) { best = ov; be = oe; }
    }
    top_v[k] = best;
    top_e[k] = be;
    if ((be & 31) == int(lane)) v[be >> 5] = -INFINITY;  // remove it
  }
  float sum = 0.f;
#pragma unroll
  for (unsigned k = 0; k < K; ++k) sum += __expf(top_v[k] - top_v[0]);
  if (lane < K) {
    float w = 0.f;
    int e = 0;
#pragma unroll
    for (unsigned k = 0; k < K; ++k)
      if (k == lane) { w = __expf(top_v[k] - top_v[0]) / sum; e = top_e[k]; }
    topk_expert[warp * K + lane] = e;
    topk_weight[warp * K + lane] = w;
    topk_pos[warp * K + lane] = atomicAdd(&counts[size_t(e) * stride], 1u);
  }
}

extern "C" __global__ void moe_topk(const float* __restrict__ logits, unsigned T, unsigned E, unsigned* __restrict__ counts,
                                    int* __restrict__ topk_expert, float* __restrict__ topk_weight,
                                    unsigned* __restrict__ topk_pos) {
  moe_pdl_prologue();
  moe_topk_body(logits, T, E, counts, 1u, topk_expert, topk_weight, topk_pos);
}

extern "C" __global__ void moe_topk_s(const float* __restrict__ logits, unsigned T, unsigned E, unsigned* __restrict__ counts,
                                      unsigned stride, int* __restrict__ topk_expert, float* __restrict__ topk_weight,
                                      unsigned* __restrict__ topk_pos) {
  moe_pdl_prologue();
  moe_topk_body(logits, T, E, counts, stride, topk_expert, topk_weight, topk_pos);
}

__device__ __forceinline__ void moe_offsets_body(const unsigned* __restrict__ counts, unsigned stride, unsigned E, unsigned align,
                                                 unsigned tile_m, unsigned* __restrict__ offsets, int* __restrict__ tile_expert,
                                                 unsigned* __restrict__ total) {
  __shared__ unsigned padded[1024];
  for (unsigned e = threadIdx.x; e < E; e += blockDim.x) padded[e] = (counts[size_t(e) * stride] + align - 1) / align * align;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned acc = 0;
    for (unsigned e = 0; e < E; ++e) {
      const unsigned p = padded[e];
      padded[e] = acc;
      acc += p;
    }
    *total = acc;
    padded[E] = acc;
  }
  __syncthreads();
  for (unsigned e = threadIdx.x; e < E; e += blockDim.x) {
    offsets[e] = padded[e];
    for (unsigned t = padded[e] / tile_m; t < padded[e + 1] / tile_m; ++t) tile_expert[t] = int(e);
  }
}

extern "C" __global__ void moe_offsets(const unsigned* __restrict__ counts, unsigned E, unsigned align, unsigned tile_m,
                                       unsigned* __restrict__ offsets, int* __restrict__ tile_expert, unsigned* __restrict__ total) {
  moe_pdl_prologue();
  moe_offsets_body(counts, 1u, E, align, tile_m, offsets, tile_expert, total);
}

extern "C" __global__ void moe_offsets_s(const unsigned* __restrict__ counts, unsigned stride, unsigned E, unsigned align,
                                         unsigned tile_m, unsigned* __restrict__ offsets, int* __restrict__ tile_expert,
                                         unsigned* __restrict__ total) {
  moe_pdl_prologue();
  moe_offsets_body(counts, stride, E, align, tile_m, offsets, tile_expert, total);
}

// moe_offsets_s with the two clears the host did before it folded in (session 9): every padding
// row of every expert gets token -1 and weight 0 here (the routed rows are moe_scatter's), so no
// row_token / row_weight fill is needed; and the counters are zeroed after they are read, so the
// next layer's moe_topk_s finds them zero (the caller zeroes them once, at allocation).
extern "C" __global__ void moe_offsets_pad_s(unsigned* __restrict__ counts, unsigned stride, unsigned E, unsigned align,
                                             unsigned tile_m, unsigned* __restrict__ offsets, int* __restrict__ tile_expert,
                                             unsigned* __restrict__ total, int* __restrict__ row_token,
                                             float* __restrict__ row_weight) {
  moe_pdl_prologue();
  // One block only: a second block could read the counters after this one cleared them (and then
  // overwrite offsets[] with its wrong ones), where moe_offsets_s's extra blocks merely repeat it.
  if (blockIdx.x != 0) return;
  moe_offsets_body(counts, stride, E, align, tile_m, offsets, tile_expert, total);
  // moe_offsets_body ends with every thread past its __syncthreads and offsets[] written by this
  // block; the counts were read before that barrier, so they may be cleared and reread here.
  __syncthreads();
  // One group of `lanes` threads per expert: a warp (any block of 32 or more threads; the threads
  // of a last partial warp take no expert), or the whole block when it is smaller than a warp
  // (blockDim.x / 32 would be 0 there: an endless loop, and rows lanes.. 31 of each pad skipped).
  const bool small = blockDim.x < 32u;
  const unsigned lanes = small ? blockDim.x : 32u, groups = small ? 1u : blockDim.x / 32u;
  const unsigned g = small ? 0u : threadIdx.x / 32u, l = small ? threadIdx.x : threadIdx.x % 32u;
  for (unsigned e = g; g < groups && e < E; e += groups) {
    const unsigned n = counts[size_t(e) * stride], pad = (n + align - 1) / align * align - n, base = offsets[e] + n;
    for (unsigned i = l; i < pad; i += lanes) {
      row_token[base + i] = -1;
      row_weight[base + i] = 0.f;
    }
  }
  __syncthreads();
  for (unsigned e = threadIdx.x; e < E; e += blockDim.x) counts[size_t(e) * stride] = 0;
}

extern "C" __global__ void moe_scatter(unsigned T, const int* __restrict__ topk_expert, const float* __restrict__ topk_weight,
                                       const unsigned* __restrict__ topk_pos, const unsigned* __restrict__ offsets,
                                       int* __restrict__ row_token, float* __restrict__ row_weight) {
  moe_pdl_prologue();
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= T * 8) return;
  const unsigned row = offsets[topk_expert[i]] + topk_pos[i];
  row_token[row] = int(i / 8);
  row_weight[row] = topk_weight[i];
}

// hidden = 8 * blockDim.x (2048 = 8 x 256): each thread sums one 16-byte chunk of 8 bf16 columns
// over the token's 8 rows (eight independent loads in flight), in fp32.
__device__ __forceinline__ void moe_topk_sum_chunk(unsigned t, unsigned c, unsigned chunks, const int* __restrict__ topk_expert,
                                                   const unsigned* __restrict__ topk_pos, const unsigned* __restrict__ offsets,
                                                   const uint4* __restrict__ hd, float (&acc)[8]) {
  constexpr unsigned K = 8;
  uint4 v[K];
#pragma unroll
  for (unsigned k = 0; k < K; ++k) {
    const unsigned row = offsets[topk_expert[t * K + k]] + topk_pos[t * K + k];
    v[k] = hd[size_t(row) * chunks + c];
  }
#pragma unroll
  for (unsigned j = 0; j < 8; ++j) acc[j] = 0.f;
#pragma unroll
  for (unsigned k = 0; k < K; ++k) {
    const unsigned w[4] = {v[k].x, v[k].y, v[k].z, v[k].w};
#pragma unroll
    for (unsigned j = 0; j < 4; ++j) {
      acc[2 * j] += __uint_as_float(w[j] << 16);
      acc[2 * j + 1] += __uint_as_float(w[j] & 0xFFFF0000u);
    }
  }
}

// ... and writes the 8 sums as fp32.
extern "C" __global__ void moe_topk_sum(unsigned T, unsigned hidden, const int* __restrict__ topk_expert,
                                        const unsigned* __restrict__ topk_pos, const unsigned* __restrict__ offsets,
                                        const uint4* __restrict__ hd, float4* __restrict__ y) {
  moe_pdl_prologue();
  const unsigned t = blockIdx.x, c = threadIdx.x, chunks = hidden / 8;
  if (t >= T || c >= chunks) return;
  float acc[8];
  moe_topk_sum_chunk(t, c, chunks, topk_expert, topk_pos, offsets, hd, acc);
  y[(size_t(t) * chunks + c) * 2] = make_float4(acc[0], acc[1], acc[2], acc[3]);
  y[(size_t(t) * chunks + c) * 2 + 1] = make_float4(acc[4], acc[5], acc[6], acc[7]);
}

// moe_topk_sum with a bf16 output (round to nearest even), the dtype a model's residual stream and
// PyTorch's pipeline have: half the bytes of Y written (session 9).
extern "C" __global__ void moe_topk_sum_bf16(unsigned T, unsigned hidden, const int* __restrict__ topk_expert,
                                             const unsigned* __restrict__ topk_pos, const unsigned* __restrict__ offsets,
                                             const uint4* __restrict__ hd, uint4* __restrict__ y) {
  moe_pdl_prologue();
  const unsigned t = blockIdx.x, c = threadIdx.x, chunks = hidden / 8;
  if (t >= T || c >= chunks) return;
  float acc[8];
  moe_topk_sum_chunk(t, c, chunks, topk_expert, topk_pos, offsets, hd, acc);
  unsigned out[4];
#pragma unroll
  for (unsigned j = 0; j < 4; ++j) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(acc[2 * j], acc[2 * j + 1]);  // .x the lower column
    out[j] = *reinterpret_cast<const unsigned*>(&h);
  }
  y[size_t(t) * chunks + c] = make_uint4(out[0], out[1], out[2], out[3]);
}
