// bench_cluster — the Qwen3-32B gate/up GEMM (GU [M, 51200] = X [M, 5120] · W [51200, 5120]^T,
// bf16 in, fp32 accumulate, bf16 out) linked with and without a 2-block thread-block cluster
// (issue 9), checked per element against an fp32 reference and timed against cublasGemmEx (what
// torch.mm calls) in one process, on one stream, with one timer.
//
//   bench_cluster --util cluster_util.cubin --kernel LABEL CUBIN MAP [--kernel ...]
//                 [--M 2048,4096,8192] [--iters 20] [--check-only] [--json PATH] [--md PATH]
//                 [--N 51200 --K 5120]   (smaller problems for compute-sanitizer)
//
// Data: X ~ N(0, 1), W ~ N(0, 0.02^2), bf16, fresh X for every M (seed = M), W once. Check: the
// output is poisoned (0xFFFF, a bf16 NaN) before the run; every element must satisfy
// |out - ref| <= 1e-2 + 1e-2 |ref| against cublasGemmEx with an fp32 output (a second, independent
// implementation), and no NaN may remain. Timing: 3 warm-up runs of each entry, then --iters
// rounds; each round starts behind a 0.5 ms GPU spin and runs every entry once between its own
// pair of events (round robin). The first PipeLink kernel runs twice per round ("<label>#2"): the
// spread between the two is the noise floor of a comparison. Exit: 0 all checks passed, 1 a
// check failed, 2 setup error. Every CUDA and cuBLAS call is checked.
#include <cublas_v2.h>
#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "pipelink/runtime.h"

