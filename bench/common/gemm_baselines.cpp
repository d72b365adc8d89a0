// bench/common/gemm_baselines.cpp — see gemm_baselines.h.
#include "gemm_baselines.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_set>

namespace plbench {

namespace {
struct Config {
  int32_t id = -1, splitk = 1;
  uint32_t tile = 0, stages = 0, swizzle = 0, reduction = 0, custom = 0;
  uint16_t inner = 0, cluster = 0;
};
Config config_of(const cublasLtMatmulAlgo_t& a) {
  Config c;
  size_t got = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_ID, &c.id, sizeof c.id, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile, sizeof c.tile, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages, sizeof c.stages, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c.splitk, sizeof c.splitk, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle, sizeof c.swizzle, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c.reduction, sizeof c.reduction, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.custom, sizeof c.custom, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &c.inner, sizeof c.inner, &got);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c.cluster, sizeof c.cluster, &got);
  return c;
}
// The configuration that decides the kernel: two candidates with the same key are one.
std::string key_of(const Config& c) {
  char b[160];
  std::snprintf(b, sizeof b, "%d/%u/%u/%d/%u/%u/%u/%u/%u", c.id, c.tile, c.stages, c.splitk, c.splitk > 1 ? c.reduction : 0u, c.swizzle,
                c.custom, unsigned(c.inner), unsigned(c.cluster));
  return b;
}
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

