// bench/common/gemm_baselines.cpp — see gemm_baselines.h.
#include "gemm_baselines.h"

#include <algorithm>

namespace plbench {

std::string LtGemm::Algo::describe() const {
  int id = -1, tile = -1, stages = -1, splitk = -1, swizzle = -1, reduction = -1, cluster = -1;
  size_t got = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction, sizeof reduction, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, &got);
  char b[200];
  std::snprintf(b, sizeof b, "rank %d: algo %d, tile %d, stages %d, splitK %d, reduction %d, swizzle %d, cluster %d, workspace %zu B",
                rank, id, tile, stages, splitk, reduction, swizzle, cluster, workspace);
  return b;
}

LtGemm::Plan::~Plan() {
  if (a) cublasLtMatrixLayoutDestroy(a);
  if (b) cublasLtMatrixLayoutDestroy(b);
  if (d) cublasLtMatrixLayoutDestroy(d);
}

LtGemm::LtGemm(size_t workspace_bytes) : workspace_(workspace_bytes) {
  LT(cublasLtCreate(&handle_));
  LT(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  LT(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  LT(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  LT(cublasLtMatmulPreferenceCreate(&pref_));
  size_t ws = workspace_.bytes;
  LT(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
}

LtGemm::~LtGemm() {
  if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  if (handle_) cublasLtDestroy(handle_);
}

std::unique_ptr<LtGemm::Plan> LtGemm::plan(unsigned M, unsigned N, unsigned K, cudaDataType_t out, int requested) const {
  auto p = std::make_unique<Plan>();
  p->M = M, p->N = N, p->K = K, p->out = out;
  LT(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16BF, K, N, K));   // the B buffer (weights), op = T
  LT(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16BF, K, M, K));   // the A buffer (activations)
  LT(cublasLtMatrixLayoutCreate(&p->d, out, N, M, N));
  std::vector<cublasLtMatmulHeuristicResult_t> res(size_t(std::max(1, requested)));
  int found = 0;
  LT(cublasLtMatmulAlgoGetHeuristic(handle_, desc_, p->a, p->b, p->d, p->d, pref_, int(res.size()), res.data(), &found));
  for (int i = 0; i < found; ++i) {
    if (res[size_t(i)].state != CUBLAS_STATUS_SUCCESS) continue;
    Algo a;
    a.algo = res[size_t(i)].algo;
    a.workspace = res[size_t(i)].workspaceSize;
    a.waves = res[size_t(i)].wavesCount;
    a.rank = i;
    p->algos.push_back(a);
  }
  if (p->algos.empty()) die("cuBLASLt: no algorithm for M = " + std::to_string(M) + ", N = " + std::to_string(N) + ", K = " + std::to_string(K));
  return p;
}

bool LtGemm::try_run(const Plan& p, int index, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream s) const {
  const float alpha = 1.f, beta = 0.f;
  return cublasLtMatmul(handle_, desc_, &alpha, reinterpret_cast<const void*>(B), p.a, reinterpret_cast<const void*>(A), p.b, &beta,
                        reinterpret_cast<const void*>(D), p.d, reinterpret_cast<void*>(D), p.d, &p.algos[size_t(index)].algo,
                        reinterpret_cast<void*>(workspace_.p), workspace_.bytes, s) == CUBLAS_STATUS_SUCCESS;
}

void LtGemm::run(const Plan& p, int index, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream s) const {
  const float alpha = 1.f, beta = 0.f;
  LT(cublasLtMatmul(handle_, desc_, &alpha, reinterpret_cast<const void*>(B), p.a, reinterpret_cast<const void*>(A), p.b, &beta,
                    reinterpret_cast<const void*>(D), p.d, reinterpret_cast<void*>(D), p.d, &p.algos[size_t(index)].algo,
                    reinterpret_cast<void*>(workspace_.p), workspace_.bytes, s));
}

void LtGemm::autotune(Plan& p, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream s, unsigned warmup, unsigned reps) const {
  CUevent e0, e1;
  CU(cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CU(cuEventCreate(&e1, CU_EVENT_DEFAULT));
  double best = INFINITY;
  for (size_t i = 0; i < p.algos.size(); ++i) {
    bool ok = true;
    for (unsigned w = 0; w < warmup && ok; ++w) ok = try_run(p, int(i), A, B, D, s);
    if (!ok) {
      CU(cuStreamSynchronize(s));
      continue;  // tuned_ms stays NaN
    }
    std::vector<double> t;
    for (unsigned r = 0; r < reps; ++r) {
      CU(cuEventRecord(e0, s));
      run(p, int(i), A, B, D, s);
      CU(cuEventRecord(e1, s));
      CU(cuEventSynchronize(e1));
      float ms = 0;
      CU(cuEventElapsedTime(&ms, e0, e1));
      t.push_back(ms);
    }
    p.algos[i].tuned_ms = stats_of(t).median;
    if (p.algos[i].tuned_ms < best) best = p.algos[i].tuned_ms, p.best = int(i);
  }
  CU(cuEventDestroy(e0));
  CU(cuEventDestroy(e1));
  if (!std::isfinite(best)) die("cuBLASLt: no algorithm ran for M = " + std::to_string(p.M));
}

CublasGemmEx::CublasGemmEx(size_t workspace_bytes) : workspace_(workspace_bytes) {
  LT(cublasCreate(&handle_));
  LT(cublasSetWorkspace(handle_, reinterpret_cast<void*>(workspace_.p), workspace_.bytes));
}
CublasGemmEx::~CublasGemmEx() {
  if (handle_) cublasDestroy(handle_);
}

void CublasGemmEx::run(unsigned M, unsigned N, unsigned K, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, cudaDataType_t out, CUstream s) {
  LT(cublasSetStream(handle_, reinterpret_cast<cudaStream_t>(s)));
  const float alpha = 1.f, beta = 0.f;
  LT(cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, int(N), int(M), int(K), &alpha, reinterpret_cast<const void*>(B), CUDA_R_16BF,
                  int(K), reinterpret_cast<const void*>(A), CUDA_R_16BF, int(K), &beta, reinterpret_cast<void*>(D), out, int(N),
                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace plbench
