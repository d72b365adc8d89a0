// classic.cuh — the device side of the modified-facts experiment's classic linking. Not part of
// PipeLink: compile.sh includes it before a component's own source (nvcc -include, or ahead of
// the source text for NVRTC), with PL_CLASSIC_HEADER naming the header `pipelink_classic
// classic-header` wrote for that component.
//
// The component then carries its own copy of every constant, baked from that header (facts as
// internal-linkage constants, its slot tables, its own tile sequence), and ignores the slots the
// entry passes, as hard-coded parts of a fused kernel do. pipelink/device.cuh is included first
// (it is #pragma once, so the component's own include of it adds nothing); the macros it defines
// for a PipeLink link are then redefined here.
#pragma once
#include "pipelink/device.cuh"

#ifndef PL_CLASSIC_HEADER
#error "classic.cuh needs -DPL_CLASSIC_HEADER='\"<component>.constants.cuh\"' (pipelink_classic classic-header)"
#endif
#include PL_CLASSIC_HEADER

#undef PL_FACT_DECL
#undef PL_FACT
#undef PL_COMPONENT
#define PL_FACT_DECL(type, name) static_assert(sizeof(type) > 0, "fact " #name " comes from the classic header")
#define PL_FACT(name) (pl_fact_##name)
#define PL_COMPONENT(entry)                                                             \
  static __device__ __forceinline__ void entry##_classic(const pl::Ctx& ctx);          \
  extern "C" __device__ void entry(const pl::Ctx& glue) {                              \
    pl::Ctx ctx = glue;                                                                \
    ctx.slots = pl_classic_slots[glue.slots->instance];                                \
    entry##_classic(ctx);                                                              \
  }                                                                                    \
  static __device__ __forceinline__ void entry##_classic(const pl::Ctx& ctx)

// The component walks its own copy of the tile sequence (pl_tile_at_classic, from the header),
// not the linker's pl_tile_at: pl::tile_at in the component's code names this one.
namespace pl {
__device__ __forceinline__ bool tile_at_classic(const Ctx& ctx, unsigned i, Tile& t) { return pl_tile_at_classic(ctx.args, i, &t); }
}  // namespace pl
#define tile_at tile_at_classic
