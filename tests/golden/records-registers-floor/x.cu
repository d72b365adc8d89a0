// The code needs 216 registers per thread; the contract budgets 40.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_REGISTERS(x_main, 216);
PL_COMPONENT(x_main) { ctx.smem[ctx.slots->smem[0]] = 1; }
