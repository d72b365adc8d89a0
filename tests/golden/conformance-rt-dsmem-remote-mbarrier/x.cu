// mbarrier.arrive ... .cluster.shared::cluster on a remote CTA's barrier
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
// remote arrive on an mbarrier in shared::cluster (address with another rank's window)
PL_COMPONENT(x_main) {
  unsigned a = pl::smem_addr(ctx.smem) + ctx.slots->smem[0];
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(a | 0x01000000u) : "memory");
}
