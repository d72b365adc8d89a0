// bench/common/gemm_baselines.h — the GEMM baselines of the benches, row-major
//     D[M, N] = A[M, K] · B[N, K]^T      (A = activations, B = weights; bf16 in, fp32 compute)
//   LtGemm        cuBLASLt, 32 MiB workspace: the heuristic's top algorithms (32 requested; it offers
//                 8 for these shapes on an H200 with CUDA 13) plus configurations enumerated from
//                 every algorithm id cuBLASLt has for bf16 x bf16 -> out, fp32 compute
//                 (cublasLtMatmulAlgoGetIds / AlgoInit, their capabilities: tiles, stages, split-K,
//                 CTA swizzle, cluster shapes), each kept only where cublasLtMatmulAlgoCheck accepts
//                 it with a workspace <= 32 MiB, duplicates of the heuristic's dropped. Autotune:
//                 every candidate timed once (after one untimed run) within a time cap, then the
//                 fastest `finalists` (>= 16) and the heuristic's first timed with repetitions
//                 (median); the fastest finalist is the baseline, the heuristic's first beside it
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
    int rank = 0;             // position in the candidate list (0 = the heuristic's first choice)
    bool enumerated = false;  // true: from AlgoGetIds/AlgoInit + AlgoCheck, not the heuristic
    double screen_ms = NAN;   // the one timed screening run; NaN: not screened (time cap) or failed
    double tuned_ms = NAN;    // median of the final timing runs; NaN: not a finalist or failed
    bool failed = false;      // cublasLtMatmul refused it
    std::string describe() const;  // "heuristic rank 3: algo 66, tile 12, stages 8, splitK 1, ..."
  };
  struct Counts {             // what plan() and autotune() saw, for the record
    int heuristic_requested = 0, heuristic_offered = 0;
    int algo_ids = 0, algo_ids_init = 0;   // ids from AlgoGetIds; those AlgoInit accepted
    long configs_checked = 0, configs_accepted = 0, duplicates = 0, over_workspace = 0;
    bool check_capped = false;             // the check budget (count or wall time) ran out
    double plan_s = 0;                     // host seconds spent enumerating and checking
    int screened = 0, screen_failed = 0, finalists = 0;
    bool screen_capped = false;            // the screening time cap left candidates untimed
    double autotune_s = 0;                 // wall seconds of autotune()
  };
  struct Plan {
    unsigned M = 0, N = 0, K = 0;
    cudaDataType_t out = CUDA_R_16BF;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    std::vector<Algo> algos;  // the heuristic's, in its order, then the enumerated ones
    int best = 0;             // index into algos: the fastest after autotune(); 0 before
    Counts counts;
    ~Plan();
  };

  explicit LtGemm(size_t workspace_bytes = kGemmWorkspace);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // The heuristic's top `requested` algorithms for this shape and output type (exit 2 if none),
  // then, when `enumerate`, every configuration AlgoCheck accepts (see the top of this file), up to
  // `max_checks` AlgoCheck calls and `max_check_s` host seconds.
  std::unique_ptr<Plan> plan(unsigned M, unsigned N, unsigned K, cudaDataType_t out, int requested, bool enumerate = false,
                             long max_checks = 20000, double max_check_s = 2.0) const;
  // D = A · B^T with algorithm `index` of the plan.
  void run(const Plan& p, int index, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream s) const;
  // false (and nothing enqueued after the failure) if the algorithm refuses the problem.
  bool try_run(const Plan& p, int index, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream s) const;
  // Screening: each candidate once untimed, once timed, in list order (the heuristic's, then the
  // enumerated ones of the ids it picked, then the rest), until `screen_s` seconds have passed
  // (the heuristic's and `finalists` enumerated ones are always screened). Finals: the `finalists` fastest screened and the
  // heuristic's first, each `warmup` runs then `reps` timed runs (median); sets p.best.
  void autotune(Plan& p, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream s, unsigned warmup, unsigned reps,
                int finalists = 16, double screen_s = 2.0) const;
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
