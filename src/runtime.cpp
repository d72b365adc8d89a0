// runtime — loads a linked cubin and its map, fills pl::Args by parameter name, launches.
// Does not: link or check anything (the linker did), or own the CUDA context.
#include "pipelink/runtime.h"
#include "pipelink/grid.h"

#include "pipelink/pipelink.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace pipelink {

std::string cu_error(CUresult r, const char* what) {
  const char* name = nullptr;
  const char* desc = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &desc);
  return std::string(what) + " failed: " + (name ? name : "?") + " (" + (desc ? desc : "?") + ")";
}

Status bf16_tensor_map(CUtensorMap& out, CUdeviceptr base, uint64_t rows, uint64_t cols, unsigned box_rows, unsigned box_cols,
                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion) {
  return bf16_tensor_map_strided(out, base, rows, cols, cols * 2, box_rows, box_cols, swizzle, promotion);  // packed rows
}

namespace {
// A 2-D tiled map over a row-major matrix [rows, cols] (rows row_stride_bytes apart), boxes of
// box_rows x box_cols: what bf16_tensor_map_strided and Module::set_tensor encode.
CUresult encode_2d(CUtensorMap& out, CUtensorMapDataType type, CUdeviceptr base, uint64_t rows, uint64_t cols, uint64_t row_stride_bytes,
                   unsigned box_rows, unsigned box_cols, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion) {
  cuuint64_t dims[2] = {cols, rows};
  cuuint64_t strides[1] = {row_stride_bytes};
  cuuint32_t box[2] = {box_cols, box_rows};
  cuuint32_t elem_strides[2] = {1, 1};
  return cuTensorMapEncodeTiled(&out, type, 2, reinterpret_cast<void*>(base), dims, strides, box, elem_strides,
                                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}
}  // namespace

Status bf16_tensor_map_strided(CUtensorMap& out, CUdeviceptr base, uint64_t rows, uint64_t cols, uint64_t row_stride_bytes,
                               unsigned box_rows, unsigned box_cols, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion) {
  if (CUresult r = encode_2d(out, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, base, rows, cols, row_stride_bytes, box_rows, box_cols, swizzle,
                             promotion);
      r != CUDA_SUCCESS)
    return Status::error(cu_error(r, "cuTensorMapEncodeTiled") + " (" + std::to_string(rows) + "x" + std::to_string(cols) +
                         ", row stride " + std::to_string(row_stride_bytes) + " bytes, box " + std::to_string(box_rows) + "x" +
                         std::to_string(box_cols) + ")");
  return {};
}

std::map<std::string, std::string> Module::param_types() const {
  std::map<std::string, std::string> m;
  for (const auto& [name, p] : params_) m[name] = p.type;
  return m;
}

Module::~Module() {
  if (mod_) cuModuleUnload(mod_);
  if (report_) cuMemFreeHost(const_cast<unsigned*>(report_));
  if (workspace_) cuMemFree(workspace_);
}

std::string Module::checked_report() const {
  if (!report_ || report_[0] == 0) return {};
  const unsigned pipe = report_[1];
  const std::string name = pipe < pipes_.size() ? pipes_[pipe] : "?";
  return "pipe wait timed out: pipe '" + name + "' " + (report_[4] ? "empty" : "full") + " barrier, stage " +
         std::to_string(report_[2]) + ", phase parity " + std::to_string(report_[3]) + " (block " + std::to_string(report_[5]) +
         ", thread " + std::to_string(report_[6]) + ")";
}

Status Module::load(const std::string& cubin_path, const std::string& map_path) {
  // A Module loaded again starts from nothing: a failure below leaves it unloaded, never half the
  // old link and half the new.
  if (mod_) cuModuleUnload(mod_);
  mod_ = nullptr;
  fn_ = nullptr;
  kernel_.clear();
  threads_ = smem_ = 0;
  resident_blocks_ = 0;
  grid_blocks_ = 0;
  params_.clear();
  facts_.clear();
  pipes_.clear();
  abort_ = 0;  // the old module's pl_abort: gone with it
  if (report_) cuMemFreeHost(const_cast<unsigned*>(report_));
  report_ = nullptr;
  if (workspace_) cuMemFree(workspace_);
  workspace_ = 0;
  workspace_bytes_ = 0;
  workspace_stride_ = 0;
  has_tiles_ = false;
  std::ifstream mf(map_path);
  if (!mf) return Status::error("cannot open map '" + map_path + "'");
  bool in_facts = false, in_pipes = false;
  std::string manifest;  // the map's manifest hash
  for (std::string line; std::getline(mf, line);) {
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "==" && line.rfind("==", 0) == 0) {
      std::string section;
      ls >> section;
      in_facts = section == "facts";
      in_pipes = section == "pipes";
    } else if (in_pipes && line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ') {
      pipes_.push_back(word.substr(0, word.size() - 1));  // "  ab: 3 stages ..."
    } else if (in_facts && !word.empty()) {
      std::string eq;
      long long v = 0;
      if (ls >> eq >> v && eq == "=") facts_[word] = v;
    } else if (word == "manifest" && line.rfind(word, 0) == 0) {  // at column 0 only: never a name inside a line
      ls >> manifest;
    } else if (word == "launch" && line.rfind(word, 0) == 0) {
      std::string t, s;
      ls >> kernel_ >> t >> threads_ >> s >> smem_;
    } else if (word == "param" && line.rfind(word, 0) == 0) {
      std::string name;
      Param p;
      ls >> name >> p.type >> p.slot;
      params_[name] = p;
    }
  }
  if (kernel_.empty() || threads_ == 0) return Status::error("map '" + map_path + "' has no 'launch' line");
  std::ifstream cf(cubin_path, std::ios::binary);
  if (!cf) return Status::error("cannot open cubin '" + cubin_path + "'");
  std::vector<char> image((std::istreambuf_iterator<char>(cf)), std::istreambuf_iterator<char>());
  if (CUresult r = cuModuleLoadData(&mod_, image.data()); r != CUDA_SUCCESS) return Status::error(cu_error(r, "cuModuleLoadData"));
  // The cubin's launch manifest must be the one the map was written with: a cubin from another
  // link (another map's slots, shared memory or block size) is refused here, not at launch.
  if (manifest.empty()) return Status::error("map '" + map_path + "' has no 'manifest' line: relink with this PipeLink");
  CUdeviceptr man_sym = 0;
  size_t man_size = 0;
  if (CUresult r = cuModuleGetGlobal(&man_sym, &man_size, mod_, "pl_manifest"); r != CUDA_SUCCESS)
    return Status::error("cubin '" + cubin_path + "' carries no PipeLink launch manifest (" + cu_error(r, "cuModuleGetGlobal(pl_manifest)") +
                         "): it was not linked by this PipeLink");
  std::string text(man_size, '\0');
  if (CUresult r = cuMemcpyDtoH(text.data(), man_sym, man_size); r != CUDA_SUCCESS)
    return Status::error(cu_error(r, "read pl_manifest"));
  while (!text.empty() && text.back() == '\0') text.pop_back();
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", manifest_hash(text));
  if (manifest != hash)
    return Status::error("cubin '" + cubin_path + "' and map '" + map_path + "' come from different links (manifest " + hash +
                         " in the cubin, " + manifest + " in the map): use the map written with the cubin");
  // The verified manifest, not the map's text, says how to launch: kernel, block, shared memory,
  // parameter slots and facts. (The map only adds the pipes' names.)
  {
    std::istringstream ms(text);
    params_.clear();
    facts_.clear();
    cluster_[0] = cluster_[1] = cluster_[2] = 1;
    nonportable_ = false;
    pdl_ = false;
    blocks_per_sm_ = 1;
    workspace_stride_ = 0;
    workspace_slot_ = 0;
    if (workspace_) cuMemFree(workspace_);  // a Module loaded again: the new link's layout
    workspace_ = 0;
    workspace_bytes_ = 0;
    has_tiles_ = false;
    tile_m_ = tile_n_ = 0;
    extent_m_.clear();
    extent_n_.clear();
    for (std::string line; std::getline(ms, line);) {
      std::istringstream ls(line);
      std::string word;
      ls >> word;
      if (word == "launch") {
        std::string t, sm;
        ls >> kernel_ >> t >> threads_ >> sm >> smem_;
      } else if (word == "param") {
        std::string name, box;
        Param p;
        ls >> name >> p.type >> p.slot;
        if (ls >> box) {  // `box <rows> <cols> <dtype> <swizzle>`
          if (box != "box" || !(ls >> p.box.rows >> p.box.cols >> p.box.dtype >> p.box.swizzle) || p.type != "tensormap")
            return Status::error("cubin '" + cubin_path + "': malformed param line for '" + name + "' in the launch manifest");
          p.has_box = true;
        }
        params_[name] = p;
      } else if (word == "cluster") {
        std::string np;
        if (!(ls >> cluster_[0] >> cluster_[1] >> cluster_[2]) || !cluster_[0] || !cluster_[1] || !cluster_[2])
          return Status::error("cubin '" + cubin_path + "': malformed cluster line in the launch manifest");
        nonportable_ = (ls >> np) && np == "nonportable";
      } else if (word == "pdl") {
        int v = 0;
        if (!(ls >> v) || (v != 0 && v != 1))
          return Status::error("cubin '" + cubin_path + "': malformed pdl line in the launch manifest");
        pdl_ = v == 1;
      } else if (word == "workspace") {
        if (!(ls >> workspace_stride_ >> workspace_slot_) || workspace_stride_ == 0 || workspace_slot_ >= pl::kArgWords)
          return Status::error("cubin '" + cubin_path + "': malformed workspace line in the launch manifest");
      } else if (word == "blocks_per_sm") {
        if (!(ls >> blocks_per_sm_) || blocks_per_sm_ < 1)
          return Status::error("cubin '" + cubin_path + "': malformed blocks_per_sm line in the launch manifest");
      } else if (word == "fact") {
        std::string name;
        long long v = 0;
        if (ls >> name >> v) facts_[name] = v;
      } else if (word == "tiles") {
        if (!(ls >> tile_m_ >> tile_n_ >> extent_m_ >> extent_n_) || !tile_m_ || !tile_n_)
          return Status::error("cubin '" + cubin_path + "': malformed tiles line in the launch manifest");
        has_tiles_ = true;
      }
    }
  }
  if (CUresult r = cuModuleGetFunction(&fn_, mod_, kernel_.c_str()); r != CUDA_SUCCESS)
    return Status::error(cu_error(r, ("cuModuleGetFunction(" + kernel_ + ")").c_str()));
  const bool checked = text.find("\nchecked 1\n") != std::string::npos;
  // A checked kernel reports its first timed-out pipe wait into host-mapped memory. Only a
  // checked kernel has these symbols; others are not asked for them (no failing driver call).
  size_t abort_size = 0;
  if (checked && cuModuleGetGlobal(&abort_, &abort_size, mod_, "pl_abort") != CUDA_SUCCESS) abort_ = 0;
  CUdeviceptr report_sym = 0;
  size_t report_size = 0;
  if (checked && cuModuleGetGlobal(&report_sym, &report_size, mod_, "pl_checked_report") == CUDA_SUCCESS && report_size == 8) {
    void* host = nullptr;
    if (CUresult r = cuMemHostAlloc(&host, 64, CU_MEMHOSTALLOC_DEVICEMAP); r != CUDA_SUCCESS)
      return Status::error(cu_error(r, "cuMemHostAlloc(checked report)"));
    std::memset(host, 0, 64);
    report_ = static_cast<volatile unsigned*>(host);
    CUdeviceptr dev = 0;
    if (CUresult r = cuMemHostGetDevicePointer(&dev, host, 0); r != CUDA_SUCCESS)
      return Status::error(cu_error(r, "cuMemHostGetDevicePointer(checked report)"));
    unsigned long long v = dev;
    if (CUresult r = cuMemcpyHtoD(report_sym, &v, 8); r != CUDA_SUCCESS) return Status::error(cu_error(r, "set pl_checked_report"));
  }
  if (CUresult r = cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(smem_));
      r != CUDA_SUCCESS)
    return Status::error(cu_error(r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)"));
  if (blocks_per_sm_ > 1) {
    // The link was allocated so that blocks_per_sm blocks share an SM (--blocks-per-sm): ask for the
    // largest shared-memory carveout (the occupancy below checks that the driver does fit them).
    if (CUresult r = cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, CU_SHAREDMEM_CARVEOUT_MAX_SHARED);
        r != CUDA_SUCCESS)
      return Status::error(cu_error(r, "cuFuncSetAttribute(PREFERRED_SHARED_MEMORY_CARVEOUT)"));
  }
  if (nonportable_) {
    if (CUresult r = cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1); r != CUDA_SUCCESS)
      return Status::error(cu_error(r, "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)"));
  }
  {
    // Blocks resident at once: a split schedule's blocks wait for each other (the whole grid must
    // be resident), and persistent_grid sizes every link's grid by it.
    CUdevice dev = 0;
    int fit = 0, sms = 0;
    if (CUresult r = cuCtxGetDevice(&dev); r != CUDA_SUCCESS) return Status::error(cu_error(r, "cuCtxGetDevice"));
    if (CUresult r = cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev); r != CUDA_SUCCESS)
      return Status::error(cu_error(r, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)"));
    if (CUresult r = cuOccupancyMaxActiveBlocksPerMultiprocessor(&fit, fn_, static_cast<int>(threads_), smem_); r != CUDA_SUCCESS)
      return Status::error(cu_error(r, "cuOccupancyMaxActiveBlocksPerMultiprocessor"));
    if (blocks_per_sm_ > 1 && fit < blocks_per_sm_)
      return Status::error("cubin '" + cubin_path + "' was linked for " + std::to_string(blocks_per_sm_) +
                           " blocks per SM (--blocks-per-sm), but the driver fits " + std::to_string(fit) + " of its blocks (" +
                           std::to_string(threads_) + " threads, " + std::to_string(smem_) + " bytes of shared memory) on one SM");
    resident_blocks_ = static_cast<unsigned>(fit) * static_cast<unsigned>(sms);
    // The blocks persistent_grid spreads the tiles over: as many per SM as the link was allocated
    // for (--blocks-per-sm), even where the driver would fit more of a small block.
    grid_blocks_ = static_cast<unsigned>(fit < blocks_per_sm_ ? fit : blocks_per_sm_) * static_cast<unsigned>(sms);
  }
  return {};
}

