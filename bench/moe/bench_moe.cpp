// bench_moe — the Qwen3-30B-A3B expert layer (hidden 2048, expert intermediate 768, 128 experts,
// top-8 renormalized, bf16) from routing to combined output, with PipeLink-linked expert kernels:
//
//   route    logits = X · Wr^T (cuBLASLt, fp32 out); moe_topk, moe_offsets (routing.cubin); the
//            host reads the padded row total (one 4-byte copy); moe_scatter
//   gate/up  linked kernel: moe_gather (dispatch) + moe_w_loader & wgmma_gu x2 (gemm) +
//            moe_swiglu (activation: SwiGLU and routing-weight scale) + tma_store -> Hm [rows, 768]
//   down     linked kernel: moe_a_loader (dispatch) + moe_w_loader & wgmma_gu x2 (gemm) +
//            moe_combine (combine: scatter-add into Y[T, 2048] fp32)
//
//   bench_moe --gu K.cubin K.map --down K.cubin K.map [--gu-control ... --down-control ...]
//             --routing routing.cubin --util swiglu.cubin [--T 512,4096,16384] [--iters 20] [--json F]
//
// Checks, per T, on fresh random inputs: Hm is poisoned with NaN before the gate/up kernel and
// every row must be written; Y rows of 64 sampled tokens are compared with a CPU double-precision
// reference that recomputes the whole layer from the same inputs (experts chosen from the device
// logits); relative error <= 1e-2. Then the whole layer is timed (median of --iters, CUDA events),
// and each linked kernel against its monolithic control.
#include <cublasLt.h>
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
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
#define LT(x)                                                                        \
  do {                                                                               \
    cublasStatus_t s_ = (x);                                                         \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                               \
      std::fprintf(stderr, "%s failed: cublas status %d\n", #x, static_cast<int>(s_)); \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

constexpr unsigned kHidden = 2048, kInter = 768, kExperts = 128, kTopK = 8, kTileM = 128, kAlign = 128;

float bf16_to_f(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

CUtensorMap make_map(CUdeviceptr base, uint64_t rows, uint64_t cols, uint32_t box_rows, uint32_t box_cols, CUtensorMapSwizzle swz) {
  CUtensorMap m;
  if (auto s = pipelink::bf16_tensor_map(m, base, rows, cols, box_rows, box_cols, swz, CU_TENSOR_MAP_L2_PROMOTION_L2_256B); !s) {
    std::fprintf(stderr, "%s\n", s.message.c_str());
    std::exit(2);
  }
  return m;
}

struct Kernel {
  std::string label, cubin, map;
  pipelink::Module mod;
};

void must(pipelink::Status s, const std::string& who) {
  if (!s) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), s.message.c_str());
    std::exit(2);
  }
}

