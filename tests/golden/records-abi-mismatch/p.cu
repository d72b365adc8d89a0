// Producer whose object also carries the abi record of a device.cuh with 8 param slots per
// component (the capacities before 2026-11-30): its pl::Slots would be laid out differently from
// this linker's tables, so the link is refused. (A stand-in for an object compiled against the
// older header: the record is written out by hand here.)
#include "pipelink/device.cuh"
struct OldAbi { char magic[8], kind[16], scope[64], key[64]; long long value; };
static __device__ __attribute__((used)) const OldAbi pl_record_abi_old = {
    {'P', 'L', 'R', 'E', 'C', '1'}, {'a', 'b', 'i'}, {'*'}, {'p', '.', 'c', 'u'}, 0x1804080404080408LL};
PL_WARPS(p_main, 2);
PL_ARRIVE(p_main, t, warp);
PL_COMPONENT(p_main) {
  pl::PipeWriter w(ctx, 0);
  w.acquire();
  w.tensor<float>(ctx, 0)[ctx.thread()] = 1.f;
  __syncwarp();
  if ((threadIdx.x & 31u) == 0) w.commit();
}
