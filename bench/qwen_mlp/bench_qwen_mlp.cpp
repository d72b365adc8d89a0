// bench_qwen_mlp — the Qwen3-32B MLP gate/up projection + SwiGLU on one GPU: PipeLink kernels
// against cuBLASLt (+ a separately compiled SwiGLU), all checked against an fp32 reference, then
// timed in the same run.
//
//   bench_qwen_mlp [--fused CUBIN MAP] [--fused-control CUBIN MAP] [--gemm CUBIN MAP]
//                  [--gemm-control CUBIN MAP] [--M 16,64,...] [--iters 20] [--json PATH] [--md PATH]
//                  [--swiglu-cubin PATH]
//
// The workload, for each M:
//   X [M, 5120] bf16, W [51200, 5120] bf16 = [gate; up] (rows 0..25599 gate, 25600..51199 up)
//   GU [M, 51200] = X · W^T (fp32 accumulation)      H [M, 25600] = silu(GU[:, :25600]) * GU[:, 25600:]
// The kernels under test:
//   fused, fused-control   X, W -> H bf16 (GEMM with the SwiGLU in its epilogue), checked against H32
//   gemm,  gemm-control    X, W -> GU bf16 (plain GEMM),                          checked against GU32
// The baselines: cuBLASLt (bf16 out, fp32 compute, heuristic's best algo, 32 MiB workspace), the
// swiglu_bf16 kernel of swiglu.cubin, and both back to back. The reference: cuBLASLt with fp32
// output -> GU32, then swiglu_ref_f32 -> H32, itself spot-checked against a CPU double-precision
// dot product. Every checked output is poisoned with 0xFF bytes (a bf16 NaN) first, so unwritten
// elements show up as NaNs. Timing: 3 warm-up runs, then --iters rounds in which every kernel and
// baseline runs once (round robin), each run between its own pair of CUDA events; medians. Each
// round is enqueued behind a short GPU spin, so host launch overhead is not timed.
//
// Exit status: 0 if every check passed, 1 if a check failed, 2 on a usage or setup error.
#include <cublasLt.h>
#include <cuda.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "pipelink/runtime.h"

namespace {

#define CU(x)                                                           \
  do {                                                                  \
    CUresult r_ = (x);                                                  \
    if (r_ != CUDA_SUCCESS) {                                           \
      std::fprintf(stderr, "%s\n", pipelink::cu_error(r_, #x).c_str()); \
      std::exit(2);                                                     \
    }                                                                   \
  } while (0)

#define LT(x)                                                                                                  \
  do {                                                                                                         \
    cublasStatus_t s_ = (x);                                                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                         \
      std::fprintf(stderr, "%s failed: %s (%s)\n", #x, cublasLtGetStatusName(s_), cublasLtGetStatusString(s_)); \
      std::exit(2);                                                                                            \
    }                                                                                                          \
  } while (0)

// ---- the problem -----------------------------------------------------------------------------
constexpr unsigned kHidden = 5120;                // K
constexpr unsigned kInter = 25600;                // I: H's width, and the gate (and up) width
constexpr unsigned kGateUp = 2 * kInter;          // 51200: GU's width, W's rows
constexpr size_t kWBytes = size_t(kGateUp) * kHidden * 2;  // 524288000 bytes of weights
constexpr float kWScale = 0.02f;                  // W ~ N(0,1) * 0.02, as in measure_vendor_baselines.py
constexpr double kRelErrTol = 1e-2;               // kernels and baselines vs the fp32 reference
constexpr double kRefTol = 1e-3;                  // the reference vs the CPU (double) spot check
constexpr unsigned kRefSamples = 16;              // (row, col) entries in that spot check
constexpr unsigned kWarmup = 3;
constexpr unsigned long long kSpinNs = 500000;  // GPU head start of each timing round (0.5 ms)
constexpr size_t kLtWorkspace = size_t(32) << 20;  // 32 MiB
constexpr unsigned kDefaultM[] = {16, 64, 256, 1024, 2048, 4096, 8192};

void must(const pipelink::Status& s, const std::string& who) {
  if (!s) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), s.message.c_str());
    std::exit(2);
  }
}

float from_bf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double flops_of(unsigned M) { return 2.0 * M * kHidden * kGateUp; }  // the SwiGLU is not counted

