// One warpgroup: two wgmma m64n8k16 into the same accumulators, and between them an accumulator
// changed by ordinary code while the first may still be writing it; then the result stored.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 4);
PL_COMPONENT(x_main) {
  unsigned char* tiles = ctx.smem + ctx.slots->smem[0];
  const unsigned long long desc = (pl::smem_addr(tiles) & 0x3FFFFu) >> 4;
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(desc), "l"(desc + 64));
  d0 += 1.0f;  // the bug: d0 is still being written by the wgmma
  asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, 1, 1, 1, 0, 0;"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(desc + 2), "l"(desc + 66));
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  float* out = reinterpret_cast<float*>(tiles) + 4 * threadIdx.x;
  out[0] = d0, out[1] = d1, out[2] = d2, out[3] = d3;
}
