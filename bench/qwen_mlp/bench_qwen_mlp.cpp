// bench_qwen_mlp — the Qwen3-32B MLP gate/up projection + SwiGLU on one GPU: PipeLink kernels
// against the strongest cuBLAS baselines (+ a separately compiled SwiGLU), all checked per element
// against an fp32 reference, then timed in the same run with one timer (bench/common).
//
//   bench_qwen_mlp [--fused CUBIN MAP] [--fused-control CUBIN MAP] [--gemm CUBIN MAP] ... (every
//                  variant: fused, fused-medium, fused-narrow, fused-small, gemm, gemm-medium, ...,
//                  each with -control) [--M 16,128,...] [--rounds 20] [--algos 32] [--json PATH]
//                  [--md PATH] [--swiglu-cubin PATH] [--util-cubin PATH]
//
// The workload, for each M:
//   X [M, 5120] bf16 ~ N(0, 1), W [51200, 5120] bf16 ~ N(0, 0.02^2) = [gate; up] (rows 0..25599
//   gate, 25600..51199 up), the same data for every contender
//   GU [M, 51200] = X · W^T (fp32 accumulation)      H [M, 25600] = silu(GU[:, :25600]) * GU[:, 25600:]
// The kernels under test:
//   fused*   X, W -> H bf16 (GEMM with the SwiGLU in its epilogue), checked against H32
//   gemm*    X, W -> GU bf16 (plain GEMM),                          checked against GU32
// The baselines (bench/common/gemm_baselines.h):
//   cublaslt-best   cuBLASLt, the fastest of --algos (32) candidates, each timed on these operands,
//                   32 MiB workspace: the heuristic's list (8 for these shapes), widened with
//                   checked configurations next to its own (bench/common/gemm_baselines.h)
//   cublaslt-top1   cuBLASLt, the heuristic's first algorithm (the old baseline)
//   cublas-gemmex   cublasGemmEx, what torch.mm calls, 32 MiB workspace
//   swiglu          swiglu_bf16 of swiglu.cubin: GU -> H
//   cublaslt-best+swiglu, cublas-gemmex+swiglu   back to back, one timed region
// The reference: cuBLASLt with fp32 output -> GU32, then swiglu_ref_f32 -> H32, itself spot-checked
// against a CPU double-precision dot product. Every checked output is poisoned (0xFF: bf16 NaN)
// first; the check is per element, |out - ref| <= atol + rtol |ref|, with the worst element
// reported. Timing: bench/common's spin + round-robin timer, medians and spreads; clocks read
// before and after each M.
//
// Exit status: 0 if every check passed, 1 if a check failed, 2 on a usage or setup error.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../common/bench.h"
#include "../common/gemm_baselines.h"
#include "qwen_select.h"
#include <nvtx3/nvToolsExt.h>  // --profile: the NVTX range ncu filters on (header-only)

namespace {

using namespace plbench;

// ---- the problem -----------------------------------------------------------------------------
constexpr unsigned kHidden = 5120;                // K
constexpr unsigned kInter = 25600;                // I: H's width, and the gate (and up) width
constexpr unsigned kGateUp = 2 * kInter;          // 51200: GU's width, W's rows
constexpr size_t kWBytes = size_t(kGateUp) * kHidden * 2;  // 524288000 bytes of weights
constexpr unsigned kXPadRows = 256;               // zero rows of X past M (--probe-padded-x; tile_m <= 256, the TMA box limit)
constexpr float kWScale = 0.02f;                  // W ~ N(0, 0.02^2), X ~ N(0, 1)
// Per-element tolerances against the fp32 reference. GU is one bf16 rounding of an fp32 dot
// product (half an ulp = 2^-9 relative): rtol 2^-7. H through the baseline path is the SwiGLU of
// two rounded values, whose error grows up to ~4 half-ulps where silu is steep: rtol 2^-6. atol
// 1e-3 against typical magnitudes of 1.4 (GU) and 0.5 (H).
constexpr double kAtol = 1e-3, kRtolGU = 1.0 / 128, kRtolH = 1.0 / 64;
constexpr double kRefTol = 1e-3;                  // the reference vs the CPU (double) spot check
constexpr unsigned kRefSamples = 16;              // (row, col) entries in that spot check
constexpr unsigned kDefaultM[] = {16, 128, 1024, 2048, 4096, 8192};

double flops_of(unsigned M) { return 2.0 * M * kHidden * kGateUp; }  // the SwiGLU is not counted
bool reports_w_bw(unsigned M) { return M <= 64; }  // weight-streaming bandwidth where W dominates
double swiglu_bytes(unsigned M) { return 6.0 * M * kInter; }

// The SwiGLU kernels of swiglu.cubin.
class Swiglu {
 public:
  Swiglu(const std::string& cubin, unsigned sms) : sms_(sms) {
    CU(cuModuleLoad(&mod_, cubin.c_str()));
    CU(cuModuleGetFunction(&bf16_, mod_, "swiglu_bf16"));
    CU(cuModuleGetFunction(&ref_, mod_, "swiglu_ref_f32"));
  }
  ~Swiglu() { if (mod_) cuModuleUnload(mod_); }
  Swiglu(const Swiglu&) = delete;
  Swiglu& operator=(const Swiglu&) = delete;
  // GU [M, 2I] bf16 -> H [M, I] bf16; 8 columns per thread step.
  void bf16(CUdeviceptr gu, CUdeviceptr h, unsigned M, unsigned I, CUstream s) {
    void* args[] = {&gu, &h, &M, &I};
    launch(bf16_, size_t(M) * I / 8, args, s);
  }
  // GU32 [M, 2I] fp32 -> H32 [M, I] fp32; 4 columns per thread step.
  void ref(CUdeviceptr gu, CUdeviceptr h, unsigned M, unsigned I, CUstream s) {
    void* args[] = {&gu, &h, &M, &I};
    launch(ref_, size_t(M) * I / 4, args, s);
  }

