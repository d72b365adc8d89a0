// bench_lvc — linked versus control, interleaved in one process, over every linked kernel of the
// repository: the GEMM example, the 16 Qwen3-32B kernels (fused and GEMM-only, 4 tile variants,
// linked and control), the MoE gate/up and down kernels, and the generated transfer.
//
//   bench_lvc --kernels DIR --util lvc_util.cubin --routing routing.cubin [--rounds 50]
//             [--families gemm,qwen,moe,transfer] [--qwen-M 16,64,...] [--qwen-kernels fused,...] [--json PATH]
//
// DIR holds <family>/<kernel>.cubin/.map and <kernel>_control.cubin/.map as the build makes them:
//   gemm/gemm, qwen_mlp/{fused,gemm}{,_medium,_narrow,_small}, moe/{gate_up,down}, transfer/transfer.
//
// A configuration is one linked kernel x one problem shape (the tile variant is part of the
// kernel). For each, three modules are loaded: the linked cubin, the control cubin, and the control
// cubin a second time (an A/A pair: the noise floor of the measurement itself).
//
// Checks, per configuration, on fresh random inputs (never zeros): the linked kernel's and the
// control's outputs are poisoned with 0xFF (NaN), each kernel runs once, and the bench counts NaNs
// left (unwritten elements) and the 32-bit words in which the two outputs differ. GEMM example and
// Qwen: 32 sampled outputs are compared with a CPU double-precision dot product (rel. norm error
// <= 1e-2; bf16 operands). Transfer: every element against the pattern the source writes. MoE: no
// CPU reference here (bench/moe and the gpu.moe test have one); linked == control and every Hm row
// written.
//
// Timing (METHOD.md): warm-up (3 runs of each module), then --rounds rounds. A round starts behind
// a GPU spin (the host enqueues the whole round while the GPU is busy, so no launch latency is
// timed) and runs linked, control and control-again once each, in an order that rotates from round
// to round, each between its own pair of CUDA events. A kernel shorter than 300 us runs `reps`
// times back to back inside its events (the same reps for all three), so that a timed region is
// >= 300 us and event resolution (~0.5 us) stays under 0.2%. Per configuration the JSON holds every
// sample; medians, the per-round ratios linked/control and control-again/control, their quartiles
// and extremes.
//
// Exit status: 0 if every check passed, 1 if one failed, 2 on a usage or setup error.
#include <cuda.h>

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
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../common/bench.h"
#include "pipelink/runtime.h"

namespace {

using plbench::must;

constexpr unsigned kWarmup = 3;
constexpr double kTargetMs = 0.3;  // shortest timed region
constexpr unsigned kMaxReps = 64;
enum Role { kLinked = 0, kControl = 1, kControlAgain = 2 };
const char* kRoleName[3] = {"linked", "control", "control_again"};

using plbench::bf16_to_f;

using Buf = plbench::DeviceBuffer;

// The helper kernels of lvc_util.cubin.
struct Util {
  CUmodule mod = nullptr;
  CUfunction fill16 = nullptr, fill32 = nullptr, diff = nullptr, spin = nullptr;
  Buf scratch;  // 16 bytes, allocated in load() (after cuInit)
  CUstream s = nullptr;
  void load(const std::string& path, CUstream stream) {
    s = stream;
    scratch.bytes = 16;
    CU(cuMemAlloc(&scratch.p, 16));
    CU(cuModuleLoad(&mod, path.c_str()));
    CU(cuModuleGetFunction(&fill16, mod, "fill_random_bf16"));
    CU(cuModuleGetFunction(&fill32, mod, "fill_random_f32"));
    CU(cuModuleGetFunction(&diff, mod, "diff_words"));
    CU(cuModuleGetFunction(&spin, mod, "gpu_spin"));
  }
  void grid_stride(CUfunction f, void** args) { CU(cuLaunchKernel(f, 132 * 8, 1, 1, 256, 1, 1, 0, s, args, nullptr)); }
  void fill_bf16(CUdeviceptr p, unsigned long long n, unsigned long long seed, float scale) {
    void* a[] = {&p, &n, &seed, &scale};
    grid_stride(fill16, a);
  }
  void fill_f32(CUdeviceptr p, unsigned long long n, unsigned long long seed, float scale) {
    void* a[] = {&p, &n, &seed, &scale};
    grid_stride(fill32, a);
  }
  // {words where a != b, NaN elements of a}
  std::pair<unsigned long long, unsigned long long> compare(CUdeviceptr a, CUdeviceptr b, size_t bytes, unsigned elem_bytes) {
    CU(cuMemsetD8Async(scratch.p, 0, 16, s));
    unsigned long long n = bytes / 4;
    void* args[] = {&a, &b, &n, &elem_bytes, &scratch.p};
    grid_stride(diff, args);
    unsigned long long r[2];
    CU(cuStreamSynchronize(s));
    CU(cuMemcpyDtoH(r, scratch.p, 16));
    return {r[0], r[1]};
  }
  void gpu_spin(unsigned long long ns) {
    void* a[] = {&ns};
    CU(cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0, s, a, nullptr));
  }
};

