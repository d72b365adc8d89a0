// bench/common/gemm_baselines.cpp — see gemm_baselines.h.
#include "gemm_baselines.h"

#include <algorithm>
#include <cstring>

namespace plbench {

std::string LtGemm::Algo::describe() const {
  int32_t id = -1, splitk = -1;
  uint32_t tile = 0, stages = 0, swizzle = 0, reduction = 0;
  uint16_t cluster = 0;
  size_t got = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction, sizeof reduction, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, &got);
  char b[240];
  std::snprintf(b, sizeof b, "%s %d: algo %d, tile %u, stages %u, splitK %d, reduction %u, swizzle %u, cluster %u, workspace %zu B",
                variant_of < 0 ? "heuristic rank" : "variant of rank", variant_of < 0 ? rank : variant_of, id, tile, stages, splitk,
                reduction, swizzle, unsigned(cluster), workspace);
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
  // The heuristic may offer fewer than asked (8 for these shapes on an H200 with CUDA 13). Then the
  // candidates are widened with configurations next to its own: each of its algorithms with every
  // supported stage count, CTA swizzle on/off and split-K 1/2/4, each checked by
  // cublasLtMatmulAlgoCheck (which also gives its workspace), duplicates dropped, in rank order.
  const size_t heuristic = p->algos.size();
  auto same = [&](const cublasLtMatmulAlgo_t& x) {
    for (const Algo& a : p->algos)
      if (std::memcmp(&a.algo, &x, sizeof x) == 0) return true;
    return false;
  };
  for (size_t h = 0; h < heuristic && p->algos.size() < size_t(requested); ++h) {
    const cublasLtMatmulAlgo_t base = p->algos[h].algo;
    size_t got = 0;
    uint32_t stage_ids[64];
    std::vector<uint32_t> stages;
    if (cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_STAGES_IDS, stage_ids, sizeof stage_ids, &got) == CUBLAS_STATUS_SUCCESS)
      stages.assign(stage_ids, stage_ids + std::min<size_t>(got / sizeof(uint32_t), 64));
    uint32_t base_stage = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&base, CUBLASLT_ALGO_CONFIG_STAGES_ID, &base_stage, sizeof base_stage, &got);
    if (stages.empty()) stages.push_back(base_stage);
    int32_t splitk_ok = 0;
    cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &splitk_ok, sizeof splitk_ok, &got);
    uint32_t swz_ok = 0;
    cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &swz_ok, sizeof swz_ok, &got);
    for (uint32_t st : stages)
      for (uint32_t swz = 0; swz <= (swz_ok ? 1u : 0u); ++swz)
        for (int32_t sk : {1, 2, 4}) {
          if (sk > 1 && !splitk_ok) continue;
          if (p->algos.size() >= size_t(requested)) break;
          cublasLtMatmulAlgo_t v = base;
          if (cublasLtMatmulAlgoConfigSetAttribute(&v, CUBLASLT_ALGO_CONFIG_STAGES_ID, &st, sizeof st) != CUBLAS_STATUS_SUCCESS ||
              cublasLtMatmulAlgoConfigSetAttribute(&v, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz) != CUBLAS_STATUS_SUCCESS ||
              cublasLtMatmulAlgoConfigSetAttribute(&v, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, sizeof sk) != CUBLAS_STATUS_SUCCESS)
            continue;
          if (sk > 1) {
            const uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_INPLACE;
            if (cublasLtMatmulAlgoConfigSetAttribute(&v, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof scheme) != CUBLAS_STATUS_SUCCESS)
              continue;
          }
          if (same(v)) continue;
          cublasLtMatmulHeuristicResult_t chk{};
          if (cublasLtMatmulAlgoCheck(handle_, desc_, p->a, p->b, p->d, p->d, &v, &chk) != CUBLAS_STATUS_SUCCESS) continue;
          if (chk.workspaceSize > workspace_.bytes) continue;
          Algo a;
          a.algo = v;
          a.workspace = chk.workspaceSize;
          a.waves = chk.wavesCount;
          a.rank = int(p->algos.size());
          a.variant_of = p->algos[h].rank;
          p->algos.push_back(a);
        }
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
