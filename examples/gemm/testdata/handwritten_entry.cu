// handwritten_entry.cu — COMPILE-CHECK STAND-IN ONLY, not used by the product.
//
// A hand-written version of what the PipeLink linker generates for the GEMM example
// (loader + writer in warpgroup 0, mma_consumer#0 / #1 in warpgroups 1 / 2), so that the three
// components can be compiled and linked with nvJitLink -lto before the generator exists.
// Every number below (offsets, barrier ids, arrival counts, tx bytes, parameter slots) is
// exactly what the linker is supposed to derive from the contracts; nothing here is normative.
//
// Kernel parameter slots: tmap[0] = a_map, tmap[1] = b_map; word[0] = M, word[1] = N,
// word[2] = K, word[3] = C.
//
// Shared memory (dynamic, 1024-byte aligned base):
//   [     0,  65536)  ab: 4 stages x 16384 (a at +0: 128x32 bf16, b at +8192: 128x32 bf16)
//   [ 65536, 196608)  c:  2 stages x 65536 (c at +0: 128x128 f32)
//   [196608, 196640)  ab full  mbarriers x4 (arrivals 1: loader expect_tx; tx 16384)
//   [196640, 196672)  ab empty mbarriers x4 (arrivals 8: 2 mma instances x 4 warps)
//   [196672, 196688)  c  full  mbarriers x2 (arrivals 2: 2 mma instances x one)
//   [196688, 196704)  c  empty mbarriers x2 (arrivals 2: 1 writer x 2 warps)
#include "pipelink/device.cuh"

namespace {
constexpr unsigned kAB = 0, kABStage = 16384, kABStages = 4;
constexpr unsigned kC = 65536, kCStage = 65536, kCStages = 2;
constexpr unsigned kABFull = 196608, kABEmpty = kABFull + 8 * kABStages;
constexpr unsigned kCFull = kABEmpty + 8 * kABStages, kCEmpty = kCFull + 8 * kCStages;
constexpr unsigned kSmemBytes = kCEmpty + 8 * kCStages;  // 196704: launch with this dynamic smem
static_assert(kSmemBytes <= 232448, "sm_90 shared-memory limit");
enum : unsigned { kWordM = 0, kWordN = 1, kWordK = 2, kWordC = 3 };
}  // namespace

// Facts: external linkage (extern) so that the components' PL_FACT_DECL references bind to them.
extern "C" __device__ const unsigned pl_fact_tile_m = 128;
extern "C" __device__ const unsigned pl_fact_tile_n = 128;
extern "C" __device__ const unsigned pl_fact_tile_k = 32;
extern "C" __device__ const unsigned pl_fact_stages = 4;

// Row-major persistent schedule: block b takes linear tiles b, b + gridDim.x, ...
extern "C" __device__ bool pl_tile_at(const pl::Args* args, unsigned i, pl::Tile* tile) {
  const unsigned tiles_n = static_cast<unsigned>(args->word[kWordN]) / pl_fact_tile_n;
  const unsigned tiles = static_cast<unsigned>(args->word[kWordM]) / pl_fact_tile_m * tiles_n;
  const unsigned linear = blockIdx.x + i * gridDim.x;
  if (linear >= tiles) return false;
  tile->m = linear / tiles_n;
  tile->n = linear % tiles_n;
  tile->linear = linear;
  return true;
}

// Slots. Field order: smem, bar, bar_threads, mbar, port[4], param, warp_base, warps, instance,
// instances. Port: buffer, stage_bytes, stages, full, empty, tx_bytes, tensor[4], part, parts.
__device__ const pl::Slots pl_slots_tma_loader_0 = {
    {}, {}, {}, {},
    {{kAB, kABStage, kABStages, kABFull, kABEmpty, 16384, {0, 8192}, 0, 1}},
    {0, 1, kWordK},
    0, 1, 0, 1};
__device__ const pl::Slots pl_slots_tile_writer_0 = {
    {}, {}, {}, {},
    {{kC, kCStage, kCStages, kCFull, kCEmpty, 0, {0}, 0, 1}},
    {kWordC, kWordM, kWordN},
    1, 2, 0, 1};
__device__ const pl::Slots pl_slots_mma_consumer_0 = {
    {}, {1}, {128}, {},
    {{kAB, kABStage, kABStages, kABFull, kABEmpty, 0, {0, 8192}, 0, 2},
     {kC, kCStage, kCStages, kCFull, kCEmpty, 0, {0}, 0, 2}},
    {kWordK},
    4, 4, 0, 2};
__device__ const pl::Slots pl_slots_mma_consumer_1 = {
    {}, {2}, {128}, {},
    {{kAB, kABStage, kABStages, kABFull, kABEmpty, 0, {0, 8192}, 1, 2},
     {kC, kCStage, kCStages, kCFull, kCEmpty, 0, {0}, 1, 2}},
    {kWordK},
    8, 4, 1, 2};

PL_COMPONENT(tma_loader_main);
PL_COMPONENT(tile_writer_main);
PL_COMPONENT(mma_consumer_main);

__global__ void __launch_bounds__(384, 1) k(const __grid_constant__ pl::Args args) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const unsigned warp = threadIdx.x >> 5;

  if (threadIdx.x == 0) {
    const unsigned base = pl::smem_addr(smem);
    for (unsigned s = 0; s < kABStages; ++s) {
      pl::mbar_init(base + kABFull + 8 * s, 1);
      pl::mbar_init(base + kABEmpty + 8 * s, 8);
    }
    for (unsigned s = 0; s < kCStages; ++s) {
      pl::mbar_init(base + kCFull + 8 * s, 2);
      pl::mbar_init(base + kCEmpty + 8 * s, 2);
    }
    pl::fence_async_shared();  // make the initialised mbarriers visible to the TMA unit
  }
  __syncthreads();

  if (warp < 4) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (warp == 0) {
      tma_loader_main(pl::Ctx{&pl_slots_tma_loader_0, &args, smem});
    } else if (warp <= 2) {
      tile_writer_main(pl::Ctx{&pl_slots_tile_writer_0, &args, smem});
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    if (warp < 8) {
      mma_consumer_main(pl::Ctx{&pl_slots_mma_consumer_0, &args, smem});
    } else {
      mma_consumer_main(pl::Ctx{&pl_slots_mma_consumer_1, &args, smem});
    }
  }
}
