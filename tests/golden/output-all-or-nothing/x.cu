#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);

PL_COMPONENT(x_main) { (void)ctx; }