// A linked kernel with its control, the control loaded twice (A/A).
struct Trio {
  std::string name, family, cubin[2], map[2];
  pipelink::Module mod[3];
  long long fact(const char* f) const {
    long long v = 0;
    if (!mod[0].fact(f, v)) {
      std::fprintf(stderr, "%s: the map lacks the fact %s\n", name.c_str(), f);
      std::exit(2);
    }
    long long c = 0;
    if (!mod[1].fact(f, c) || c != v) {
      std::fprintf(stderr, "%s: linked and control maps disagree on %s\n", name.c_str(), f);
      std::exit(2);
    }
    return v;
  }
};

std::unique_ptr<Trio> load_trio(const std::string& dir, const std::string& family, const std::string& kernel) {
  auto t = std::make_unique<Trio>();
  t->family = family;
  t->name = family + "/" + kernel;
  t->cubin[0] = dir + "/" + family + "/" + kernel + ".cubin";
  t->map[0] = dir + "/" + family + "/" + kernel + ".map";
  t->cubin[1] = dir + "/" + family + "/" + kernel + "_control.cubin";
  t->map[1] = dir + "/" + family + "/" + kernel + "_control.map";
  for (int r = 0; r < 3; ++r) must(t->mod[r].load(t->cubin[r ? 1 : 0], t->map[r ? 1 : 0]), t->name + " (" + kRoleName[r] + ")");
  if (t->mod[0].threads() != t->mod[1].threads() || t->mod[0].smem_bytes() != t->mod[1].smem_bytes()) {
    std::fprintf(stderr, "%s: linked and control launch differently (%u/%u threads, %u/%u B smem)\n", t->name.c_str(),
                 t->mod[0].threads(), t->mod[1].threads(), t->mod[0].smem_bytes(), t->mod[1].smem_bytes());
    std::exit(2);
  }
  return t;
}

struct Result {
  std::string family, kernel, variant, shape;
  unsigned grid = 0, threads = 0, smem = 0, reps = 1;
  double flops = 0;
  std::vector<double> ms[3];  // per launch, one per round
  // checks
  unsigned long long diff_words = 0, nan_linked = 0, nan_control = 0;
  double out_rel_diff = 0;   // ||linked - control|| / ||control|| when the outputs differ
  double ref_rel_err = NAN;  // vs CPU double (sampled) or the exact pattern; NaN: no CPU reference
  std::string ref_what;
  bool ok = false;
};

double median(const std::vector<double>& v) { return plbench::stats_of(v).median; }  // bench/common's definition

struct Ctx {
  CUstream s = nullptr;
  Util util;
  unsigned rounds = 50;
  unsigned sms = 132;
  std::vector<Result> results;
  bool all_ok = true;
  unsigned long long seed = 0;
};

// Times the three modules of one configuration (see the header) with bench/common's spin +
// round-robin timer. launch(role) enqueues one run.
void time_trio(Ctx& c, Result& r, const std::function<void(int)>& launch) {
  std::vector<plbench::Contender> cs;
  for (int role = 0; role < 3; ++role) cs.push_back({kRoleName[role], [&launch, role](CUstream) { launch(role); }, {}, 1});
  plbench::TimerOptions o;
  o.warmup = kWarmup;
  o.rounds = c.rounds;
  o.target_ms = kTargetMs;
  o.max_reps = kMaxReps;
  o.common_reps = true;
  plbench::time_round_robin(cs, o, c.s, [&c](unsigned long long ns) { c.util.gpu_spin(ns); });
  r.reps = cs[0].reps;
  for (int role = 0; role < 3; ++role) r.ms[role] = cs[size_t(role)].ms;
}

// Poisons both outputs, runs linked (-> out_l) and control (-> out_c) once, compares on the GPU.
void check_pair(Ctx& c, Result& r, CUdeviceptr out_l, CUdeviceptr out_c, size_t bytes, unsigned elem_bytes,
                const std::function<void(int)>& launch, const std::function<void()>& before = {}) {
  CU(cuMemsetD8Async(out_l, 0xFF, bytes, c.s));
  CU(cuMemsetD8Async(out_c, 0xFF, bytes, c.s));
  if (before) before();
  launch(kLinked);
  launch(kControl);
  CU(cuStreamSynchronize(c.s));
  auto [diff, nan_l] = c.util.compare(out_l, out_c, bytes, elem_bytes);
  auto [diff2, nan_c] = c.util.compare(out_c, out_l, bytes, elem_bytes);
  (void)diff2;
  r.diff_words = diff;
  r.nan_linked = nan_l;
  r.nan_control = nan_c;
  if (diff) {  // how far apart (e.g. atomics in another order)
    const size_t n = bytes / elem_bytes;
    std::vector<unsigned char> a(bytes), b(bytes);
    CU(cuMemcpyDtoH(a.data(), out_l, bytes));
    CU(cuMemcpyDtoH(b.data(), out_c, bytes));
    double d2 = 0, r2 = 0;
    for (size_t i = 0; i < n; ++i) {
      double x, y;
      if (elem_bytes == 4) {
        float fx, fy;
        std::memcpy(&fx, &a[4 * i], 4);
        std::memcpy(&fy, &b[4 * i], 4);
        x = fx, y = fy;
      } else {
        uint16_t hx, hy;
        std::memcpy(&hx, &a[2 * i], 2);
        std::memcpy(&hy, &b[2 * i], 2);
        x = bf16_to_f(hx), y = bf16_to_f(hy);
      }
      if (std::isnan(x) || std::isnan(y)) continue;
      d2 += (x - y) * (x - y);
      r2 += y * y;
    }
    r.out_rel_diff = r2 > 0 ? std::sqrt(d2 / r2) : INFINITY;
  }
}

