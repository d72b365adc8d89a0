// bar.red.popc.u32 on barrier 0 in inline asm
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) {
  unsigned r;
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; bar.red.popc.u32 %0, 0, p; }" : "=r"(r) : "r"((unsigned)ctx.smem[1]) : "memory");
  ctx.smem[ctx.slots->smem[0]] = r;
}
