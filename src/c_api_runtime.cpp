// c_api_runtime — the runtime's C ABI (include/pipelink/c_api.h, plrt_*), built into
// libpipelink_rt_c.so, the only PipeLink library that needs the CUDA driver.
// Wraps pipelink::Module. A kernel lives in its device's primary context (the one PyTorch and the
// CUDA runtime use), retained while the kernel exists and made current around each driver call
// when another context is current. Every driver call is checked; no exception gets out; no
// global state.
#include <cuda.h>

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "c_api_json.h"
#include "pipelink/c_api.h"
#include "pipelink/runtime.h"

struct plrt_kernel {
  CUdevice dev = 0;
  int ordinal = 0;
  CUcontext ctx = nullptr;  // the device's primary context, retained
  std::shared_ptr<pipelink::Module> mod;  // shared with the functions borrowing it (plrt_kernel_function)
  std::string info_json;
};

struct plrt_function {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;  // the device's primary context, retained
  CUmodule mod = nullptr;  // loaded by plrt_function_load and unloaded by plrt_function_free, unless owner is set
  CUfunction fn = nullptr;
  std::shared_ptr<pipelink::Module> owner;  // plrt_kernel_function: the kernel's module, kept loaded while either lives
};

namespace {

int fail(char* err, size_t size, const std::string& msg) {
  if (err && size > 0) {
    const size_t n = msg.size() < size - 1 ? msg.size() : size - 1;
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
  }
  return -1;
}

// Makes `ctx` current for its lifetime if another (or no) context is current.
class CtxScope {
 public:
  explicit CtxScope(CUcontext ctx) {
    CUcontext cur = nullptr;
    if (CUresult r = cuCtxGetCurrent(&cur); r != CUDA_SUCCESS) {
      status_ = pipelink::Status::error(pipelink::cu_error(r, "cuCtxGetCurrent"));
      return;
    }
    if (cur == ctx) return;
    if (CUresult r = cuCtxPushCurrent(ctx); r != CUDA_SUCCESS) {
      status_ = pipelink::Status::error(pipelink::cu_error(r, "cuCtxPushCurrent"));
      return;
    }
    pushed_ = true;
  }
  ~CtxScope() {
    CUcontext popped = nullptr;
    if (pushed_) cuCtxPopCurrent(&popped);  // nothing to report it to; the push succeeded
  }
  CtxScope(const CtxScope&) = delete;
  CtxScope& operator=(const CtxScope&) = delete;
  const pipelink::Status& status() const { return status_; }

 private:
  pipelink::Status status_;
  bool pushed_ = false;
};

void destroy(plrt_kernel* k) {
  if (!k) return;
  if (k->mod) {
    CtxScope scope(k->ctx);
    k->mod.reset();  // unloads the module in its context
  }
  if (k->ctx) cuDevicePrimaryCtxRelease(k->dev);
  delete k;
}

std::string info_json(const plrt_kernel& k) {
  std::string j = "{\"name\":";
  pipelink::append_json_string(j, k.mod->kernel_name());
  j += ",\"threads\":" + std::to_string(k.mod->threads()) + ",\"smem_bytes\":" + std::to_string(k.mod->smem_bytes()) +
       ",\"device\":" + std::to_string(k.ordinal) + ",\"pdl\":" + (k.mod->pdl() ? "true" : "false") +
       ",\"workspace_stride\":" + std::to_string(k.mod->workspace_stride()) + ",\"params\":{";
  bool first = true;
  for (const auto& [name, type] : k.mod->param_types()) {
    if (!first) j += ",";
    first = false;
    pipelink::append_json_string(j, name);
    j += ":";
    pipelink::append_json_string(j, type);
  }
  // tensormap params whose contracts name the tensor their copies move: the link's box
  j += "},\"boxes\":{";
  first = true;
  for (const auto& [name, type] : k.mod->param_types()) {
    pipelink::Module::TensorBox b;
    if (type != "tensormap" || !k.mod->tensor_box(name, b)) continue;
    if (!first) j += ",";
    first = false;
    pipelink::append_json_string(j, name);
    j += ":{\"rows\":" + std::to_string(b.rows) + ",\"cols\":" + std::to_string(b.cols) + ",\"dtype\":";
    pipelink::append_json_string(j, b.dtype);
    j += ",\"swizzle\":";
    pipelink::append_json_string(j, b.swizzle);
    j += "}";
  }
  j += "},\"facts\":{";
  first = true;
  for (const auto& [name, value] : k.mod->facts()) {
    if (!first) j += ",";
    first = false;
    pipelink::append_json_string(j, name);
    j += ":" + std::to_string(value);
  }
  return j + "}}";
}

template <class F> int guarded(char* err, size_t size, const char* what, F f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return fail(err, size, std::string(what) + ": internal error: " + e.what());
  } catch (...) {
    return fail(err, size, std::string(what) + ": internal error (unknown exception)");
  }
}

