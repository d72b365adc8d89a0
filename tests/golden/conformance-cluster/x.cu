// Distributed shared memory (mapa) without a cluster contract.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, 1;" : "=r"(remote) : "r"(pl::smem_addr(ctx.smem)));
  ctx.smem[ctx.slots->smem[0]] = remote & 1;
}