Status Module::reserve_workspace(unsigned grid, CUstream stream) {
  if (!workspace_stride_) return {};
  if (grid > resident_blocks_)
    return Status::error("reserve_workspace: a split-schedule link's blocks wait for each other's partials, so the grid must be "
                         "resident at once: " + std::to_string(grid) + " blocks, but " + std::to_string(resident_blocks_) +
                         " fit on this GPU");
  if (workspace_) return {};
  // Allocated once for every block that can be resident (no later launch can exceed it, so the
  // address never changes under a captured graph), zeroed before any launch uses it.
  CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
  if (CUresult r = cuStreamIsCapturing(stream, &capturing); r != CUDA_SUCCESS)
    return Status::error(cu_error(r, "cuStreamIsCapturing"));
  if (capturing != CU_STREAM_CAPTURE_STATUS_NONE)
    return Status::error("launch: this split-schedule kernel's partials workspace cannot be allocated while the stream is being "
                         "captured: launch it (or call reserve_workspace) once before the capture");
  const size_t need = static_cast<size_t>(resident_blocks_) * workspace_stride_;
  CUdeviceptr p = 0;
  if (CUresult r = cuMemAlloc(&p, need); r != CUDA_SUCCESS) return Status::error(cu_error(r, "cuMemAlloc(split-schedule workspace)"));
  // Zeroed once, synchronously (every flag clear before any stream's launch); each launch then
  // clears the flags it consumes.
  if (CUresult r = cuMemsetD8(p, 0, need); r != CUDA_SUCCESS) {
    cuMemFree(p);
    return Status::error(cu_error(r, "cuMemsetD8(split-schedule workspace)"));
  }
  if (CUresult r = cuCtxSynchronize(); r != CUDA_SUCCESS) {
    cuMemFree(p);
    return Status::error(cu_error(r, "cuCtxSynchronize(split-schedule workspace)"));
  }
  workspace_ = p;
  workspace_bytes_ = need;
  args_.word[workspace_slot_] = workspace_;
  return {};
}