// A device allocation, freed with its owner.
struct DeviceBuffer {
  CUdeviceptr p = 0;
  size_t bytes = 0;
  explicit DeviceBuffer(size_t n) : bytes(n) { CU(cuMemAlloc(&p, n)); }
  ~DeviceBuffer() { if (p) cuMemFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// A 2-D row-major bf16 tensor map: `rows` x `cols`, box `box_rows` x `box_cols` (box_cols is the
// inner, contiguous dimension), out-of-bounds elements read as zero and are dropped on store.
CUtensorMap make_map(CUdeviceptr base, uint64_t rows, uint64_t cols, uint32_t box_rows, uint32_t box_cols,
                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion) {
  CUtensorMap m;
  must(pipelink::bf16_tensor_map(m, base, rows, cols, box_rows, box_cols, swizzle, promotion), "tensor map");
  return m;
}

// ---- the helper kernels of swiglu.cubin ------------------------------------------------------
struct ErrorStats {
  unsigned long long nans = 0;  // NaN outputs: unwritten (poisoned) or computed NaN
  double rel_err = 0;           // ||out - ref||_2 / ||ref||_2 over the non-NaN outputs
  double max_abs = 0;
};

class HelperKernels {
 public:
  HelperKernels(const std::string& cubin, unsigned sms) : sms_(sms), scratch_(32) {
    CU(cuModuleLoad(&mod_, cubin.c_str()));
    CU(cuModuleGetFunction(&swiglu_, mod_, "swiglu_bf16"));
    CU(cuModuleGetFunction(&swiglu_ref_, mod_, "swiglu_ref_f32"));
    CU(cuModuleGetFunction(&fill_, mod_, "fill_random_bf16"));
    CU(cuModuleGetFunction(&compare_, mod_, "compare_bf16_f32"));
    CU(cuModuleGetFunction(&spin_, mod_, "gpu_spin"));
  }
  ~HelperKernels() { if (mod_) cuModuleUnload(mod_); }
  HelperKernels(const HelperKernels&) = delete;
  HelperKernels& operator=(const HelperKernels&) = delete;

  // p[0..n) = bf16(N(0,1) * scale), a pure function of (seed, index).
  void fill_random(CUdeviceptr p, unsigned long long n, unsigned long long seed, float scale, CUstream s) {
    void* args[] = {&p, &n, &seed, &scale};
    launch(fill_, n, args, s);
  }
  // GU [M, 2I] bf16 -> H [M, I] bf16 (the baseline activation); 8 columns per thread step.
  void swiglu_bf16(CUdeviceptr gu, CUdeviceptr h, unsigned M, unsigned I, CUstream s) {
    void* args[] = {&gu, &h, &M, &I};
    launch(swiglu_, size_t(M) * I / 8, args, s);
  }
  // GU32 [M, 2I] fp32 -> H32 [M, I] fp32 (the reference activation); 4 columns per thread step.
  void swiglu_ref(CUdeviceptr gu, CUdeviceptr h, unsigned M, unsigned I, CUstream s) {
    void* args[] = {&gu, &h, &M, &I};
    launch(swiglu_ref_, size_t(M) * I / 4, args, s);
  }
  // Occupies the stream for `ns` nanoseconds (one thread; the rest of the GPU stays idle).
  void spin(unsigned long long ns, CUstream s) {
    void* args[] = {&ns};
    CU(cuLaunchKernel(spin_, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
  }
  // out[0..n) bf16 against ref[0..n) fp32 on the GPU; waits for the result.
  ErrorStats compare(CUdeviceptr out, CUdeviceptr ref, unsigned long long n, CUstream s) {
    CUdeviceptr sums = scratch_.p, nans = scratch_.p + 16, max_abs = scratch_.p + 24;
    CU(cuMemsetD8Async(scratch_.p, 0, scratch_.bytes, s));
    void* args[] = {&out, &ref, &n, &sums, &nans, &max_abs};
    launch(compare_, n, args, s);
    CU(cuStreamSynchronize(s));
    unsigned char raw[32];
    CU(cuMemcpyDtoH(raw, scratch_.p, sizeof raw));
    double d2, r2;
    unsigned long long bad;
    uint32_t mx_bits;
    float mx;
    std::memcpy(&d2, raw, 8);
    std::memcpy(&r2, raw + 8, 8);
    std::memcpy(&bad, raw + 16, 8);
    std::memcpy(&mx_bits, raw + 24, 4);
    std::memcpy(&mx, &mx_bits, 4);
    ErrorStats e;
    e.nans = bad;
    e.rel_err = r2 > 0 ? std::sqrt(d2 / r2) : INFINITY;
    e.max_abs = mx;
    return e;
  }

 private:
  // Grid-stride kernels: enough 256-thread blocks for `work` items, at most 8 per SM (full
  // occupancy at 2048 threads per SM).
  void launch(CUfunction f, size_t work, void** args, CUstream s) {
    size_t blocks = std::max<size_t>(1, std::min<size_t>((work + 255) / 256, size_t(sms_) * 8));
    CU(cuLaunchKernel(f, unsigned(blocks), 1, 1, 256, 1, 1, 0, s, args, nullptr));
  }

  unsigned sms_;
  DeviceBuffer scratch_;  // compare's accumulators: 2 doubles, 1 u64, 1 u32
  CUmodule mod_ = nullptr;
  CUfunction swiglu_ = nullptr, swiglu_ref_ = nullptr, fill_ = nullptr, compare_ = nullptr, spin_ = nullptr;
};

// ---- cuBLASLt: GU [M, 51200] = X [M, 5120] · W [51200, 5120]^T, all row major -----------------
//
// cuBLASLt is column major. A row-major R x C matrix with leading dimension C is, byte for byte,
// the column-major C x R matrix (its transpose) with leading dimension C. So the row-major problem
// GU = X · W^T is the column-major problem
//     GU^T [51200 x M]  =  W [51200 x 5120]  ·  X^T [5120 x M]
// with every buffer used as it lies in memory:
//   A = the W buffer, column-major 5120 x 51200, ld 5120 (= W^T);  op(A) = A^T   (TRANSA = T) = W
//   B = the X buffer, column-major 5120 x M,     ld 5120 (= X^T);  op(B) = B     (TRANSB = N) = X^T
//   D = the GU buffer, column-major 51200 x M,   ld 51200 (= GU^T)
//   m = 51200, n = M, k = 5120
// D(n, m) at n + m * 51200 is row-major GU[m][n] = sum_k X[m][k] W[n][k]. This is cuBLAS's "TN"
// case, the native one for bf16 tensor-core kernels (both operands K-major). C = D with beta = 0.
class LtGemm {
 public:
  // Layouts and the heuristic's best algorithm for M rows and one output type.
  struct Plan {
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algo{};
    size_t algo_workspace = 0;
    float waves = 0;
    ~Plan() {
      if (a) cublasLtMatrixLayoutDestroy(a);
      if (b) cublasLtMatrixLayoutDestroy(b);
      if (d) cublasLtMatrixLayoutDestroy(d);
    }
  };

  LtGemm() : workspace_(kLtWorkspace) {
    LT(cublasLtCreate(&handle_));
    LT(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    LT(cublasLtMatmulPreferenceCreate(&pref_));
    size_t ws = workspace_.bytes;
    LT(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  }
  ~LtGemm() {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    if (handle_) cublasLtDestroy(handle_);
  }
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // out_type: CUDA_R_16BF (the baseline) or CUDA_R_32F (the reference). Inputs are always bf16.
  std::unique_ptr<Plan> plan(unsigned M, cudaDataType_t out_type) const {
    auto p = std::make_unique<Plan>();
    LT(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16BF, kHidden, kGateUp, kHidden));
    LT(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16BF, kHidden, M, kHidden));
    LT(cublasLtMatrixLayoutCreate(&p->d, out_type, kGateUp, M, kGateUp));
    cublasLtMatmulHeuristicResult_t best{};
    int found = 0;
    LT(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, p->a, p->b, p->d, p->d, pref_, 1, &best, &found));
    if (found < 1 || best.state != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "cuBLASLt: no algorithm for M = %u (%s output)\n", M, out_type == CUDA_R_32F ? "fp32" : "bf16");
      std::exit(2);
    }
    p->algo = best.algo;
    p->algo_workspace = best.workspaceSize;
    p->waves = best.wavesCount;
    return p;
  }

  // D = X · W^T (row major), D of the plan's output type.
  void run(const Plan& p, CUdeviceptr X, CUdeviceptr W, CUdeviceptr D, CUstream s) const {
    const float alpha = 1.f, beta = 0.f;
    LT(cublasLtMatmul(handle_, desc_, &alpha, reinterpret_cast<const void*>(W), p.a, reinterpret_cast<const void*>(X), p.b,
                      &beta, reinterpret_cast<const void*>(D), p.d, reinterpret_cast<void*>(D), p.d, &p.algo,
                      reinterpret_cast<void*>(workspace_.p), workspace_.bytes, s));
  }

 private:
  DeviceBuffer workspace_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
};

// ---- the kernels under test --------------------------------------------------------------------
struct TestKernel {
  std::string label;  // fused, fused-control, gemm, gemm-control
  bool fused = false; // fused: writes H [M, 25600]; gemm: writes GU [M, 51200]
  std::string cubin, map;
  pipelink::Module mod;
  unsigned tile_m = 0, tile_n = 0;
  unsigned grid = 0;  // for the current M
};

// Loads the kernel and reads its tile facts.
void load_kernel(TestKernel& k) {
  must(k.mod.load(k.cubin, k.map), k.label);
  long long tm = 0, tn = 0;
  if (!k.mod.fact("tile_m", tm) || !k.mod.fact("tile_n", tn)) {
    std::fprintf(stderr, "%s: map '%s' lacks the facts tile_m and tile_n\n", k.label.c_str(), k.map.c_str());
    std::exit(2);
  }
  // TMA boxes are at most 256 elements per dimension: x/w boxes use tile_m/tile_n, the gemm's
  // output box 2 * tile_n.
  const long long widest_n = k.fused ? tn : 2 * tn;
  if (tm < 1 || tn < 1 || tm > 256 || widest_n > 256 || tn % 8 != 0) {
    std::fprintf(stderr, "%s: tile_m = %lld, tile_n = %lld do not fit the TMA boxes (box dims <= 256, 16-byte rows)\n",
                 k.label.c_str(), tm, tn);
    std::exit(2);
  }
  k.tile_m = unsigned(tm);
  k.tile_n = unsigned(tn);
}

// Sets every parameter for M (by name; a name the kernel lacks, or one left unset, is an error).
void configure_kernel(TestKernel& k, unsigned M, CUdeviceptr X, CUdeviceptr W, CUdeviceptr out, unsigned sms) {
  const CUtensorMap x_map = make_map(X, M, kHidden, k.tile_m, 64, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  const CUtensorMap w_map =
      make_map(W, kGateUp, kHidden, k.tile_n, 64, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
  const CUtensorMap out_map =
      k.fused ? make_map(out, M, kInter, 64, k.tile_n, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE)
              : make_map(out, M, kGateUp, k.tile_m, 2 * k.tile_n, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE);
  must(k.mod.set_tensormap("x_map", x_map), k.label);
  must(k.mod.set_tensormap("w_map", w_map), k.label);
  must(k.mod.set_tensormap("out_map", out_map), k.label);
  must(k.mod.set_u32("K", kHidden), k.label);
  must(k.mod.set_u32("M", M), k.label);
  must(k.mod.set_u32("N", kInter), k.label);
  must(k.mod.set_u32("n_step", k.fused ? k.tile_n : 2 * k.tile_n), k.label);
  must(k.mod.set_u32("b_stride", k.fused ? kInter : k.tile_n), k.label);
  const unsigned long long tiles = (unsigned long long)((M + k.tile_m - 1) / k.tile_m) * ((kInter + k.tile_n - 1) / k.tile_n);
  k.grid = unsigned(std::min<unsigned long long>(sms, tiles));
}

// ---- results -----------------------------------------------------------------------------------
struct Check {
  bool done = false;  // false: not checked on its own (swiglu alone is checked as cublas+swiglu)
  bool ok = true;
  std::string against;  // GU32 or H32
  ErrorStats err;
};

// One timed thing: a kernel under test or a baseline.
struct Entry {
  std::string label;
  bool has_gemm = true;  // false for swiglu alone: no GEMM flops, no weight streaming
  unsigned grid = 0;     // 0: not a PipeLink kernel
  std::function<void(CUstream)> enqueue;
  Check check;
  std::vector<float> ms;  // one per timed run
  double median = 0, min = 0, max = 0;
};

struct RefCheck {
  double max_rel_gu = 0;  // GU32 vs CPU double dot products
  double max_rel_h = 0;   // H32 vs CPU double SwiGLU of the GPU's GU32 values
  bool ok = true;
};

struct MResult {
  unsigned M = 0;
  unsigned long long x_seed = 0;
  RefCheck ref;
  size_t lt_workspace_bf16 = 0, lt_workspace_f32 = 0;
  std::vector<Entry> entries;
  std::vector<std::pair<std::string, double>> ratios;  // name, value (time / time)
  std::string selected_fused = "fused", selected_gemm = "gemm";  // the variant chosen for this M
  const Entry* find(const std::string& label) const {
    for (const Entry& e : entries)
      if (e.label == label) return &e;
    return nullptr;
  }
};

double median_of(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (double(v[n / 2 - 1]) + v[n / 2]);
}

// Weight-streaming bandwidth is reported where the GEMM is bound by reading W once: M <= 64.
bool reports_w_bw(unsigned M) { return M <= 64; }

// The activation alone moves GU in (2I bf16 per row) and H out (I bf16 per row).
double swiglu_bytes(unsigned M) { return 6.0 * M * kInter; }

// ---- the reference's own check ---------------------------------------------------------------
// kRefSamples random (row, c) with c in the gate half: GU32[row, c] and GU32[row, c + 25600]
// against CPU double dot products of the same bf16 inputs, and H32[row, c] against a CPU double
// SwiGLU of those two GPU values.
//   GU: |gpu - cpu| / max(|cpu|, ||x_row|| ||w_row|| / sqrt(K)). The second term is the typical
//       size of the dot product of these rows, so an entry that happens to be near zero does not
//       turn fp32 rounding into a large relative error, while a wrong layout (an unrelated value
//       of the typical size) still gives ~1.
//   H:  |gpu - cpu| / |cpu| (fp32 SwiGLU is accurate to a few ulps relative, at any magnitude).
RefCheck check_reference(unsigned M, CUdeviceptr X, CUdeviceptr W, CUdeviceptr GU32, CUdeviceptr H32, std::mt19937_64& rng) {
  RefCheck rc;
  std::uniform_int_distribution<unsigned> row_d(0, M - 1), col_d(0, kInter - 1);
  std::vector<uint16_t> x(kHidden), w(kHidden);
  // x holds X[row]; reads W[n] and returns the dot product and its typical size.
  auto dot_row = [&](unsigned n, double& dot, double& scale) {
    CU(cuMemcpyDtoH(w.data(), W + size_t(n) * kHidden * 2, kHidden * 2));
    double s = 0, xx = 0, ww = 0;
    for (unsigned k = 0; k < kHidden; ++k) {
      const double a = from_bf16(x[k]), b = from_bf16(w[k]);
      s += a * b;
      xx += a * a;
      ww += b * b;
    }
    dot = s;
    scale = std::sqrt(xx * ww / kHidden);
  };
  for (unsigned i = 0; i < kRefSamples; ++i) {
    const unsigned row = row_d(rng), c = col_d(rng);
    CU(cuMemcpyDtoH(x.data(), X + size_t(row) * kHidden * 2, kHidden * 2));
    float gpu_g, gpu_u, gpu_h;
    CU(cuMemcpyDtoH(&gpu_g, GU32 + (size_t(row) * kGateUp + c) * 4, 4));
    CU(cuMemcpyDtoH(&gpu_u, GU32 + (size_t(row) * kGateUp + kInter + c) * 4, 4));
    CU(cuMemcpyDtoH(&gpu_h, H32 + (size_t(row) * kInter + c) * 4, 4));
    double g, gs, u, us;
    dot_row(c, g, gs);
    dot_row(kInter + c, u, us);
    rc.max_rel_gu = std::max(rc.max_rel_gu, std::fabs(gpu_g - g) / std::max(std::fabs(g), gs));
    rc.max_rel_gu = std::max(rc.max_rel_gu, std::fabs(gpu_u - u) / std::max(std::fabs(u), us));
    const double h = double(gpu_g) / (1.0 + std::exp(-double(gpu_g))) * double(gpu_u);
    rc.max_rel_h = std::max(rc.max_rel_h, h == 0 ? std::fabs(double(gpu_h)) : std::fabs(gpu_h - h) / std::fabs(h));
  }
  rc.ok = rc.max_rel_gu <= kRefTol && rc.max_rel_h <= kRefTol;  // NaN fails
  return rc;
}

// ---- output ------------------------------------------------------------------------------------
std::string num(double v) {  // JSON number; non-finite values become null
  if (!std::isfinite(v)) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}
std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o + "\"";
}
std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}
std::string fmt(const char* f, double v) {
  char b[48];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

void print_result(const MResult& r, unsigned iters) {
  std::printf("\n== M = %u   (x seed %llu; reference vs CPU: GU max rel %.2e, H max rel %.2e: %s)\n", r.M, r.x_seed,
              r.ref.max_rel_gu, r.ref.max_rel_h, r.ref.ok ? "OK" : "FAIL");
  std::printf("  %-15s %5s %10s %10s %10s %8s %7s %10s %9s %9s  %s\n", "kernel", "grid", "median ms", "min ms", "max ms",
              "TFLOP/s", "W TB/s", "unwritten", "rel err", "max abs", "check");
  for (const Entry& e : r.entries) {
    const double tf = e.has_gemm ? flops_of(r.M) / (e.median * 1e-3) / 1e12 : NAN;
    const double bw = e.has_gemm && reports_w_bw(r.M) ? kWBytes / (e.median * 1e-3) / 1e12 : NAN;
    std::printf("  %-15s %5s %10.4f %10.4f %10.4f %8s %7s", e.label.c_str(), e.grid ? std::to_string(e.grid).c_str() : "-",
                e.median, e.min, e.max, std::isnan(tf) ? "-" : fmt("%.1f", tf).c_str(),
                std::isnan(bw) ? "-" : fmt("%.2f", bw).c_str());
    if (e.check.done)
      std::printf(" %10llu %9.2e %9.2e  %s vs %s\n", e.check.err.nans, e.check.err.rel_err, e.check.err.max_abs,
                  e.check.ok ? "OK" : "FAIL", e.check.against.c_str());
    else
      std::printf(" %10s %9s %9s  (checked as cublas+swiglu)\n", "-", "-", "-");
  }
  if (const Entry* e = r.find("swiglu"))
    std::printf("  swiglu alone moves %.1f MB: %.2f TB/s\n", swiglu_bytes(r.M) / 1e6, swiglu_bytes(r.M) / (e->median * 1e-3) / 1e12);
  for (const auto& [name, v] : r.ratios) std::printf("  %-34s %.4f\n", name.c_str(), v);
  std::printf("  (median of %u runs each, round robin, after %u warm-up runs)\n", iters, kWarmup);
}

struct RunInfo {
  std::string device, date;
  int sms = 0;
  unsigned long long seed = 0;
  unsigned iters = 0;
  std::string swiglu_cubin;
};

void write_json(const std::string& path, const RunInfo& info, const std::vector<std::unique_ptr<TestKernel>>& kernels,
                const std::vector<MResult>& results, bool all_ok) {
  std::ofstream f(path);
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(2);
  }
  f << "{\n  \"bench\": \"qwen3_32b_mlp_gateup_swiglu\",\n  \"device\": " << quoted(info.device) << ",\n  \"sms\": " << info.sms
    << ",\n  \"date\": " << quoted(info.date) << ",\n  \"seed\": " << info.seed << ",\n  \"iters\": " << info.iters
    << ",\n  \"warmup\": " << kWarmup << ",\n  \"K\": " << kHidden << ", \"I\": " << kInter << ", \"N_gate_up\": " << kGateUp
    << ",\n  \"w_bytes\": " << kWBytes << ",\n  \"w_scale\": " << num(kWScale) << ",\n  \"rel_err_tol\": " << num(kRelErrTol)
    << ", \"ref_tol\": " << num(kRefTol) << ",\n  \"cublaslt_workspace_bytes\": " << kLtWorkspace
    << ",\n  \"swiglu_cubin\": " << quoted(info.swiglu_cubin) << ",\n  \"kernels\": [";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const TestKernel& k = *kernels[i];
    f << (i ? "," : "") << "\n    {\"label\": " << quoted(k.label) << ", \"cubin\": " << quoted(k.cubin)
      << ", \"map\": " << quoted(k.map) << ", \"kernel\": " << quoted(k.mod.kernel_name()) << ", \"tile_m\": " << k.tile_m
      << ", \"tile_n\": " << k.tile_n << ", \"threads\": " << k.mod.threads() << ", \"smem_bytes\": " << k.mod.smem_bytes()
      << "}";
  }
  f << "\n  ],\n  \"results\": [";
  for (size_t ri = 0; ri < results.size(); ++ri) {
    const MResult& r = results[ri];
    f << (ri ? "," : "") << "\n    {\"M\": " << r.M << ", \"x_seed\": " << r.x_seed << ", \"flops\": " << num(flops_of(r.M))
      << ",\n     \"reference_check\": {\"max_rel_gu\": " << num(r.ref.max_rel_gu) << ", \"max_rel_h\": " << num(r.ref.max_rel_h)
      << ", \"samples\": " << kRefSamples << ", \"ok\": " << (r.ref.ok ? "true" : "false") << "},"
      << "\n     \"cublaslt_algo_workspace_bytes\": {\"bf16_out\": " << r.lt_workspace_bf16 << ", \"f32_out\": " << r.lt_workspace_f32
      << "},\n     \"entries\": [";
    for (size_t ei = 0; ei < r.entries.size(); ++ei) {
      const Entry& e = r.entries[ei];
      const double tf = e.has_gemm ? flops_of(r.M) / (e.median * 1e-3) / 1e12 : NAN;
      const double bw = e.has_gemm && reports_w_bw(r.M) ? kWBytes / (e.median * 1e-3) / 1e12 : NAN;
      f << (ei ? "," : "") << "\n      {\"label\": " << quoted(e.label) << ", \"grid\": " << e.grid
        << ", \"median_ms\": " << num(e.median) << ", \"min_ms\": " << num(e.min) << ", \"max_ms\": " << num(e.max)
        << ", \"tflops\": " << num(tf) << ", \"w_TBps\": " << num(bw);
      if (!e.has_gemm)
        f << ", \"bytes\": " << num(swiglu_bytes(r.M)) << ", \"TBps\": " << num(swiglu_bytes(r.M) / (e.median * 1e-3) / 1e12);
      if (e.check.done)
        f << ", \"checked_against\": " << quoted(e.check.against) << ", \"unwritten\": " << e.check.err.nans
          << ", \"rel_err\": " << num(e.check.err.rel_err) << ", \"max_abs_err\": " << num(e.check.err.max_abs)
          << ", \"ok\": " << (e.check.ok ? "true" : "false");
      f << ", \"runs_ms\": [";
      for (size_t i = 0; i < e.ms.size(); ++i) f << (i ? ", " : "") << num(e.ms[i]);
      f << "]}";
    }
    f << "\n     ],\n     \"ratios\": {";
    for (size_t i = 0; i < r.ratios.size(); ++i)
      f << (i ? ", " : "") << quoted(r.ratios[i].first) << ": " << num(r.ratios[i].second);
    f << "}}";
  }
  f << "\n  ],\n  \"all_ok\": " << (all_ok ? "true" : "false") << "\n}\n";
}

void write_md(const std::string& path, const RunInfo& info, const std::vector<MResult>& results, bool all_ok) {
  std::ofstream f(path);
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(2);
  }
  auto cell = [](const Entry* e, auto&& fn) { return e ? fn(*e) : std::string("—"); };
  f << "# Qwen3-32B MLP gate/up + SwiGLU (X[M,5120] · W[51200,5120]^T, SwiGLU to H[M,25600])\n\n"
    << info.device << " (" << info.sms << " SMs), " << info.date << ", seed " << info.seed << ", median of " << info.iters
    << " runs (round robin, " << kWarmup << " warm-up). TFLOP/s count 2·M·5120·51200. "
    << "All checks " << (all_ok ? "passed" : "**did not pass**") << ".\n\n"
    << "## Summary (ms)\n\n"
    << "fused and gemm are the variant selected for the M before timing, from the tile facts alone: the 64-row "
       "tile for M <= 64, else the 128-row tile with the least quantised work (ceil(tiles / SMs) x tile area). "
       "W TB/s = 524 MB of weights over the gemm time (M <= 64).\n\n"
    << "| M | variant | fused | fused-control | gemm | gemm-control | gemm W TB/s | cublas | swiglu | cublas+swiglu | fused / (cublas+swiglu) "
       "| gemm / cublas | fused linked / control | gemm linked / control |\n"
    << "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const MResult& r : results) {
    auto ms = [&](const char* l) { return cell(r.find(l), [](const Entry& e) { return fmt("%.4f", e.median); }); };
    auto ratio = [&](const std::string& name) {
      for (const auto& [n, v] : r.ratios)
        if (n == name) return fmt("%.3f", v);
      return std::string("—");
    };
    const std::string fs = r.selected_fused, gs = r.selected_gemm;
    const Entry* ge = r.find(gs);
    const std::string wbw = ge && reports_w_bw(r.M) ? fmt("%.2f", kWBytes / (ge->median * 1e-3) / 1e12) : std::string("—");
    f << "| " << r.M << " | " << fs << " | " << ms(fs.c_str()) << " | "
      << ms((fs + "-control").c_str()) << " | " << ms(gs.c_str()) << " | " << ms((gs + "-control").c_str()) << " | " << wbw
      << " | " << ms("cublas") << " | " << ms("swiglu") << " | " << ms("cublas+swiglu") << " | "
      << ratio("fused / (cublas+swiglu)") << " | " << ratio("gemm / cublas") << " | " << ratio("fused linked / control") << " | "
      << ratio("gemm linked / control") << " |\n";
  }
  for (const MResult& r : results) {
    f << "\n## M = " << r.M << "\n\nx seed " << r.x_seed << "; reference vs CPU double: GU max rel " << fmt("%.2e", r.ref.max_rel_gu)
      << ", H max rel " << fmt("%.2e", r.ref.max_rel_h) << " (" << (r.ref.ok ? "OK" : "**FAIL**") << ").\n\n"
      << "| kernel | grid | median ms | min ms | max ms | TFLOP/s | W TB/s | unwritten | rel err | check |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const Entry& e : r.entries) {
      const double tf = e.has_gemm ? flops_of(r.M) / (e.median * 1e-3) / 1e12 : NAN;
      const double bw = e.has_gemm && reports_w_bw(r.M) ? kWBytes / (e.median * 1e-3) / 1e12 : NAN;
      f << "| " << e.label << " | " << (e.grid ? std::to_string(e.grid) : "—") << " | " << fmt("%.4f", e.median) << " | "
        << fmt("%.4f", e.min) << " | " << fmt("%.4f", e.max) << " | " << (std::isnan(tf) ? "—" : fmt("%.1f", tf)) << " | "
        << (std::isnan(bw) ? "—" : fmt("%.2f", bw)) << " | ";
      if (e.check.done)
        f << e.check.err.nans << " | " << fmt("%.2e", e.check.err.rel_err) << " | " << (e.check.ok ? "OK" : "**FAIL**") << " vs "
          << e.check.against << " |\n";
      else
        f << "— | — | as cublas+swiglu |\n";
    }
    if (!r.ratios.empty()) {
      f << "\n";
      for (const auto& [n, v] : r.ratios) f << "- " << n << ": " << fmt("%.4f", v) << "\n";
    }
  }
}

