// One library object holding two components, each with its own contract.
#include "pipelink/device.cuh"
PL_WARPS(la_main, 1);
PL_WARPS(lb_main, 1);

PL_COMPONENT(la_main) { (void)ctx; }
PL_COMPONENT(lb_main) { (void)ctx; }
