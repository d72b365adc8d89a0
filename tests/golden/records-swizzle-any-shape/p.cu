// A producer whose stage is written in the 128-byte swizzle, as its contract says.
#include "pipelink/device.cuh"
PL_WARPS(p_main, 1);
PL_ARRIVE(p_main, acc, one);
PL_SWIZZLE(p_main, acc, tile, 128);
PL_COMPONENT(p_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  unsigned char* s = w.tensor<unsigned char>(ctx, 0);
  const unsigned b = ctx.thread() * 16u;
  s[b ^ (((b >> 7) & 3u) << 4)] = 1;  // 64B swizzle: bits [4,6) ^= bits [7,9)
  if (ctx.thread() == 0) w.commit();
}