template <class F> int set_param(plrt_kernel* k, const char* name, char* err, size_t size, F f) {
  if (!k || !k->mod || !name) return fail(err, size, "NULL kernel or parameter name");
  return guarded(err, size, "set parameter", [&] {
    const pipelink::Status s = f(*k->mod, std::string(name));
    return s ? 0 : fail(err, size, s.message);
  });
}

}  // namespace

extern "C" {

int plrt_abi_version(void) { return PL_C_ABI_VERSION; }

int plrt_kernel_load(const char* cubin_path, const char* map_path, int device, plrt_kernel** out, char* err, size_t err_size) {
  if (!out) return fail(err, err_size, "plrt_kernel_load: NULL out");
  *out = nullptr;
  if (!cubin_path || !map_path) return fail(err, err_size, "plrt_kernel_load: NULL path");
  return guarded(err, err_size, "plrt_kernel_load", [&] {
    if (CUresult r = cuInit(0); r != CUDA_SUCCESS) return fail(err, err_size, pipelink::cu_error(r, "cuInit"));
    int count = 0;
    if (CUresult r = cuDeviceGetCount(&count); r != CUDA_SUCCESS) return fail(err, err_size, pipelink::cu_error(r, "cuDeviceGetCount"));
    if (device < 0 || device >= count)
      return fail(err, err_size, "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) + " devices)");
    plrt_kernel* k = new plrt_kernel;
    k->ordinal = device;
    if (CUresult r = cuDeviceGet(&k->dev, device); r != CUDA_SUCCESS) {
      delete k;
      return fail(err, err_size, pipelink::cu_error(r, "cuDeviceGet"));
    }
    if (CUresult r = cuDevicePrimaryCtxRetain(&k->ctx, k->dev); r != CUDA_SUCCESS) {
      k->ctx = nullptr;
      destroy(k);
      return fail(err, err_size, pipelink::cu_error(r, "cuDevicePrimaryCtxRetain"));
    }
    k->mod = std::make_shared<pipelink::Module>();
    pipelink::Status s;
    {
      CtxScope scope(k->ctx);
      s = scope.status() ? k->mod->load(cubin_path, map_path) : scope.status();
    }
    if (!s) {
      destroy(k);
      return fail(err, err_size, s.message);
    }
    k->info_json = info_json(*k);
    *out = k;
    return 0;
  });
}

void plrt_kernel_free(plrt_kernel* k) {
  try {
    destroy(k);
  } catch (...) {
  }
}

const char* plrt_kernel_info_json(const plrt_kernel* k) { return k ? k->info_json.c_str() : "{}"; }

int plrt_set_ptr(plrt_kernel* k, const char* name, unsigned long long v, char* err, size_t size) {
  return set_param(k, name, err, size, [&](pipelink::Module& m, const std::string& n) { return m.set_ptr(n, CUdeviceptr(v)); });
}
int plrt_set_u32(plrt_kernel* k, const char* name, unsigned v, char* err, size_t size) {
  return set_param(k, name, err, size, [&](pipelink::Module& m, const std::string& n) { return m.set_u32(n, v); });
}
int plrt_set_i32(plrt_kernel* k, const char* name, int v, char* err, size_t size) {
  return set_param(k, name, err, size, [&](pipelink::Module& m, const std::string& n) { return m.set_i32(n, v); });
}
int plrt_set_u64(plrt_kernel* k, const char* name, unsigned long long v, char* err, size_t size) {
  return set_param(k, name, err, size, [&](pipelink::Module& m, const std::string& n) { return m.set_u64(n, v); });
}
int plrt_set_f32(plrt_kernel* k, const char* name, float v, char* err, size_t size) {
  return set_param(k, name, err, size, [&](pipelink::Module& m, const std::string& n) { return m.set_f32(n, v); });
}
int plrt_set_tensormap(plrt_kernel* k, const char* name, const void* map128, char* err, size_t size) {
  if (!map128) return fail(err, size, "plrt_set_tensormap: NULL map");
  CUtensorMap m;  // 64-byte aligned copy
  std::memcpy(&m, map128, sizeof m);
  return set_param(k, name, err, size, [&](pipelink::Module& mod, const std::string& n) { return mod.set_tensormap(n, m); });
}

int plrt_launch(plrt_kernel* k, unsigned grid, void* stream, char* err, size_t size) {
  if (!k || !k->mod) return fail(err, size, "plrt_launch: NULL kernel");
  if (grid == 0) return fail(err, size, "launch: grid must be at least 1 block");
  return guarded(err, size, "plrt_launch", [&] {
    CtxScope scope(k->ctx);
    if (!scope.status()) return fail(err, size, scope.status().message);
    const pipelink::Status s = k->mod->launch(grid, static_cast<CUstream>(stream));
    return s ? 0 : fail(err, size, s.message);
  });
}

int plrt_reserve_workspace(plrt_kernel* k, unsigned grid, void* stream, char* err, size_t size) {
  if (!k || !k->mod) return fail(err, size, "plrt_reserve_workspace: NULL kernel");
  if (grid == 0) return fail(err, size, "reserve_workspace: grid must be at least 1 block");
  return guarded(err, size, "plrt_reserve_workspace", [&] {
    CtxScope scope(k->ctx);
    if (!scope.status()) return fail(err, size, scope.status().message);
    const pipelink::Status s = k->mod->reserve_workspace(grid, static_cast<CUstream>(stream));
    return s ? 0 : fail(err, size, s.message);
  });
}

int plrt_tile_count(const plrt_kernel* k, unsigned long long* tiles, char* err, size_t size) {
  if (!k || !k->mod) return fail(err, size, "plrt_tile_count: NULL kernel");
  if (!tiles) return fail(err, size, "plrt_tile_count: NULL output");
  return guarded(err, size, "plrt_tile_count", [&] {
    const pipelink::Status s = k->mod->tile_count(*tiles);
    return s ? 0 : fail(err, size, s.message);
  });
}

int plrt_persistent_grid(const plrt_kernel* k, unsigned* grid, void* stream, char* err, size_t size) {
  if (!k || !k->mod) return fail(err, size, "plrt_persistent_grid: NULL kernel");
  if (!grid) return fail(err, size, "plrt_persistent_grid: NULL output");
  return guarded(err, size, "plrt_persistent_grid", [&] {
    CtxScope scope(k->ctx);
    if (!scope.status()) return fail(err, size, scope.status().message);
    const pipelink::Status s = k->mod->persistent_grid(*grid, static_cast<CUstream>(stream));
    return s ? 0 : fail(err, size, s.message);
  });
}

int plrt_checked_report(const plrt_kernel* k, char* buf, size_t size) {
  if (!k || !k->mod) return fail(buf, size, "");
  return guarded(buf, size, "plrt_checked_report", [&] {
    const std::string r = k->mod->checked_report();
    fail(buf, size, r);  // copies r into buf
    return 0;
  });
}

int plrt_bf16_tensor_map(void* out128, unsigned long long base, unsigned long long rows, unsigned long long cols,
                         unsigned long long row_stride_bytes, unsigned box_rows, unsigned box_cols, int swizzle_bytes,
                         int l2_promotion_bytes, char* err, size_t err_size) {
  if (!out128) return fail(err, err_size, "plrt_bf16_tensor_map: NULL output");
  CUtensorMapSwizzle swizzle;
  switch (swizzle_bytes) {
    case 0: swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; break;
    case 32: swizzle = CU_TENSOR_MAP_SWIZZLE_32B; break;
    case 64: swizzle = CU_TENSOR_MAP_SWIZZLE_64B; break;
    case 128: swizzle = CU_TENSOR_MAP_SWIZZLE_128B; break;
    default: return fail(err, err_size, "swizzle must be 0, 32, 64 or 128 bytes, not " + std::to_string(swizzle_bytes));
  }
  CUtensorMapL2promotion promotion;
  switch (l2_promotion_bytes) {
    case 0: promotion = CU_TENSOR_MAP_L2_PROMOTION_NONE; break;
    case 64: promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_64B; break;
    case 128: promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B; break;
    case 256: promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B; break;
    default: return fail(err, err_size, "L2 promotion must be 0, 64, 128 or 256 bytes, not " + std::to_string(l2_promotion_bytes));
  }
  return guarded(err, err_size, "plrt_bf16_tensor_map", [&] {
    if (CUresult r = cuInit(0); r != CUDA_SUCCESS) return fail(err, err_size, pipelink::cu_error(r, "cuInit"));
    CUtensorMap m;
    const pipelink::Status s =
        pipelink::bf16_tensor_map_strided(m, CUdeviceptr(base), rows, cols, row_stride_bytes, box_rows, box_cols, swizzle, promotion);
    if (!s) return fail(err, err_size, s.message);
    std::memcpy(out128, &m, sizeof m);
    return 0;
  });
}

int plrt_function_load(const char* cubin_path, const char* name, int device, plrt_function** out, char* err, size_t err_size) {
  if (!out) return fail(err, err_size, "plrt_function_load: NULL out");
  *out = nullptr;
  if (!cubin_path || !name) return fail(err, err_size, "plrt_function_load: NULL path or name");
  return guarded(err, err_size, "plrt_function_load", [&] {
    if (CUresult r = cuInit(0); r != CUDA_SUCCESS) return fail(err, err_size, pipelink::cu_error(r, "cuInit"));
    int count = 0;
    if (CUresult r = cuDeviceGetCount(&count); r != CUDA_SUCCESS) return fail(err, err_size, pipelink::cu_error(r, "cuDeviceGetCount"));
    if (device < 0 || device >= count)
      return fail(err, err_size, "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(count) + " devices)");
    auto f = std::make_unique<plrt_function>();
    if (CUresult r = cuDeviceGet(&f->dev, device); r != CUDA_SUCCESS) return fail(err, err_size, pipelink::cu_error(r, "cuDeviceGet"));
    if (CUresult r = cuDevicePrimaryCtxRetain(&f->ctx, f->dev); r != CUDA_SUCCESS)
      return fail(err, err_size, pipelink::cu_error(r, "cuDevicePrimaryCtxRetain"));
    CtxScope scope(f->ctx);
    std::string msg;
    if (!scope.status()) msg = scope.status().message;
    else if (CUresult r = cuModuleLoad(&f->mod, cubin_path); r != CUDA_SUCCESS) msg = pipelink::cu_error(r, "cuModuleLoad") + ": " + cubin_path;
    else if (CUresult r2 = cuModuleGetFunction(&f->fn, f->mod, name); r2 != CUDA_SUCCESS)
      msg = pipelink::cu_error(r2, "cuModuleGetFunction") + ": no entry point '" + name + "' in " + cubin_path;
    if (!msg.empty()) {
      if (f->mod) cuModuleUnload(f->mod);
      cuDevicePrimaryCtxRelease(f->dev);
      return fail(err, err_size, msg);
    }
    *out = f.release();
    return 0;
  });
}

int plrt_kernel_function(const plrt_kernel* k, const char* name, plrt_function** out, char* err, size_t err_size) {
  if (!out) return fail(err, err_size, "plrt_kernel_function: NULL out");
  *out = nullptr;
  if (!k || !k->mod || !k->mod->module()) return fail(err, err_size, "plrt_kernel_function: NULL or unloaded kernel");
  if (!name) return fail(err, err_size, "plrt_kernel_function: NULL name");
  return guarded(err, err_size, "plrt_kernel_function", [&] {
    CUfunction fn = nullptr;
    {
      CtxScope scope(k->ctx);
      if (!scope.status()) return fail(err, err_size, scope.status().message);
      if (CUresult r = cuModuleGetFunction(&fn, k->mod->module(), name); r != CUDA_SUCCESS)
        return fail(err, err_size,
                    pipelink::cu_error(r, "cuModuleGetFunction") + ": no entry point '" + name + "' in the linked kernel's module");
    }
    auto f = std::make_unique<plrt_function>();
    f->dev = k->dev;
    if (CUresult r = cuDevicePrimaryCtxRetain(&f->ctx, f->dev); r != CUDA_SUCCESS)
      return fail(err, err_size, pipelink::cu_error(r, "cuDevicePrimaryCtxRetain"));
    f->owner = k->mod;  // the module stays loaded until the kernel and this function are both freed
    f->mod = k->mod->module();
    f->fn = fn;
    *out = f.release();
    return 0;
  });
}

void plrt_function_free(plrt_function* f) {
  if (!f) return;
  if (f->owner) {
    CtxScope scope(f->ctx);
    f->owner.reset();  // the last owner unloads the module, in its context
  } else if (f->mod) {
    CtxScope scope(f->ctx);
    cuModuleUnload(f->mod);
  }
  if (f->ctx) cuDevicePrimaryCtxRelease(f->dev);
  delete f;
}

int plrt_function_launch(plrt_function* f, unsigned grid, unsigned block, unsigned smem_bytes, void* stream, void** args, char* err,
                         size_t size) {
  return plrt_function_launch_ex(f, grid, block, smem_bytes, stream, args, 0u, err, size);
}

int plrt_function_launch_ex(plrt_function* f, unsigned grid, unsigned block, unsigned smem_bytes, void* stream, void** args,
                            unsigned flags, char* err, size_t size) {
  if (!f || !f->fn) return fail(err, size, "plrt_function_launch: NULL function");
  if (grid == 0 || block == 0) return fail(err, size, "plrt_function_launch: grid and block must be at least 1");
  if (flags & ~static_cast<unsigned>(PLRT_LAUNCH_PDL))
    return fail(err, size, "plrt_function_launch_ex: unknown flags " + std::to_string(flags));
  return guarded(err, size, "plrt_function_launch", [&] {
    CtxScope scope(f->ctx);
    if (!scope.status()) return fail(err, size, scope.status().message);
    if (flags & PLRT_LAUNCH_PDL) {
      CUlaunchAttribute attr[1];
      attr[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attr[0].value.programmaticStreamSerializationAllowed = 1;
      CUlaunchConfig cfg{};
      cfg.gridDimX = grid;
      cfg.gridDimY = cfg.gridDimZ = 1;
      cfg.blockDimX = block;
      cfg.blockDimY = cfg.blockDimZ = 1;
      cfg.sharedMemBytes = smem_bytes;
      cfg.hStream = static_cast<CUstream>(stream);
      cfg.attrs = attr;
      cfg.numAttrs = 1;
      if (CUresult r = cuLaunchKernelEx(&cfg, f->fn, args, nullptr); r != CUDA_SUCCESS)
        return fail(err, size, pipelink::cu_error(r, "cuLaunchKernelEx(pdl)"));
      return 0;
    }
    if (CUresult r = cuLaunchKernel(f->fn, grid, 1, 1, block, 1, 1, smem_bytes, static_cast<CUstream>(stream), args, nullptr);
        r != CUDA_SUCCESS)
      return fail(err, size, pipelink::cu_error(r, "cuLaunchKernel"));
    return 0;
  });
}

}  // extern "C"