 private:
  void launch(CUfunction f, size_t work, void** args, CUstream s) {
    const size_t blocks = std::max<size_t>(1, std::min<size_t>((work + 255) / 256, size_t(sms_) * 8));
    CU(cuLaunchKernel(f, unsigned(blocks), 1, 1, 256, 1, 1, 0, s, args, nullptr));
  }
  unsigned sms_;
  CUmodule mod_ = nullptr;
  CUfunction bf16_ = nullptr, ref_ = nullptr;
};

// ---- the kernels under test --------------------------------------------------------------------
struct TestKernel {
  std::string label;  // fused, fused-control, gemm-medium, ...
  bool fused = false; // fused: writes H [M, 25600]; gemm: writes GU [M, 51200]
  bool panels = false; // *-sw: the 128 x 128 tile whose accumulator stage is four 128B-swizzled
                       // 64-column panels (the label's kind, for the selection rules; the box is the link's)
  std::string cubin, map;
  pipelink::Module mod;
  unsigned tile_m = 0, tile_n = 0;
  unsigned tile_k = 64;  // 64: X / W boxes in the 128-byte swizzle; 32: in the 64-byte swizzle (*-k32)
  unsigned grid = 0;  // for the current M
  bool probe = false; // --probe: timed and checked beside the others, never selected
  bool pad_x = false;  // --probe-padded-x: x_map spans ceil(M / tile_m) * tile_m rows (zeros past M), so no
                       // X box reaches past the map: TMA never fills rows out of bounds (an experiment)
  unsigned grid_override = 0;  // --probe-grid: launched on this many blocks instead of the runtime's persistent grid
  bool packed_w = false;  // its loader reads W packed by the link's gu_pack_w (param w_packed)
  std::unique_ptr<DeviceBuffer> w_packed;  // that packing of W, made once (not timed)
};

// A link whose loader reads a packed W (gu_loader_packed.cu): W packed by that link's own
// gu_pack_w (the same cubin, so the layout is the one its loader reads), once, before any timing.
void pack_weights(TestKernel& k, CUdeviceptr W, CUstream s) {
  CUfunction pack;
  CU(cuModuleGetFunction(&pack, k.mod.module(), "gu_pack_w"));
  const unsigned n_tiles = (kInter + k.tile_n - 1) / k.tile_n, k_tiles = kHidden / k.tile_k;
  k.w_packed = std::make_unique<DeviceBuffer>(65536 + size_t(n_tiles) * k_tiles * 2 * k.tile_n * k.tile_k * 2);  // header + data
  CUdeviceptr w = W, out = k.w_packed->p;
  unsigned rows = kGateUp, K = kHidden, N = kInter, n_step = k.fused ? k.tile_n : 2 * k.tile_n, b_stride = k.fused ? kInter : k.tile_n;
  unsigned long long packed_bytes = k.w_packed->bytes;
  void* a[] = {&w, &rows, &K, &N, &n_step, &b_stride, &out, &packed_bytes};
  CUevent e0, e1;
  CU(cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CU(cuEventCreate(&e1, CU_EVENT_DEFAULT));
  CU(cuEventRecord(e0, s));
  CU(cuLaunchKernel(pack, 1024, 1, 1, 256, 1, 1, 0, s, a, nullptr));
  CU(cuEventRecord(e1, s));
  CU(cuStreamSynchronize(s));
  float ms = 0;
  CU(cuEventElapsedTime(&ms, e0, e1));
  CU(cuEventDestroy(e0));
  CU(cuEventDestroy(e1));
  std::printf("kernel %-22s W packed by its gu_pack_w: %.1f MB in %.3f ms (once, not timed with the kernels)\n", k.label.c_str(),
              k.w_packed->bytes / 1e6, ms);
}

void load_kernel(TestKernel& k) {
  must(k.mod.load(k.cubin, k.map), k.label);
  long long tm = 0, tn = 0;
  if (!k.mod.fact("tile_m", tm) || !k.mod.fact("tile_n", tn))
    die(k.label + ": map '" + k.map + "' lacks the facts tile_m and tile_n");
  if (tm < 1 || tn < 1) die(k.label + ": tile_m = " + std::to_string(tm) + ", tile_n = " + std::to_string(tn));
  k.tile_m = unsigned(tm);
  k.tile_n = unsigned(tn);
  long long tk = 64;  // maps of links from before the fact was read: 64
  k.mod.fact("tile_k", tk);
  k.tile_k = unsigned(tk);
  k.packed_w = k.mod.param_types().count("w_packed") != 0;
  if (k.packed_w && k.tile_k != 64) die(k.label + ": a packed W is packed in 64-wide k slices");
  // Every map's box comes from the link (the contracts name the tensor each map's copies move):
  // a kernel whose map has none is refused here, not at its first launch.
  for (const char* m : {"x_map", "w_map", "out_map"}) {
    pipelink::Module::TensorBox box;
    if (k.mod.param_types().count(m) && !k.mod.tensor_box(m, box))
      die(k.label + ": param " + m + " has no box in its link (" + k.map + "): its contract names no tensor ([[param]] tensor = "
          "\"<port>.<tensor>\"); relink with contracts that do");
  }
  // A GEMM's store takes the four 64-column panels exactly when its out_map copies in the 128B
  // swizzle; the selection rules read the kind from a named variant's label, which must agree.
  if (!k.fused) {
    pipelink::Module::TensorBox ob;
    const bool panels = k.mod.tensor_box("out_map", ob) && ob.swizzle == "128B";
    if (!k.probe && panels != k.panels)
      die(k.label + ": the label says the accumulator stage is " + (k.panels ? "" : "not ") + "64-column panels (four, or two for the token tiles), but "
          "the link's out_map box is " + ob.dtype + "[" + std::to_string(ob.rows) + "x" + std::to_string(ob.cols) + "] swizzle " +
          ob.swizzle + " (" + k.map + ")");
    k.panels = panels;
  }
}

// Sets every parameter for M (by name; a name the kernel lacks, or one left unset, is an error).
void configure_kernel(TestKernel& k, unsigned M, CUdeviceptr X, CUdeviceptr W, CUdeviceptr out, unsigned sms) {
  // The maps' boxes, element types and swizzles are the link's (Module::set_tensor): the bench
  // names only the matrices.
  const unsigned x_rows = k.pad_x ? (M + k.tile_m - 1) / k.tile_m * k.tile_m : M;  // X holds kXPadRows zero rows past M
  must(k.mod.set_tensor("x_map", X, x_rows, kHidden, 0, CU_TENSOR_MAP_L2_PROMOTION_L2_256B), k.label);
  must(k.mod.set_tensor("out_map", out, M, k.fused ? kInter : kGateUp, 0, CU_TENSOR_MAP_L2_PROMOTION_NONE), k.label);
  must(k.mod.set_u32("K", kHidden), k.label);
  must(k.mod.set_u32("M", M), k.label);
  must(k.mod.set_u32("N", kInter), k.label);
  if (k.packed_w) {  // W's rows are in the packing (pack_weights); n_step / b_stride: checked against its header
    if (!k.w_packed) die(k.label + ": W not packed");
    must(k.mod.set_ptr("w_packed", k.w_packed->p), k.label);
  } else {
    must(k.mod.set_tensor("w_map", W, kGateUp, kHidden, 0, CU_TENSOR_MAP_L2_PROMOTION_L2_256B), k.label);
  }
  must(k.mod.set_u32("n_step", k.fused ? k.tile_n : 2 * k.tile_n), k.label);
  must(k.mod.set_u32("b_stride", k.fused ? kInter : k.tile_n), k.label);
  // Session 11: the runtime's persistent grid (Module::persistent_grid; before: min(SMs, tiles)).
  // For a data-parallel link the fewest blocks that take as many rounds as all resident blocks
  // (247 tiles: 124 blocks, not 132); for split-k the resident blocks.
  (void)sms;
  must(k.mod.persistent_grid(k.grid), k.label);
  if (k.grid_override) k.grid = k.grid_override;  // --probe-grid (Module::launch refuses a split link's grid past its resident blocks)
}

// ---- results -----------------------------------------------------------------------------------
struct Entry {
  std::string label;
  bool has_gemm = true;  // false for swiglu alone
  unsigned grid = 0;     // 0: not a PipeLink kernel
  bool checked = false;  // swiglu alone is checked as part of the baseline pairs
  std::string against;   // GU32 or H32
  TolCheck check;
  Stats t;
  std::vector<double> ms;
};

struct RefCheck {
  double max_rel_gu = 0;  // GU32 vs CPU double dot products
  double max_rel_h = 0;   // H32 vs CPU double SwiGLU of the GPU's GU32 values
  bool ok = true;
};

struct Claim {
  std::string name, a, b;
  Ratio r;
};

struct MResult {
  unsigned M = 0;
  unsigned long long x_seed = 0;
  RefCheck ref;
  Clocks clocks_before, clocks_after;
  std::vector<std::string> lt_algos;  // describe() of each tuned algorithm, with its time
  int lt_best_rank = 0, lt_algos_timed = 0, lt_heuristic = 0;
  LtGemm::Counts lt_counts;
  std::string lt_best_desc;
  double lt_top1_tuned_ms = NAN, lt_best_tuned_ms = NAN;
  std::vector<Entry> entries;
  std::string best_gemm, best_pair;  // the faster cuBLAS GEMM and GEMM+SwiGLU pair (by median)
  std::string selected_fused = "fused", selected_gemm = "gemm";
  std::string packed_fused, packed_gemm;  // the selected kernels' twins reading a packed W ("" if none is linked)
  std::vector<Claim> claims;
  const Entry* find(const std::string& label) const {
    for (const Entry& e : entries)
      if (e.label == label) return &e;
    return nullptr;
  }
};

RefCheck check_reference(unsigned M, CUdeviceptr X, CUdeviceptr W, CUdeviceptr GU32, CUdeviceptr H32, std::mt19937_64& rng) {
  // kRefSamples random (row, c) with c in the gate half: GU32[row, c] and GU32[row, c + 25600]
  // against CPU double dot products of the same bf16 inputs, relative to max(|cpu|, the typical
  // size of the dot product of these rows); H32[row, c] against a CPU double SwiGLU of those two
  // GPU values.
  RefCheck rc;
  std::uniform_int_distribution<unsigned> row_d(0, M - 1), col_d(0, kInter - 1);
  std::vector<uint16_t> x(kHidden), w(kHidden);
  auto dot_row = [&](unsigned n, double& dot, double& scale) {
    CU(cuMemcpyDtoH(w.data(), W + size_t(n) * kHidden * 2, kHidden * 2));
    double s = 0, xx = 0, ww = 0;
    for (unsigned k = 0; k < kHidden; ++k) {
      const double a = bf16_to_f(x[k]), b = bf16_to_f(w[k]);
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

std::string ms4(const Stats& s) { return fmt("%.4f", s.median) + " ±" + fmt("%.1f", 100 * s.spread) + "%"; }

void print_result(const MResult& r) {
  std::printf("\n== M = %u   (x seed %llu; reference vs CPU: GU max rel %.2e, H max rel %.2e: %s)\n", r.M, r.x_seed,
              r.ref.max_rel_gu, r.ref.max_rel_h, r.ref.ok ? "OK" : "FAIL");
  std::printf("  clocks before: %s\n  clocks after:  %s\n", r.clocks_before.line().c_str(), r.clocks_after.line().c_str());
  const LtGemm::Counts& c = r.lt_counts;
  std::printf("  cuBLASLt: heuristic offered %d of %d; %d algorithm ids (%d initialised), %ld configurations checked, %ld accepted "
              "(%ld over the workspace, %ld duplicates skipped)%s in %.2f s; %d screened (%d failed)%s, %d finalists timed, in %.2f s\n",
              c.heuristic_offered, c.heuristic_requested, c.algo_ids, c.algo_ids_init, c.configs_checked, c.configs_accepted,
              c.over_workspace, c.duplicates, c.check_capped ? " [check budget reached]" : "", c.plan_s, c.screened, c.screen_failed,
              c.screen_capped ? " [screening time cap reached]" : "", c.finalists, c.autotune_s);
  std::printf("  cuBLASLt fastest: %s (%.4f ms; the heuristic's first: %.4f ms)\n", r.lt_best_desc.c_str(), r.lt_best_tuned_ms,
              r.lt_top1_tuned_ms);
  std::printf("  %-22s %5s %10s %7s %10s %10s %8s %7s  %s\n", "kernel", "grid", "median ms", "spread", "min ms", "max ms", "TFLOP/s",
              "W TB/s", "check");
  for (const Entry& e : r.entries) {
    const double tf = e.has_gemm ? flops_of(r.M) / (e.t.median * 1e-3) / 1e12 : NAN;
    const double bw = e.has_gemm && reports_w_bw(r.M) ? kWBytes / (e.t.median * 1e-3) / 1e12 : NAN;
    std::printf("  %-22s %5s %10.4f %6.1f%% %10.4f %10.4f %8s %7s  %s\n", e.label.c_str(), e.grid ? std::to_string(e.grid).c_str() : "-",
                e.t.median, 100 * e.t.spread, e.t.min, e.t.max, std::isnan(tf) ? "-" : fmt("%.1f", tf).c_str(),
                std::isnan(bw) ? "-" : fmt("%.2f", bw).c_str(),
                e.checked ? (e.check.summary() + " vs " + e.against).c_str() : "(checked in the pairs)");
  }
  for (const Claim& c : r.claims)
    std::printf("  %-44s %.4f [%.4f, %.4f]  %s\n", c.name.c_str(), c.r.s.median, c.r.s.q1, c.r.s.q3, c.r.verdict.c_str());
}

struct RunInfo {
  std::string device, date;
  int sms = 0;
  unsigned long long seed = 0;
  unsigned rounds = 0, algos_requested = 0;
  std::string swiglu_cubin;
};

void write_json(const std::string& path, const RunInfo& info, const std::vector<std::unique_ptr<TestKernel>>& kernels,
                const std::vector<MResult>& results, bool all_ok, const TimerOptions& topt) {
  Json j;
  j.obj();
  j.key("bench").str("qwen3_32b_mlp_gateup_swiglu");
  j.key("device").str(info.device);
  j.key("sms").integer(info.sms);
  j.key("date").str(info.date);
  j.key("seed").integer(static_cast<long long>(info.seed));
  j.key("data").str("X ~ N(0,1), W ~ N(0, 0.02^2), bf16, the same for every contender");
  j.key("timer").str("bench/common: spin + round robin, order shuffled each round (seeded: order_seed); median, spread = (q3-q1)/(2 median)");
  j.key("order_seed").integer(static_cast<long long>(topt.order_seed));
  j.key("rounds").integer(topt.rounds);
  j.key("warmup").integer(topt.warmup);
  j.key("sustain_ms").num(topt.sustain_ms);
  j.key("region_ms").num(topt.target_ms);
  j.key("K").integer(kHidden);
  j.key("I").integer(kInter);
  j.key("N_gate_up").integer(kGateUp);
  j.key("w_bytes").integer(static_cast<long long>(kWBytes));
  j.key("tolerance").obj();
  j.key("atol").num(kAtol);
  j.key("rtol_gu").num(kRtolGU);
  j.key("rtol_h").num(kRtolH);
  j.key("ref_tol").num(kRefTol);
  j.end();
  j.key("cublas_workspace_bytes").integer(static_cast<long long>(kGemmWorkspace));
  j.key("cublaslt_algos_requested").integer(info.algos_requested);
  j.key("swiglu_cubin").str(info.swiglu_cubin);
  j.key("kernels").arr();
  for (const auto& kp : kernels) {
    const TestKernel& k = *kp;
    j.obj();
    j.key("label").str(k.label);
    j.key("cubin").str(k.cubin);
    j.key("kernel").str(k.mod.kernel_name());
    j.key("tile_m").integer(k.tile_m);
    j.key("tile_n").integer(k.tile_n);
    j.key("threads").integer(k.mod.threads());
    j.key("smem_bytes").integer(k.mod.smem_bytes());
    if (k.probe) j.key("probe").boolean(true);
    if (k.pad_x) j.key("padded_x").boolean(true);  // --probe-padded-x: x_map over ceil(M / tile_m) * tile_m rows
    j.end();
  }
  j.end();
  j.key("results").arr();
  for (const MResult& r : results) {
    j.obj();
    j.key("M").integer(r.M);
    j.key("x_seed").integer(static_cast<long long>(r.x_seed));
    j.key("flops").num(flops_of(r.M));
    j.key("clocks_before").raw(r.clocks_before.json());
    j.key("clocks_after").raw(r.clocks_after.json());
    j.key("reference_check").obj();
    j.key("max_rel_gu").num(r.ref.max_rel_gu);
    j.key("max_rel_h").num(r.ref.max_rel_h);
    j.key("samples").integer(kRefSamples);
    j.key("ok").boolean(r.ref.ok);
    j.end();
    j.key("cublaslt_autotune").obj();
    j.key("algos_timed").integer(r.lt_algos_timed);
    j.key("from_heuristic").integer(r.lt_heuristic);
    {
      const LtGemm::Counts& c = r.lt_counts;
      j.key("heuristic_requested").integer(c.heuristic_requested);
      j.key("heuristic_offered").integer(c.heuristic_offered);
      j.key("algo_ids").integer(c.algo_ids);
      j.key("algo_ids_initialised").integer(c.algo_ids_init);
      j.key("configs_checked").integer(c.configs_checked);
      j.key("configs_accepted").integer(c.configs_accepted);
      j.key("configs_over_workspace").integer(c.over_workspace);
      j.key("duplicates_skipped").integer(c.duplicates);
      j.key("check_capped").boolean(c.check_capped);
      j.key("plan_s").num(c.plan_s);
      j.key("screened").integer(c.screened);
      j.key("screen_failed").integer(c.screen_failed);
      j.key("screen_capped").boolean(c.screen_capped);
      j.key("finalists").integer(c.finalists);
      j.key("autotune_s").num(c.autotune_s);
    }
    j.key("best_rank").integer(r.lt_best_rank);
    j.key("best").str(r.lt_best_desc);
    j.key("best_ms").num(r.lt_best_tuned_ms);
    j.key("top1_ms").num(r.lt_top1_tuned_ms);
    j.key("algos").arr();
    for (const std::string& a : r.lt_algos) j.str(a);
    j.end();
    j.end();
    j.key("best_gemm_baseline").str(r.best_gemm);
    j.key("best_pair_baseline").str(r.best_pair);
    j.key("selected_fused").str(r.selected_fused);
    j.key("selected_gemm").str(r.selected_gemm);
    j.key("packed_fused").str(r.packed_fused);
    j.key("packed_gemm").str(r.packed_gemm);
    j.key("entries").arr();
    for (const Entry& e : r.entries) {
      j.obj();
      j.key("label").str(e.label);
      j.key("grid").integer(e.grid);
      j.key("ms").stats(e.t);
      j.key("median_ms").num(e.t.median);
      j.key("tflops").num(e.has_gemm ? flops_of(r.M) / (e.t.median * 1e-3) / 1e12 : NAN);
      if (reports_w_bw(r.M) && e.has_gemm) j.key("w_TBps").num(kWBytes / (e.t.median * 1e-3) / 1e12);
      if (!e.has_gemm) j.key("TBps").num(swiglu_bytes(r.M) / (e.t.median * 1e-3) / 1e12);
      if (e.checked) {
        j.key("checked_against").str(e.against);
        j.key("check").tol(e.check);
      }
      j.key("runs_ms").samples(e.ms);
      j.end();
    }
    j.end();
    j.key("claims").arr();
    for (const Claim& c : r.claims) {
      j.obj();
      j.key("name").str(c.name);
      j.key("a").str(c.a);
      j.key("b").str(c.b);
      j.key("ratio").stats(c.r.s);
      j.key("verdict").str(c.r.verdict);
      j.end();
    }
    j.end();
    j.end();
  }
  j.end();
  j.key("all_ok").boolean(all_ok);
  j.end();
  if (!j.write(path)) die("cannot write " + path);
}

void write_md(const std::string& path, const RunInfo& info, const std::vector<MResult>& results, bool all_ok, const TimerOptions& topt) {
  std::ofstream f(path);
  if (!f) die("cannot write " + path);
  f << "# Qwen3-32B MLP gate/up + SwiGLU (C++ bench, X[M,5120] · W[51200,5120]^T, SwiGLU to H[M,25600])\n\n"
    << info.device << " (" << info.sms << " SMs), " << info.date << ", seed " << info.seed << ". Data: X ~ N(0,1), W ~ N(0, 0.02²), "
    << "bf16, the same for every contender. Timer: bench/common, spin + round robin (order shuffled each round, order seed " << topt.order_seed << "), "
    << topt.rounds << " rounds after " << topt.warmup << " warm-up runs"
    << (topt.sustain_ms > 0 ? ", each timed region after about " + std::to_string(int(topt.sustain_ms)) + " ms of the same contender untimed (--sustain-ms)" : std::string())
    << (topt.target_ms > 0 ? ", timed regions of about " + std::to_string(int(topt.target_ms)) + " ms (--region-ms; at most " + std::to_string(topt.max_reps) + " runs)" : std::string())
    << "; median ± spread, spread = (q3 − q1) / (2·median). "
    << "TFLOP/s count 2·M·5120·51200. Checks per element: |out − ref| ≤ " << kAtol << " + rtol·|ref| (rtol GU 2⁻⁷, H 2⁻⁶). "
    << "All checks " << (all_ok ? "passed" : "**did not pass**") << ".\n\n"
    << "Baselines: cublaslt-best = fastest cuBLASLt candidate on these operands (32 MiB workspace): the heuristic's list ("
    << info.algos_requested << " asked) plus configurations enumerated from every bf16 algorithm id (AlgoGetIds/AlgoInit, their tile, "
       "stages, split-K, swizzle capabilities, cluster shapes) that cublasLtMatmulAlgoCheck accepts; all screened by one timed run "
       "within a time cap, the fastest 16 and the heuristic's first timed again (median of 4); counts per M below; cublaslt-top1 = the heuristic's first; cublas-gemmex = "
       "cublasGemmEx (torch.mm's call). best cuBLAS = the faster of cublaslt-best and cublas-gemmex by median; best pair = "
       "the faster of the two GEMM + swiglu pairs. Ratios are per round (paired), median [q1, q3]; a verdict of faster/slower "
       "needs q3 < 1 or q1 > 1, otherwise within noise.\n\n"
    << "| M | fused variant | fused ms | best pair ms | fused / best pair | gemm variant | gemm ms | best cuBLAS ms | gemm / best "
       "cuBLAS | gemm TFLOP/s | cublaslt-top1 ms | SM MHz (before→after) | W packed: fused / best pair | W packed: gemm / best cuBLAS |\n"
    << "|---:|---|---:|---:|---|---|---:|---:|---|---:|---:|---|---|---|\n";
  for (const MResult& r : results) {
    auto med = [&](const std::string& l) {
      const Entry* e = r.find(l);
      return e ? ms4(e->t) : std::string("—");
    };
    auto claim = [&](const std::string& n) {
      for (const Claim& c : r.claims)
        if (c.name == n) return fmt("%.3f", c.r.s.median) + " [" + fmt("%.3f", c.r.s.q1) + ", " + fmt("%.3f", c.r.s.q3) + "] " + c.r.verdict;
      return std::string("—");
    };
    const Entry* g = r.find(r.selected_gemm);
    f << "| " << r.M << " | " << r.selected_fused << " | " << med(r.selected_fused) << " | " << med(r.best_pair) << " ("
      << r.best_pair << ") | " << claim("fused / best pair") << " | " << r.selected_gemm << " | " << med(r.selected_gemm) << " | "
      << med(r.best_gemm) << " (" << r.best_gemm << ") | " << claim("gemm / best cuBLAS") << " | "
      << (g ? fmt("%.0f", flops_of(r.M) / (g->t.median * 1e-3) / 1e12) : std::string("—")) << " | " << med("cublaslt-top1") << " | "
      << fmt("%.0f", r.clocks_before.sm_mhz) << "→" << fmt("%.0f", r.clocks_after.sm_mhz) << " | "
      << (r.packed_fused.empty() ? std::string("—") : r.packed_fused + " " + med(r.packed_fused) + ": " + claim("fused, W packed / best pair"))
      << " | " << (r.packed_gemm.empty() ? std::string("—") : r.packed_gemm + " " + med(r.packed_gemm) + ": " + claim("gemm, W packed / best cuBLAS"))
      << " |\n";
  }
  for (const MResult& r : results) {
    f << "\n## M = " << r.M << "\n\nx seed " << r.x_seed << "; reference vs CPU double: GU max rel " << fmt("%.2e", r.ref.max_rel_gu)
      << ", H max rel " << fmt("%.2e", r.ref.max_rel_h) << " (" << (r.ref.ok ? "OK" : "**FAIL**") << "). Clocks before: "
      << r.clocks_before.line() << "; after: " << r.clocks_after.line() << ". cuBLASLt: the heuristic offered "
      << r.lt_counts.heuristic_offered << " of " << r.lt_counts.heuristic_requested << "; enumeration: " << r.lt_counts.algo_ids_init
      << " algorithm ids, " << r.lt_counts.configs_checked << " configurations checked, " << r.lt_counts.configs_accepted << " accepted"
      << (r.lt_counts.check_capped ? " (check budget reached)" : "") << "; " << r.lt_counts.screened << " candidates screened (one timed run each"
      << (r.lt_counts.screen_capped ? ", time cap reached" : "") << "), " << r.lt_algos_timed
      << " finalists timed (median of 4) of which " << r.lt_heuristic << " from the heuristic; the fastest: " << r.lt_best_desc << ".\n\n"
      << "| kernel | grid | median ms | spread | min ms | max ms | TFLOP/s | unwritten | over tol | worst err/tol | rel L2 | check |\n"
      << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const Entry& e : r.entries) {
      const double tf = e.has_gemm ? flops_of(r.M) / (e.t.median * 1e-3) / 1e12 : NAN;
      f << "| " << e.label << " | " << (e.grid ? std::to_string(e.grid) : "—") << " | " << fmt("%.4f", e.t.median) << " | "
        << fmt("%.1f%%", 100 * e.t.spread) << " | " << fmt("%.4f", e.t.min) << " | " << fmt("%.4f", e.t.max) << " | "
        << (std::isnan(tf) ? "—" : fmt("%.1f", tf)) << " | ";
      if (e.checked)
        f << e.check.nans << " | " << e.check.over << " | " << fmt("%.3f", e.check.worst_ratio) << " | " << fmt("%.2e", e.check.rel_l2)
          << " | " << (e.check.ok() ? "OK" : "**FAIL**") << " vs " << e.against << " |\n";
      else
        f << "— | — | — | — | in the pairs |\n";
    }
    f << "\n";
    for (const Claim& c : r.claims)
      f << "- " << c.name << " (" << c.a << " / " << c.b << "): " << fmt("%.4f", c.r.s.median) << " [" << fmt("%.4f", c.r.s.q1) << ", "
        << fmt("%.4f", c.r.s.q3) << "]: " << c.r.verdict << "\n";
  }
}

// The labels of kernels whose accumulator stage is the four 64-column panels: "-sw" at the end, or
// followed by "-" or a digit (gemm-sw, fused-sw-splitk, gemm-sw-pp-g8, gemm-sw64r-...), not as the
// start of a word (gemm-small16-swap).
using qwen_select::has_panels;

constexpr const char* kVariants[] = {"fused", "fused-control", "fused-medium", "fused-medium-control", "fused-narrow",
                                     "fused-narrow-control", "fused-small", "fused-small-control", "gemm", "gemm-control",
                                     "gemm-medium", "gemm-medium-control", "gemm-narrow", "gemm-narrow-control", "gemm-small",
                                     "gemm-small-control", "fused-sw", "fused-sw-control", "gemm-sw", "gemm-sw-control",
                                     "fused-sw-splitk", "gemm-sw-splitk", "fused-small16", "fused-small16-control",
                                     "gemm-small16", "gemm-small16-control", "fused-pp-g8", "fused-pp-g8-control",
                                     "fused-small16-swap-packed", "fused-small16-swap-packed-control", "gemm-small16-swap-packed",
                                     "gemm-small16-swap-packed-control", "fused-medium-packed", "fused-medium-packed-control",
                                     "gemm-medium-packed", "gemm-medium-packed-control", "gemm-medium-s4",
                                     "gemm-medium-s4-control", "fused-medium-swf", "fused-medium-swf-control",
                                     "fused-medium-swf-packed", "fused-medium-swf-packed-control", "gemm-n112",
                                     "gemm-n112-control", "gemm-n120", "gemm-n120-control", "fused-n112-swf",
                                     "fused-n112-swf-control", "fused-n120-swf", "fused-n120-swf-control",
                                     "gemm-tok144-sk", "gemm-tok144-sk-control", "gemm-tok144-splitk",
                                     "gemm-tok144-splitk-control", "gemm-tok160-sk", "gemm-tok160-sk-control",
                                     "gemm-tok160-splitk", "gemm-tok160-splitk-control", "gemm-tok176-sk",
                                     "gemm-tok176-sk-control", "gemm-tok176-splitk", "gemm-tok176-splitk-control",
                                     "fused-tok144-sk", "fused-tok144-sk-control", "fused-tok144-splitk",
                                     "fused-tok144-splitk-control", "fused-tok160-sk", "fused-tok160-sk-control",
                                     "fused-tok160-splitk", "fused-tok160-splitk-control", "fused-tok176-sk",
                                     "fused-tok176-sk-control", "fused-tok176-splitk", "fused-tok176-splitk-control",
                                     "gemm-tok208-sk", "gemm-tok208-sk-control", "gemm-tok208-splitk",
                                     "gemm-tok208-splitk-control", "fused-tok208-sk", "fused-tok208-sk-control",
                                     "fused-tok208-splitk", "fused-tok208-splitk-control", "gemm-tok224-sk",
                                     "gemm-tok224-sk-control", "fused-tok224-sk", "fused-tok224-sk-control",
                                     "gemm-tok144w-sk", "gemm-tok144w-sk-control", "gemm-tok144w-splitk",
                                     "gemm-tok144w-splitk-control", "fused-tok144w-splitk", "fused-tok144w-splitk-control",
                                     "gemm-tok144w-splitk-g8", "gemm-tok144w-splitk-g8-control", "fused-tok144w-splitk-g8",
                                     "fused-tok144w-splitk-g8-control", "gemm-tok136-sk", "gemm-tok136-sk-control",
                                     "gemm-tok136-splitk", "gemm-tok136-splitk-control", "gemm-tok152-sk",
                                     "gemm-tok152-sk-control", "gemm-tok152-splitk", "gemm-tok152-splitk-control", "fused-tok136-sk",
                                     "fused-tok136-sk-control", "fused-tok136-splitk", "fused-tok136-splitk-control",
                                     "fused-tok152-sk", "fused-tok152-sk-control", "fused-tok152-splitk",
                                     "fused-tok152-splitk-control",
                                     "gemm-tok168-sk", "gemm-tok168-sk-control", "gemm-tok168-splitk",
                                     "gemm-tok168-splitk-control", "fused-tok168-sk", "fused-tok168-sk-control",
                                     "fused-tok168-splitk", "fused-tok168-splitk-control", "gemm-tok200-sk",
                                     "gemm-tok200-sk-control", "gemm-tok200-splitk", "gemm-tok200-splitk-control",
                                     "fused-tok200-sk", "fused-tok200-sk-control", "fused-tok200-splitk",
                                     "fused-tok200-splitk-control", "gemm-tok216-sk", "gemm-tok216-sk-control",
                                     "fused-tok216-sk", "fused-tok216-sk-control",
                                     // session 32: the 136- / 152-token tiles with a 5-stage ring
                                     "gemm-tok136-sk5", "gemm-tok136-sk5-control", "gemm-tok136-splitk5", "gemm-tok136-splitk5-control", "gemm-tok152-sk5", "gemm-tok152-sk5-control", "gemm-tok152-splitk5", "gemm-tok152-splitk5-control", "fused-tok136-sk5", "fused-tok136-sk5-control", "fused-tok136-splitk5", "fused-tok136-splitk5-control", "fused-tok152-sk5", "fused-tok152-sk5-control", "fused-tok152-splitk5", "fused-tok152-splitk5-control"};
constexpr int kNumVariants = sizeof(kVariants) / sizeof(kVariants[0]);

constexpr char kUsage[] =
    "usage: bench_qwen_mlp [--VARIANT CUBIN MAP]... [--M 16,128,1024,2048,4096,8192] [--rounds 20] [--algos 32]\n"
    "                      [--json PATH] [--md PATH] [--swiglu-cubin PATH] [--util-cubin PATH] [--profile]\n"
    "                      [--probe LABEL CUBIN MAP]... [--probe-padded-x LABEL CUBIN MAP]...\n"
    "                      [--probe-grid LABEL CUBIN MAP GRID]... [--sustain-ms MS] [--region-ms MS]\n"
    "  VARIANT: fused, fused-medium, fused-narrow, fused-small, fused-sw, gemm, gemm-medium, gemm-narrow, gemm-small,\n"
    "           gemm-sw, each also with -control; fused-sw-splitk, gemm-sw-splitk (--tile-schedule split-k);\n"
    "           fused-pp-g8 (the ping-pong main loop, grouped:8; selected at M >= 4096 in sessions 12-16) and its -control;\n"
    "           fused-small16-swap-packed, gemm-small16-swap-packed, fused-medium-packed, gemm-medium-packed (W packed by the\n"
    "           link's gu_pack_w; each the twin of a row-major kernel, reported beside it) and their -control;\n"
    "           gemm-medium-s4 (the 128 x 104 GEMM with a 4-stage ring) and its -control;\n"
    "           fused-medium-swf (128 x 104, the SwiGLU in the main loop's epilogue, 4 stages),\n"
    "           fused-medium-swf-packed (its W-packed twin), each with -control;\n"
    "           gemm-n112, gemm-n120, fused-n112-swf, fused-n120-swf (128 x 112 / 128 x 120, one m64n{224,240}k16 per\n"
    "           k16 step; at 64 < M <= 1024 the one of these and 128 x 104 whose whole rounds on the SMs take least,\n"
    "           or above 512 fused-/gemm-sw-splitk where its cut last wave costs less), each with -control;\n"
    "           gemm-tok<T>-sk, gemm-tok<T>-splitk, fused-tok<T>-sk, fused-tok<T>-splitk, T = 144, 160, 176, 208 (the token\n"
    "           tiles: T tokens as the wgmma N, under stream-k / split-k; at 256 < M <= 1024 where their cost is below\n"
    "           the 128-row tiles'), each with -control\n"
    "  --probe: a kernel timed and checked beside the others but never selected; LABEL starts with fused or gemm\n"
    "           (its maps' boxes are its link's: every x_map, w_map and out_map names its tensor in its contract)\n"
    "  --probe-padded-x: a probe whose x_map spans ceil(M / tile_m) * tile_m rows of X (zero rows past M), so its\n"
    "           TMA loads never reach past the map (no out-of-bounds fill); its output rows past M are clipped as usual\n"
    "  --probe-grid: a probe launched on GRID blocks instead of the runtime's persistent grid (a split-schedule\n"
    "           link's GRID at most its resident blocks); the stream-k / split-k plans follow the grid\n"
    "  --sustain-ms: before each timed region the contender runs back to back, untimed, for about MS ms, so the\n"
    "           region sees the clock its own power draw sustains (without it: the clock the round's mix left)\n"
    "  --region-ms: runs per timed region so that it lasts about MS ms (at most 64; default: one run)\n"
    "  --profile: after the checks, every contender once more inside the NVTX range \"profile\" (for ncu --nvtx)\n";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::unique_ptr<TestKernel>> kernels;
  std::vector<unsigned> Ms(std::begin(kDefaultM), std::end(kDefaultM));
  TimerOptions topt;
  topt.rounds = 20;
  int algos = 32;
  bool profile = false;
  const std::string here = exe_dir(argv[0]);
  std::string json_path, md_path, swiglu_cubin = here + "/swiglu.cubin", util_cubin = here + "/bench_util.cubin";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n%s", a.c_str(), kUsage);
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    int variant = -1;
    for (int v = 0; v < kNumVariants; ++v)
      if (a == std::string("--") + kVariants[v]) variant = v;
    if (variant >= 0) {
      auto k = std::make_unique<TestKernel>();
      k->label = kVariants[variant];
      k->fused = k->label.rfind("fused", 0) == 0;
      k->panels = has_panels(k->label);
      k->cubin = next();
      k->map = next();
      for (const auto& other : kernels)
        if (other->label == k->label) die(a + " given twice");
      kernels.push_back(std::move(k));
    } else if (a == "--probe" || a == "--probe-padded-x" || a == "--probe-grid") {
      auto k = std::make_unique<TestKernel>();
      k->label = next();
      k->probe = true;
      k->pad_x = a == "--probe-padded-x";
      k->fused = k->label.rfind("fused", 0) == 0;
      if (!k->fused && k->label.rfind("gemm", 0) != 0) die(a + " " + k->label + ": the label must start with fused or gemm");
      k->cubin = next();
      k->map = next();
      if (a == "--probe-grid") {
        k->grid_override = parse_list(next(), "--probe-grid")[0];
        if (k->grid_override == 0) die(a + " " + k->label + ": the grid must be at least 1 block");
      }
      for (const auto& other : kernels)
        if (other->label == k->label) die(a + " " + k->label + " given twice");
      kernels.push_back(std::move(k));
    } else if (a == "--M") Ms = parse_list(next(), "--M");
    else if (a == "--rounds" || a == "--iters") topt.rounds = parse_list(next(), "--rounds")[0];
    else if (a == "--sustain-ms") topt.sustain_ms = double(parse_list(next(), "--sustain-ms")[0]);
    else if (a == "--region-ms") topt.target_ms = double(parse_list(next(), "--region-ms")[0]);
    else if (a == "--algos") algos = int(parse_list(next(), "--algos")[0]);
    else if (a == "--json") json_path = next();
    else if (a == "--md") md_path = next();
    else if (a == "--swiglu-cubin") swiglu_cubin = next();
    else if (a == "--util-cubin") util_cubin = next();
    else if (a == "--profile") profile = true;
    else if (a == "-h" || a == "--help") { std::fputs(kUsage, stdout); return 0; }
    else { std::fprintf(stderr, "unknown argument %s\n%s", a.c_str(), kUsage); return 2; }
  }
  auto rank = [](const std::string& l) {
    for (int i = 0; i < kNumVariants; ++i)
      if (l == kVariants[i]) return i;
    return kNumVariants;
  };
  std::stable_sort(kernels.begin(), kernels.end(), [&](const auto& a, const auto& b) { return rank(a->label) < rank(b->label); });

  Device dev = open_device(0, /*non_blocking=*/false);
  const CUstream stream = dev.stream;
  const unsigned sms = unsigned(dev.sms);
  RunInfo info;
  info.device = dev.name;
  info.sms = dev.sms;
  info.date = utc_now();
  info.rounds = topt.rounds;
  info.algos_requested = unsigned(algos);
  info.swiglu_cubin = swiglu_cubin;
  info.seed = static_cast<unsigned long long>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  topt.order_seed = info.seed;  // the per-round order shuffle, recorded as order_seed

  for (auto& k : kernels) load_kernel(*k);
  Util util(util_cubin, sms, stream);
  Swiglu swiglu(swiglu_cubin, sms);
  LtGemm lt;
  CublasGemmEx gemmex;

  std::printf("device: %s (%d SMs), %s\n", info.device.c_str(), info.sms, info.date.c_str());
  std::printf("workload: GU[M,%u] = X[M,%u] . W[%u,%u]^T (bf16, fp32 accumulate), H[M,%u] = silu(gate) * up\n", kGateUp, kHidden,
              kGateUp, kHidden, kInter);
  std::printf("data: X ~ N(0,1), W ~ N(0,0.02^2), bf16; seed %llu (W from the seed, X from seed + M); %u rounds after %u warm-up\n",
              info.seed, topt.rounds, topt.warmup);
  for (const auto& k : kernels)
    std::printf("kernel %-22s %s: %s, %u threads, %u B smem, tile %ux%u\n", k->label.c_str(), k->cubin.c_str(),
                k->mod.kernel_name().c_str(), k->mod.threads(), k->mod.smem_bytes(), k->tile_m, k->tile_n);

  const size_t max_m = *std::max_element(Ms.begin(), Ms.end());
  DeviceBuffer W(kWBytes);
  DeviceBuffer X((max_m + kXPadRows) * kHidden * 2);
  DeviceBuffer GU(max_m * kGateUp * 2);    // cuBLAS bf16 output
  DeviceBuffer H(max_m * kInter * 2);      // swiglu_bf16 output
  DeviceBuffer OUT(max_m * kGateUp * 2);   // the kernels under test write here (fused: H, gemm: GU)
  DeviceBuffer GU32(max_m * kGateUp * 4);  // reference
  DeviceBuffer H32(max_m * kInter * 4);    // reference
  util.fill_bf16(W.p, size_t(kGateUp) * kHidden, info.seed, kWScale);
  for (auto& k : kernels)
    if (k->packed_w) pack_weights(*k, W.p, stream);

  std::vector<MResult> results;
  bool all_ok = true;
  for (const unsigned M : Ms) {
    MResult r;
    r.M = M;
    r.x_seed = info.seed + M;
    const size_t gu_n = size_t(M) * kGateUp, h_n = size_t(M) * kInter;
    util.fill_bf16(X.p, size_t(M) * kHidden, r.x_seed, 1.f);
    CU(cuMemsetD8Async(X.p + size_t(M) * kHidden * 2, 0, kXPadRows * size_t(kHidden) * 2, stream));  // --probe-padded-x's rows

    // -- the fp32 reference, and its spot check against the CPU --
    const auto plan32 = lt.plan(M, kGateUp, kHidden, CUDA_R_32F, 1);
    lt.run(*plan32, 0, X.p, W.p, GU32.p, stream);
    swiglu.ref(GU32.p, H32.p, M, kInter, stream);
    CU(cuStreamSynchronize(stream));
    std::mt19937_64 rng(r.x_seed);
    r.ref = check_reference(M, X.p, W.p, GU32.p, H32.p, rng);
    all_ok &= r.ref.ok;

    // -- cuBLASLt: the heuristic's top algorithms, each timed on these operands --
    auto plan16 = lt.plan(M, kGateUp, kHidden, CUDA_R_16BF, algos, true, 20000, 1.5);
    lt.autotune(*plan16, X.p, W.p, GU.p, stream, 1, 4, 16, 1.5);
    r.lt_counts = plan16->counts;
    for (const auto& al : plan16->algos) {  // recorded: the heuristic's and the finalists
      if (al.enumerated && std::isnan(al.tuned_ms)) continue;
      r.lt_heuristic += !al.enumerated && !std::isnan(al.tuned_ms);
      r.lt_algos.push_back(al.describe() + ": screen " + (std::isnan(al.screen_ms) ? std::string("-") : fmt("%.4f ms", al.screen_ms)) +
                           ", tuned " + (std::isnan(al.tuned_ms) ? std::string(al.failed ? "failed" : "-") : fmt("%.4f ms", al.tuned_ms)));
      r.lt_algos_timed += !std::isnan(al.tuned_ms);
    }
    r.lt_best_rank = plan16->algos[size_t(plan16->best)].rank;
    r.lt_best_desc = plan16->algos[size_t(plan16->best)].describe();
    r.lt_best_tuned_ms = plan16->algos[size_t(plan16->best)].tuned_ms;
    r.lt_top1_tuned_ms = plan16->algos[0].tuned_ms;
    const LtGemm::Plan& p16 = *plan16;
    const int best = plan16->best;

    // -- the contenders: the kernels under test, then the baselines --
    std::vector<Contender> cs;
    for (auto& kp : kernels) {
      TestKernel& k = *kp;
      configure_kernel(k, M, X.p, W.p, OUT.p, sms);
      Entry e;
      e.label = k.label;
      e.grid = k.grid;
      e.checked = true;
      e.against = k.fused ? "H32" : "GU32";
      r.entries.push_back(e);
      cs.push_back({k.label, [&k](CUstream s) { must(k.mod.launch(k.grid, s), k.label); }, {}, 1});
    }
    auto lt_best = [&, best](CUstream s) { lt.run(p16, best, X.p, W.p, GU.p, s); };
    auto lt_top1 = [&](CUstream s) { lt.run(p16, 0, X.p, W.p, GU.p, s); };
    auto gemm_ex = [&, M](CUstream s) { gemmex.run(M, kGateUp, kHidden, X.p, W.p, GU.p, CUDA_R_16BF, s); };
    auto act = [&, M](CUstream s) { swiglu.bf16(GU.p, H.p, M, kInter, s); };
    auto baseline = [&](const char* label, bool has_gemm, bool checked, const char* against, std::function<void(CUstream)> fn) {
      Entry e;
      e.label = label;
      e.has_gemm = has_gemm;
      e.checked = checked;
      e.against = against;
      r.entries.push_back(e);
      cs.push_back({label, std::move(fn), {}, 1});
    };
    baseline("cublaslt-best", true, true, "GU32", lt_best);
    baseline("cublaslt-top1", true, true, "GU32", lt_top1);
    baseline("cublas-gemmex", true, true, "GU32", gemm_ex);
    baseline("swiglu", false, false, "", act);
    baseline("cublaslt-best+swiglu", true, true, "H32", [lt_best, act](CUstream s) { lt_best(s); act(s); });
    baseline("cublas-gemmex+swiglu", true, true, "H32", [gemm_ex, act](CUstream s) { gemm_ex(s); act(s); });

    // -- correctness: poison what is checked (and the pairs' intermediate), run once, check --
    for (size_t i = 0; i < r.entries.size(); ++i) {
      Entry& e = r.entries[i];
      if (!e.checked) continue;
      CUdeviceptr out;
      size_t n;
      if (e.grid) {
        out = OUT.p, n = e.against == "H32" ? h_n : gu_n;
      } else if (e.against == "H32") {
        poison(GU.p, gu_n * 2, stream);
        out = H.p, n = h_n;
      } else {
        out = GU.p, n = gu_n;
      }
      poison(out, n * 2, stream);
      cs[i].enqueue(stream);
      const CUresult sync = cuStreamSynchronize(stream);
      if (sync != CUDA_SUCCESS) die(e.label + ": " + pipelink::cu_error(sync, "the checked run"));
      const bool h = e.against == "H32";
      e.check = util.check(out, true, h ? H32.p : GU32.p, n, kAtol, h ? kRtolH : kRtolGU);
      all_ok &= e.check.ok();
    }

    // -- --profile: every contender once more inside the NVTX range "profile", for
    //    ncu --nvtx --nvtx-include "profile/" (bench/gpu/ncu_gemm.sh) --
    if (profile) {
      nvtxRangePushA("profile");
      for (auto& c : cs) c.enqueue(stream);
      CU(cuStreamSynchronize(stream));
      nvtxRangePop();
    }

    // -- timing --
    r.clocks_before = read_clocks();
    time_round_robin(cs, topt, util);
    r.clocks_after = read_clocks();
    for (size_t i = 0; i < cs.size(); ++i) {
      r.entries[i].ms = cs[i].ms;
      r.entries[i].t = cs[i].stats();
    }

    // -- the best baselines (by median), the variant a caller would pick, and the claims --
    auto med = [&](const std::string& l) { const Entry* e = r.find(l); return e ? e->t.median : INFINITY; };
    r.best_gemm = med("cublaslt-best") <= med("cublas-gemmex") ? "cublaslt-best" : "cublas-gemmex";
    r.best_pair = med("cublaslt-best+swiglu") <= med("cublas-gemmex+swiglu") ? "cublaslt-best+swiglu" : "cublas-gemmex+swiglu";
    // The variant a caller would pick, decided before timing from the tile facts alone (the rule
    // and its history: qwen_select.h).
    std::vector<qwen_select::Candidate> cands;
    for (const auto& k : kernels) cands.push_back({k->label, k->tile_m, k->tile_n, k->panels, k->probe, k->packed_w});
    r.selected_fused = qwen_select::select("fused", M, sms, cands);
    r.selected_gemm = qwen_select::select("gemm", M, sms, cands);
    // Session 13, fixed before the runs that confirm it: with W packed (a one-time layout change of
    // the weight, gu_pack_w), the selected kernel's packed twin where one is linked: *-small16 ->
    // *-small16-swap-packed (and the operands swapped, wgmma_gu_swap), *-medium -> *-medium-packed.
    // Reported beside the row-major selection, never instead of it.
    auto packed_twin = [&](const std::string& sel) {
      const std::string want = sel == "fused-small16" || sel == "gemm-small16" ? sel + "-swap-packed"
                               : sel == "fused-medium" || sel == "gemm-medium"   ? sel + "-packed"
                               : sel == "gemm-medium-s4"                         ? std::string("gemm-medium-packed")
                               : sel == "fused-medium-swf"                       ? std::string("fused-medium-swf-packed")
                                                                                 : std::string();
      for (const auto& k : kernels)
        if (!want.empty() && k->label == want && k->packed_w) return want;
      return std::string();
    };
    r.packed_fused = packed_twin(r.selected_fused);
    r.packed_gemm = packed_twin(r.selected_gemm);
    auto claim = [&](const std::string& name, const std::string& a, const std::string& b) {
      size_t ia = cs.size(), ib = cs.size();
      for (size_t i = 0; i < cs.size(); ++i) {
        if (cs[i].label == a) ia = i;
        if (cs[i].label == b) ib = i;
      }
      if (ia < cs.size() && ib < cs.size()) r.claims.push_back({name, a, b, paired_ratio(cs[ia].ms, cs[ib].ms)});
    };
    claim("fused / best pair", r.selected_fused, r.best_pair);
    claim("gemm / best cuBLAS", r.selected_gemm, r.best_gemm);
    claim("fused linked / control", r.selected_fused, r.selected_fused + "-control");
    claim("gemm linked / control", r.selected_gemm, r.selected_gemm + "-control");
    if (!r.packed_fused.empty()) {
      claim("fused, W packed / best pair", r.packed_fused, r.best_pair);
      claim("fused, W packed / row-major", r.packed_fused, r.selected_fused);
      claim("fused, W packed: linked / control", r.packed_fused, r.packed_fused + "-control");
    }
    if (!r.packed_gemm.empty()) {
      claim("gemm, W packed / best cuBLAS", r.packed_gemm, r.best_gemm);
      claim("gemm, W packed / row-major", r.packed_gemm, r.selected_gemm);
      claim("gemm, W packed: linked / control", r.packed_gemm, r.packed_gemm + "-control");
    }
    // The twins differ from the row-major kernels in more than the loader (*-small16-swap-packed
    // also swaps the wgmma operands; gemm-medium-packed has 4 stages, gemm-medium 3). Where the
    // probes that separate the effects run (run.sh: *-small16-swap with the TMA loader,
    // gemm-medium-s4), the packing alone:
    claim("packing alone: gemm-small16-swap-packed / gemm-small16-swap", "gemm-small16-swap-packed", "gemm-small16-swap");
    claim("packing alone: fused-small16-swap-packed / fused-small16-swap", "fused-small16-swap-packed", "fused-small16-swap");
    claim("packing alone: gemm-medium-packed / gemm-medium-s4", "gemm-medium-packed", "gemm-medium-s4");
    claim("swap alone: gemm-small16-swap / gemm-small16", "gemm-small16-swap", "gemm-small16");
    claim("fourth stage alone: gemm-medium-s4 / gemm-medium", "gemm-medium-s4", "gemm-medium");
    claim("gemm-medium-s4 / gemm-sw-splitk", "gemm-medium-s4", "gemm-sw-splitk");
    // Session 10: the panel kernels linked with --tile-schedule split-k (timed beside, not selected).
    claim("fused split-k / best pair", "fused-sw-splitk", r.best_pair);
    claim("gemm split-k / best cuBLAS", "gemm-sw-splitk", r.best_gemm);
    // (since session 17 the split-k kernels are also linked grouped:8, fused-sw / gemm-sw col_major)
    claim("fused split-k / fused-sw", "fused-sw-splitk", "fused-sw");
    claim("fused ping-pong / fused split-k", "fused-pp-g8", "fused-sw-splitk");
    claim("gemm split-k / gemm-sw", "gemm-sw-splitk", "gemm-sw");
    for (const auto& k : kernels)  // --probe kernels: against the selected one of their kind and the best baseline
      if (k->probe) {
        const std::string& sel = k->fused ? r.selected_fused : r.selected_gemm;
        claim(k->label + " / " + sel, k->label, sel);
        claim(k->label + (k->fused ? " / best pair" : " / best cuBLAS"), k->label, k->fused ? r.best_pair : r.best_gemm);
      }
    claim("cublaslt-best / cublas-gemmex", "cublaslt-best", "cublas-gemmex");
    claim("cublaslt-best / cublaslt-top1", "cublaslt-best", "cublaslt-top1");

    print_result(r);
    std::fflush(stdout);
    results.push_back(std::move(r));
  }

  if (!json_path.empty()) write_json(json_path, info, kernels, results, all_ok, topt);
  if (!md_path.empty()) write_md(md_path, info, results, all_ok, topt);
  CU(cuStreamSynchronize(stream));
  std::printf("\n%s\n", all_ok ? "PASS: every check passed" : "FAIL: a check failed (see above)");
  return all_ok ? 0 : 1;
}
