// GPU test of a generated transfer: tile_source writes row-major tiles, tile_sink reads them
// column-major with a 128-byte swizzle; the linker inserted a transfer warp between them.
// Checks every output element (poisoned buffer) against the pattern the source writes.
#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "pipelink/runtime.h"

#define CU(x)                                                                  \
  do {                                                                         \
    CUresult r_ = (x);                                                         \
    if (r_ != CUDA_SUCCESS) {                                                  \
      std::fprintf(stderr, "%s\n", pipelink::cu_error(r_, #x).c_str());        \
      return 2;                                                                \
    }                                                                          \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 3) { std::fprintf(stderr, "usage: run_transfer k.cubin k.map\n"); return 2; }
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU(cuCtxSetCurrent(ctx));
  pipelink::Module m;
  if (auto s = m.load(argv[1], argv[2]); !s) { std::fprintf(stderr, "%s\n", s.message.c_str()); return 2; }
  long long frows = 32, fcols = 64;  // the tile the link's facts say (32 x 64; 16 or 8 rows for the 64B / 32B sinks)
  m.fact("rows", frows);
  m.fact("cols", fcols);
  const unsigned rows = unsigned(frows), cols = unsigned(fcols), M = rows * 9, N = cols * 7;
  CUdeviceptr out;
  CU(cuMemAlloc(&out, size_t(M) * N * 4));
  CU(cuMemsetD8(out, 0xFF, size_t(M) * N * 4));
  // A TMA source (tma_source.cu, session 12): the input holds the pattern the sink must reproduce,
  // loaded by TMA with the swizzle whose line is one tile row (cols x 4 bytes: 64 or 32, the contract's).
  CUdeviceptr in = 0;
  if (m.param_types().count("in_map")) {
    std::vector<float> hin(size_t(M) * N);
    for (unsigned i = 0; i < M; ++i)
      for (unsigned j = 0; j < N; ++j)
        hin[size_t(i) * N + j] = (i / rows) * 1e6f + (j / cols) * 1e4f + (i % rows) * 100.f + (j % cols);
    CU(cuMemAlloc(&in, hin.size() * 4));
    CU(cuMemcpyHtoD(in, hin.data(), hin.size() * 4));
    // The map's box, element type and swizzle come from the link (tma_source's contract names the
    // stage tensor its copy fills): only the matrix is the host's.
    if (auto s = m.set_tensor("in_map", in, M, N, 0, CU_TENSOR_MAP_L2_PROMOTION_NONE); !s) {
      std::fprintf(stderr, "%s\n", s.message.c_str());
      return 2;
    }
    pipelink::Module::TensorBox tb;
    m.tensor_box("in_map", tb);
    std::printf("input loaded by TMA, box %s[%ux%u] swizzle %s (from the link)\n", tb.dtype.c_str(), tb.rows, tb.cols, tb.swizzle.c_str());
  }
  const bool expect_timeout = argc > 3 && std::string(argv[3]) == "--expect-timeout";
  for (auto s : {m.set_ptr("out", out), m.set_u32("M", M), m.set_u32("N", N), m.launch(20)})
    if (!s) { std::fprintf(stderr, "%s\n", s.message.c_str()); return 2; }
  const CUresult sync = cuCtxSynchronize();
  const std::string report = m.checked_report();
  if (expect_timeout) {
    // The checked-build test: the kernel must end (no hang) and report the pipe wait that could not complete.
    std::printf("checked timeout: kernel %s; report: %s: %s\n", sync == CUDA_SUCCESS ? "ended" : "failed",
                report.empty() ? "(none)" : report.c_str(), !report.empty() && sync == CUDA_SUCCESS ? "PASS" : "FAIL");
    return !report.empty() && sync == CUDA_SUCCESS ? 0 : 1;
  }
  if (!report.empty()) std::printf("%s\n", report.c_str());
  CU(sync);
  std::vector<float> h(size_t(M) * N);
  CU(cuMemcpyDtoH(h.data(), out, h.size() * 4));
  size_t bad = 0;
  for (unsigned i = 0; i < M; ++i)
    for (unsigned j = 0; j < N; ++j) {
      float want = (i / rows) * 1e6f + (j / cols) * 1e4f + (i % rows) * 100.f + (j % cols);
      float got = h[size_t(i) * N + j];
      if (!(got == want)) {
        if (bad < 8) std::printf("out[%u,%u] = %g, expected %g\n", i, j, got, want);
        ++bad;
      }
    }
  std::printf("transfer (row -> col, swizzled; %ux%u tiles): %zu of %zu elements wrong or unwritten: %s\n", rows, cols, bad, h.size(),
              bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
