// cp.async.bulk.shared::cluster.shared::cta (DSMEM bulk copy)
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  unsigned a = pl::smem_addr(ctx.smem) + ctx.slots->smem[0];
  asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];"
               :: "r"(a | 0x01000000u), "r"(a), "r"(a + 32) : "memory");
}