std::vector<unsigned> parse_m_list(const std::string& s) {
  std::vector<unsigned> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    const unsigned long m = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || m == 0 || m > (1u << 20)) {
      std::fprintf(stderr, "--M: bad size '%s'\n", item.c_str());
      std::exit(2);
    }
    v.push_back(unsigned(m));
  }
  return v;
}

// swiglu.cubin next to this executable.
std::string default_swiglu_cubin(const char* argv0) {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string exe = n > 0 ? std::string(buf, size_t(n)) : std::string(argv0);
  const size_t slash = exe.rfind('/');
  return (slash == std::string::npos ? std::string(".") : exe.substr(0, slash)) + "/swiglu.cubin";
}

constexpr char kUsage[] =
    "usage: bench_qwen_mlp [--fused CUBIN MAP] [--fused-control CUBIN MAP] [--fused-small CUBIN MAP]\n"
    "                      [--fused-small-control CUBIN MAP] [--gemm CUBIN MAP] [--gemm-small CUBIN MAP]\n"
    "                      [--gemm-small-control CUBIN MAP]\n"
    "                      [--gemm-control CUBIN MAP] [--M 16,64,256,1024,2048,4096,8192] [--iters 20]\n"
    "                      [--json PATH] [--md PATH] [--swiglu-cubin PATH]\n";

}  // namespace