void finish(Ctx& c, Result& r, const std::function<void(int)>& launch, double ref_tol) {
  const bool ref_ok = std::isnan(r.ref_rel_err) || r.ref_rel_err <= ref_tol;
  r.ok = r.nan_linked == 0 && r.nan_control == 0 && ref_ok && (r.diff_words == 0 || r.out_rel_diff <= 1e-5);
  c.all_ok &= r.ok;
  time_trio(c, r, launch);
  const double ml = median(r.ms[0]), mc = median(r.ms[1]), ma = median(r.ms[2]);
  std::printf("%-22s %-26s grid %3u reps %2u | linked %9.4f ms control %9.4f ms again %9.4f ms | L/C %.4f A/A %.4f | %s%s\n",
              (r.family + "/" + r.kernel).c_str(), r.shape.c_str(), r.grid, r.reps, ml, mc, ma, ml / mc, ma / mc,
              r.ok ? "ok" : "CHECK FAILED", r.diff_words ? " (outputs differ)" : "");
  std::fflush(stdout);
  c.results.push_back(std::move(r));
}

// ---- the GEMM example: C[M,N] fp32 = A[M,K] . B[N,K]^T, bf16 -----------------------------------
void run_gemm(Ctx& c, const std::string& dir) {
  auto t = load_trio(dir, "gemm", "gemm");
  const long long tm = t->fact("tile_m"), tn = t->fact("tile_n"), tk = t->fact("tile_k");
  struct Shape { unsigned M, N, K; };
  const std::vector<Shape> shapes = {{256, 256, 512}, {512, 512, 1024}, {1024, 1024, 1024}, {2048, 1024, 4096},
                                     {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 4096, 4096}};
  size_t maxA = 0, maxB = 0, maxC = 0;
  for (auto s : shapes) {
    maxA = std::max(maxA, size_t(s.M) * s.K * 2);
    maxB = std::max(maxB, size_t(s.N) * s.K * 2);
    maxC = std::max(maxC, size_t(s.M) * s.N * 4);
  }
  Buf A(maxA), B(maxB), CL(maxC), CC(maxC);
  for (auto sh : shapes) {
    if (sh.M % tm || sh.N % tn || sh.K % tk) {
      std::fprintf(stderr, "gemm: shape not a multiple of the tiles\n");
      std::exit(2);
    }
    const unsigned long long sa = c.seed + 11 * sh.M + sh.K, sb = c.seed + 13 * sh.N + sh.K + 1;
    c.util.fill_bf16(A.p, size_t(sh.M) * sh.K, sa, 1.f);
    c.util.fill_bf16(B.p, size_t(sh.N) * sh.K, sb, 1.f);
    CUtensorMap ma, mb;
    must(pipelink::bf16_tensor_map(ma, A.p, sh.M, sh.K, unsigned(tm), unsigned(tk)), "gemm a_map");
    must(pipelink::bf16_tensor_map(mb, B.p, sh.N, sh.K, unsigned(tn), unsigned(tk)), "gemm b_map");
    const unsigned grid = std::min<unsigned>(c.sms, unsigned((sh.M / tm) * (sh.N / tn)));
    for (int role = 0; role < 3; ++role) {
      pipelink::Module& m = t->mod[role];
      must(m.set_tensormap("a_map", ma), t->name);
      must(m.set_tensormap("b_map", mb), t->name);
      must(m.set_ptr("C", role == kLinked ? CL.p : CC.p), t->name);
      must(m.set_u32("M", sh.M), t->name);
      must(m.set_u32("N", sh.N), t->name);
      must(m.set_u32("K", sh.K), t->name);
    }
    auto launch = [&](int role) { must(t->mod[role].launch(grid, c.s), t->name); };
    Result r;
    r.family = "gemm";
    r.kernel = "gemm";
    r.variant = std::to_string(tm) + "x" + std::to_string(tn);
    r.shape = "M=" + std::to_string(sh.M) + " N=" + std::to_string(sh.N) + " K=" + std::to_string(sh.K);
    r.grid = grid, r.threads = t->mod[0].threads(), r.smem = t->mod[0].smem_bytes();
    r.flops = 2.0 * sh.M * sh.N * sh.K;
    const size_t cbytes = size_t(sh.M) * sh.N * 4;
    check_pair(c, r, CL.p, CC.p, cbytes, 4, launch);
    // 32 sampled outputs against a CPU double dot product.
    std::mt19937_64 rng(sa ^ sb);
    std::vector<uint16_t> a(sh.K), b(sh.K);
    double d2 = 0, r2 = 0;
    for (int i = 0; i < 32; ++i) {
      const unsigned m = i == 0 ? sh.M - 1 : unsigned(rng() % sh.M), n = i == 0 ? sh.N - 1 : unsigned(rng() % sh.N);
      CU(cuMemcpyDtoH(a.data(), A.p + size_t(m) * sh.K * 2, sh.K * 2));
      CU(cuMemcpyDtoH(b.data(), B.p + size_t(n) * sh.K * 2, sh.K * 2));
      double ref = 0;
      for (unsigned k = 0; k < sh.K; ++k) ref += double(bf16_to_f(a[k])) * bf16_to_f(b[k]);
      float got;
      CU(cuMemcpyDtoH(&got, CL.p + (size_t(m) * sh.N + n) * 4, 4));
      d2 += (got - ref) * (got - ref);
      r2 += ref * ref;
    }
    r.ref_rel_err = std::sqrt(d2 / r2);
    r.ref_what = "32 sampled outputs vs CPU double";
    finish(c, r, launch, 1e-3);
  }
}