Status Module::tile_count(unsigned long long& tiles) const {
  if (!fn_) return Status::error("tile_count before load");
  if (!has_tiles_)
    return Status::error("tile_count: this link has no tile sequence (no component declares [tiles]), or its cubin was linked "
                         "before the launch manifest carried one: relink");
  unsigned long long ext[2] = {0, 0};
  const std::string* names[2] = {&extent_m_, &extent_n_};
  for (int i = 0; i < 2; ++i) {
    auto it = params_.find(*names[i]);
    if (it == params_.end() || it->second.type != "u32")
      return Status::error("tile_count: the extent '" + *names[i] + "' is " +
                           (it == params_.end() ? std::string("not a parameter") : "read from device memory (device_extent)") +
                           ": the host cannot count the tiles");
    if (!it->second.set) return Status::error("tile_count: param '" + *names[i] + "' was never set");
    ext[i] = args_.word[it->second.slot] & 0xffffffffull;
  }
  uint64_t t = 0;
  if (!tile_count_for(ext[0], ext[1], tile_m_, tile_n_, t))
    return Status::error("tile_count: " + extent_m_ + " = " + std::to_string(ext[0]) + ", " + extent_n_ + " = " + std::to_string(ext[1]) +
                         " make more tiles than the generated scheduler counts in 32 bits");
  tiles = t;
  return {};
}