int main(int argc, char** argv) {
  // ---- arguments ----
  std::vector<std::unique_ptr<TestKernel>> kernels;
  std::vector<unsigned> Ms(std::begin(kDefaultM), std::end(kDefaultM));
  unsigned iters = 20;
  std::string json_path, md_path, swiglu_cubin = default_swiglu_cubin(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n%s", a.c_str(), kUsage);
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (a == "--fused" || a == "--fused-control" || a == "--fused-small" || a == "--fused-small-control" || a == "--gemm" ||
        a == "--gemm-control" || a == "--gemm-small" || a == "--gemm-small-control" || a == "--fused-medium" ||
        a == "--fused-medium-control" || a == "--gemm-medium" || a == "--gemm-medium-control" || a == "--fused-narrow" ||
        a == "--fused-narrow-control" || a == "--gemm-narrow" || a == "--gemm-narrow-control") {
      auto k = std::make_unique<TestKernel>();
      k->label = a.substr(2);
      k->fused = a.rfind("--fused", 0) == 0;
      k->cubin = next();
      k->map = next();
      for (const auto& other : kernels)
        if (other->label == k->label) {
          std::fprintf(stderr, "%s given twice\n", a.c_str());
          return 2;
        }
      kernels.push_back(std::move(k));
    } else if (a == "--M") Ms = parse_m_list(next());
    else if (a == "--iters") iters = unsigned(std::max(1l, std::strtol(next().c_str(), nullptr, 10)));
    else if (a == "--json") json_path = next();
    else if (a == "--md") md_path = next();
    else if (a == "--swiglu-cubin") swiglu_cubin = next();
    else if (a == "-h" || a == "--help") { std::fputs(kUsage, stdout); return 0; }
    else { std::fprintf(stderr, "unknown argument %s\n%s", a.c_str(), kUsage); return 2; }
  }
  // Fixed report order, whatever the command-line order.
  auto rank = [](const std::string& l) {
    static const char* order[] = {"fused", "fused-control", "fused-medium", "fused-medium-control", "fused-narrow",
                                  "fused-narrow-control", "fused-small", "fused-small-control", "gemm", "gemm-control",
                                  "gemm-medium", "gemm-medium-control", "gemm-narrow", "gemm-narrow-control",
                                  "gemm-small", "gemm-small-control"};
    for (int i = 0; i < 16; ++i)
      if (l == order[i]) return i;
    return 16;
  };
  std::stable_sort(kernels.begin(), kernels.end(), [&](const auto& a, const auto& b) { return rank(a->label) < rank(b->label); });

  // ---- device ----
  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CU(cuDevicePrimaryCtxRetain(&ctx, dev));  // the primary context: the one cuBLASLt's runtime uses too
  CU(cuCtxSetCurrent(ctx));
  RunInfo info;
  {
    char name[256];
    CU(cuDeviceGetName(name, sizeof name, dev));
    info.device = name;
  }
  CU(cuDeviceGetAttribute(&info.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  info.date = utc_now();
  info.iters = iters;
  info.swiglu_cubin = swiglu_cubin;
  info.seed = static_cast<unsigned long long>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  const unsigned sms = unsigned(info.sms);
  CUstream stream;
  CU(cuStreamCreate(&stream, CU_STREAM_DEFAULT));

  for (auto& k : kernels) load_kernel(*k);
  HelperKernels helpers(swiglu_cubin, sms);
  LtGemm lt;

  std::printf("device: %s (%d SMs), %s\n", info.device.c_str(), info.sms, info.date.c_str());
  std::printf("workload: GU[M,%u] = X[M,%u] . W[%u,%u]^T (bf16, fp32 accumulate), H[M,%u] = silu(gate) * up\n", kGateUp,
              kHidden, kGateUp, kHidden, kInter);
  std::printf("seed %llu (W from the seed, X from seed + M); %u timed runs each after %u warm-up\n", info.seed, iters, kWarmup);
  for (const auto& k : kernels)
    std::printf("kernel %-14s %s (%s): %s, %u threads, %u B smem, tile %ux%u\n", k->label.c_str(), k->cubin.c_str(),
                k->map.c_str(), k->mod.kernel_name().c_str(), k->mod.threads(), k->mod.smem_bytes(), k->tile_m, k->tile_n);
  if (kernels.empty()) std::printf("no kernels under test given: baselines only\n");

  // ---- buffers, sized for the largest M ----
  const size_t max_m = *std::max_element(Ms.begin(), Ms.end());
  DeviceBuffer W(kWBytes);
  DeviceBuffer X(max_m * kHidden * 2);
  DeviceBuffer GU(max_m * kGateUp * 2);     // cuBLASLt bf16 output
  DeviceBuffer H(max_m * kInter * 2);       // swiglu_bf16 output
  DeviceBuffer OUT(max_m * kGateUp * 2);    // the kernels under test write here (fused: H, gemm: GU)
  DeviceBuffer GU32(max_m * kGateUp * 4);   // reference
  DeviceBuffer H32(max_m * kInter * 4);     // reference
  helpers.fill_random(W.p, size_t(kGateUp) * kHidden, info.seed, kWScale, stream);

  std::vector<MResult> results;
  bool all_ok = true;
  // Two events per timed entry (at most 4 kernels under test + 3 baselines).
  std::vector<CUevent> ev(2 * (kernels.size() + 3));
  for (CUevent& e : ev) CU(cuEventCreate(&e, CU_EVENT_DEFAULT));

  for (const unsigned M : Ms) {
    MResult r;
    r.M = M;
    r.x_seed = info.seed + M;
    const size_t gu_n = size_t(M) * kGateUp, h_n = size_t(M) * kInter;
    helpers.fill_random(X.p, size_t(M) * kHidden, r.x_seed, 1.f, stream);

    // -- the fp32 reference, and its spot check against the CPU --
    const auto plan16 = lt.plan(M, CUDA_R_16BF);
    const auto plan32 = lt.plan(M, CUDA_R_32F);
    r.lt_workspace_bf16 = plan16->algo_workspace;
    r.lt_workspace_f32 = plan32->algo_workspace;
    lt.run(*plan32, X.p, W.p, GU32.p, stream);
    helpers.swiglu_ref(GU32.p, H32.p, M, kInter, stream);
    CU(cuStreamSynchronize(stream));
    std::mt19937_64 rng(r.x_seed);
    r.ref = check_reference(M, X.p, W.p, GU32.p, H32.p, rng);
    all_ok &= r.ref.ok;

    // -- what runs: the kernels under test, then the baselines --
    for (auto& kp : kernels) {
      TestKernel& k = *kp;
      configure_kernel(k, M, X.p, W.p, OUT.p, sms);
      Entry e;
      e.label = k.label;
      e.grid = k.grid;
      e.enqueue = [&k](CUstream s) { must(k.mod.launch(k.grid, s), k.label); };
      r.entries.push_back(std::move(e));
    }
    const LtGemm::Plan& p16 = *plan16;
    auto cublas = [&](CUstream s) { lt.run(p16, X.p, W.p, GU.p, s); };
    auto swiglu = [&, M](CUstream s) { helpers.swiglu_bf16(GU.p, H.p, M, kInter, s); };
    auto baseline = [&](const char* label, bool has_gemm, std::function<void(CUstream)> fn) {
      Entry e;
      e.label = label;
      e.has_gemm = has_gemm;
      e.enqueue = std::move(fn);
      r.entries.push_back(std::move(e));
    };
    baseline("cublas", true, cublas);
    baseline("swiglu", false, swiglu);
    baseline("cublas+swiglu", true, [cublas, swiglu](CUstream s) { cublas(s); swiglu(s); });  // one timed region

    // -- correctness: poison what is checked, run once, compare on the GPU --
    for (Entry& e : r.entries) {
      CUdeviceptr out = 0;
      size_t n = 0;
      if (e.label == "swiglu") continue;  // checked as part of cublas+swiglu
      if (e.label == "cublas") {
        out = GU.p, n = gu_n, e.check.against = "GU32";
      } else if (e.label == "cublas+swiglu") {
        CU(cuMemsetD8Async(GU.p, 0xFF, gu_n * 2, stream));
        out = H.p, n = h_n, e.check.against = "H32";
      } else {
        const bool fused = e.label.rfind("fused", 0) == 0;
        out = OUT.p, n = fused ? h_n : gu_n, e.check.against = fused ? "H32" : "GU32";
      }
      CU(cuMemsetD8Async(out, 0xFF, n * 2, stream));  // 0xFFFF is a bf16 NaN
      e.enqueue(stream);
      e.check.err = helpers.compare(out, e.check.against == "H32" ? H32.p : GU32.p, n, stream);
      e.check.done = true;
      e.check.ok = e.check.err.nans == 0 && std::isfinite(e.check.err.rel_err) && e.check.err.rel_err <= kRelErrTol;
      all_ok &= e.check.ok;
    }

    // -- timing: warm up, then rounds in which every entry runs once (round robin), each run
    //    between its own pair of events. A round starts behind a GPU spin, so the host enqueues the
    //    whole round while the GPU is still busy: no host launch latency lands inside a run's events.
    for (Entry& e : r.entries)
      for (unsigned w = 0; w < kWarmup; ++w) e.enqueue(stream);
    CU(cuStreamSynchronize(stream));
    for (unsigned it = 0; it < iters; ++it) {
      helpers.spin(kSpinNs, stream);
      for (size_t i = 0; i < r.entries.size(); ++i) {
        CU(cuEventRecord(ev[2 * i], stream));
        r.entries[i].enqueue(stream);
        CU(cuEventRecord(ev[2 * i + 1], stream));
      }
      CU(cuStreamSynchronize(stream));
      for (size_t i = 0; i < r.entries.size(); ++i) {
        float t = 0;
        CU(cuEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
        r.entries[i].ms.push_back(t);
      }
    }
    for (Entry& e : r.entries) {
      e.median = median_of(e.ms);
      e.min = *std::min_element(e.ms.begin(), e.ms.end());
      e.max = *std::max_element(e.ms.begin(), e.ms.end());
    }

    // -- ratios (time over time; < 1 means the first is faster) --
    auto ratio = [&](const char* name, const char* a, const char* b) {
      const Entry *ea = r.find(a), *eb = r.find(b);
      if (ea && eb) r.ratios.emplace_back(name, ea->median / eb->median);
    };
    // The variant a caller would pick for this M, decided before timing from the tile facts
    // alone (a library heuristic, not the fastest measured): the 64-row tile (weight streaming)
    // for M <= 64; otherwise the 128-row tile with the least quantised work, ceil(tiles / SMs)
    // waves of tile_m x tile_n each (ties: the wider tile).
    auto select = [&](const std::string& kind) {
      std::string best;
      double best_cost = 0;
      unsigned best_n = 0;
      for (const auto& k : kernels) {
        if (k->label.find("control") != std::string::npos || k->label.rfind(kind, 0) != 0) continue;
        const bool small_tile = k->tile_m < 128;
        if (small_tile != (r.M <= 64)) continue;
        const double tiles = double((r.M + k->tile_m - 1) / k->tile_m) * double((kInter + k->tile_n - 1) / k->tile_n);
        const double cost = std::ceil(tiles / sms) * k->tile_m * k->tile_n;
        if (best.empty() || cost < best_cost || (cost == best_cost && k->tile_n > best_n)) {
          best = k->label;
          best_cost = cost;
          best_n = k->tile_n;
        }
      }
      return best.empty() ? kind : best;
    };
    const std::string f = select("fused"), g = select("gemm");
    r.selected_fused = f;
    r.selected_gemm = g;
    ratio("fused / (cublas+swiglu)", f.c_str(), "cublas+swiglu");
    ratio("fused-control / (cublas+swiglu)", (f + "-control").c_str(), "cublas+swiglu");
    ratio("gemm / cublas", g.c_str(), "cublas");
    ratio("gemm-control / cublas", (g + "-control").c_str(), "cublas");
    ratio("fused linked / control", f.c_str(), (f + "-control").c_str());
    ratio("gemm linked / control", g.c_str(), (g + "-control").c_str());


    print_result(r, iters);
    std::fflush(stdout);
    // The entries' closures refer to this iteration's plans: drop them before the plans go.
    for (Entry& e : r.entries) e.enqueue = nullptr;
    results.push_back(std::move(r));
  }

  if (!json_path.empty()) write_json(json_path, info, kernels, results, all_ok);
  if (!md_path.empty()) write_md(md_path, info, results, all_ok);
  for (CUevent e : ev) CU(cuEventDestroy(e));
  CU(cuStreamSynchronize(stream));
  CU(cuStreamDestroy(stream));
  std::printf("\n%s\n", all_ok ? "PASS: every check passed" : "FAIL: a check failed (see above)");
  return all_ok ? 0 : 1;
}
