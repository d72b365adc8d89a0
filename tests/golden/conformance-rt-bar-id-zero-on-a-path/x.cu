// an id that is 0 on one path and the slot on the other (slots->warps == 2 ? 0 : bar[0])
#include "pipelink/device.cuh"
PL_WARPS(x_main, 2);
PL_COMPONENT(x_main) { pl::named_barrier_sync(ctx.slots->warps == 2 ? 0 : ctx.slots->bar[0], 64); }