// ---- Qwen3-32B gate/up: X[M,5120] . W[51200,5120]^T (+ SwiGLU) -----------------------------------
constexpr unsigned kQHidden = 5120, kQInter = 25600, kQGateUp = 51200;

void run_qwen(Ctx& c, const std::string& dir, const std::vector<unsigned>& Ms, const std::string& only) {
  std::vector<std::unique_ptr<Trio>> trios;
  for (const char* k : {"fused", "fused_medium", "fused_narrow", "fused_small", "gemm", "gemm_medium", "gemm_narrow", "gemm_small"})
    if (only.empty() || ("," + only + ",").find(std::string(",") + k + ",") != std::string::npos)
      trios.push_back(load_trio(dir, "qwen_mlp", k));
  if (trios.empty()) return;
  const unsigned maxM = *std::max_element(Ms.begin(), Ms.end());
  Buf W(size_t(kQGateUp) * kQHidden * 2), X(size_t(maxM) * kQHidden * 2);
  Buf OL(size_t(maxM) * kQGateUp * 2), OC(size_t(maxM) * kQGateUp * 2);
  c.util.fill_bf16(W.p, size_t(kQGateUp) * kQHidden, c.seed + 7, 0.02f);
  for (const unsigned M : Ms) {
    const unsigned long long xs = c.seed + 1000 + M;
    c.util.fill_bf16(X.p, size_t(M) * kQHidden, xs, 1.f);
    for (auto& tp : trios) {
      Trio& t = *tp;
      const bool fused = t.name.find("fused") != std::string::npos;
      const unsigned tm = unsigned(t.fact("tile_m")), tn = unsigned(t.fact("tile_n"));
      CUtensorMap xm, wm, om[2];
      must(pipelink::bf16_tensor_map(xm, X.p, M, kQHidden, tm, 64, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B), "x_map");
      must(pipelink::bf16_tensor_map(wm, W.p, kQGateUp, kQHidden, tn, 64, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B),
           "w_map");
      for (int o = 0; o < 2; ++o) {
        const CUdeviceptr out = o == 0 ? OL.p : OC.p;
        if (fused)
          must(pipelink::bf16_tensor_map(om[o], out, M, kQInter, 64, tn, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE), "out_map");
        else
          must(pipelink::bf16_tensor_map(om[o], out, M, kQGateUp, tm, 2 * tn, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE),
               "out_map");
      }
      const unsigned long long tiles = (unsigned long long)((M + tm - 1) / tm) * ((kQInter + tn - 1) / tn);
      const unsigned grid = unsigned(std::min<unsigned long long>(c.sms, tiles));
      for (int role = 0; role < 3; ++role) {
        pipelink::Module& m = t.mod[role];
        must(m.set_tensormap("x_map", xm), t.name);
        must(m.set_tensormap("w_map", wm), t.name);
        must(m.set_tensormap("out_map", om[role == kLinked ? 0 : 1]), t.name);
        must(m.set_u32("K", kQHidden), t.name);
        must(m.set_u32("M", M), t.name);
        must(m.set_u32("N", kQInter), t.name);
        must(m.set_u32("n_step", fused ? tn : 2 * tn), t.name);
        must(m.set_u32("b_stride", fused ? kQInter : tn), t.name);
      }
      auto launch = [&](int role) { must(t.mod[role].launch(grid, c.s), t.name); };
      Result r;
      r.family = "qwen_mlp";
      r.kernel = t.name.substr(t.name.find('/') + 1);
      r.variant = std::to_string(tm) + "x" + std::to_string(tn);
      r.shape = "M=" + std::to_string(M);
      r.grid = grid, r.threads = t.mod[0].threads(), r.smem = t.mod[0].smem_bytes();
      r.flops = 2.0 * M * kQHidden * kQGateUp;
      const unsigned cols = fused ? kQInter : kQGateUp;
      check_pair(c, r, OL.p, OC.p, size_t(M) * cols * 2, 2, launch);
      // 32 sampled outputs against CPU double: GU[m][n] = X[m].W[n]; H[m][j] = silu(GU[m][j]) GU[m][j+I].
      std::mt19937_64 rng(xs * 31 + tn);
      std::vector<uint16_t> x(kQHidden), w(kQHidden);
      auto dot = [&](unsigned row) {
        CU(cuMemcpyDtoH(w.data(), W.p + size_t(row) * kQHidden * 2, kQHidden * 2));
        double s = 0;
        for (unsigned k = 0; k < kQHidden; ++k) s += double(bf16_to_f(x[k])) * bf16_to_f(w[k]);
        return s;
      };
      double d2 = 0, r2 = 0;
      for (int i = 0; i < 32; ++i) {
        const unsigned m = i == 0 ? M - 1 : unsigned(rng() % M), n = i == 0 ? cols - 1 : unsigned(rng() % cols);
        CU(cuMemcpyDtoH(x.data(), X.p + size_t(m) * kQHidden * 2, kQHidden * 2));
        double ref;
        if (fused) {
          const double g = dot(n), u = dot(n + kQInter);
          ref = g / (1 + std::exp(-g)) * u;
        } else {
          ref = dot(n);
        }
        uint16_t got;
        CU(cuMemcpyDtoH(&got, OL.p + (size_t(m) * cols + n) * 2, 2));
        const double d = bf16_to_f(got) - ref;
        d2 += d * d;
        r2 += ref * ref;
      }
      r.ref_rel_err = std::sqrt(d2 / r2);
      r.ref_what = "32 sampled outputs vs CPU double";
      finish(c, r, launch, 1e-2);
    }
  }
}

