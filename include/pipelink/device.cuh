// pipelink/device.cuh — the one header a PipeLink component includes.
//
// A component is an `extern "C" __device__ void entry(const pl::Ctx&)` compiled on its own
// (NVRTC -dlto, or nvcc -dc with code=lto_90a). Everything the linker decides reaches it as a
// *link-time binding*, never as a compile-time constant:
//   * facts:  `PL_FACT_DECL(unsigned, stages)` declares the extern symbol `pl_fact_stages`;
//             `PL_FACT(stages)` reads it. The generated unit defines it with external linkage,
//             so nvJitLink -lto folds it into an immediate.
//   * slots:  `ctx.slots` points at this instance's `const pl::Slots`, defined by the generated
//             unit; shared-memory offsets, barrier ids, mbarrier offsets, pipe ports and kernel
//             parameter indices are read from it in *contract declaration order*.
// Values that must be immediates inside a component (wgmma shapes, register-array sizes,
// setmaxnreg) cannot be link-time bindings: the owner provides them as facts at compile time.
//
// This header needs no host headers, so NVRTC compiles components without a host toolchain
// (only a PL_CHECKED build under nvcc includes <cstdio> for printf).
#pragma once

#if defined(PL_CHECKED) && !defined(__CUDACC_RTC__)
#include <cstdio>  // device printf under nvcc; NVRTC has it built in
#endif

#include "pipelink/limits.h"  // capacities of pl::Slots and pl::Args (kMaxSmem, ..., kArgWords)

namespace pl {

// One end of a pipe: a ring of `stages` stages in shared memory guarded by full/empty mbarriers.
struct Port {
  unsigned buffer;                // smem offset of stage 0
  unsigned stage_bytes;           // distance between stages
  unsigned stages;
  unsigned full;                  // smem offset of stage 0's "full" mbarrier (stride 8 bytes)
  unsigned empty;                 // smem offset of stage 0's "empty" mbarrier (stride 8 bytes)
  unsigned tx_bytes;              // bytes this producer instance announces per stage (TMA ports)
  unsigned tensor[kMaxTensors];   // offset of each declared tensor inside a stage
  unsigned rows[kMaxTensors];     // each tensor's shape, as this end declared it
  unsigned cols[kMaxTensors];
  unsigned part;                  // index of this instance among its component's instances on this port end
  unsigned parts;                 // number of its component's instances on this port end
  unsigned pipe;                  // the pipe's index in the link (its name in the map; PL_CHECKED messages)
  // Cluster multicast (the producer's `multicast = N`): each stage is filled jointly by the N
  // blocks of this block's group, and released by the consumers of all of them. mcast_mask is the
  // group of rank 0, ((1 << N) - 1); rank r's group is mcast_mask << (r / N * N). 0 / 1 = none.
  unsigned mcast_mask;
  unsigned mcast_blocks;
};

struct Slots {
  unsigned smem[kMaxSmem];        // smem offsets of the [[smem]] regions
  unsigned bar[kMaxBarriers];     // hardware named-barrier ids (1..15)
  unsigned bar_threads[kMaxBarriers];
  unsigned mbar[kMaxMbarriers];   // smem offsets of the [[mbarrier]] groups (stride 8); use ctx.mbar(i, j)
  Port port[kMaxPorts];
  unsigned param[kMaxParams];     // index into Args::tmap (tensormap params) or Args::word
  unsigned warp_base;             // first warp of this instance in the block
  unsigned warps;                 // warps of this instance
  unsigned instance;              // index among the instances of this component
  unsigned instances;
};

// A CUtensorMap, opaque to the device side (128 bytes, 64-byte aligned).
struct alignas(64) TensorMap { unsigned long long opaque[16]; };

// The fused kernel's single parameter. The linker assigns each named [[param]] a slot; the host
// fills them by name through pipelink::Launch (see include/pipelink/runtime.h).
struct alignas(128) Args {  // 128: the host's CUtensorMap alignment, so both sides agree on size
  TensorMap tmap[kArgTensorMaps];
  unsigned long long word[kArgWords];
};

// A tile of the sequence: its coordinates (m, n in tiles), its index in the order, and its rows and
// columns inside the [tiles] extent: tile_m and tile_n but at the extent's far edges (M = 960 in
// 128-row tiles: the last row of tiles has rows = 64), 0 for a tile wholly past it (a cluster's
// padding tile), ~0u when the link declares no [tiles]. A component may skip work on rows or
// columns past them (the TMA store clips them); it must still take part in every pipe as usual.
struct Tile { unsigned m, n, linear, rows, cols; };

// Storage types of the contract's tensor dtypes (the element types of a generated contract
// header's tensors): 16- and 8-bit floats as their bits, so no host header (cuda_bf16.h) is needed.
struct alignas(2) bf16 { unsigned short bits; };
struct alignas(2) f16 { unsigned short bits; };
struct f8e4m3 { unsigned char bits; };
struct f8e5m2 { unsigned char bits; };

struct Ctx {
  const Slots* slots;
  const Args* args;
  unsigned char* smem;            // dynamic shared memory base (1024-byte aligned)

