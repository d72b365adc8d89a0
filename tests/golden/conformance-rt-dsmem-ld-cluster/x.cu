// ld.shared::cluster at another CTA's window, no mapa
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  unsigned a = pl::smem_addr(ctx.smem) + ctx.slots->smem[0], v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a | 0x01000000u) : "memory");
  ctx.smem[ctx.slots->smem[0]] = v;
}
