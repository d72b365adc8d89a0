// tma_store — io-team. Writes finished tiles from shared memory to global memory with TMA.
//
// Consumer of the "out" pipe, whatever its producer's tile shape: the stage shape (rows x cols,
// one tensor) comes from the port binding. A tile_m-row tile arrives as tile_m / rows stages;
// stage s of tile t goes to global rows t.m * tile_m + s * rows, columns t.n * cols. One thread
// issues each store, waits until the copy has read shared memory, then releases the stage.
//
// Assumes: out_map is a 2-D tensor map over the output [rows, cols] whose box equals the stage
// shape, no swizzle. Rows past the end of the output are clipped by TMA.
// With -DTMA_STORE_PANELS=1 (contract_sw.toml, header tma_store_sw.contract.h) a stage is four
// 64-column panels in the 128-byte swizzle (a main loop's bank-conflict-free accumulator stage):
// four stores per stage, panel k to columns t.n * 4 * 64 + 64 k; out_map's box is [rows x 64]
// with the 128B swizzle.
// With -DTMA_STORE_PANELS=2 (contract_pp.toml, header tma_store_sw2.contract.h) a stage is two such
// panels (the ping-pong main loop's 128 x 128 tile): panel k to columns t.n * 2 * 64 + 64 k.
#ifndef TMA_STORE_PANELS
#define TMA_STORE_PANELS 0
#endif
#if TMA_STORE_PANELS == 2
#include "tma_store_sw2.contract.h"  // pipelink header contract_pp.toml
#elif TMA_STORE_PANELS
#include "tma_store_sw.contract.h"  // pipelink header contract_sw.toml
#else
#include "tma_store.contract.h"  // pipelink header contract.toml: names, pipe operations, records
#endif

PL_FACT_DECL(unsigned, tile_m);
#if TMA_STORE_PANELS
// The panels this build stores (four 64-column boxes, or two with TMA_STORE_PANELS=2): without these
// records the object also links under contract.toml (same warps, arrive mode and registers) and
// stores part of each stage.
PL_COLS(tma_store_main, out, p0, 64);
PL_COLS(tma_store_main, out, p1, 64);
#if TMA_STORE_PANELS != 2
PL_COLS(tma_store_main, out, p2, 64);
PL_COLS(tma_store_main, out, p3, 64);
#endif
#endif

namespace tma_store {
__device__ __forceinline__ void store_2d(const pl::TensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
               ::"l"(map), "r"(pl::smem_addr(src)), "r"(c0), "r"(c1) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
__device__ __forceinline__ void wait_reads() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
__device__ __forceinline__ void wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
}  // namespace tma_store

PL_COMPONENT(tma_store_main) {
  using namespace tma_store;
  namespace C = pl_contract::tma_store_main;
  if ((threadIdx.x & 31u) != 0) return;
  const pl::TensorMap* map = C::param::out_map::get(ctx);
  pl::prefetch_tmap(map);
  C::In_out r(ctx);
#if TMA_STORE_PANELS
  constexpr unsigned kPanels = TMA_STORE_PANELS == 2 ? 2u : 4u;
  const unsigned rows = r.rows(C::In_out::tensor::p0::index), cols = kPanels * r.cols(C::In_out::tensor::p0::index);
#else
  const unsigned rows = r.rows(C::In_out::tensor::tile::index), cols = r.cols(C::In_out::tensor::tile::index);
#endif
  const unsigned per_tile = PL_FACT(tile_m) / rows;
  pl::Tile t;
  for (unsigned i = 0; pl::tile_at(ctx, i, t); ++i) {
    for (unsigned s = 0; s < per_tile; ++s) {
      r.wait();
#if TMA_STORE_PANELS
      const int row = static_cast<int>(t.m * PL_FACT(tile_m) + s * rows);
      store_2d(map, r.p0<unsigned char>(ctx), static_cast<int>(t.n * cols), row);
      store_2d(map, r.p1<unsigned char>(ctx), static_cast<int>(t.n * cols + cols / kPanels), row);
#if TMA_STORE_PANELS != 2
      store_2d(map, r.p2<unsigned char>(ctx), static_cast<int>(t.n * cols + cols / 2), row);
      store_2d(map, r.p3<unsigned char>(ctx), static_cast<int>(t.n * cols + 3 * cols / 4), row);
#endif
#else
      store_2d(map, r.tile<unsigned char>(ctx), static_cast<int>(t.n * cols), static_cast<int>(t.m * PL_FACT(tile_m) + s * rows));
#endif
      wait_reads();  // the stage may be refilled once TMA has read it
      r.release_elected();  // arrive = "one": this is the instance's only working thread
      r.advance();
    }
  }
  wait_all();  // the writes are complete before the kernel ends
}