  __device__ __forceinline__ unsigned warp() const { return (threadIdx.x >> 5) - slots->warp_base; }
  __device__ __forceinline__ unsigned thread() const { return threadIdx.x - slots->warp_base * 32; }
  __device__ __forceinline__ unsigned threads() const { return slots->warps * 32; }
  template <class T> __device__ __forceinline__ T* smem_at(unsigned region) const {
    return reinterpret_cast<T*>(smem + slots->smem[region]);
  }
  template <class T> __device__ __forceinline__ T* ptr(unsigned param) const {
    return reinterpret_cast<T*>(args->word[slots->param[param]]);
  }
  __device__ __forceinline__ unsigned u32(unsigned param) const {
    return static_cast<unsigned>(args->word[slots->param[param]]);
  }
  __device__ __forceinline__ int i32(unsigned param) const { return static_cast<int>(u32(param)); }
  __device__ __forceinline__ unsigned long long u64(unsigned param) const { return args->word[slots->param[param]]; }
  // An f32 parameter: its bits in the word's low 32 bits (pipelink::Module::set_f32).
  __device__ __forceinline__ float f32(unsigned param) const { return __uint_as_float(u32(param)); }
  __device__ __forceinline__ const TensorMap* tmap(unsigned param) const {
    return &args->tmap[slots->param[param]];
  }
  // Shared-window address of mbarrier j of the component's [[mbarrier]] group `group`.
  __device__ __forceinline__ unsigned mbar(unsigned group, unsigned j = 0) const;
};

// The tile sequence is generated by the linker (one scheduler for the whole kernel); every
// component that declares [tiles] walks it with `for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i)`.
extern "C" __device__ bool pl_tile_at(const Args* args, unsigned iteration, Tile* tile);
__device__ __forceinline__ bool tile_at(const Ctx& ctx, unsigned i, Tile& t) { return pl_tile_at(ctx.args, i, &t); }

// Work units, for a component whose [tiles] declare k_extent and k_tile (it runs a tile's k
// slices itself: a loader, a main loop): unit i is k slices [k_begin, k_end) of `tile`, out of
// the tile's ceil(K / k_tile). Walk them with `for (unsigned i = 0; pl::unit_at(ctx, i, u); ++i)`.
// Data-parallel (the default schedule) every unit is a whole tile and emits. Under
// `--tile-schedule stream-k` a tile may be split across blocks: the unit holding its first slice
// (k_begin == 0) has emit = true and, when k_end < the tile's slices, adds the partials of blocks
// [peer_begin, peer_end) before it emits the tile (pl::partials_wait, pl::partials); every other
// unit has emit = false and stores its partial result instead (pl::partials with blockIdx.x, then
// pl::partials_publish), emitting nothing. Each block stores at most one partial (its first unit).
// A component that walks whole tiles (pl::tile_at) sees exactly the tiles this block emits, in
// the order its units emit them. A finishing unit only waits for blocks that store their partial
// as their first unit, so the grid must be resident at once (pipelink::Module::launch checks it).
// reduce_shares (split-k, a tile cut into 10 pieces or more): the emitter is block peer_begin - 1,
// and a non-emitting unit's [peer_begin, peer_end) names the same blocks as its emitter's (itself
// among them). pl::unit_partials then has the pieces sum the partials in shares into the emitter's
// own slot (which it never fills: it emits), so the emitter reads one partial's bytes instead of
// one per peer. A hand-written fix-up may ignore reduce_shares (its pieces publish whole partials
// either way, so its emitter's serial sum stays correct) if it tests emit before the peers and does
// not mix with pl::unit_partials (docs/components.md, section 5.7).
struct Unit { Tile tile; unsigned k_begin, k_end, peer_begin, peer_end; bool emit; bool reduce_shares; };
extern "C" __device__ bool pl_unit_at(const Args* args, unsigned iteration, Unit* unit);
// Stream-k workspace (the runtime allocates and zeroes it once): instance `instance` of the
// component that declares [tiles] partial_bytes owns that many bytes of block `block`'s record,
// and one flag.
extern "C" __device__ unsigned char* pl_partials(const Args* args, unsigned block, unsigned instance);
extern "C" __device__ unsigned* pl_partials_flag(const Args* args, unsigned block, unsigned instance);
// reduce_shares: piece `part` of `count` (thread tid of `threads`) adds its share of the first
// `bytes` of the partials of blocks [first, first + count), float4 by float4 in block order, into
// block dst's slot. Generated by the link (it knows the record stride), so the loop reaches the
// component only at link time: written in the component, it made nvJitLink's LTO and the
// monolithic control number the main loop's registers differently (other machine code).
extern "C" __device__ void pl_partials_sum(const Args* args, unsigned instance, unsigned first, unsigned count, unsigned dst,
                                           unsigned part, unsigned bytes, unsigned tid, unsigned threads);
// Defined by a link whose contracts declare k_extent; never read. unit_at names it in an empty asm
// statement (no instruction), so PipeLink's conformance check sees which code walks units.
extern "C" __device__ unsigned pl_units_marker;
__device__ __forceinline__ bool unit_at(const Ctx& ctx, unsigned i, Unit& u) {
  asm volatile("// pl::unit_at %0" ::"l"(&pl_units_marker));
  return pl_unit_at(ctx.args, i, &u);
}
// Defined by a link whose contracts declare k_extent; never read. The partials functions below (and
// the link's pl_partials / pl_partials_flag themselves) name them in empty asm statements, so
// PipeLink's conformance check sees which code uses the workspace (only the component declaring
// [tiles] partial_bytes may) and that it waits for its peers' partials and clears their flags
// (pl::partials_wait, pl::partials_consumed: it must).
extern "C" __device__ unsigned pl_partials_marker;
extern "C" __device__ unsigned pl_partials_wait_marker;
extern "C" __device__ unsigned pl_partials_consumed_marker;
// This instance's partial slot in block `block`'s record (16-byte aligned; read another block's
// with ld.global.cg, e.g. __ldcg, after partials_wait: it was written from another SM).
template <class T> __device__ __forceinline__ T* partials(const Ctx& ctx, unsigned block) {
  asm volatile("// pl::partials %0" ::"l"(&pl_partials_marker));
  return reinterpret_cast<T*>(pl_partials(ctx.args, block, ctx.slots->instance));
}
// One thread of the instance, after all of its threads stored their part of the partial and then
// synchronised (a named barrier): makes the stores visible GPU-wide, then flags this block's slot
// (value 1: its partial is stored; 2, reduce_shares: its share of the tile's sum is stored too).
__device__ __forceinline__ void partials_publish(const Ctx& ctx, unsigned value = 1u) {
  asm volatile("// pl::partials_publish %0" ::"l"(&pl_partials_marker));
  unsigned* f = pl_partials_flag(ctx.args, blockIdx.x, ctx.slots->instance);
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(f), "r"(value) : "memory");
}

