// Stores rows [0, 32) of the stage: one TMA copy per stage.
#include "pipelink/device.cuh"
PL_WARPS(store_lo_main, 1);
PL_ARRIVE(store_lo_main, out, one);
PL_COPIES(store_lo_main, out_lo_map, 1);
PL_COMPONENT(store_lo_main) {
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* map = ctx.tmap(0);
  pl::PipeReader r(ctx, 0);
  r.wait();
  const unsigned char* src = r.tensor<unsigned char>(ctx, 0) + 0u * 128u;
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               ::"l"(map), "r"(pl::smem_addr(src)), "r"(0), "r"(0) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  r.release();
}
