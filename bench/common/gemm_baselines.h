// bench/common/gemm_baselines.h — the GEMM baselines of the benches, row-major
//     D[M, N] = A[M, K] · B[N, K]^T      (A = activations, B = weights; bf16 in, fp32 compute)
//   LtGemm        cuBLASLt: the heuristic's top algorithms (32 requested, 32 MiB workspace; where it
//                 offers fewer, widened with checked configurations next to its own up to the count
//                 asked), each timed ("autotuned") on the real operands; the fastest is the
//                 baseline, the heuristic's first is kept beside it
//   CublasGemmEx  cublasGemmEx(CUBLAS_OP_T, CUBLAS_OP_N, ..., CUBLAS_COMPUTE_32F, GEMM_DEFAULT)
//                 with a 32 MiB workspace: the call torch.mm makes for bf16
//
// cuBLAS is column major. A row-major R x C matrix with leading dimension C is, byte for byte, the
// column-major C x R matrix (its transpose). So D = A · B^T (row major) is, column major,
//     D^T [N x M] = B^T^T · A^T = op(Bbuf) · Abuf,  op = transpose ("TN"), m = N, n = M, k = K,
// every buffer used as it lies in memory: cuBLAS's native case for bf16 tensor cores.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <memory>
#include <string>
#include <vector>

#include "bench.h"

#define LT(x)                                                                                                  \
  do {                                                                                                         \
    cublasStatus_t s_ = (x);                                                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                         \
      std::fprintf(stderr, "%s failed: %s (%s)\n", #x, cublasLtGetStatusName(s_), cublasLtGetStatusString(s_)); \
      std::exit(2);                                                                                            \
    }                                                                                                          \
  } while (0)

namespace plbench {

constexpr size_t kGemmWorkspace = size_t(32) << 20;  // 32 MiB, as PyTorch gives cuBLAS on Hopper

class LtGemm {
 public:
  struct Algo {
    cublasLtMatmulAlgo_t algo{};
    size_t workspace = 0;
    float waves = 0;
    int rank = 0;           // position in the candidate list (0 = the heuristic's first choice)
    int variant_of = -1;    // >= 0: a configuration next to the heuristic's algorithm of this rank
    double tuned_ms = NAN;  // median of the autotuning runs; NaN: failed to run
    std::string describe() const;  // "rank 3: tile 12, stages 8, splitK 1, swizzle 0, ..."
  };
  struct Plan {
    unsigned M = 0, N = 0, K = 0;
    cudaDataType_t out = CUDA_R_16BF;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    std::vector<Algo> algos;  // in heuristic order
    int best = 0;             // index into algos: the fastest after autotune(); 0 before
    ~Plan();
  };

  explicit LtGemm(size_t workspace_bytes = kGemmWorkspace);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // The heuristic's top `requested` algorithms for this shape and output type (exit 2 if none).
  std::unique_ptr<Plan> plan(unsigned M, unsigned N, unsigned K, cudaDataType_t out, int requested) const;
  // D = A · B^T with algorithm `index` of the plan.
  void run(const Plan& p, int index, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream s) const;
  // false (and nothing enqueued after the failure) if the algorithm refuses the problem.
  bool try_run(const Plan& p, int index, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream s) const;
  // Times every algorithm (warmup runs, then `reps` runs each timed, median) and sets p.best.
  void autotune(Plan& p, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream s, unsigned warmup, unsigned reps) const;
  size_t workspace_bytes() const { return workspace_.bytes; }

 private:
  DeviceBuffer workspace_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
};

class CublasGemmEx {
 public:
  explicit CublasGemmEx(size_t workspace_bytes = kGemmWorkspace);
  ~CublasGemmEx();
  CublasGemmEx(const CublasGemmEx&) = delete;
  CublasGemmEx& operator=(const CublasGemmEx&) = delete;
  void run(unsigned M, unsigned N, unsigned K, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, cudaDataType_t out, CUstream s);

 private:
  DeviceBuffer workspace_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace plbench