// ---- PTX wrappers ---------------------------------------------------------------------------
// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` in a tensor declared `swizzle =
// "128B"` (rows of 128 bytes; the layout TMA writes and wgmma reads with the 128-byte swizzle): the
// chunk index XORed with the row's index within its 8-row, 1024-byte atom. The linker's own
// accessors (and its generated transfers) use the same definition.
__device__ __forceinline__ unsigned sw128_offset(unsigned row, unsigned chunk) { return row * 128u + (((chunk ^ row) & 7u) << 4); }

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(unsigned addr, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(addr), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned addr) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(addr) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned addr, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(addr), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(unsigned addr, unsigned parity) {
  unsigned ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2, 1000000;\n"
      " selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(addr), "r"(parity)
      : "memory");
  return ok != 0;
}
#ifdef PL_CHECKED
}  // namespace pl
// Defined by the generated unit in a PL_CHECKED link: the pipes' names, and a flag raised by the
// first pipe wait that timed out.
extern "C" __device__ const char* const pl_pipe_names[];
extern "C" __device__ unsigned pl_abort;
// Host-mapped memory the runtime (pipelink::Module) points this at: the first timed-out wait's
// record survives even if the kernel later faults and its printf output is lost.
extern "C" __device__ unsigned long long pl_checked_report;
namespace pl {
#endif
// Waits for the phase of parity `parity` to complete. With PL_CHECKED defined, a wait gives up
// after about 2^31 cycles (~1 s): it prints the pipe, stage and phase, raises pl_abort and returns;
// every other wait then returns at once, so the kernel drains and ends (its output is invalid)
// instead of hanging the GPU, and the message reaches the host. pipe = ~0u: not a pipe.
__device__ __forceinline__ void mbar_wait(unsigned addr, unsigned parity, unsigned pipe = 0xffffffffu,
                                          unsigned stage = 0, const char* side = "") {
#ifdef PL_CHECKED
  long long start = clock64();
  while (!mbar_try_wait(addr, parity)) {
    if (*reinterpret_cast<volatile unsigned*>(&pl_abort)) return;
    if (clock64() - start > (1ll << 31)) {
      if (atomicExch(&pl_abort, 1u) == 0) {
        if (pl_checked_report) {
          volatile unsigned* r = reinterpret_cast<volatile unsigned*>(pl_checked_report);
          r[1] = pipe; r[2] = stage; r[3] = parity; r[4] = side[0] == 'e'; r[5] = blockIdx.x; r[6] = threadIdx.x;
          __threadfence_system();
          r[0] = 1;
          __threadfence_system();
        }
        printf("pipelink: pipe wait timed out: pipe '%s' %s barrier, stage %u, phase parity %u (block %d, thread %d); "
               "the kernel drains, its output is invalid\n",
               pipe == 0xffffffffu ? "?" : pl_pipe_names[pipe], side, stage, parity, blockIdx.x, threadIdx.x);
      }
      return;
    }
  }
#else
  (void)pipe; (void)stage; (void)side;
  while (!mbar_try_wait(addr, parity)) {
  }
#endif
}
// One thread: waits until block `block` published its partial for this instance (its flag at
// least `value`: 2 waits for its share of a reduce_shares tile's sum); synchronise the instance's
// threads after it, before they read the partial. With PL_CHECKED it gives up after about 2^31
// cycles like a pipe wait (pl_abort; the kernel drains, its output is invalid).
__device__ __forceinline__ void partials_wait(const Ctx& ctx, unsigned block, unsigned value = 1u) {
  asm volatile("// pl::partials_wait %0" ::"l"(&pl_partials_wait_marker));
  const unsigned* f = pl_partials_flag(ctx.args, block, ctx.slots->instance);
  unsigned v = 0;
#ifdef PL_CHECKED
  long long start = clock64();
#endif
  for (;;) {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
    if (v >= value) return;
#ifdef PL_CHECKED
    if (*reinterpret_cast<volatile unsigned*>(&pl_abort)) return;
    if (clock64() - start > (1ll << 31)) {
      if (atomicExch(&pl_abort, 1u) == 0)
        printf("pipelink: stream-k wait timed out: block %u never published %s (flag %u, waited for %u; block %d, "
               "thread %d); the kernel drains, its output is invalid\n", block,
               value >= 2u ? "its share of the tile's summed partials" : "its partial", v, value, blockIdx.x, threadIdx.x);
      return;
    }
#endif
  }
}
// One thread, after every thread of the instance read block `block`'s partial (synchronised): the
// slot's flag is cleared for the next launch (each slot is read once per launch).
__device__ __forceinline__ void partials_consumed(const Ctx& ctx, unsigned block) {
  asm volatile("// pl::partials_consumed %0" ::"l"(&pl_partials_consumed_marker));
  unsigned* f = pl_partials_flag(ctx.args, block, ctx.slots->instance);
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(f), "r"(0u) : "memory");
}
// The whole split-k end of a work unit whose result sits in registers. Every one of the Bar::threads
// threads of the instance calls it (Bar: the contract's named barrier over them, C::barrier::<name>;
// tid: the thread's index among them, 0 .. Bar::threads - 1), after the unit's last k slice with
// every wgmma group completed, with its float arrays d0, d... of N registers each. A unit that does
// not emit (u.emit false) stores them as this block's partial -- register j of array a of thread tid
// at float (a * N + j) * Bar::threads + tid, so [tiles] partial_bytes = 4 * N * arrays * Bar::threads
// -- syncs on Bar, thread 0 publishes it, and returns false: the caller emits nothing for this unit.
// The unit that emits waits for its peers (blocks [peer_begin, peer_end)), adds their partials to
// its arrays in block order (the sum is deterministic), clears their flags and returns true.
// With u.reduce_shares the Q non-emitting pieces also sum the Q partials, float4 by float4 in block
// order, piece q taking the q-th of Q equal ranges, into the emitter's slot (block peer_begin - 1),
// and publish again (flag 2); the emitter adds that one sum. The pieces work from memory only
// (pl_partials_sum, a few registers: the accumulator arrays stay live here, as operands of the next
// unit's wgmma, and code that needs more registers makes a main loop at its budget spill).
template <class Bar, unsigned N, unsigned... M>
__device__ __forceinline__ bool unit_partials(const Ctx& ctx, const Unit& u, unsigned tid, float (&d0)[N], float (&... d)[M]) {
  static_assert(((M == N) && ...), "pl::unit_partials: every array has the same length");
  // no member 'threads': the component's contracts give the barrier different thread counts
  constexpr unsigned Threads = Bar::threads;
  if (!u.emit) {
    float* p = partials<float>(ctx, blockIdx.x);
#pragma unroll
    for (unsigned j = 0; j < N; ++j) {
      unsigned a = 0;
      __stcg(p + j * Threads + tid, d0[j]);
      (__stcg(p + (++a * N + j) * Threads + tid, d[j]), ...);
    }
    Bar::sync(ctx);
    if (tid == 0) partials_publish(ctx);
    if (!u.reduce_shares) return false;
    const unsigned q_count = u.peer_end - u.peer_begin, q = blockIdx.x - u.peer_begin;
    if (tid == 0)
      for (unsigned b = u.peer_begin; b < u.peer_end; ++b)
        if (b != blockIdx.x) partials_wait(ctx, b);
    Bar::sync(ctx);
    static_assert((1u + sizeof...(M)) * N * Threads % 4u == 0u, "pl::unit_partials: a partial is whole float4s");
    pl_partials_sum(ctx.args, ctx.slots->instance, u.peer_begin, q_count, u.peer_begin - 1u, q,
                    (1u + sizeof...(M)) * N * Threads * 4u, tid, Threads);
    Bar::sync(ctx);
    if (tid == 0) partials_publish(ctx, 2u);
    return false;
  }
  if (u.peer_end > u.peer_begin) {
    if (tid == 0)
      for (unsigned b = u.peer_begin; b < u.peer_end; ++b) partials_wait(ctx, b, u.reduce_shares ? 2u : 1u);
    Bar::sync(ctx);
    // reduce_shares: the pieces left the sum of their partials in this block's own slot
    const unsigned b_first = u.reduce_shares ? blockIdx.x : u.peer_begin, b_end = u.reduce_shares ? blockIdx.x + 1u : u.peer_end;
    for (unsigned b = b_first; b < b_end; ++b) {
      const float* p = partials<const float>(ctx, b);
#pragma unroll
      for (unsigned j = 0; j < N; ++j) {
        unsigned a = 0;
        d0[j] += __ldcg(p + j * Threads + tid);
        ((d[j] += __ldcg(p + (++a * N + j) * Threads + tid)), ...);
      }
    }
    // each slot is read once per launch (cleared after the sum, outside its loop: one copy of the
    // unrolled sum, whichever blocks it reads)
    if (tid == 0)
      for (unsigned b = u.peer_begin; b < u.peer_end; ++b) partials_consumed(ctx, b);
  }
  return true;
}
__device__ __forceinline__ void named_barrier_sync(unsigned id, unsigned threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
// 2-D TMA load of box (c0, c1) = (inner, outer) coordinates into shared memory, completing on mbar.
__device__ __forceinline__ void tma_load_2d(void* dst, const TensorMap* map, unsigned mbar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
      ::"r"(smem_addr(dst)), "l"(map), "r"(mbar), "r"(c0), "r"(c1)
      : "memory");
}
// 1-D bulk copy of `bytes` contiguous global bytes (a multiple of 16, both addresses 16-byte
// aligned) into shared memory, completing on mbar: for an operand stored in global memory already
// in the stage's layout (a packed weight, e.g. examples/qwen_mlp/loader/gu_loader_packed.cu), one
// contiguous read per stage instead of a box's rows.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, unsigned bytes, unsigned mbar) {
  asm volatile("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(mbar)
               : "memory");
}
// ---- Thread-block clusters ------------------------------------------------------------------
// A link whose contracts declare [cluster] dims = [N, 1, 1] launches clusters of N consecutive
// blocks (blockIdx.x = N c + rank). The generated entry initialises every mbarrier, makes the
// initialisation visible to the cluster (fence.mbarrier_init.release.cluster) and syncs the
// cluster before any component runs, and syncs it again before the block exits (a peer may still
// copy into this block's shared memory or arrive on its mbarriers). pl::cluster_blocks() is the
// link's cluster size (1 without a cluster), folded to an immediate by nvJitLink -lto.
}  // namespace pl
extern "C" __device__ const unsigned pl_cluster_blocks;  // defined by the generated unit
namespace pl {
__device__ __forceinline__ unsigned cluster_blocks() { return pl_cluster_blocks; }
// This block's rank in its cluster (0 without a cluster).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// The shared::cluster address of `addr` (a shared::cta address of this block) in block `rank`.
__device__ __forceinline__ unsigned cluster_map(unsigned addr, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
// Arrives on the mbarrier at `addr` (this block's shared::cta address) in block `rank` of the
// cluster. Release at CTA scope (the PTX default, as CUTLASS's cluster barriers do): it signals
// that this block's reads of a stage are done, so the peer may copy into it. A cluster-scope
// release (.release.cluster) orders through L2 on every arrive: on an H200 it halved the
// throughput of the 2-block GEMM (bench/results/cluster.md, 2026-11-30).
__device__ __forceinline__ void mbar_arrive_remote(unsigned addr, unsigned rank) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_map(addr, rank)) : "memory");
}
// The whole cluster: every thread of every block arrives, then waits (the generated entry does
// this around the components; a component needs it only for its own cluster protocol).
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }
__device__ __forceinline__ void cluster_sync() { cluster_arrive(); cluster_wait(); }
// 2-D TMA load multicast: the box lands at the same shared-memory offset `dst` in every block of
// `mask` (bit r = rank r), and each copy completes its bytes on the mbarrier at offset `mbar` of
// that block. The mask comes from the link (pl::PipeWriter::multicast_mask()), never a literal.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const TensorMap* map, unsigned mbar, int c0, int c1,
                                                      unsigned mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;"
      ::"r"(smem_addr(dst)), "l"(map), "r"(mbar), "r"(c0), "r"(c1), "h"(static_cast<unsigned short>(mask))
      : "memory");
}

