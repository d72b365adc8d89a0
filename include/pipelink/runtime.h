// pipelink/runtime.h — loads a linked cubin through the CUDA driver API and launches it.
//
//   pipelink::Module m;
//   if (auto s = m.load("gemm.cubin", "gemm.map"); !s) { ...s.message... }
//   m.set_tensormap("a_map", map_a); m.set_ptr("C", dC); m.set_u32("M", M); m.set_f32("alpha", 1.f); ...
//   if (auto s = m.launch(grid, stream); !s) ...
//
// The map's `launch` and `param` lines give the kernel name, block size, dynamic shared memory
// and each parameter's slot, so the host fills arguments by name. Every driver call is checked;
// failures come back as a Status, never an abort. A current CUDA context is expected.
#pragma once

#include <cuda.h>

#include "pipelink/limits.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>
#include <string>

namespace pipelink {

struct Status {
  bool ok = true;
  std::string message;
  explicit operator bool() const { return ok; }
  static Status error(std::string m) { return Status{false, std::move(m)}; }
};

// Host mirror of pl::Args (include/pipelink/device.cuh), sized from the same limits.h.
struct alignas(64) HostArgs {
  CUtensorMap tmap[pl::kArgTensorMaps];
  unsigned long long word[pl::kArgWords];
};
static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is 128 bytes");
static_assert(sizeof(HostArgs) == 768 && offsetof(HostArgs, word) == 512, "HostArgs must match pl::Args");

class Module {
 public:
  Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  Status load(const std::string& cubin_path, const std::string& map_path);

