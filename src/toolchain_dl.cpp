// toolchain_dl — NVRTC and nvJitLink, loaded on first use.
//
// Both libraries run LLVM's static initialisers when they are loaded, which costs most of a
// second; a `pipelink check` (run on every save) or `--version` never compiles anything. So the
// library does not link them: this file defines the entry points the headers declare (NVRTC's
// functions, and the versioned symbols nvJitLink.h's inline wrappers call), and each forwards to
// the real one, found with dlopen/dlsym the first time any is called. The libraries are looked up
// by soname (RUNPATH, LD_LIBRARY_PATH, the loader cache), then in the toolkit directory PipeLink
// was built against. If they cannot be loaded, every call returns an error code and the caller's
// diagnostics say which call failed; toolchain_error() gives the reason.
//
// Does not: keep global state beyond the two library handles and their resolved symbols, which
// are process-wide facts (the same for every link), initialised once under std::call_once.
#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include <mutex>
#include <string>

#ifndef PIPELINK_CUDA_LIB_DIR
#define PIPELINK_CUDA_LIB_DIR "/usr/local/cuda/lib64"
#endif
#ifndef PIPELINK_CUDA_MAJOR
#define PIPELINK_CUDA_MAJOR "13"
#endif

namespace {

struct Libs {
  void* nvrtc = nullptr;
  void* jit = nullptr;
  std::string error;
};

void* open_lib(const std::string& base, std::string& error) {
  const std::string soname = base + ".so." PIPELINK_CUDA_MAJOR;
  for (const std::string& name : {soname, std::string(PIPELINK_CUDA_LIB_DIR) + "/" + soname, std::string("/usr/local/cuda/lib64/") + soname,
                                  std::string("/usr/local/cuda/lib/") + soname})
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  const char* e = dlerror();
  error += "cannot load " + soname + (e ? std::string(": ") + e : std::string()) + "; ";
  return nullptr;
}

Libs& libs() {
  static Libs l;
  static std::once_flag once;
  std::call_once(once, [] {
    l.nvrtc = open_lib("libnvrtc", l.error);
    l.jit = open_lib("libnvJitLink", l.error);
  });
  return l;
}

template <class F> F sym(void* lib, const char* name) {
  return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

}  // namespace

namespace pipelink {
// Why the toolchain libraries could not be loaded ("" when they were).
std::string toolchain_error() { return libs().error; }
}  // namespace pipelink

#define PL_FORWARD(lib, ret, fail, name, params, args)                                  \
  extern "C" ret name params {                                                          \
    static const auto f = sym<ret(*) params>(libs().lib, #name);                        \
    return f ? f args : fail;                                                           \
  }

// NVRTC
PL_FORWARD(nvrtc, nvrtcResult, NVRTC_ERROR_INTERNAL_ERROR, nvrtcCreateProgram,
           (nvrtcProgram * prog, const char* src, const char* name, int n, const char* const* headers, const char* const* names),
           (prog, src, name, n, headers, names))
PL_FORWARD(nvrtc, nvrtcResult, NVRTC_ERROR_INTERNAL_ERROR, nvrtcCompileProgram,
           (nvrtcProgram prog, int n, const char* const* options), (prog, n, options))
PL_FORWARD(nvrtc, nvrtcResult, NVRTC_ERROR_INTERNAL_ERROR, nvrtcDestroyProgram, (nvrtcProgram * prog), (prog))
PL_FORWARD(nvrtc, nvrtcResult, NVRTC_ERROR_INTERNAL_ERROR, nvrtcGetProgramLogSize, (nvrtcProgram prog, size_t* n), (prog, n))
PL_FORWARD(nvrtc, nvrtcResult, NVRTC_ERROR_INTERNAL_ERROR, nvrtcGetProgramLog, (nvrtcProgram prog, char* log), (prog, log))
PL_FORWARD(nvrtc, nvrtcResult, NVRTC_ERROR_INTERNAL_ERROR, nvrtcGetLTOIRSize, (nvrtcProgram prog, size_t* n), (prog, n))
PL_FORWARD(nvrtc, nvrtcResult, NVRTC_ERROR_INTERNAL_ERROR, nvrtcGetLTOIR, (nvrtcProgram prog, char* ir), (prog, ir))
PL_FORWARD(nvrtc, const char*, "the NVRTC library could not be loaded", nvrtcGetErrorString, (nvrtcResult r), (r))

// nvJitLink: the versioned symbols behind nvJitLink.h's inline wrappers.
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkCreate_13_0,
           (nvJitLinkHandle * h, uint32_t n, const char* const* options), (h, n, options))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkDestroy_13_0, (nvJitLinkHandle * h), (h))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkAddData_13_0,
           (nvJitLinkHandle h, nvJitLinkInputType t, const void* data, size_t size, const char* name), (h, t, data, size, name))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkComplete_13_0, (nvJitLinkHandle h), (h))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkGetLinkedCubinSize_13_0, (nvJitLinkHandle h, size_t* n), (h, n))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkGetLinkedCubin_13_0, (nvJitLinkHandle h, void* out), (h, out))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkGetLinkedPtxSize_13_0, (nvJitLinkHandle h, size_t* n), (h, n))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkGetLinkedPtx_13_0, (nvJitLinkHandle h, char* out), (h, out))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkGetErrorLogSize_13_0, (nvJitLinkHandle h, size_t* n), (h, n))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkGetErrorLog_13_0, (nvJitLinkHandle h, char* log), (h, log))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkGetInfoLogSize_13_0, (nvJitLinkHandle h, size_t* n), (h, n))
PL_FORWARD(jit, nvJitLinkResult, NVJITLINK_ERROR_INTERNAL, __nvJitLinkGetInfoLog_13_0, (nvJitLinkHandle h, char* log), (h, log))