// Asks the L2 to fetch a box of `map` at coordinates (c0, c1) (cp.async.bulk.prefetch.tensor):
// no shared memory, no completion; a later tma_load_2d of the same box finds it in the L2.
__device__ __forceinline__ void tma_prefetch_2d(const TensorMap* map, int c0, int c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(map), "r"(c0), "r"(c1) : "memory");
}

__device__ __forceinline__ void prefetch_tmap(const TensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// Programmatic dependent launch, for a component whose contract says pdl_wait = "own": returns
// once every kernel this one depends on has completed and its writes are visible, then lets the
// next kernel be scheduled. Call it (on every thread of the component that touches global memory
// an earlier kernel writes or reads) before the first such access; what comes before may read
// only what no earlier kernel in the stream writes (weights, tensor maps, parameters). Without
// --pdl the kernel has no programmatic dependency and the wait returns at once. A component with
// pdl_wait = "own" whose code never executes it is refused (rule pdl).
__device__ __forceinline__ void pdl_wait() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

__device__ __forceinline__ unsigned Ctx::mbar(unsigned group, unsigned j) const {
  return smem_addr(smem) + slots->mbar[group] + 8 * j;
}

// ---- Pipes ----------------------------------------------------------------------------------
// Producer end. Per stage: acquire() → fill (TMA via expect_tx(), or plain stores) → commit().
// Arrival counts and transaction bytes are computed by the linker from every contract on the
// pipe, so a producer never hard-codes them.
struct PipeWriter {
  const Port* p;
  unsigned stage = 0, phase = 0, port_index;
  unsigned base;  // shared-window address of ctx.smem: Port offsets are relative to it
  __device__ __forceinline__ PipeWriter(const Ctx& ctx, unsigned port)
      : p(&ctx.slots->port[port]), port_index(port), base(smem_addr(ctx.smem)) {}
  __device__ __forceinline__ unsigned full_bar() const { return base + p->full + 8 * stage; }
  __device__ __forceinline__ unsigned empty_bar() const { return base + p->empty + 8 * stage; }
  template <class T> __device__ __forceinline__ T* tensor(const Ctx& ctx, unsigned t) const {
    return reinterpret_cast<T*>(ctx.smem + p->buffer + stage * p->stage_bytes + p->tensor[t]);
  }
  __device__ __forceinline__ void acquire() const { mbar_wait(empty_bar(), phase ^ 1u, p->pipe, stage, "empty"); }
  // One thread of a TMA producer: announce this instance's bytes and arrive once.
  __device__ __forceinline__ void expect_tx() const { mbar_arrive_expect_tx(full_bar(), p->tx_bytes); }
  // Plain-store producers: each arriving thread (per the port's `arrive` rule) calls commit().
  // The proxy fence lets consumers that read through the async proxy (TMA store, wgmma) see the
  // generic-proxy stores; every thread that stored must have passed a fence before the arrive,
  // so a producer that arrives once per warp or instance syncs (__syncwarp / named barrier)
  // after its own fence_async_shared().
  __device__ __forceinline__ void commit() const {
    fence_async_shared();
    mbar_arrive(full_bar());
  }
  __device__ __forceinline__ void advance() {
    if (++stage == p->stages) { stage = 0; phase ^= 1u; }
  }
  // A multicast pipe (the port's `multicast = N`): the blocks of this block's group (bit r =
  // rank r), this block's share among them (0..N-1) and N. Without multicast: this block alone.
  __device__ __forceinline__ unsigned multicast_blocks() const {
    return cluster_blocks() > 1 && p->mcast_blocks > 1 ? p->mcast_blocks : 1u;
  }
  __device__ __forceinline__ unsigned multicast_part() const {
    return multicast_blocks() > 1 ? cluster_rank() % p->mcast_blocks : 0u;
  }
  __device__ __forceinline__ unsigned multicast_mask() const {
    return multicast_blocks() > 1 ? p->mcast_mask << (cluster_rank() - multicast_part()) : 1u;
  }
};

// Consumer end. Per stage: wait() → read → release() → advance().
struct PipeReader {
  const Port* p;
  unsigned stage = 0, phase = 0, port_index;
  unsigned base;  // shared-window address of ctx.smem: Port offsets are relative to it
  __device__ __forceinline__ PipeReader(const Ctx& ctx, unsigned port)
      : p(&ctx.slots->port[port]), port_index(port), base(smem_addr(ctx.smem)) {}
  __device__ __forceinline__ unsigned full_bar() const { return base + p->full + 8 * stage; }
  __device__ __forceinline__ unsigned empty_bar() const { return base + p->empty + 8 * stage; }
  template <class T> __device__ __forceinline__ T* tensor(const Ctx& ctx, unsigned t) const {
    return reinterpret_cast<T*>(ctx.smem + p->buffer + stage * p->stage_bytes + p->tensor[t]);
  }
  __device__ __forceinline__ void wait() const { mbar_wait(full_bar(), phase, p->pipe, stage, "full"); }
  // Orders this thread's reads of the stage before the producer's next writes. The proxy fence
  // is what the memory model asks for when the producer refills the stage through the async
  // proxy (TMA), and on sm_90a it also keeps the arrive from overtaking ldmatrix reads still in
  // flight: without it ptxas 13.0 scheduled the arrive above the last LDSM's consumers and the
  // TMA overwrote data being read (seen on an H200, examples/gemm, 2026-11-29).
  // On a multicast pipe the stage is refilled by every block of the group, so the release
  // reaches the empty barrier of each of them (remote arrives; the count is the linker's).
  __device__ __forceinline__ void release() const {
    fence_async_shared();
    if (cluster_blocks() > 1 && p->mcast_blocks > 1) {
      const unsigned me = cluster_rank(), first = me - me % p->mcast_blocks;
      for (unsigned r = first; r < first + p->mcast_blocks; ++r) {
        if (r == me) mbar_arrive(empty_bar());
        else mbar_arrive_remote(empty_bar(), r);
      }
    } else {
      mbar_arrive(empty_bar());
    }
  }
  __device__ __forceinline__ void advance() {
    if (++stage == p->stages) { stage = 0; phase ^= 1u; }
  }
};

}  // namespace pl

