#include "pipelink/device.cuh"
PL_COMPONENT(x_main) { (void)ctx; }
