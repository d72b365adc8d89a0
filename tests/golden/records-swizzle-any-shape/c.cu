// A consumer that takes the producer's shape ("*") but reads in the 64-byte swizzle, under a contract
// that says 128B: the swizzle is the consumer's own even with shape "*", so its record is checked.
#include "pipelink/device.cuh"
PL_WARPS(c_main, 1);
PL_ARRIVE(c_main, acc, one);
PL_SWIZZLE(c_main, acc, tile, 64);
PL_COMPONENT(c_main) {
  pl::PipeReader r(ctx, 0);
  r.wait();
  if (ctx.thread() == 0) r.release();
}