// ---- Declarations: what the code compiles in, checked against the contract -----------------
// Every value a component compiles in that its contract also states is declared next to the code
// that uses it, from the same constant:
//
//   constexpr unsigned kTileN = 128;
//   PL_PROVIDE(wgmma_gu_main, tile_n, kTileN);     // [provide] tile_n, compiled in
//   PL_PROVIDE_LINKED(gu_loader_main, stages);     // [provide] stages, read with PL_FACT / from the
//                                                  // slots: any value the contract chooses works
//   PL_USE(moe_gather_main, tile_m, kTileM);       // a [use]d fact the code compiled in (optional)
//   PL_WARPS(wgmma_gu_main, 4);                    // [warps] count
//   PL_REGISTERS(wgmma_gu_main, 216);              // the fewest registers per thread the code was
//                                                  // built for: [warps] registers must be >= it
//   PL_ARRIVE(wgmma_gu_main, acc, one);            // [[port]] acc: arrive = "one"
//   PL_INSTANCES(wgmma_gu_main, 2);                // [component] instances (optional)
//   PL_ROWS(swiglu_epilogue_main, out, tile, 64);  // rows of a port tensor (optional; PL_COLS too)
//   PL_PER_TILE(swiglu_epilogue_main, out, 2);     // stages per tile (optional)
//   PL_COPIES(gu_loader_main, w_map, 2);           // TMA copies per stage through a tensormap param
//                                                  // into the tensor its contract names (optional)
//
// Each declaration is a record (pl::Record) kept in the object (__attribute__((used))), whatever
// the object's kind: NVRTC LTO-IR, an nvcc -dc host object, PTX. `pipelink link` reads the records
// through a probe link and refuses the link when one disagrees with the contract, names something
// the contract does not have, or when a required one is missing (provided facts, warps, registers,
// arrive modes). The first argument is the component's entry, so one object may hold several
// components. Records cost nothing at run time: nothing reads them.
namespace pl {
struct Record {
  char magic[8];     // "PLREC1"
  char kind[16];     // provide | provide_linked | use | warps | registers | arrive | instances | rows
                     // | cols | per_tile
  char scope[64];    // the component's entry
  char key[64];      // fact, port or port.tensor ("" for warps, registers, instances)
  long long value;
};
enum : long long { arrive_one = 0, arrive_warp = 1, arrive_thread = 2 };
// Every translation unit that includes this header records how it was built: kind "build", scope
// "*", key = the last 63 characters of its main source file's name, value 1 in a PL_CHECKED
// build. nvJitLink keeps one copy of the inline helpers every object shares (pl::mbar_wait...), so
// a link that mixes checked and unchecked objects would silently check all waits or none; the
// linker refuses the mix instead. Same layout as Record.
struct BuildRecord {
  char magic[8], kind[16], scope[64], key[64];
  long long value;
  constexpr BuildRecord(const char* file, long long checked)
      : magic{'P', 'L', 'R', 'E', 'C', '1'}, kind{'b', 'u', 'i', 'l', 'd'}, scope{'*'}, key{}, value(checked) {
    unsigned n = 0;
    while (file[n]) ++n;
    const unsigned start = n > 63 ? n - 63 : 0;
    for (unsigned i = start; i < n; ++i) key[i - start] = file[i];
  }
};
// And the binding-table capacities it was compiled against (pipelink/limits.h), which fix the
// layouts of pl::Slots and pl::Args: kind "abi", scope "*", key = the main source file's name,
// value = abi_limits(). The linker refuses an object whose value differs from its own, or that has
// a "build" record but no "abi" one (compiled against an older device.cuh): its components would
// read their slots at the wrong offsets.
constexpr long long abi_limits() {
  return static_cast<long long>(kMaxSmem) | static_cast<long long>(kMaxBarriers) << 8 | static_cast<long long>(kMaxMbarriers) << 16 |
         static_cast<long long>(kMaxPorts) << 24 | static_cast<long long>(kMaxTensors) << 32 |
         static_cast<long long>(kMaxParams) << 40 | static_cast<long long>(kArgTensorMaps) << 48 |
         static_cast<long long>(kArgWords) << 56;
}
struct AbiRecord {
  char magic[8], kind[16], scope[64], key[64];
  long long value;
  constexpr AbiRecord(const char* file)
      : magic{'P', 'L', 'R', 'E', 'C', '1'}, kind{'a', 'b', 'i'}, scope{'*'}, key{}, value(abi_limits()) {
    unsigned n = 0;
    while (file[n]) ++n;
    const unsigned start = n > 63 ? n - 63 : 0;
    for (unsigned i = start; i < n; ++i) key[i - start] = file[i];
  }
};
}  // namespace pl
static __device__ __attribute__((used)) const ::pl::AbiRecord pl_record_abi(__BASE_FILE__);
#ifdef PL_CHECKED
static __device__ __attribute__((used)) const ::pl::BuildRecord pl_record_build(__BASE_FILE__, 1);
#else
static __device__ __attribute__((used)) const ::pl::BuildRecord pl_record_build(__BASE_FILE__, 0);
#endif
// One record per (kind, entry, key): the variable's name is built from them, so declaring the
// same thing twice in one source is a compile error.
#define PL_RECORD_(var, kind, entry, key, value) \
  static __device__ __attribute__((used)) const ::pl::Record var = {"PLREC1", kind, #entry, key, static_cast<long long>(value)}
#define PL_PROVIDE(entry, fact, value) PL_RECORD_(pl_record_provide_##entry##_##fact, "provide", entry, #fact, value)
#define PL_PROVIDE_LINKED(entry, fact) PL_RECORD_(pl_record_provide_##entry##_##fact, "provide_linked", entry, #fact, 0)
#define PL_USE(entry, fact, value) PL_RECORD_(pl_record_use_##entry##_##fact, "use", entry, #fact, value)
#define PL_WARPS(entry, count) PL_RECORD_(pl_record_warps_##entry, "warps", entry, "", count)
#define PL_REGISTERS(entry, count) PL_RECORD_(pl_record_registers_##entry, "registers", entry, "", count)
#define PL_INSTANCES(entry, count) PL_RECORD_(pl_record_instances_##entry, "instances", entry, "", count)
#define PL_ARRIVE(entry, port, mode) PL_RECORD_(pl_record_arrive_##entry##_##port, "arrive", entry, #port, ::pl::arrive_##mode)
#define PL_ROWS(entry, port, tensor, rows) \
  PL_RECORD_(pl_record_rows_##entry##_##port##_##tensor, "rows", entry, #port "." #tensor, rows)
#define PL_COLS(entry, port, tensor, cols) \
  PL_RECORD_(pl_record_cols_##entry##_##port##_##tensor, "cols", entry, #port "." #tensor, cols)
#define PL_PER_TILE(entry, port, stages) PL_RECORD_(pl_record_per_tile_##entry##_##port, "per_tile", entry, #port, stages)
// The swizzle the code compiled in for a tensor (wgmma descriptors, sw128_offset, its own XOR),
// as the span in bytes: 0 (none), 32, 64 or 128. Checked against the tensor's `swizzle`.
#define PL_SWIZZLE(entry, port, tensor, bytes) \
  PL_RECORD_(pl_record_swizzle_##entry##_##port##_##tensor, "swizzle", entry, #port "." #tensor, bytes)
// The bytes one instance writes through pl::partials (a component that declares [tiles]
// partial_bytes must declare this, from the constants its code uses).
#define PL_PARTIAL_BYTES(entry, bytes) PL_RECORD_(pl_record_partial_bytes_##entry, "partial_bytes", entry, "", bytes)
// The copies one instance issues per stage through a tensormap param into the tensor its contract
// names (each moves the box the link resolved from the contract's tensor and box). Per tensor, the
// rows the records move (count x box rows, summed over the params naming it) must be the
// component's share of it, so code that copies a slice in two halves cannot link under a contract
// whose box is the whole slice, or the other way round (docs/components.md, the records table).
#define PL_COPIES(entry, param, count) PL_RECORD_(pl_record_copies_##entry##_##param, "copies", entry, #param, count)

// Facts are link-wide: one symbol per fact, defined (with external linkage) by the generated unit.
#define PL_FACT_DECL(type, name) extern "C" __device__ const type pl_fact_##name
#define PL_FACT(name) (pl_fact_##name)
// A component's entry point.
#define PL_COMPONENT(entry) extern "C" __device__ void entry(const pl::Ctx& ctx)