std::string LtGemm::Algo::describe() const {
  const Config c = config_of(algo);
  char b[320];
  std::snprintf(b, sizeof b,
                "%s %d: algo %d, tile %u, stages %u, splitK %d, reduction %u, swizzle %u, custom %u, inner %u, cluster %u, workspace %zu B",
                enumerated ? "enumerated" : "heuristic rank", rank, c.id, c.tile, c.stages, c.splitk, c.reduction, c.swizzle, c.custom,
                unsigned(c.inner), unsigned(c.cluster), workspace);
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

std::unique_ptr<LtGemm::Plan> LtGemm::plan(unsigned M, unsigned N, unsigned K, cudaDataType_t out, int requested, bool enumerate,
                                           long max_checks, double max_check_s) const {
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
  Counts& n = p->counts;
  n.heuristic_requested = requested;
  n.heuristic_offered = int(p->algos.size());
  if (!enumerate) return p;
  // Enumeration: every algorithm id cuBLASLt has for these types; for each, its capabilities
  // (tiles, stages, split-K, reduction schemes, CTA swizzle) and cluster shapes (no capability
  // lists them: AUTO, 1x1, 2x1, 1x2, 2x2 are tried), each configuration kept where AlgoCheck accepts
  // it with a workspace within ours. Phase 1 tries every (tile, stages) with the defaults for the
  // rest; phase 2 changes one thing at a time on each accepted phase-1 configuration (cluster
  // shape, swizzle on, split-K 2 / 4 / 8). The budget (checks, seconds) is shared; ids are visited
  // breadth first in phase 1 so that a capped run still covers every id.
  const auto t0 = std::chrono::steady_clock::now();
  std::unordered_set<std::string> seen;
  for (const Algo& a : p->algos) seen.insert(key_of(config_of(a.algo)));
  auto budget_left = [&] {
    if (n.configs_checked >= max_checks || seconds_since(t0) > max_check_s) {
      n.check_capped = true;
      return false;
    }
    return true;
  };
  auto try_add = [&](const cublasLtMatmulAlgo_t& v) -> bool {
    const std::string k = key_of(config_of(v));
    if (seen.count(k)) {
      ++n.duplicates;
      return false;
    }
    ++n.configs_checked;
    cublasLtMatmulHeuristicResult_t chk{};
    if (cublasLtMatmulAlgoCheck(handle_, desc_, p->a, p->b, p->d, p->d, &v, &chk) != CUBLAS_STATUS_SUCCESS) return false;
    seen.insert(k);
    if (chk.workspaceSize > workspace_.bytes) {
      ++n.over_workspace;
      return false;
    }
    ++n.configs_accepted;
    Algo a;
    a.algo = v;
    a.workspace = chk.workspaceSize;
    a.waves = chk.wavesCount;
    a.rank = int(p->algos.size());
    a.enumerated = true;
    p->algos.push_back(a);
    return true;
  };
  std::vector<int> ids(512);
  int nid = 0;
  if (cublasLtMatmulAlgoGetIds(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, out, out, int(ids.size()), ids.data(),
                               &nid) != CUBLAS_STATUS_SUCCESS)
    nid = 0;
  ids.resize(size_t(std::max(0, nid)));
  n.algo_ids = nid;
  struct IdCaps {
    cublasLtMatmulAlgo_t base{};
    std::vector<uint32_t> tiles, stages;
    int32_t splitk = 0;
    uint32_t reductions = 0, swizzle = 0;
    size_t next = 0;  // phase 1 position in tiles x stages
  };
  std::vector<IdCaps> caps;
  for (int id : ids) {
    IdCaps c;
    if (cublasLtMatmulAlgoInit(handle_, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, out, out, id, &c.base) !=
        CUBLAS_STATUS_SUCCESS)
      continue;
    ++n.algo_ids_init;
    size_t got = 0;
    uint32_t buf[256];
    if (cublasLtMatmulAlgoCapGetAttribute(&c.base, CUBLASLT_ALGO_CAP_TILE_IDS, buf, sizeof buf, &got) == CUBLAS_STATUS_SUCCESS)
      c.tiles.assign(buf, buf + std::min<size_t>(got / sizeof(uint32_t), 256));
    if (c.tiles.empty()) c.tiles.push_back(CUBLASLT_MATMUL_TILE_UNDEFINED);
    if (cublasLtMatmulAlgoCapGetAttribute(&c.base, CUBLASLT_ALGO_CAP_STAGES_IDS, buf, sizeof buf, &got) == CUBLAS_STATUS_SUCCESS)
      c.stages.assign(buf, buf + std::min<size_t>(got / sizeof(uint32_t), 256));
    if (c.stages.empty()) c.stages.push_back(CUBLASLT_MATMUL_STAGES_UNDEFINED);
    cublasLtMatmulAlgoCapGetAttribute(&c.base, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &c.splitk, sizeof c.splitk, &got);
    cublasLtMatmulAlgoCapGetAttribute(&c.base, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &c.reductions, sizeof c.reductions, &got);
    cublasLtMatmulAlgoCapGetAttribute(&c.base, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &c.swizzle, sizeof c.swizzle, &got);
    caps.push_back(c);
  }
  auto with = [](cublasLtMatmulAlgo_t v, cublasLtMatmulAlgoConfigAttributes_t attr, const void* x, size_t bytes, bool& ok) {
    ok = ok && cublasLtMatmulAlgoConfigSetAttribute(&v, attr, x, bytes) == CUBLAS_STATUS_SUCCESS;
    return v;
  };
  // Phase 1, breadth first over ids.
  for (bool more = true; more && budget_left();) {
    more = false;
    for (IdCaps& c : caps) {
      if (c.next >= c.tiles.size() * c.stages.size() || !budget_left()) continue;
      more = true;
      const uint32_t tile = c.tiles[c.next / c.stages.size()], st = c.stages[c.next % c.stages.size()];
      ++c.next;
      bool ok = true;
      cublasLtMatmulAlgo_t v = with(c.base, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, ok);
      v = with(v, CUBLASLT_ALGO_CONFIG_STAGES_ID, &st, sizeof st, ok);
      if (ok) try_add(v);
    }
  }
  // Phase 2: one change at a time on the heuristic's and each accepted phase-1 configuration.
  const size_t phase1_end = p->algos.size();
  for (size_t i = 0; i < phase1_end && budget_left(); ++i) {
    const cublasLtMatmulAlgo_t base = p->algos[i].algo;
    const Config bc = config_of(base);
    const IdCaps* cp = nullptr;
    for (const IdCaps& c : caps)
      if (config_of(c.base).id == bc.id) cp = &c;
    if (!cp) continue;
    for (uint16_t cl : {uint16_t(CUBLASLT_CLUSTER_SHAPE_1x1x1), uint16_t(CUBLASLT_CLUSTER_SHAPE_2x1x1),
                        uint16_t(CUBLASLT_CLUSTER_SHAPE_1x2x1), uint16_t(CUBLASLT_CLUSTER_SHAPE_2x2x1)}) {
      if (!budget_left()) break;
      bool ok = true;
      const cublasLtMatmulAlgo_t v = with(base, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cl, sizeof cl, ok);
      if (ok) try_add(v);
    }
    if (cp->swizzle && budget_left()) {
      const uint32_t one = 1;
      bool ok = true;
      const cublasLtMatmulAlgo_t v = with(base, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &one, sizeof one, ok);
      if (ok) try_add(v);
    }
    if (cp->splitk) {
      uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
      for (uint32_t s : {uint32_t(CUBLASLT_REDUCTION_SCHEME_INPLACE), uint32_t(CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE),
                         uint32_t(CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE)})
        if (cp->reductions & s) {
          scheme = s;
          break;
        }
      for (int32_t sk : {2, 4, 8}) {
        if (!budget_left()) break;
        bool ok = true;
        cublasLtMatmulAlgo_t v = with(base, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, sizeof sk, ok);
        v = with(v, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof scheme, ok);
        if (ok) try_add(v);
      }
    }
  }
  n.plan_s = seconds_since(t0);
  // Screening order of the enumerated candidates: first those of the algorithm ids the heuristic
  // picked (at M >= 1024 on an H200 the other ids' kernels are legacy ones, tens of times slower,
  // and screening them first spent the time cap on a handful), then the rest; within each part,
  // round robin over (id, tile) groups, so a capped screening still covers every tile.
  std::unordered_set<int32_t> picked;
  for (int i = 0; i < n.heuristic_offered; ++i) picked.insert(config_of(p->algos[size_t(i)].algo).id);
  std::vector<Algo> enumerated(p->algos.begin() + n.heuristic_offered, p->algos.end());
  p->algos.resize(size_t(n.heuristic_offered));
  for (bool preferred : {true, false}) {
    std::vector<std::vector<Algo>> groups;
    std::vector<std::pair<int32_t, uint32_t>> group_of;
    for (const Algo& a : enumerated) {
      const Config c = config_of(a.algo);
      if (bool(picked.count(c.id)) != preferred) continue;
      size_t g = 0;
      while (g < group_of.size() && group_of[g] != std::make_pair(c.id, c.tile)) ++g;
      if (g == group_of.size()) group_of.emplace_back(c.id, c.tile), groups.emplace_back();
      groups[g].push_back(a);
    }
    for (size_t k = 0, added = 1; added; ++k) {
      added = 0;
      for (auto& g : groups)
        if (k < g.size()) {
          p->algos.push_back(g[k]);
          p->algos.back().rank = int(p->algos.size()) - 1;
          ++added;
        }
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

void LtGemm::autotune(Plan& p, CUdeviceptr A, CUdeviceptr B, CUdeviceptr D, CUstream s, unsigned warmup, unsigned reps, int finalists,
                      double screen_s) const {
  const auto t0 = std::chrono::steady_clock::now();
  CUevent e0, e1;
  CU(cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CU(cuEventCreate(&e1, CU_EVENT_DEFAULT));
  Counts& n = p.counts;
  // One timed run of candidate i after `untimed` untimed ones; NaN (and failed) if it refuses.
  auto once = [&](size_t i, unsigned untimed) -> double {
    for (unsigned w = 0; w < untimed; ++w)
      if (!try_run(p, int(i), A, B, D, s)) {
        CU(cuStreamSynchronize(s));
        p.algos[i].failed = true;
        return NAN;
      }
    CU(cuEventRecord(e0, s));
    if (!try_run(p, int(i), A, B, D, s)) {
      CU(cuStreamSynchronize(s));
      p.algos[i].failed = true;
      return NAN;
    }
    CU(cuEventRecord(e1, s));
    CU(cuEventSynchronize(e1));
    float ms = 0;
    CU(cuEventElapsedTime(&ms, e0, e1));
    return ms;
  };
  // Screening.
  for (size_t i = 0; i < p.algos.size(); ++i) {
    // The cap applies once `finalists` enumerated candidates are screened (so the finals always have
    // at least that many to choose from where enumeration found them).
    if (p.algos[i].enumerated && n.screened >= n.heuristic_offered + finalists && seconds_since(t0) > screen_s) {
      n.screen_capped = true;
      break;
    }
    p.algos[i].screen_ms = once(i, 1);
    ++n.screened;
    n.screen_failed += p.algos[i].failed;
  }
  // Finals: the fastest screened, and the heuristic's first.
  std::vector<size_t> order;
  for (size_t i = 0; i < p.algos.size(); ++i)
    if (std::isfinite(p.algos[i].screen_ms)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p.algos[x].screen_ms < p.algos[y].screen_ms; });
  if (order.size() > size_t(std::max(1, finalists))) order.resize(size_t(std::max(1, finalists)));
  if (std::find(order.begin(), order.end(), size_t(0)) == order.end() && std::isfinite(p.algos[0].screen_ms)) order.push_back(0);
  double best = INFINITY;
  for (size_t i : order) {
    std::vector<double> t;
    for (unsigned r = 0; r < reps; ++r) {
      const double ms = once(i, r == 0 ? warmup : 0);
      if (!std::isfinite(ms)) break;
      t.push_back(ms);
    }
    if (t.size() < reps) continue;  // tuned_ms stays NaN
    ++n.finalists;
    p.algos[i].tuned_ms = stats_of(t).median;
    if (p.algos[i].tuned_ms < best) best = p.algos[i].tuned_ms, p.best = int(i);
  }
  CU(cuEventDestroy(e0));
  CU(cuEventDestroy(e1));
  n.autotune_s = seconds_since(t0);
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
