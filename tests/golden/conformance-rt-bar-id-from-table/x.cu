// a barrier id read from a __device__ table of the component's own
#include "pipelink/device.cuh"
__device__ const unsigned my_ids[2] = {1, 2};
PL_WARPS(x_main, 2);
PL_COMPONENT(x_main) { pl::named_barrier_sync(my_ids[threadIdx.x >> 6], 64); }