#define CU(x)                                                                    \
  do {                                                                           \
    CUresult r_ = (x);                                                           \
    if (r_ != CUDA_SUCCESS) {                                                    \
      std::fprintf(stderr, "%s\n", pipelink::cu_error(r_, #x).c_str());         \
      std::exit(2);                                                              \
    }                                                                            \
  } while (0)
#define CB(x)                                                                    \
  do {                                                                           \
    cublasStatus_t s_ = (x);                                                     \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                           \
      std::fprintf(stderr, "%s failed: %s\n", #x, cublasGetStatusString(s_));    \
      std::exit(2);                                                              \
    }                                                                            \
  } while (0)

namespace {
unsigned kK = 5120, kN = 51200;  // hidden, 2 x intermediate (gate and up rows of W); --K / --N for small checks
constexpr float kAtol = 1e-2f, kRtol = 1e-2f, kWScale = 0.02f;
constexpr unsigned kWarmup = 3;
constexpr unsigned long long kSpinNs = 500000;

void must(const pipelink::Status& s, const std::string& who) {
  if (!s) { std::fprintf(stderr, "%s: %s\n", who.c_str(), s.message.c_str()); std::exit(2); }
}

struct Buf {
  CUdeviceptr p = 0;
  explicit Buf(size_t n) { CU(cuMemAlloc(&p, n)); }
  ~Buf() { if (p) cuMemFree(p); }
};

struct Util {
  CUmodule mod = nullptr;
  CUfunction fill = nullptr, check = nullptr, spin = nullptr;
  void load(const std::string& path) {
    CU(cuModuleLoad(&mod, path.c_str()));
    CU(cuModuleGetFunction(&fill, mod, "fill_normal_bf16"));
    CU(cuModuleGetFunction(&check, mod, "check_elementwise"));
    CU(cuModuleGetFunction(&spin, mod, "spin"));
  }
  void launch(CUfunction f, unsigned grid, unsigned block, void** args, CUstream s) {
    CU(cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, s, args, nullptr));
  }
};

struct Kernel {
  std::string label, cubin, map;
  pipelink::Module mod;
  unsigned tile_m = 0, tile_n = 0, grid = 0;
};

struct Entry {
  std::string label;
  std::function<void(CUstream)> run;
  unsigned grid = 0, cluster = 1;
  std::vector<float> ms;
  double median = 0, min = 0, max = 0, p10 = 0, p90 = 0;
  bool checked = false, ok = true;
  unsigned long long nans = 0, bad = 0, first_bad = 0;
  float max_abs = 0;
};

double pct(std::vector<float> v, double q) {
  std::sort(v.begin(), v.end());
  const double x = q * (v.size() - 1);
  const size_t i = static_cast<size_t>(x);
  return i + 1 < v.size() ? v[i] + (x - i) * (v[i + 1] - v[i]) : v[i];
}
std::string json_str(const std::string& s) { return "\"" + s + "\""; }
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::unique_ptr<Kernel>> kernels;
  std::vector<unsigned> Ms{2048, 4096, 8192};
  unsigned iters = 20;
  bool check_only = false;
  std::string util_path, json_path, md_path;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return argv[++i];
    };
    if (a == "--kernel") {
      auto k = std::make_unique<Kernel>();
      k->label = next(); k->cubin = next(); k->map = next();
      kernels.push_back(std::move(k));
    } else if (a == "--M") {
      Ms.clear();
      std::stringstream ss(next());
      for (std::string t; std::getline(ss, t, ',');) Ms.push_back(static_cast<unsigned>(std::stoul(t)));
    } else if (a == "--iters") iters = static_cast<unsigned>(std::stoul(next()));
    else if (a == "--check-only") check_only = true;
    else if (a == "--N") kN = static_cast<unsigned>(std::stoul(next()));
    else if (a == "--K") kK = static_cast<unsigned>(std::stoul(next()));
    else if (a == "--util") util_path = next();
    else if (a == "--json") json_path = next();
    else if (a == "--md") md_path = next();
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  if (kernels.empty() || util_path.empty()) { std::fprintf(stderr, "usage: see bench_cluster.cpp\n"); return 2; }

  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext cctx;
  CU(cuDevicePrimaryCtxRetain(&cctx, dev));
  CU(cuCtxSetCurrent(cctx));
  char name[256];
  CU(cuDeviceGetName(name, sizeof name, dev));
  int sms = 0;
  CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CUstream stream;
  CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  Util util;
  util.load(util_path);
  cublasHandle_t blas;
  CB(cublasCreate(&blas));
  CB(cublasSetStream(blas, reinterpret_cast<cudaStream_t>(stream)));

  for (auto& k : kernels) {
    must(k->mod.load(k->cubin, k->map), k->label);
    long long tm = 0, tn = 0;
    if (!k->mod.fact("tile_m", tm) || !k->mod.fact("tile_n", tn)) { std::fprintf(stderr, "%s: no tile facts\n", k->label.c_str()); return 2; }
    k->tile_m = static_cast<unsigned>(tm);
    k->tile_n = static_cast<unsigned>(tn);
    for (const char* m : {"x_map", "w_map", "out_map"}) {  // every box comes from the link (Module::set_tensor)
      pipelink::Module::TensorBox box;
      if (!k->mod.tensor_box(m, box)) {
        std::fprintf(stderr, "%s: param %s has no box in its link (%s): its contract names no tensor\n", k->label.c_str(), m,
                     k->map.c_str());
        return 2;
      }
    }
    int clusters = 0;
    must(k->mod.max_active_clusters(clusters, stream), k->label);
    // A persistent grid: as many blocks as can be resident at once (whole clusters).
    k->grid = std::min<unsigned>(static_cast<unsigned>(clusters) * k->mod.cluster_blocks(), static_cast<unsigned>(sms));
    k->grid -= k->grid % k->mod.cluster_blocks();
    std::printf("%-24s tile %ux%u  cluster %u  resident clusters %d  grid %u  threads %u  smem %u\n", k->label.c_str(), k->tile_m,
                k->tile_n, k->mod.cluster_blocks(), clusters, k->grid, k->mod.threads(), k->mod.smem_bytes());
  }

  const unsigned max_m = *std::max_element(Ms.begin(), Ms.end());
  Buf X(size_t(max_m) * kK * 2), W(size_t(kN) * kK * 2), GU(size_t(max_m) * kN * 2), REF(size_t(max_m) * kN * 4),
      counters(64);
  auto fill = [&](CUdeviceptr p, unsigned long long n, unsigned long long seed, float scale) {
    void* args[] = {&p, &n, &seed, &scale};
    util.launch(util.fill, 4096, 256, args, stream);
  };
  fill(W.p, static_cast<unsigned long long>(kN) * kK, 1, kWScale);

  std::ostringstream js;
  js << "{\n  \"device\": " << json_str(name) << ",\n  \"sms\": " << sms << ",\n  \"data\": \"X ~ N(0,1), W ~ N(0,0.02^2), bf16; fresh X per M\",\n"
     << "  \"check\": \"per element |out-ref| <= " << kAtol << " + " << kRtol << "|ref| vs cublasGemmEx fp32 output; no NaN\",\n"
     << "  \"timing\": \"median of " << iters << " round-robin rounds behind a 0.5 ms spin, events per run\",\n  \"runs\": [";
  std::ostringstream md;
  md << "| M | kernel | grid | cluster | median ms | p10 ms | p90 ms | min ms | max ms | TFLOP/s (median) | vs cublas | check |\n"
     << "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  bool all_ok = true;
  for (size_t mi = 0; mi < Ms.size(); ++mi) {
    const unsigned M = Ms[mi];
    fill(X.p, static_cast<unsigned long long>(M) * kK, 1000 + M, 1.0f);
    const float one = 1.f, zero = 0.f;
    // Reference: fp32 output. Row-major GU[M, N] = X[M, K] W[N, K]^T is column-major GU^T = W^T' X'.
    CB(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, kN, M, kK, &one, reinterpret_cast<void*>(W.p), CUDA_R_16BF, kK,
                    reinterpret_cast<void*>(X.p), CUDA_R_16BF, kK, &zero, reinterpret_cast<void*>(REF.p), CUDA_R_32F, kN,
                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    std::vector<Entry> entries;
    {
      Entry e;
      e.label = "cublas";
      e.run = [&, M](CUstream) {
        CB(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, kN, M, kK, &one, reinterpret_cast<void*>(W.p), CUDA_R_16BF, kK,
                        reinterpret_cast<void*>(X.p), CUDA_R_16BF, kK, &zero, reinterpret_cast<void*>(GU.p), CUDA_R_16BF, kN,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      };
      entries.push_back(e);
    }
    for (size_t ki = 0; ki < kernels.size(); ++ki) {
      Kernel& k = *kernels[ki];
      // the boxes, element types and swizzles are the link's
      must(k.mod.set_tensor("x_map", X.p, M, kK, 0, CU_TENSOR_MAP_L2_PROMOTION_L2_256B), k.label);
      must(k.mod.set_tensor("w_map", W.p, kN, kK, 0, CU_TENSOR_MAP_L2_PROMOTION_L2_256B), k.label);
      must(k.mod.set_tensor("out_map", GU.p, M, kN, 0, CU_TENSOR_MAP_L2_PROMOTION_NONE), k.label);
      must(k.mod.set_u32("K", kK), k.label);
      must(k.mod.set_u32("M", M), k.label);
      must(k.mod.set_u32("N", kN / 2), k.label);
      must(k.mod.set_u32("n_step", 2 * k.tile_n), k.label);
      must(k.mod.set_u32("b_stride", k.tile_n), k.label);
      for (int rep = 0; rep < (ki == 0 ? 2 : 1); ++rep) {
        Entry e;
        e.label = rep ? k.label + "#2" : k.label;
        e.grid = k.grid;
        e.cluster = k.mod.cluster_blocks();
        Kernel* kp = &k;
        e.run = [kp](CUstream s) { must(kp->mod.launch(kp->grid, s), kp->label); };
        entries.push_back(e);
      }
    }
    // Correctness: poison, run once, check every element.
    for (Entry& e : entries) {
      if (e.label.find('#') != std::string::npos) continue;  // the same kernel as its first run
      const unsigned long long n = static_cast<unsigned long long>(M) * kN;
      CU(cuMemsetD8Async(GU.p, 0xFF, n * 2, stream));
      CU(cuMemsetD8Async(counters.p, 0, 64, stream));
      unsigned long long init_first = ~0ull;
      CU(cuMemcpyHtoDAsync(counters.p + 24, &init_first, 8, stream));
      e.run(stream);
      CU(cuStreamSynchronize(stream));
      CUdeviceptr out = GU.p, ref = REF.p, cnt = counters.p;
      float atol = kAtol, rtol = kRtol;
      void* args[] = {&out, &ref, const_cast<unsigned long long*>(&n), &atol, &rtol, &cnt};
      util.launch(util.check, 4096, 256, args, stream);
      unsigned long long c[5];
      CU(cuMemcpyDtoHAsync(c, counters.p, sizeof c, stream));
      CU(cuStreamSynchronize(stream));
      e.checked = true;
      e.nans = c[0];
      e.bad = c[1];
      unsigned bits = static_cast<unsigned>(c[2]);
      std::memcpy(&e.max_abs, &bits, 4);
      e.first_bad = c[3];
      e.ok = e.nans == 0 && e.bad == 0;
      all_ok &= e.ok;
      std::printf("M %5u  %-24s check: %s  NaN %llu  violations %llu  max |err| %.3e%s\n", M, e.label.c_str(), e.ok ? "OK" : "FAIL",
                  e.nans, e.bad, e.max_abs,
                  e.bad ? (" first at row " + std::to_string(e.first_bad / kN) + " col " + std::to_string(e.first_bad % kN)).c_str() : "");
    }
    if (!check_only) {
      std::vector<CUevent> ev(2 * entries.size());
      for (CUevent& x : ev) CU(cuEventCreate(&x, CU_EVENT_DEFAULT));
      for (Entry& e : entries)
        for (unsigned w = 0; w < kWarmup; ++w) e.run(stream);
      CU(cuStreamSynchronize(stream));
      for (unsigned it = 0; it < iters; ++it) {
        unsigned long long ns = kSpinNs;
        void* sargs[] = {&ns};
        util.launch(util.spin, 1, 1, sargs, stream);
        for (size_t i = 0; i < entries.size(); ++i) {
          CU(cuEventRecord(ev[2 * i], stream));
          entries[i].run(stream);
          CU(cuEventRecord(ev[2 * i + 1], stream));
        }
        CU(cuStreamSynchronize(stream));
        for (size_t i = 0; i < entries.size(); ++i) {
          float t = 0;
          CU(cuEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
          entries[i].ms.push_back(t);
        }
      }
      for (CUevent x : ev) CU(cuEventDestroy(x));
      const double flops = 2.0 * M * kK * kN;
      double cublas_ms = 0;
      for (Entry& e : entries) {
        e.median = pct(e.ms, 0.5); e.p10 = pct(e.ms, 0.1); e.p90 = pct(e.ms, 0.9);
        e.min = *std::min_element(e.ms.begin(), e.ms.end());
        e.max = *std::max_element(e.ms.begin(), e.ms.end());
        if (e.label == "cublas") cublas_ms = e.median;
      }
      for (Entry& e : entries) {
        const double tf = flops / (e.median * 1e-3) / 1e12;
        std::printf("M %5u  %-24s grid %4u cl %u  median %.4f ms  p10 %.4f  p90 %.4f  min %.4f  max %.4f  %6.1f TFLOP/s  x%.3f vs cublas\n", M,
                    e.label.c_str(), e.grid, e.cluster, e.median, e.p10, e.p90, e.min, e.max, tf, cublas_ms / e.median);
        char line[512];
        std::snprintf(line, sizeof line, "| %u | %s | %s | %u | %.4f | %.4f | %.4f | %.4f | %.4f | %.1f | %.3f | %s |\n", M, e.label.c_str(),
                      e.grid ? std::to_string(e.grid).c_str() : "-", e.cluster, e.median, e.p10, e.p90, e.min, e.max, tf,
                      cublas_ms / e.median,
                      e.checked ? (e.ok ? "OK" : "FAIL") : "(same kernel)");
        md << line;
      }
    }
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry& e = entries[i];
      js << (mi || i ? "," : "") << "\n    {\"M\": " << M << ", \"label\": " << json_str(e.label) << ", \"grid\": " << e.grid
         << ", \"cluster\": " << e.cluster << ", \"median_ms\": " << e.median << ", \"p10_ms\": " << e.p10 << ", \"p90_ms\": " << e.p90
         << ", \"min_ms\": " << e.min << ", \"max_ms\": " << e.max << ", \"tflops\": " << (e.median > 0 ? 2.0 * M * kK * kN / (e.median * 1e-3) / 1e12 : 0)
         << ", \"checked\": " << (e.checked ? "true" : "false") << ", \"ok\": " << (e.ok ? "true" : "false") << ", \"nans\": " << e.nans
         << ", \"violations\": " << e.bad << ", \"max_abs_err\": " << e.max_abs << ", \"ms\": [";
      for (size_t j = 0; j < e.ms.size(); ++j) js << (j ? ", " : "") << e.ms[j];
      js << "]}";
    }
  }
  js << "\n  ],\n  \"all_ok\": " << (all_ok ? "true" : "false") << "\n}\n";
  if (!json_path.empty()) std::ofstream(json_path) << js.str();
  if (!md_path.empty()) std::ofstream(md_path) << md.str();
  std::printf("%s", md.str().c_str());
  CB(cublasDestroy(blas));
  return all_ok ? 0 : 1;
}