  // Each setter takes only a parameter of its own type (the map's `param` line): set_u32 on an
  // i32 or ptr parameter is an error, not a silent reinterpretation.
  Status set_ptr(const std::string& name, CUdeviceptr p);
  Status set_u32(const std::string& name, unsigned v);
  Status set_i32(const std::string& name, int v);            // the word holds v sign-extended
  Status set_u64(const std::string& name, unsigned long long v);
  Status set_f32(const std::string& name, float v);          // the word's low 32 bits hold v's bits
  // A map the host built itself: its box and swizzle are not checked (a CUtensorMap is opaque);
  // where the link knows them (tensor_box), set_tensor builds the map instead.
  Status set_tensormap(const std::string& name, const CUtensorMap& m);
  // What one TMA copy of a tensormap param moves, where its contract names the tensor
  // ([[param]] tensor / box; the map's `box` words): false for a param without one.
  struct TensorBox { unsigned rows = 0, cols = 0; std::string dtype, swizzle; };
  bool tensor_box(const std::string& name, TensorBox& out) const;
  // Builds the param's map over a row-major matrix [rows, cols] at `base` (rows row_stride_bytes
  // apart; 0: cols * element size) with the link's box, element type and swizzle, and sets it:
  // the host cannot hand the kernel a box the component does not copy. An error for a param
  // whose contract names no tensor (build that map yourself: set_tensormap).
  Status set_tensor(const std::string& name, CUdeviceptr base, uint64_t rows, uint64_t cols, uint64_t row_stride_bytes = 0,
                    CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  // Launches `grid` blocks of threads() threads with smem_bytes() of dynamic shared memory. A
  // cluster link (the manifest's `cluster` line) launches through cuLaunchKernelEx with the
  // cluster dimension; its grid must then be a multiple of cluster_blocks().
  // A PDL link (the manifest's `pdl` line, `pipelink link --pdl`) launches through
  // cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, so it may start
  // before the previous kernel on the stream ends; its entry waits (griddepcontrol.wait) before
  // any component touches memory. A link without it is launched as before.
  Status launch(unsigned grid, CUstream stream = nullptr);
  // A split-schedule link (the manifest's `workspace` line, `--tile-schedule split-k | stream-k`):
  // the first launch allocates the partials' workspace (workspace_stride() bytes for every block
  // that can be resident, zeroed once, kept: its address never changes) and every launch refuses
  // a grid larger than the blocks resident at once (its blocks wait for each other).
  // reserve_workspace does that allocation ahead, e.g. before a CUDA graph capture, which cannot
  // allocate. Launches of one Module share the workspace: do not run two at once (two streams).
  Status reserve_workspace(unsigned grid, CUstream stream = nullptr);
  size_t workspace_stride() const { return workspace_stride_; }
  // Whether the cubin was linked with --pdl (from the verified manifest).
  bool pdl() const { return pdl_; }
  // How many blocks the link was allocated to fit on one SM (--blocks-per-sm; 1 without); load()
  // checked that the driver fits them.
  int blocks_per_sm() const { return blocks_per_sm_; }
  // Blocks per cluster (1: the link has no cluster), from the verified manifest.
  unsigned cluster_blocks() const { return cluster_[0] * cluster_[1] * cluster_[2]; }
  // How many clusters of this kernel can be resident at once (cuOccupancyMaxActiveClusters; for a
  // link without a cluster, blocks): a persistent grid is this times cluster_blocks().
  Status max_active_clusters(int& clusters, CUstream stream = nullptr) const;

  // The tiles of one launch with the parameters set now: ceil(M / tile_m) * ceil(N / tile_n) for
  // the link's [tiles] extents M, N (the manifest's `tiles` line). An error for a link without a
  // tile sequence, an extent read from device memory (device_extent) or an extent not yet set.
  Status tile_count(unsigned long long& tiles) const;
  // The grid for a launch with the parameters set now (the rule: pipelink/grid.h). With R the
  // blocks the link was allocated to keep on the SMs (min(occupancy, --blocks-per-sm) x SMs): a
  // data-parallel link gets ceil(T / ceil(T / R)), the fewest blocks that take as many rounds of
  // tiles as R would, each block the same number or one fewer; a link of several blocks per SM
  // min(T, R); a split schedule (stream-k, split-k) the blocks resident at once; a link whose
  // extent is read from device memory R (the host cannot count; any grid walks every tile); a
  // cluster link the resident clusters times their size. Errors: no tile sequence (each block is
  // then one piece of work: launch what the problem needs), nothing fits, an extent not set.
  // Every generated tile walk is persistent, but a component that handles only its block's first
  // tile (pl::tile_at(ctx, 0, t) and no loop) needs a grid of T: this call cannot see that.
  Status persistent_grid(unsigned& grid, CUstream stream = nullptr) const;

  // A resolved fact from the map (e.g. a tile size the host needs for a tensor map's box).
  bool fact(const std::string& name, long long& value) const;

  // In a PL_CHECKED link: the first pipe wait that timed out ("pipe wait timed out: pipe 'ab'
  // full barrier, stage 1, phase parity 0 (block 3, thread 0)"), or "" if none did. Readable
  // even after the kernel faulted and the context is lost (the record is in host memory).
  std::string checked_report() const;

  unsigned threads() const { return threads_; }
  unsigned smem_bytes() const { return smem_; }
  const std::string& kernel_name() const { return kernel_; }
  CUfunction function() const { return fn_; }
  // The loaded cubin, for kernels a component ships beside its entry (e.g. gu_loader_packed's
  // gu_pack_w, which packs a weight in the layout that link's loader reads).
  CUmodule module() const { return mod_; }
  // Every parameter of the map by name, with its type: ptr, u32, i32, u64, f32 or tensormap.
  std::map<std::string, std::string> param_types() const;
  // Every resolved fact of the map.
  const std::map<std::string, long long>& facts() const { return facts_; }

 private:
  struct Param { std::string type; unsigned slot; bool set = false; bool has_box = false; TensorBox box; };
  Status slot(const std::string& name, const char* want, Param*& out);
  Status set_word(const std::string& name, const char* want, unsigned long long word);

  CUmodule mod_ = nullptr;
  CUfunction fn_ = nullptr;
  std::string kernel_;
  unsigned threads_ = 0, smem_ = 0;
  unsigned cluster_[3] = {1, 1, 1};
  bool nonportable_ = false;
  bool pdl_ = false;
  int blocks_per_sm_ = 1;
  std::map<std::string, Param> params_;
  std::map<std::string, long long> facts_;
  std::vector<std::string> pipes_;      // pipe names in link order (the map's pipes section)
  volatile unsigned* report_ = nullptr; // host-mapped PL_CHECKED record, if the kernel has one
  CUdeviceptr abort_ = 0;                // PL_CHECKED drain flag, cleared before each launch
  HostArgs args_{};
  size_t workspace_stride_ = 0;          // stream-k: bytes per block (0: no workspace)
  unsigned workspace_slot_ = 0;          // the Args word holding its address
  unsigned resident_blocks_ = 0;         // blocks resident at once (occupancy x SMs)
  unsigned grid_blocks_ = 0;             // min(occupancy, --blocks-per-sm) x SMs: persistent_grid's R
  bool has_tiles_ = false;               // the manifest's `tiles` line: tile size and extent params
  unsigned long long tile_m_ = 0, tile_n_ = 0;
  std::string extent_m_, extent_n_;
  CUdeviceptr workspace_ = 0;
  size_t workspace_bytes_ = 0;
};

// The 2-D tensor map a TMA component reads: a row-major bf16 matrix [rows, cols] in global memory,
// copied in boxes of box_rows x box_cols, with the shared-memory swizzle the component's contract
// declares (CU_TENSOR_MAP_SWIZZLE_128B for swizzle = "128B"). Rows past `rows` read as zeros.
Status bf16_tensor_map(CUtensorMap& out, CUdeviceptr base, uint64_t rows, uint64_t cols, unsigned box_rows, unsigned box_cols,
                       CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE,
                       CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B);

// The same for a matrix whose rows are row_stride_bytes apart (a multiple of 16; cols * 2 when
// the rows are packed), e.g. a column slice of a wider matrix.
Status bf16_tensor_map_strided(CUtensorMap& out, CUdeviceptr base, uint64_t rows, uint64_t cols, uint64_t row_stride_bytes,
                               unsigned box_rows, unsigned box_cols, CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE,
                               CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B);

// "cuXxx failed: CUDA_ERROR_... (description)"
std::string cu_error(CUresult r, const char* what);

}  // namespace pipelink
