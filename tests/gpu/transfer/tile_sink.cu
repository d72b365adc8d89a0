// Test component (GPU transfer test): reads each tile from the "t" pipe in the layout its
// contract declares (column-major, 128-byte swizzle; or 64 / 32 bytes, -DSINK_SWIZZLE) and stores it row-major to `out`.
#include "tile_sink.contract.h"  // pipelink header sink.toml: names, pipe operations, records

// -DSINK_SWIZZLE=64 / 32 (sink_64.toml, sink_32.toml): the 64- or 32-byte swizzle instead of 128.
#ifndef SINK_SWIZZLE
#define SINK_SWIZZLE 128
#endif
constexpr unsigned kSwizzleMask = SINK_SWIZZLE / 16 - 1;  // 128B: bits [4,7) ^= [7,10); 64B: [4,6) ^= [7,9); 32B: 4 ^= 7

PL_FACT_DECL(unsigned, rows);
PL_FACT_DECL(unsigned, cols);


PL_COMPONENT(tile_sink_main) {
  const unsigned rows = PL_FACT(rows), cols = PL_FACT(cols);
  namespace C = pl_contract::tile_sink_main;
  float* out = C::param::out::get<float>(ctx);
  const unsigned N = C::param::N::get(ctx);
  C::In_t r(ctx);
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    r.wait();
    const unsigned char* x = r.x<unsigned char>(ctx);
    for (unsigned e = ctx.thread(); e < rows * cols; e += ctx.threads()) {
      const unsigned row = e / cols, c = e % cols;
      unsigned byte = (c * rows + row) * 4u;  // column-major
      byte ^= ((byte >> 7) & kSwizzleMask) << 4;  // 16-byte chunk ^= (128-byte line % 8) & mask
      out[(t.m * rows + row) * N + t.n * cols + c] = *reinterpret_cast<const float*>(x + byte);
    }
    r.release(ctx);  // arrive = "warp"
    r.advance();
  }
}