Status Module::persistent_grid(unsigned& grid, CUstream stream) const {
  if (!fn_) return Status::error("persistent_grid before load");
  // Without a tile sequence each block is one piece of work (pl::tile_at gives block b tile b, once):
  // the grid is the caller's problem size, not something to size from the GPU.
  if (!has_tiles_)
    return Status::error("persistent_grid: this link has no tile sequence (no component declares [tiles]), or its cubin was "
                         "linked before the launch manifest carried one (relink): launch the grid your problem needs");
  if (cluster_blocks() > 1) {
    int clusters = 0;
    if (Status s = max_active_clusters(clusters, stream); !s) return s;
    if (clusters <= 0)
      return Status::error("persistent_grid: no cluster of " + std::to_string(cluster_blocks()) + " blocks (" + std::to_string(threads_) +
                           " threads, " + std::to_string(smem_) + " bytes of shared memory each) fits on this GPU");
    grid = static_cast<unsigned>(clusters) * cluster_blocks();
    return {};
  }
  if (grid_blocks_ == 0)
    return Status::error("persistent_grid: no block of this kernel (" + std::to_string(threads_) + " threads, " + std::to_string(smem_) +
                         " bytes of shared memory) fits on an SM of this GPU");
  if (workspace_stride_) {
    // a split schedule: the blocks the link was allocated to keep resident (they wait for each other)
    grid = static_cast<unsigned>(persistent_grid_for(0, grid_blocks_, GridKind::Split));
    return {};
  }
  unsigned long long tiles = 0;
  {
    // An extent read from device memory: the host cannot count the tiles, and any grid walks them
    // all, so every resident block.
    auto it = params_.find(extent_m_);
    auto jt = params_.find(extent_n_);
    if ((it != params_.end() && it->second.type == "ptr") || (jt != params_.end() && jt->second.type == "ptr")) {
      grid = grid_blocks_;
      return {};
    }
  }
  if (Status s = tile_count(tiles); !s) return Status::error("persistent_grid: " + s.message);
  grid = static_cast<unsigned>(persistent_grid_for(tiles, grid_blocks_, blocks_per_sm_ > 1 ? GridKind::SeveralPerSm : GridKind::DataParallel));
  return {};
}

