// an id computed from slots (bar[0] - warps + 1) that is a slot in the probe and folds to 0 in the link
#include "pipelink/device.cuh"
PL_WARPS(x_main, 2);
PL_COMPONENT(x_main) { pl::named_barrier_sync(ctx.slots->bar[0] - ctx.slots->warps + 1, 64); }