// ---- Qwen3-30B-A3B MoE experts: gate/up (gather + GEMM + SwiGLU) and down (GEMM + combine) -------
constexpr unsigned kMHidden = 2048, kMInter = 768, kMExperts = 128, kMTopK = 8, kMTileM = 128;

void run_moe(Ctx& c, const std::string& dir, const std::string& routing_cubin, const std::vector<unsigned>& Ts) {
  auto gu = load_trio(dir, "moe", "gate_up");
  auto dn = load_trio(dir, "moe", "down");
  auto ds = load_trio(dir, "moe", "down_store");  // the layer's down: GEMM + TMA store of the rows (row_major)
  const long long gu_tn = gu->fact("tile_n"), out_rows = gu->fact("out_rows"), align = gu->fact("expert_align");
  CUmodule rmod;
  CU(cuModuleLoad(&rmod, routing_cubin.c_str()));
  CUfunction f_topk, f_offsets, f_scatter;
  CU(cuModuleGetFunction(&f_topk, rmod, "moe_topk"));
  CU(cuModuleGetFunction(&f_offsets, rmod, "moe_offsets"));
  CU(cuModuleGetFunction(&f_scatter, rmod, "moe_scatter"));
  Buf Wgu(size_t(kMExperts) * 2 * kMInter * kMHidden * 2), Wd(size_t(kMExperts) * kMHidden * kMInter * 2);
  c.util.fill_bf16(Wgu.p, size_t(kMExperts) * 2 * kMInter * kMHidden, c.seed + 2, 0.03f);
  c.util.fill_bf16(Wd.p, size_t(kMExperts) * kMHidden * kMInter, c.seed + 3, 0.03f);
  for (const unsigned T : Ts) {
    const unsigned max_rows = T * kMTopK + kMExperts * unsigned(align - 1);
    Buf X(size_t(T) * kMHidden * 2), logits(size_t(T) * kMExperts * 4), counts(kMExperts * 4), topk_e(size_t(T) * kMTopK * 4),
        topk_w(size_t(T) * kMTopK * 4), topk_pos(size_t(T) * kMTopK * 4), offsets(kMExperts * 4),
        tile_expert((max_rows / kMTileM + 1) * 4), total(4), row_token(size_t(max_rows) * 4), row_weight(size_t(max_rows) * 4),
        HmL(size_t(max_rows) * kMInter * 2), HmC(size_t(max_rows) * kMInter * 2), YL(size_t(T) * kMHidden * 4),
        YC(size_t(T) * kMHidden * 4), HdL(size_t(max_rows) * kMHidden * 2), HdC(size_t(max_rows) * kMHidden * 2);
    c.util.fill_bf16(X.p, size_t(T) * kMHidden, c.seed + 100 + T, 1.f);
    // Routing from random router logits (the router GEMM itself is not under test).
    c.util.fill_f32(logits.p, size_t(T) * kMExperts, c.seed + 200 + T, 1.f);
    CU(cuMemsetD32Async(counts.p, 0, kMExperts, c.s));
    unsigned t_ = T, e_ = kMExperts, al = unsigned(align), tm = kMTileM;
    void* a1[] = {&logits.p, &t_, &e_, &counts.p, &topk_e.p, &topk_w.p, &topk_pos.p};
    CU(cuLaunchKernel(f_topk, (T * 32 + 255) / 256, 1, 1, 256, 1, 1, 0, c.s, a1, nullptr));
    void* a2[] = {&counts.p, &e_, &al, &tm, &offsets.p, &tile_expert.p, &total.p};
    CU(cuLaunchKernel(f_offsets, 1, 1, 1, 128, 1, 1, 0, c.s, a2, nullptr));
    CU(cuMemsetD32Async(row_token.p, 0xFFFFFFFFu, max_rows, c.s));
    CU(cuMemsetD32Async(row_weight.p, 0, max_rows, c.s));
    void* a3[] = {&t_, &topk_e.p, &topk_w.p, &topk_pos.p, &offsets.p, &row_token.p, &row_weight.p};
    CU(cuLaunchKernel(f_scatter, (T * kMTopK + 255) / 256, 1, 1, 256, 1, 1, 0, c.s, a3, nullptr));
    unsigned rows = 0;
    CU(cuStreamSynchronize(c.s));
    CU(cuMemcpyDtoH(&rows, total.p, 4));
    const unsigned gu_n_tiles = unsigned((kMInter + gu_tn - 1) / gu_tn);
    const unsigned grid_gu = std::min<unsigned>(c.sms, (rows / kMTileM) * gu_n_tiles);
    const unsigned grid_dn = std::min<unsigned>(c.sms, (rows / kMTileM) * (kMHidden / 256));
    for (int role = 0; role < 3; ++role) {
      const CUdeviceptr hm = role == kLinked ? HmL.p : HmC.p, y = role == kLinked ? YL.p : YC.p;
      pipelink::Module& g = gu->mod[role];
      CUtensorMap wm, om, am, dm;
      must(pipelink::bf16_tensor_map(wm, Wgu.p, size_t(kMExperts) * 2 * kMInter, kMHidden, unsigned(gu_tn), 64, CU_TENSOR_MAP_SWIZZLE_128B,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B), "w_map");
      must(pipelink::bf16_tensor_map(om, hm, rows, kMInter, unsigned(out_rows), unsigned(gu_tn), CU_TENSOR_MAP_SWIZZLE_NONE,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B), "out_map");
      must(g.set_ptr("x", X.p), gu->name);
      must(g.set_ptr("row_token", row_token.p), gu->name);
      must(g.set_ptr("row_weight", row_weight.p), gu->name);
      must(g.set_u32("K", kMHidden), gu->name);
      must(g.set_tensormap("w_map", wm), gu->name);
      must(g.set_tensormap("out_map", om), gu->name);
      must(g.set_u32("n_step", unsigned(gu_tn)), gu->name);
      must(g.set_u32("b_stride", kMInter), gu->name);
      must(g.set_u32("expert_rows", 2 * kMInter), gu->name);
      must(g.set_u32("N", kMInter), gu->name);
      must(g.set_ptr("tile_expert", tile_expert.p), gu->name);
      must(g.set_u32("M", rows), gu->name);
      pipelink::Module& d = dn->mod[role];
      must(pipelink::bf16_tensor_map(am, hm, rows, kMInter, kMTileM, 64, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B),
           "a_map");
      must(pipelink::bf16_tensor_map(dm, Wd.p, size_t(kMExperts) * kMHidden, kMInter, 128, 64, CU_TENSOR_MAP_SWIZZLE_128B,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B), "w_map");
      // What both downs take: A (Hm), W_down, and the expert tiles.
      auto down_common = [&](pipelink::Module& m, const std::string& name) {
        must(m.set_tensormap("a_map", am), name);
        must(m.set_u32("K", kMInter), name);
        must(m.set_tensormap("w_map", dm), name);
        must(m.set_u32("n_step", 256), name);
        must(m.set_u32("b_stride", 128), name);
        must(m.set_u32("expert_rows", kMHidden), name);
        must(m.set_u32("N", kMHidden / 2), name);
        must(m.set_ptr("tile_expert", tile_expert.p), name);
        must(m.set_u32("M", rows), name);
      };
      down_common(d, dn->name);  // the scatter-add down: its combine adds into Y
      must(d.set_ptr("row_token", row_token.p), dn->name);
      must(d.set_ptr("y", y), dn->name);
      must(d.set_u32("hidden", kMHidden), dn->name);
      pipelink::Module& e = ds->mod[role];  // down_store: its rows to Hd
      CUtensorMap hd;
      must(pipelink::bf16_tensor_map(hd, role == kLinked ? HdL.p : HdC.p, rows, kMHidden, kMTileM, 256, CU_TENSOR_MAP_SWIZZLE_NONE,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B), "out_map");
      down_common(e, ds->name);
      must(e.set_tensormap("out_map", hd), ds->name);
    }
    const std::string shape = "T=" + std::to_string(T) + " rows=" + std::to_string(rows);
    {  // gate/up: Hm [rows, 768] bf16, every row written
      auto launch = [&](int role) { must(gu->mod[role].launch(grid_gu, c.s), gu->name); };
      Result r;
      r.family = "moe", r.kernel = "gate_up", r.variant = "128x" + std::to_string(gu_tn), r.shape = shape;
      r.grid = grid_gu, r.threads = gu->mod[0].threads(), r.smem = gu->mod[0].smem_bytes();
      r.flops = 2.0 * T * kMTopK * kMHidden * 2 * kMInter;
      check_pair(c, r, HmL.p, HmC.p, size_t(rows) * kMInter * 2, 2, launch);
      r.ref_what = "none here (bench/moe checks the layer against CPU double)";
      finish(c, r, launch, 0);
    }
    {  // down: Y [T, 2048] fp32, scatter-added (zeroed for the check; timing accumulates into it)
      auto launch = [&](int role) { must(dn->mod[role].launch(grid_dn, c.s), dn->name); };
      Result r;
      r.family = "moe", r.kernel = "down", r.variant = "128x128", r.shape = shape;
      r.grid = grid_dn, r.threads = dn->mod[0].threads(), r.smem = dn->mod[0].smem_bytes();
      r.flops = 2.0 * T * kMTopK * kMInter * kMHidden;
      // Hm must hold the gate/up output for both: run gate/up linked and control first.
      auto before = [&] {
        CU(cuMemsetD32Async(YL.p, 0, size_t(T) * kMHidden, c.s));
        CU(cuMemsetD32Async(YC.p, 0, size_t(T) * kMHidden, c.s));
        must(gu->mod[kLinked].launch(grid_gu, c.s), gu->name);
        must(gu->mod[kControl].launch(grid_gu, c.s), gu->name);
      };
      // check_pair poisons Y (NaN); the down kernel adds into Y, so zero it after the poison.
      check_pair(c, r, YL.p, YC.p, size_t(T) * kMHidden * 4, 4, launch, before);
      r.ref_what = "none here (bench/moe checks the layer against CPU double)";
      finish(c, r, launch, 0);
    }
    {  // down_store: Hd [rows, 2048] bf16, every row written (the top-k sum is a plain kernel, not under test)
      auto launch = [&](int role) { must(ds->mod[role].launch(grid_dn, c.s), ds->name); };
      Result r;
      r.family = "moe", r.kernel = "down_store", r.variant = "128x128 row_major", r.shape = shape;
      r.grid = grid_dn, r.threads = ds->mod[0].threads(), r.smem = ds->mod[0].smem_bytes();
      r.flops = 2.0 * T * kMTopK * kMInter * kMHidden;
      auto before = [&] {
        must(gu->mod[kLinked].launch(grid_gu, c.s), gu->name);
        must(gu->mod[kControl].launch(grid_gu, c.s), gu->name);
      };
      check_pair(c, r, HdL.p, HdC.p, size_t(rows) * kMHidden * 2, 2, launch, before);
      r.ref_what = "none here (bench/moe checks the layer against CPU double)";
      finish(c, r, launch, 0);
    }
  }
  cuModuleUnload(rmod);
}

