// a barrier id read from a mutable __device__ global of the component's own
#include "pipelink/device.cuh"
__device__ unsigned my_id = 1;
PL_WARPS(x_main, 2);
PL_COMPONENT(x_main) { pl::named_barrier_sync(my_id, 64); }