bool Module::fact(const std::string& name, long long& value) const {
  auto it = facts_.find(name);
  if (it == facts_.end()) return false;
  value = it->second;
  return true;
}

Status Module::slot(const std::string& name, const char* want, Param*& out) {
  auto it = params_.find(name);
  if (it == params_.end()) return Status::error("the linked kernel has no param '" + name + "'");
  if (it->second.type != want) return Status::error("param '" + name + "' is " + it->second.type + ", not " + want);
  out = &it->second;
  return {};
}

Status Module::set_word(const std::string& name, const char* want, unsigned long long word) {
  Param* p = nullptr;
  if (Status s = slot(name, want, p); !s) return s;
  args_.word[p->slot] = word;
  p->set = true;
  return {};
}

Status Module::set_ptr(const std::string& name, CUdeviceptr v) {
  return set_word(name, "ptr", static_cast<unsigned long long>(v));
}
Status Module::set_u32(const std::string& name, unsigned v) { return set_word(name, "u32", v); }
Status Module::set_i32(const std::string& name, int v) {
  return set_word(name, "i32", static_cast<unsigned long long>(static_cast<long long>(v)));
}
Status Module::set_u64(const std::string& name, unsigned long long v) { return set_word(name, "u64", v); }
Status Module::set_f32(const std::string& name, float v) {
  unsigned bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return set_word(name, "f32", bits);
}

