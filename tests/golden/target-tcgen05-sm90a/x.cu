// A component whose code uses tcgen05 (sm_100a and sm_103a only), built for sm_90a.
#include "pipelink/device.cuh"
PL_WARPS(x_main, 1);
PL_COMPONENT(x_main) { asm volatile("tcgen05.fence::before_thread_sync;"); }
