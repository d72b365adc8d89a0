// l2_prefetch.cuh — the decode loaders' optional L2 prefetch of the weights (or cache) that a
// LATER kernel of the step reads (sk_loader.cu built with -DSK_L2_PREFETCH, mlp_loader.cu with
// -DMLP_L2_PREFETCH). At B = 1 every kernel of the step streams its own bytes, and the HBM idles
// while a kernel ramps up and drains and while the next one is handed off; a loader that has
// issued its last load asks the L2 for its block's share of the next kernel's bytes, so those
// reach the L2 during that idle time and the next kernel's first loads hit it. Only a hint: the
// data are never read here, and what the next kernel reads is whatever global memory holds then
// (the L2 is the point of coherence), so no ordering with the kernels between is needed.
#pragma once

namespace llama_l2 {
// This block's share of [p, p + bytes): the region in gridDim.x slices of whole 16-byte units,
// requested with cp.async.bulk.prefetch.L2 in pieces of at most 32 KB. One thread calls it.
// p must be 16-byte aligned; a null p or zero bytes does nothing.
__device__ __forceinline__ void prefetch_share(const void* p, unsigned long long bytes) {
  if (p == nullptr || bytes < 16u) return;
  const unsigned long long units = bytes / 16u, per = (units + gridDim.x - 1u) / gridDim.x;
  const unsigned long long u0 = per * blockIdx.x, u1 = u0 + per < units ? u0 + per : units;
  const char* base = static_cast<const char*>(p);
  for (unsigned long long u = u0; u < u1; u += 2048u) {
    const unsigned size = static_cast<unsigned>((u1 - u < 2048u ? u1 - u : 2048u) * 16u);
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(base + u * 16u), "r"(size) : "memory");
  }
}
}  // namespace llama_l2