// ---- the generated transfer: tile_source (row-major) -> transfer warp -> tile_sink (col/128B) ----
void run_transfer(Ctx& c, const std::string& dir) {
  auto t = load_trio(dir, "transfer", "transfer");
  const unsigned rows = 32, cols = 64;
  struct Shape { unsigned M, N; };
  const std::vector<Shape> shapes = {{288, 448}, {1024, 1024}, {4096, 4096}, {8192, 8192}};
  size_t maxb = 0;
  for (auto s : shapes) maxb = std::max(maxb, size_t(s.M) * s.N * 4);
  Buf OL(maxb), OC(maxb);
  for (auto sh : shapes) {
    const unsigned grid = std::min<unsigned>(c.sms, (sh.M / rows) * (sh.N / cols));
    for (int role = 0; role < 3; ++role) {
      must(t->mod[role].set_ptr("out", role == kLinked ? OL.p : OC.p), t->name);
      must(t->mod[role].set_u32("M", sh.M), t->name);
      must(t->mod[role].set_u32("N", sh.N), t->name);
    }
    auto launch = [&](int role) { must(t->mod[role].launch(grid, c.s), t->name); };
    Result r;
    r.family = "transfer", r.kernel = "transfer", r.variant = "32x64 f32 row -> col/128B";
    r.shape = "M=" + std::to_string(sh.M) + " N=" + std::to_string(sh.N);
    r.grid = grid, r.threads = t->mod[0].threads(), r.smem = t->mod[0].smem_bytes();
    check_pair(c, r, OL.p, OC.p, size_t(sh.M) * sh.N * 4, 4, launch);
    std::vector<float> h(size_t(sh.M) * sh.N);
    CU(cuMemcpyDtoH(h.data(), OL.p, h.size() * 4));
    double worst = 0;
    for (unsigned i = 0; i < sh.M; ++i)
      for (unsigned j = 0; j < sh.N; ++j) {
        const double want = (i / rows) * 1e6 + (j / cols) * 1e4 + (i % rows) * 100.0 + (j % cols);
        const double got = h[size_t(i) * sh.N + j];
        const double e = std::fabs(got - want) / std::max(1.0, std::fabs(want));
        worst = std::isnan(got) ? INFINITY : std::max(worst, e);
      }
    r.ref_rel_err = worst;
    r.ref_what = "every element vs the source's pattern (max rel err; fp32 rounding of the pattern)";
    finish(c, r, launch, 1e-6);
  }
}

