// A component written against the generated header's names only (see header-reordered-ports,
// where the same source compiles against a header of the ports in another order).
#include "expect.h"

PL_COMPONENT(demo_main) {
  namespace C = pl_contract::demo_main;
  static_assert(C::warps == 4 && C::registers == 168 && C::instances == 2, "[warps], [component]");
  static_assert(C::provided::tile_m == 64 && C::provided::rows == 16, "[provide]");
  static_assert(C::Out_load::tensor::z::rows == 64 && C::Out_dst::tensor::y::rows == 16, "literal shapes");
  const pl::TensorMap* map = C::param::x_map::get(ctx);
  float* data = C::param::data::get<float>(ctx);
  const unsigned n = C::param::n::get(ctx);
  const int shift = C::param::shift::get(ctx);
  const unsigned long long big = C::param::big::get(ctx);
  const float alpha = C::param::alpha::get(ctx);
  float* scratch = C::smem::scratch::at<float>(ctx);
  C::In_src src(ctx);
  C::Out_dst dst(ctx);
  C::Out_load load(ctx);
  C::In_side side(ctx);
  src.wait();
  pl::bf16* a = src.a(ctx);
  scratch[ctx.thread()] = src.b(ctx)[ctx.thread()] * alpha + float(a[0].bits + shift + big);
  src.release(ctx);
  src.advance();
  dst.acquire();
  dst.y(ctx)[ctx.thread() % 8].bits = static_cast<unsigned short>(n);
  dst.commit(ctx);
  dst.advance();
  C::barrier::all::sync(ctx);
  if (ctx.thread() == 0) {
    load.acquire();
    load.expect_tx();
    pl::tma_load_2d(load.z(ctx), map, load.full_bar(), 0, 0);
    load.advance();
    pl::mbar_arrive(C::mbarrier::done::addr(ctx, 1));
  }
  side.wait();
  data[ctx.thread()] = side.w(ctx)[0] * side.rows(C::In_side::tensor::w::index);
  side.release(ctx);
  side.advance();
}