Status Module::set_tensormap(const std::string& name, const CUtensorMap& m) {
  Param* p = nullptr;
  if (Status s = slot(name, "tensormap", p); !s) return s;
  args_.tmap[p->slot] = m;
  p->set = true;
  return {};
}

bool Module::tensor_box(const std::string& name, TensorBox& out) const {
  auto it = params_.find(name);
  if (it == params_.end() || !it->second.has_box) return false;
  out = it->second.box;
  return true;
}

Status Module::set_tensor(const std::string& name, CUdeviceptr base, uint64_t rows, uint64_t cols, uint64_t row_stride_bytes,
                          CUtensorMapL2promotion promotion) {
  Param* p = nullptr;
  if (Status s = slot(name, "tensormap", p); !s) return s;
  if (!p->has_box)
    return Status::error("param '" + name + "': its contract names no tensor ([[param]] tensor = \"<port>.<tensor>\"), so the link "
                         "knows no box: build the map yourself (set_tensormap)");
  const TensorBox& b = p->box;
  static const std::pair<const char*, std::pair<CUtensorMapDataType, unsigned>> types[] = {
      {"bf16", {CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2}}, {"f16", {CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2}},
      {"f32", {CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4}},   {"i32", {CU_TENSOR_MAP_DATA_TYPE_INT32, 4}},
      {"u32", {CU_TENSOR_MAP_DATA_TYPE_UINT32, 4}},    {"u8", {CU_TENSOR_MAP_DATA_TYPE_UINT8, 1}},
      {"i8", {CU_TENSOR_MAP_DATA_TYPE_UINT8, 1}},      {"f8e4m3", {CU_TENSOR_MAP_DATA_TYPE_UINT8, 1}},
      {"f8e5m2", {CU_TENSOR_MAP_DATA_TYPE_UINT8, 1}}};
  const std::pair<CUtensorMapDataType, unsigned>* ty = nullptr;
  for (const auto& [n, v] : types) if (b.dtype == n) ty = &v;
  if (!ty) return Status::error("param '" + name + "': no tensor map element type for dtype '" + b.dtype + "'");
  CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_NONE;
  if (b.swizzle == "32B") sw = CU_TENSOR_MAP_SWIZZLE_32B;
  else if (b.swizzle == "64B") sw = CU_TENSOR_MAP_SWIZZLE_64B;
  else if (b.swizzle == "128B") sw = CU_TENSOR_MAP_SWIZZLE_128B;
  else if (b.swizzle != "none") return Status::error("param '" + name + "': unknown swizzle '" + b.swizzle + "'");
  if (row_stride_bytes == 0) row_stride_bytes = cols * ty->second;
  CUtensorMap m;
  if (CUresult r = encode_2d(m, ty->first, base, rows, cols, row_stride_bytes, b.rows, b.cols, sw, promotion); r != CUDA_SUCCESS)
    return Status::error("param '" + name + "': " + cu_error(r, "cuTensorMapEncodeTiled") + " (" + b.dtype + " [" + std::to_string(rows) +
                         " x " + std::to_string(cols) + "], row stride " + std::to_string(row_stride_bytes) + " bytes, the link's box [" +
                         std::to_string(b.rows) + " x " + std::to_string(b.cols) + "], swizzle " + b.swizzle + ")");
  args_.tmap[p->slot] = m;
  p->set = true;
  return {};
}