std::vector<unsigned> parse_list(const std::string& s) {
  std::vector<unsigned> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) v.push_back(unsigned(std::stoul(item)));
  return v;
}

std::string jstr(const std::string& s) { return plbench::Json::quote(s); }
std::string jnum(double v) { return plbench::Json::number(v); }

void write_json(const std::string& path, const Ctx& c, const std::string& device, const std::string& date) {
  std::ofstream f(path);
  f << "{\n  \"bench\": \"linked_vs_control\",\n  \"device\": " << jstr(device) << ",\n  \"date\": " << jstr(date)
    << ",\n  \"rounds\": " << c.rounds << ",\n  \"warmup\": " << kWarmup << ",\n  \"seed\": " << c.seed
    << ",\n  \"all_checks_ok\": " << (c.all_ok ? "true" : "false") << ",\n  \"configs\": [";
  for (size_t i = 0; i < c.results.size(); ++i) {
    const Result& r = c.results[i];
    std::vector<double> ratio, aa;
    for (size_t k = 0; k < r.ms[0].size(); ++k) {
      ratio.push_back(r.ms[0][k] / r.ms[1][k]);
      aa.push_back(r.ms[2][k] / r.ms[1][k]);
    }
    f << (i ? "," : "") << "\n    {\"family\": " << jstr(r.family) << ", \"kernel\": " << jstr(r.kernel) << ", \"variant\": " << jstr(r.variant)
      << ", \"shape\": " << jstr(r.shape) << ", \"grid\": " << r.grid << ", \"threads\": " << r.threads << ", \"smem\": " << r.smem
      << ", \"reps\": " << r.reps << ", \"flops\": " << jnum(r.flops);
    for (int role = 0; role < 3; ++role)
      f << ",\n     \"" << kRoleName[role] << "_ms\": {\"median\": " << jnum(median(r.ms[role]))
        << ", \"min\": " << jnum(*std::min_element(r.ms[role].begin(), r.ms[role].end()))
        << ", \"max\": " << jnum(*std::max_element(r.ms[role].begin(), r.ms[role].end())) << "}";
    auto stats = [&](const char* name, const std::vector<double>& v) {
      const plbench::Stats st = plbench::stats_of(v);
      f << ",\n     \"" << name << "\": {\"median\": " << jnum(st.median) << ", \"q1\": " << jnum(st.q1)
        << ", \"q3\": " << jnum(st.q3) << ", \"min\": " << jnum(*std::min_element(v.begin(), v.end()))
        << ", \"max\": " << jnum(*std::max_element(v.begin(), v.end())) << "}";
    };
    stats("sample_ratio_linked_control", ratio);
    stats("sample_ratio_aa", aa);
    f << ",\n     \"check\": {\"ok\": " << (r.ok ? "true" : "false") << ", \"words_differing\": " << r.diff_words
      << ", \"unwritten_linked\": " << r.nan_linked << ", \"unwritten_control\": " << r.nan_control
      << ", \"rel_diff_linked_control\": " << jnum(r.out_rel_diff) << ", \"ref_rel_err\": " << jnum(r.ref_rel_err)
      << ", \"ref\": " << jstr(r.ref_what) << "}";
    for (int role = 0; role < 3; ++role) {
      f << ",\n     \"samples_" << kRoleName[role] << "\": [";
      for (size_t k = 0; k < r.ms[role].size(); ++k) f << (k ? ", " : "") << jnum(r.ms[role][k]);
      f << "]";
    }
    f << "}";
  }
  f << "\n  ]\n}\n";
}