std::vector<unsigned> parse_list(const std::string& s) {
  std::vector<unsigned> v;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    v.push_back(static_cast<unsigned>(std::stoul(s.substr(i, j - i))));
    i = j + 1;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<Kernel> gu, down, gu_control, down_control;
  std::string routing_cubin, util_cubin, json;
  std::vector<unsigned> Ts{512, 4096, 16384};
  unsigned iters = 20;
  bool check_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); }
      return std::string(argv[++i]);
    };
    auto kernel = [&](std::unique_ptr<Kernel>& k) {
      k = std::make_unique<Kernel>();
      k->label = a.substr(2);
      k->cubin = next();
      k->map = next();
    };
    if (a == "--gu") kernel(gu);
    else if (a == "--down") kernel(down);
    else if (a == "--gu-control") kernel(gu_control);
    else if (a == "--down-control") kernel(down_control);
    else if (a == "--routing") routing_cubin = next();
    else if (a == "--util") util_cubin = next();
    else if (a == "--T") Ts = parse_list(next());
    else if (a == "--iters") iters = std::max(1u, static_cast<unsigned>(std::stoul(next())));
    else if (a == "--json") json = next();
    else if (a == "--check-only") check_only = true;
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  if (!gu || !down || routing_cubin.empty() || util_cubin.empty()) {
    std::fprintf(stderr, "usage: bench_moe --gu K M --down K M [--gu-control K M --down-control K M] --routing R --util U\n");
    return 2;
  }

  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext cuctx;
  CU(cuDevicePrimaryCtxRetain(&cuctx, dev));
  CU(cuCtxSetCurrent(cuctx));
  char devname[256];
  CU(cuDeviceGetName(devname, sizeof devname, dev));
  int sms = 0;
  CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CUstream stream;
  CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));

  for (Kernel* k : {gu.get(), down.get(), gu_control.get(), down_control.get()})
    if (k) must(k->mod.load(k->cubin, k->map), k->label);
  // What the host needs from the gate/up link: the tile width (weight box, column tiles), the
  // out-stage height (the store's box) and the expert padding (routing).
  long long gu_tile_n = 128, out_rows = 64, align_ll = kAlign;
  gu->mod.fact("tile_n", gu_tile_n);
  gu->mod.fact("out_rows", out_rows);
  gu->mod.fact("expert_align", align_ll);
  const unsigned align_rows = static_cast<unsigned>(align_ll);
  std::printf("gate/up link: tile_n %lld, out_rows %lld, expert_align %u\n", gu_tile_n, out_rows, align_rows);
  CUmodule routing, util;
  CU(cuModuleLoad(&routing, routing_cubin.c_str()));
  CU(cuModuleLoad(&util, util_cubin.c_str()));
  CUfunction f_topk, f_offsets, f_scatter, f_fill;
  CU(cuModuleGetFunction(&f_topk, routing, "moe_topk"));
  CU(cuModuleGetFunction(&f_offsets, routing, "moe_offsets"));
  CU(cuModuleGetFunction(&f_scatter, routing, "moe_scatter"));
  CU(cuModuleGetFunction(&f_fill, util, "fill_random_bf16"));

  const unsigned long long seed = static_cast<unsigned long long>(std::chrono::system_clock::now().time_since_epoch().count());
  std::printf("device: %s (%d SMs); Qwen3-30B-A3B experts: hidden %u, intermediate %u, %u experts, top-%u; seed %llu\n", devname,
              sms, kHidden, kInter, kExperts, kTopK, seed);
  auto fill = [&](CUdeviceptr p, size_t n, unsigned long long s, float scale) {
    void* args[] = {&p, &n, &s, &scale};
    CU(cuLaunchKernel(f_fill, 1024, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
  };

  // Weights once: router, gate/up (per expert: 768 gate rows then 768 up rows), down.
  CUdeviceptr Wr, Wgu, Wd;
  CU(cuMemAlloc(&Wr, size_t(kExperts) * kHidden * 2));
  CU(cuMemAlloc(&Wgu, size_t(kExperts) * 2 * kInter * kHidden * 2));
  CU(cuMemAlloc(&Wd, size_t(kExperts) * kHidden * kInter * 2));
  fill(Wr, size_t(kExperts) * kHidden, seed + 1, 0.05f);
  fill(Wgu, size_t(kExperts) * 2 * kInter * kHidden, seed + 2, 0.03f);
  fill(Wd, size_t(kExperts) * kHidden * kInter, seed + 3, 0.03f);
  std::vector<uint16_t> hWr(size_t(kExperts) * kHidden), hWgu(size_t(kExperts) * 2 * kInter * kHidden), hWd(size_t(kExperts) * kHidden * kInter);
  CU(cuStreamSynchronize(stream));
  CU(cuMemcpyDtoH(hWr.data(), Wr, hWr.size() * 2));
  CU(cuMemcpyDtoH(hWgu.data(), Wgu, hWgu.size() * 2));
  CU(cuMemcpyDtoH(hWd.data(), Wd, hWd.size() * 2));

  cublasLtHandle_t lt;
  LT(cublasLtCreate(&lt));
  CUdeviceptr workspace;
  const size_t ws_bytes = 32u << 20;
  CU(cuMemAlloc(&workspace, ws_bytes));

  std::ofstream js;
  if (!json.empty()) {
    js.open(json);
    js << "{\n  \"bench\": \"qwen3_30b_a3b_moe_experts\", \"device\": \"" << devname << "\", \"seed\": " << seed << ", \"iters\": " << iters
       << ",\n  \"results\": [";
  }
  bool all_ok = true;
  for (size_t ti = 0; ti < Ts.size(); ++ti) {
    const unsigned T = Ts[ti];
    const unsigned max_rows = T * kTopK + kExperts * (align_rows - 1);
    CUdeviceptr X, logits, counts, topk_e, topk_w, topk_pos, offsets, tile_expert, total, row_token, row_weight, Hm, Y;
    CU(cuMemAlloc(&X, size_t(T) * kHidden * 2));
    CU(cuMemAlloc(&logits, size_t(T) * kExperts * 4));
    CU(cuMemAlloc(&counts, kExperts * 4));
    CU(cuMemAlloc(&topk_e, size_t(T) * kTopK * 4));
    CU(cuMemAlloc(&topk_w, size_t(T) * kTopK * 4));
    CU(cuMemAlloc(&topk_pos, size_t(T) * kTopK * 4));
    CU(cuMemAlloc(&offsets, kExperts * 4));
    CU(cuMemAlloc(&tile_expert, (max_rows / kTileM + 1) * 4));
    CU(cuMemAlloc(&total, 4));
    CU(cuMemAlloc(&row_token, size_t(max_rows) * 4));
    CU(cuMemAlloc(&row_weight, size_t(max_rows) * 4));
    CU(cuMemAlloc(&Hm, size_t(max_rows) * kInter * 2));
    CU(cuMemAlloc(&Y, size_t(T) * kHidden * 4));
    fill(X, size_t(T) * kHidden, seed + 100 + T, 1.0f);

    // Router GEMM: logits[T, E] = X · Wr^T, fp32 out (cuBLASLt column-major: logits^T = Wr · X^T).
    cublasLtMatmulDesc_t op;
    LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    cublasLtMatrixLayout_t la, lb, lc;
    LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, kHidden, kExperts, kHidden));
    LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, kHidden, T, kHidden));
    LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, kExperts, T, kExperts));
    cublasLtMatmulPreference_t pref;
    LT(cublasLtMatmulPreferenceCreate(&pref));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    LT(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &found));
    if (!found) { std::fprintf(stderr, "no cuBLASLt algorithm for the router GEMM\n"); return 2; }
    const float one = 1.f, zero = 0.f;

    unsigned rows_total = 0;
    // The layer, as one sequence on `stream`. The host reads the padded row count after routing.
    auto route = [&] {
      LT(cublasLtMatmul(lt, op, &one, reinterpret_cast<void*>(Wr), la, reinterpret_cast<void*>(X), lb, &zero,
                        reinterpret_cast<void*>(logits), lc, reinterpret_cast<void*>(logits), lc, &heur.algo,
                        reinterpret_cast<void*>(workspace), ws_bytes, stream));
      CU(cuMemsetD32Async(counts, 0, kExperts, stream));
      unsigned t = T, e = kExperts, align = align_rows, tm = kTileM;
      void* a1[] = {&logits, &t, &e, &counts, &topk_e, &topk_w, &topk_pos};
      CU(cuLaunchKernel(f_topk, (T * 32 + 255) / 256, 1, 1, 256, 1, 1, 0, stream, a1, nullptr));
      void* a2[] = {&counts, &e, &align, &tm, &offsets, &tile_expert, &total};
      CU(cuLaunchKernel(f_offsets, 1, 1, 1, 128, 1, 1, 0, stream, a2, nullptr));
      CU(cuMemsetD32Async(row_token, 0xFFFFFFFFu, max_rows, stream));
      CU(cuMemsetD32Async(row_weight, 0, max_rows, stream));
      void* a3[] = {&t, &topk_e, &topk_w, &topk_pos, &offsets, &row_token, &row_weight};
      CU(cuLaunchKernel(f_scatter, (T * kTopK + 255) / 256, 1, 1, 256, 1, 1, 0, stream, a3, nullptr));
      CU(cuMemcpyDtoHAsync(&rows_total, total, 4, stream));
      CU(cuStreamSynchronize(stream));
    };
    auto setup = [&](Kernel& k, bool is_gu) {
      const unsigned M = rows_total;
      auto s = [&](pipelink::Status st) { must(st, k.label); };
      if (is_gu) {
        s(k.mod.set_ptr("x", X));
        s(k.mod.set_ptr("row_token", row_token));
        s(k.mod.set_ptr("row_weight", row_weight));
        s(k.mod.set_u32("K", kHidden));
        const unsigned tn = static_cast<unsigned>(gu_tile_n);
        s(k.mod.set_tensormap("w_map", make_map(Wgu, size_t(kExperts) * 2 * kInter, kHidden, tn, 64, CU_TENSOR_MAP_SWIZZLE_128B)));
        s(k.mod.set_tensormap("out_map", make_map(Hm, M, kInter, static_cast<unsigned>(out_rows), tn, CU_TENSOR_MAP_SWIZZLE_NONE)));
        s(k.mod.set_u32("n_step", tn));
        s(k.mod.set_u32("b_stride", kInter));
        s(k.mod.set_u32("expert_rows", 2 * kInter));
        s(k.mod.set_u32("N", kInter));
      } else {
        s(k.mod.set_tensormap("a_map", make_map(Hm, M, kInter, kTileM, 64, CU_TENSOR_MAP_SWIZZLE_128B)));
        s(k.mod.set_ptr("row_token", row_token));
        s(k.mod.set_ptr("y", Y));
        s(k.mod.set_u32("hidden", kHidden));
        s(k.mod.set_u32("K", kInter));
        s(k.mod.set_tensormap("w_map", make_map(Wd, size_t(kExperts) * kHidden, kInter, 128, 64, CU_TENSOR_MAP_SWIZZLE_128B)));
        s(k.mod.set_u32("n_step", 256));
        s(k.mod.set_u32("b_stride", 128));
        s(k.mod.set_u32("expert_rows", kHidden));
        s(k.mod.set_u32("N", kHidden / 2));
      }
      s(k.mod.set_ptr("tile_expert", tile_expert));
      s(k.mod.set_u32("M", M));
    };
    auto grid_of = [&](unsigned n_tiles) { return std::min<unsigned>(static_cast<unsigned>(sms), (rows_total / kTileM) * n_tiles); };
    const unsigned gu_n_tiles = static_cast<unsigned>((kInter + gu_tile_n - 1) / gu_tile_n);
    auto run_gu = [&](Kernel& k) { must(k.mod.launch(grid_of(gu_n_tiles), stream), k.label); };
    auto run_down = [&](Kernel& k) {
      CU(cuMemsetD32Async(Y, 0, size_t(T) * kHidden, stream));
      must(k.mod.launch(grid_of(kHidden / 256), stream), k.label);
    };

    // ---- correctness ----
    route();
    for (Kernel* k : {gu.get(), down.get(), gu_control.get(), down_control.get()})
      if (k) setup(*k, k == gu.get() || k == gu_control.get());
    struct Check { double rel = 0, max_abs = 0; size_t unwritten = 0; bool ok = false; };
    std::vector<float> hlog(size_t(T) * kExperts);
    std::vector<uint16_t> hX(size_t(T) * kHidden);
    CU(cuMemcpyDtoH(hlog.data(), logits, hlog.size() * 4));
    CU(cuMemcpyDtoH(hX.data(), X, hX.size() * 2));
    std::mt19937 rng(static_cast<unsigned>(seed + T));
    std::vector<unsigned> sample;
    for (int i = 0; i < 64; ++i) sample.push_back(rng() % T);
    // CPU reference for the sampled tokens, in double, from the device's logits for the routing.
    std::vector<double> ref(sample.size() * kHidden, 0.0);
    for (size_t si = 0; si < sample.size(); ++si) {
      const unsigned t = sample[si];
      std::vector<int> idx(kExperts);
      for (unsigned e = 0; e < kExperts; ++e) idx[e] = int(e);
      const float* lg = &hlog[size_t(t) * kExperts];
      std::partial_sort(idx.begin(), idx.begin() + kTopK, idx.end(), [&](int a, int b) { return lg[a] > lg[b] || (lg[a] == lg[b] && a < b); });
      double z = 0;
      for (unsigned k = 0; k < kTopK; ++k) z += std::exp(double(lg[idx[k]]) - lg[idx[0]]);
      std::vector<double> x(kHidden), h(kInter);
      for (unsigned c = 0; c < kHidden; ++c) x[c] = bf16_to_f(hX[size_t(t) * kHidden + c]);
      for (unsigned k = 0; k < kTopK; ++k) {
        const int e = idx[k];
        const double w = std::exp(double(lg[e]) - lg[idx[0]]) / z;
        for (unsigned j = 0; j < kInter; ++j) {
          const uint16_t* g = &hWgu[(size_t(e) * 2 * kInter + j) * kHidden];
          const uint16_t* u = &hWgu[(size_t(e) * 2 * kInter + kInter + j) * kHidden];
          double sg = 0, su = 0;
          for (unsigned c = 0; c < kHidden; ++c) { sg += x[c] * bf16_to_f(g[c]); su += x[c] * bf16_to_f(u[c]); }
          h[j] = sg / (1 + std::exp(-sg)) * su * w;
        }
        for (unsigned o = 0; o < kHidden; ++o) {
          const uint16_t* d = &hWd[(size_t(e) * kHidden + o) * kInter];
          double s = 0;
          for (unsigned j = 0; j < kInter; ++j) s += h[j] * bf16_to_f(d[j]);
          ref[si * kHidden + o] += s;
        }
      }
    }
    auto check = [&](Kernel& g, Kernel& d) {
      Check c;
      CU(cuMemsetD8Async(Hm, 0xFF, size_t(max_rows) * kInter * 2, stream));  // poison: every row must be written
      run_gu(g);
      run_down(d);
      const CUresult sync = cuStreamSynchronize(stream);
      for (Kernel* k : {&g, &d})  // a checked kernel's record of a pipe wait that never completed
        if (std::string rep = k->mod.checked_report(); !rep.empty()) std::printf("%s: %s\n", k->label.c_str(), rep.c_str());
      CU(sync);
      std::vector<uint16_t> hm(size_t(rows_total) * kInter);
      CU(cuMemcpyDtoH(hm.data(), Hm, hm.size() * 2));
      for (uint16_t v : hm) c.unwritten += (v & 0x7F80) == 0x7F80 && (v & 0x7F);
      std::vector<float> y(kHidden);
      double num = 0, den = 0;
      for (size_t si = 0; si < sample.size(); ++si) {
        CU(cuMemcpyDtoH(y.data(), Y + size_t(sample[si]) * kHidden * 4, kHidden * 4));
        for (unsigned o = 0; o < kHidden; ++o) {
          const double diff = y[o] - ref[si * kHidden + o];
          if (std::isnan(diff)) c.max_abs = NAN;                                   // NaN sticks
          else if (!std::isnan(c.max_abs)) c.max_abs = std::max(c.max_abs, std::fabs(diff));
          num += diff * diff;
          den += ref[si * kHidden + o] * ref[si * kHidden + o];
        }
      }
      c.rel = std::sqrt(num / den);
      c.ok = c.unwritten == 0 && std::isfinite(c.rel) && c.rel <= 1e-2;
      return c;
    };
    Check linked = check(*gu, *down);
    Check control;
    if (gu_control && down_control) control = check(*gu_control, *down_control);
    std::printf("\n== T = %u tokens: %u routed rows, padded to %u (%u tiles of %u)\n", T, T * kTopK, rows_total, rows_total / kTileM, kTileM);
    std::printf("  linked : Hm elements unwritten %zu, Y rel err %.3e, max abs err %.3e vs CPU double (64 tokens)  %s\n", linked.unwritten,
                linked.rel, linked.max_abs,
                linked.ok ? "OK" : "FAIL");
    if (gu_control)
      std::printf("  control: Hm elements unwritten %zu, Y rel err %.3e vs CPU double (64 tokens)  %s\n", control.unwritten, control.rel,
                  control.ok ? "OK" : "FAIL");
    all_ok &= linked.ok && (!gu_control || control.ok);
    if (check_only) {
      if (js)
        js << (ti ? "," : "") << "\n    {\"T\": " << T << ", \"rows\": " << rows_total << ", \"rel_err\": "
           << (std::isfinite(linked.rel) ? std::to_string(linked.rel) : std::string("null")) << ", \"max_abs_err\": "
           << (std::isfinite(linked.max_abs) ? std::to_string(linked.max_abs) : std::string("null"))
           << ", \"unwritten\": " << linked.unwritten << ", \"ok\": " << (linked.ok ? "true" : "false") << "}";
    } else {

      // ---- timing: the whole layer (route with its host read, gate/up, down), and each kernel ----
      CUevent e0, e1;
      CU(cuEventCreate(&e0, CU_EVENT_DEFAULT));
      CU(cuEventCreate(&e1, CU_EVENT_DEFAULT));
      auto time = [&](auto&& fn) {
        CU(cuEventRecord(e0, stream));
        fn();
        CU(cuEventRecord(e1, stream));
        CU(cuEventSynchronize(e1));
        float ms = 0;
        CU(cuEventElapsedTime(&ms, e0, e1));
        return double(ms);
      };
      std::vector<double> t_layer, t_route, t_gu, t_down, t_gu_c, t_down_c;
      for (unsigned it = 0; it < iters + 3; ++it) {
        const bool keep = it >= 3;
        const double a = time([&] { route(); run_gu(*gu); run_down(*down); });
        const double r = time([&] { route(); });
        const double g = time([&] { run_gu(*gu); });
        const double d = time([&] { run_down(*down); });
        double gc = 0, dc = 0;
        if (gu_control && down_control) {
          gc = time([&] { run_gu(*gu_control); });
          dc = time([&] { run_down(*down_control); });
        }
        if (!keep) continue;
        t_layer.push_back(a); t_route.push_back(r); t_gu.push_back(g); t_down.push_back(d);
        if (gu_control && down_control) { t_gu_c.push_back(gc); t_down_c.push_back(dc); }
      }
      auto med = [](std::vector<double> v) {
        if (v.empty()) return 0.0;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      const double flops = 2.0 * T * kTopK * kHidden * (3.0 * kInter);
      const double layer = med(t_layer);
      std::printf("  layer %.4f ms (%.1f TFLOP/s of expert math) = route %.4f + gate/up %.4f + down %.4f (medians of %u)\n", layer,
                  flops / (layer * 1e-3) / 1e12, med(t_route), med(t_gu), med(t_down), iters);
      if (!t_gu_c.empty())
        std::printf("  linked / control: gate/up %.4f (%.4f vs %.4f ms), down %.4f (%.4f vs %.4f ms)\n", med(t_gu) / med(t_gu_c), med(t_gu),
                    med(t_gu_c), med(t_down) / med(t_down_c), med(t_down), med(t_down_c));
      if (js)
        js << (ti ? "," : "") << "\n    {\"T\": " << T << ", \"rows\": " << rows_total << ", \"layer_ms\": " << layer << ", \"route_ms\": " << med(t_route)
           << ", \"gate_up_ms\": " << med(t_gu) << ", \"down_ms\": " << med(t_down) << ", \"gate_up_control_ms\": " << med(t_gu_c)
           << ", \"down_control_ms\": " << med(t_down_c) << ", \"expert_tflops\": " << flops / (layer * 1e-3) / 1e12
           << ", \"rel_err\": " << (std::isfinite(linked.rel) ? std::to_string(linked.rel) : std::string("null"))
           << ", \"control_rel_err\": " << (std::isfinite(control.rel) ? std::to_string(control.rel) : std::string("null"))
           << ", \"unwritten\": " << linked.unwritten
           << ", \"ok\": " << (linked.ok ? "true" : "false") << "}";
      cuEventDestroy(e0);
      cuEventDestroy(e1);
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    for (CUdeviceptr p : {X, logits, counts, topk_e, topk_w, topk_pos, offsets, tile_expert, total, row_token, row_weight, Hm, Y}) cuMemFree(p);
  }
  if (js) js << "\n  ],\n  \"ok\": " << (all_ok ? "true" : "false") << "\n}\n";
  std::printf("\n%s\n", all_ok ? "PASS: every check passed" : "FAIL: a check failed");
  return all_ok ? 0 : 1;
}
