// Stores rows [32, 64) of the stage: one TMA copy per stage.
#include "pipelink/device.cuh"
PL_WARPS(store_hi_main, 1);
PL_ARRIVE(store_hi_main, out, one);
PL_COPIES(store_hi_main, out_hi_map, 1);
PL_COMPONENT(store_hi_main) {
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* map = ctx.tmap(0);
  pl::PipeReader r(ctx, 0);
  r.wait();
  const unsigned char* src = r.tensor<unsigned char>(ctx, 0) + 32u * 128u;
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               ::"l"(map), "r"(pl::smem_addr(src)), "r"(0), "r"(32) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  r.release();
}
