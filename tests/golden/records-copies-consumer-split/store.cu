// Each of the two instances stores its own 32-row half of the stage: one TMA copy per stage.
#include "pipelink/device.cuh"
PL_WARPS(store_main, 1);
PL_ARRIVE(store_main, out, one);
PL_INSTANCES(store_main, 2);
PL_COPIES(store_main, out_map, 1);
PL_COMPONENT(store_main) {
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* map = ctx.tmap(0);
  pl::PipeReader r(ctx, 0);
  r.wait();
  const unsigned half = ctx.slots->instance;   // 0 or 1
  const unsigned char* src = r.tensor<unsigned char>(ctx, 0) + half * 32u * 128u;
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               ::"l"(map), "r"(pl::smem_addr(src)), "r"(0), "r"(static_cast<int>(half * 32u)) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  r.release();
}