Status Module::max_active_clusters(int& clusters, CUstream stream) const {
  if (!fn_) return Status::error("max_active_clusters before load");
  CUlaunchAttribute attr[1];
  attr[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr[0].value.clusterDim.x = cluster_[0];
  attr[0].value.clusterDim.y = cluster_[1];
  attr[0].value.clusterDim.z = cluster_[2];
  CUlaunchConfig cfg{};
  cfg.gridDimX = cluster_blocks();
  cfg.gridDimY = cfg.gridDimZ = 1;
  cfg.blockDimX = threads_;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = smem_;
  cfg.hStream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  if (CUresult r = cuOccupancyMaxActiveClusters(&clusters, fn_, &cfg); r != CUDA_SUCCESS)
    return Status::error(cu_error(r, "cuOccupancyMaxActiveClusters"));
  return {};
}

Status Module::launch(unsigned grid, CUstream stream) {
  if (!fn_) return Status::error("launch before load");
  for (const auto& [name, p] : params_)
    if (!p.set) return Status::error("param '" + name + "' was never set");
  // A checked kernel starts with no timed-out wait on record (an earlier launch may have drained).
  if (abort_) {
    if (CUresult r = cuMemsetD32Async(abort_, 0, 1, stream); r != CUDA_SUCCESS) return Status::error(cu_error(r, "reset pl_abort"));
  }
  if (report_) report_[0] = 0;
  if (workspace_stride_) {
    if (grid > resident_blocks_)
      return Status::error("launch: a split-schedule link's blocks wait for each other's partials, so the grid must be resident at "
                           "once: " + std::to_string(grid) + " blocks, but " + std::to_string(resident_blocks_) + " fit on this GPU");
    if (Status s = reserve_workspace(grid, stream); !s) return s;
    // A checked kernel that drained (a timed-out wait) may have left flags set: clear every
    // block's flag line before each launch of a checked build.
    if (abort_)
      if (CUresult r = cuMemsetD2D8Async(workspace_ + workspace_stride_ - 128, workspace_stride_, 0, 128, resident_blocks_, stream);
          r != CUDA_SUCCESS)
        return Status::error(cu_error(r, "clear the split-schedule flags"));
  }
  void* kp[] = {&args_};
  if (cluster_blocks() > 1 && grid % cluster_[0] != 0)  // the generated entry traps without its cluster
    return Status::error("launch: the kernel runs in clusters of " + std::to_string(cluster_[0]) + " blocks; grid " +
                         std::to_string(grid) + " is not a multiple of it");
  if (cluster_blocks() > 1 || pdl_) {
    // The cluster dimension is not optional for a cluster link; a PDL link may start while the
    // stream's previous kernel still runs (its entry waits before any role touches memory).
    CUlaunchAttribute attr[2];
    unsigned n = 0;
    std::string what = "cuLaunchKernelEx(";
    if (cluster_blocks() > 1) {
      attr[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attr[n].value.clusterDim.x = cluster_[0];
      attr[n].value.clusterDim.y = cluster_[1];
      attr[n].value.clusterDim.z = cluster_[2];
      ++n;
      what += "cluster " + std::to_string(cluster_[0]) + "x" + std::to_string(cluster_[1]) + "x" + std::to_string(cluster_[2]);
    }
    if (pdl_) {
      attr[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attr[n].value.programmaticStreamSerializationAllowed = 1;
      ++n;
      what += n > 1 ? ", pdl" : "pdl";
    }
    what += ")";
    CUlaunchConfig cfg{};
    cfg.gridDimX = grid;
    cfg.gridDimY = 1;
    cfg.gridDimZ = 1;
    cfg.blockDimX = threads_;
    cfg.blockDimY = 1;
    cfg.blockDimZ = 1;
    cfg.sharedMemBytes = smem_;
    cfg.hStream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = n;
    if (CUresult r = cuLaunchKernelEx(&cfg, fn_, kp, nullptr); r != CUDA_SUCCESS) return Status::error(cu_error(r, what.c_str()));
    return {};
  }
  if (CUresult r = cuLaunchKernel(fn_, grid, 1, 1, threads_, 1, 1, smem_, stream, kp, nullptr); r != CUDA_SUCCESS)
    return Status::error(cu_error(r, "cuLaunchKernel"));
  return {};
}

}  // namespace pipelink