constexpr char kUsage[] =
    "usage: bench_lvc --kernels DIR --util lvc_util.cubin [--routing routing.cubin] [--rounds 50]\n"
    "                 [--families gemm,qwen,moe,transfer] [--qwen-M 16,64,256,1024,2048,4096,8192]\n"
    "                 [--qwen-kernels fused,gemm,gemm_small,...]\n"
    "                 [--moe-T 512,4096,16384] [--json PATH]\n";

}  // namespace

int main(int argc, char** argv) {
  std::string dir, util, routing, json;
  std::string families = "gemm,qwen,moe,transfer";
  std::string qwen_kernels;  // --qwen-kernels fused,gemm_small: a subset (default all 8)
  std::vector<unsigned> qM = {16, 64, 256, 1024, 2048, 4096, 8192}, mT = {512, 4096, 16384};
  Ctx c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n%s", a.c_str(), kUsage);
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (a == "--kernels") dir = next();
    else if (a == "--util") util = next();
    else if (a == "--routing") routing = next();
    else if (a == "--rounds") c.rounds = std::max(1u, unsigned(std::stoul(next())));
    else if (a == "--families") families = next();
    else if (a == "--qwen-M") qM = parse_list(next());
    else if (a == "--qwen-kernels") qwen_kernels = next();
    else if (a == "--moe-T") mT = parse_list(next());
    else if (a == "--json") json = next();
    else { std::fprintf(stderr, "unknown argument %s\n%s", a.c_str(), kUsage); return 2; }
  }
  auto want = [&](const char* f) { return ("," + families + ",").find(std::string(",") + f + ",") != std::string::npos; };
  if (dir.empty() || util.empty() || (want("moe") && routing.empty())) { std::fputs(kUsage, stderr); return 2; }

  const plbench::Device dev = plbench::open_device();
  const char* name = dev.name.c_str();
  const int sms = dev.sms;
  c.sms = unsigned(sms);
  c.s = dev.stream;
  c.util.load(util, c.s);
  c.seed = static_cast<unsigned long long>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::printf("device: %s (%d SMs), %s; seed %llu; %u rounds after %u warm-up runs each\n", name, sms, date, c.seed, c.rounds, kWarmup);

  if (want("gemm")) run_gemm(c, dir);
  if (want("qwen")) run_qwen(c, dir, qM, qwen_kernels);
  if (want("moe")) run_moe(c, dir, routing, mT);
  if (want("transfer")) run_transfer(c, dir);

  if (!json.empty()) write_json(json, c, name, date);
  std::printf("\n%zu configurations; %s\n", c.results.size(), c.all_ok ? "PASS: every check passed" : "FAIL: a check failed");
  return c.all_ok ? 0 : 1;
}
