// A component whose code uses wgmma (sm_90a only), built for sm_100a.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { asm volatile("wgmma.fence.sync.aligned;"); }
