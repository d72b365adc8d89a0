// a barrier id of 0 passed through a volatile local
#include "pipelink/device.cuh"
PL_WARPS(x_main, 2);
PL_COMPONENT(x_main) { volatile unsigned id = 0; pl::named_barrier_sync(id, 64); }
