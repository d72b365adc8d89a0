// One library object holding two components, each with its own contract.
#include "pipelink/device.cuh"
PL_COMPONENT(la_main) { (void)ctx; }
PL_COMPONENT(lb_main) { (void)ctx; }
