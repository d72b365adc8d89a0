// st.async.shared::cluster to another CTA's window
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  unsigned a = pl::smem_addr(ctx.smem) + ctx.slots->smem[0];
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%0], %1, [%2];" :: "r"(a | 0x01000000u), "r"(1u), "r"(a + 8) : "memory");
}
