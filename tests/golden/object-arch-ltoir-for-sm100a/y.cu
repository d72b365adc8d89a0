// A one-warp component that does nothing but exist.
#include "pipelink/device.cuh"
PL_WARPS(entry_y, 1);

PL_COMPONENT(entry_y) { (void)ctx; }
