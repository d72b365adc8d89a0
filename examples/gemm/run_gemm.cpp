// run_gemm — runs the linked GEMM pipeline (and its monolithic control) on the GPU.
//
//   run_gemm --linked gemm.cubin gemm.map [--control control.cubin control.map]
//            [--M 2048 --N 2048 --K 2048] [--iters 50] [--json out.json]
//
// C[M,N] fp32 = A[M,K] bf16 · B[N,K]^T bf16. For every kernel: fresh random inputs, C poisoned
// with NaN before the run, then (1) every element written, (2) relative error against a CPU
// reference in double precision ≤ 1e-3 (on every row for small problems, on 96 random rows plus
// the first and last rows of every tile row otherwise), (3) linked and control outputs compared
// element by element. Then both are timed with CUDA events (median of --iters, alternating).
// Exit status 0 only if every check passed; every driver call is checked.
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

#define CU(x)                                                             \
  do {                                                                    \
    CUresult r_ = (x);                                                    \
    if (r_ != CUDA_SUCCESS) {                                             \
      std::fprintf(stderr, "%s\n", pipelink::cu_error(r_, #x).c_str());   \
      std::exit(2);                                                       \
    }                                                                     \
  } while (0)

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}
float from_bf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

struct Kernel {
  std::string label, cubin, map;
  pipelink::Module mod;
};

struct Check {
  bool ok = true;
  double rel_err = 0, max_abs = 0;
  size_t unwritten = 0, rows_checked = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::unique_ptr<Kernel>> kernels;
  unsigned M = 2048, N = 2048, K = 2048, iters = 50;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { if (i + 1 >= argc) { std::fprintf(stderr, "%s needs a value\n", a.c_str()); std::exit(2); } return std::string(argv[++i]); };
    if (a == "--linked" || a == "--control") {
      auto k = std::make_unique<Kernel>();
      k->label = a.substr(2);
      k->cubin = next();
      k->map = next();
      kernels.push_back(std::move(k));
    } else if (a == "--M") M = std::stoul(next());
    else if (a == "--N") N = std::stoul(next());
    else if (a == "--K") K = std::stoul(next());
    else if (a == "--iters") iters = std::stoul(next());
    else if (a == "--json") json = next();
    else { std::fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  if (kernels.empty()) { std::fprintf(stderr, "usage: run_gemm --linked k.cubin k.map [--control c.cubin c.map] ...\n"); return 2; }

  CU(cuInit(0));
  CUdevice dev;
  CU(cuDeviceGet(&dev, 0));
  CUcontext cuctx;
  CU(cuDevicePrimaryCtxRetain(&cuctx, dev));
  CU(cuCtxSetCurrent(cuctx));
  char name[256];
  CU(cuDeviceGetName(name, sizeof name, dev));
  int sms = 0;
  CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));

  long long tile_m = 0, tile_n = 0, tile_k = 0;
  for (auto& kp : kernels) {
    Kernel& k = *kp;
    if (auto s = k.mod.load(k.cubin, k.map); !s) { std::fprintf(stderr, "%s: %s\n", k.label.c_str(), s.message.c_str()); return 2; }
    long long tm, tn, tk;
    if (!k.mod.fact("tile_m", tm) || !k.mod.fact("tile_n", tn) || !k.mod.fact("tile_k", tk)) {
      std::fprintf(stderr, "%s: map lacks tile facts\n", k.label.c_str());
      return 2;
    }
    if (tile_m && (tm != tile_m || tn != tile_n || tk != tile_k)) { std::fprintf(stderr, "kernels disagree on tiles\n"); return 2; }
    tile_m = tm; tile_n = tn; tile_k = tk;
  }
  if (M % tile_m || N % tile_n || K % tile_k) {
    std::fprintf(stderr, "M, N, K must be multiples of %lld, %lld, %lld\n", tile_m, tile_n, tile_k);
    return 2;
  }
  std::printf("device: %s (%d SMs); C[%u,%u] = A[%u,%u] . B[%u,%u]^T; tiles %lldx%lldx%lld\n", name, sms, M, N, M, K, N, K, tile_m,
              tile_n, tile_k);

  // Fresh random inputs every run (seed printed for reproduction).
  unsigned seed = static_cast<unsigned>(std::chrono::high_resolution_clock::now().time_since_epoch().count());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<uint16_t> hA(size_t(M) * K), hB(size_t(N) * K);
  for (auto& x : hA) x = to_bf16(dist(rng));
  for (auto& x : hB) x = to_bf16(dist(rng));
  std::printf("seed %u\n", seed);

  CUdeviceptr dA, dB, dC;
  CU(cuMemAlloc(&dA, hA.size() * 2));
  CU(cuMemAlloc(&dB, hB.size() * 2));
  CU(cuMemAlloc(&dC, size_t(M) * N * 4));
  CU(cuMemcpyHtoD(dA, hA.data(), hA.size() * 2));
  CU(cuMemcpyHtoD(dB, hB.data(), hB.size() * 2));
  unsigned tiles = (M / tile_m) * (N / tile_n);
  unsigned grid = std::min<unsigned>(tiles, static_cast<unsigned>(sms));

  for (auto& kp : kernels) {
    Kernel& k = *kp;
    auto must = [&](pipelink::Status s) { if (!s) { std::fprintf(stderr, "%s: %s\n", k.label.c_str(), s.message.c_str()); std::exit(2); } };
    // The maps' boxes and swizzle come from the link (the loader's contract names the stage
    // tensors its copies fill): only the matrices are the host's.
    must(k.mod.set_tensor("a_map", dA, M, K));
    must(k.mod.set_tensor("b_map", dB, N, K));
    must(k.mod.set_ptr("C", dC));
    must(k.mod.set_u32("M", M));
    must(k.mod.set_u32("N", N));
    must(k.mod.set_u32("K", K));
  }

  // Reference rows: all of them for small problems, else a random sample plus tile edges.
  std::vector<unsigned> rows;
  if (size_t(M) * N * K <= (size_t(1) << 31)) {
    for (unsigned r = 0; r < M; ++r) rows.push_back(r);
  } else {
    for (unsigned t = 0; t < M / tile_m; ++t) { rows.push_back(t * tile_m); rows.push_back(t * tile_m + tile_m - 1); }
    std::uniform_int_distribution<unsigned> rd(0, M - 1);
    for (int i = 0; i < 96; ++i) rows.push_back(rd(rng));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  std::vector<double> ref(rows.size() * size_t(N));
  {
    std::vector<float> fB(hB.size());
    for (size_t i = 0; i < hB.size(); ++i) fB[i] = from_bf16(hB[i]);
    std::vector<double> a(K);
    for (size_t ri = 0; ri < rows.size(); ++ri) {
      for (unsigned k = 0; k < K; ++k) a[k] = from_bf16(hA[size_t(rows[ri]) * K + k]);
      for (unsigned n = 0; n < N; ++n) {
        const float* b = &fB[size_t(n) * K];
        double s = 0;
        for (unsigned k = 0; k < K; ++k) s += a[k] * b[k];
        ref[ri * N + n] = s;
      }
    }
  }

  std::vector<std::vector<float>> outs;
  std::vector<Check> checks;
  bool all_ok = true;
  for (auto& kp : kernels) {
    Kernel& k = *kp;
    CU(cuMemsetD8(dC, 0xFF, size_t(M) * N * 4));  // poison: 0xFFFFFFFF is a NaN
    if (auto s = k.mod.launch(grid); !s) { std::fprintf(stderr, "%s: %s\n", k.label.c_str(), s.message.c_str()); return 2; }
    CU(cuCtxSynchronize());
    std::vector<float> out(size_t(M) * N);
    CU(cuMemcpyDtoH(out.data(), dC, out.size() * 4));
    Check c;
    for (float x : out) c.unwritten += std::isnan(x);
    double num = 0, den = 0;
    for (size_t ri = 0; ri < rows.size(); ++ri)
      for (unsigned n = 0; n < N; ++n) {
        double d = double(out[size_t(rows[ri]) * N + n]) - ref[ri * N + n];
        num += d * d;
        den += ref[ri * N + n] * ref[ri * N + n];
        c.max_abs = std::max(c.max_abs, std::fabs(d));
      }
    c.rel_err = std::sqrt(num / den);
    c.rows_checked = rows.size();
    c.ok = c.unwritten == 0 && c.rel_err <= 1e-3 && std::isfinite(c.rel_err);
    all_ok &= c.ok;
    std::printf("%-8s unwritten %zu  rel_err %.3e  max_abs %.3e  (%zu rows vs CPU reference)  %s\n", k.label.c_str(), c.unwritten,
                c.rel_err, c.max_abs, c.rows_checked, c.ok ? "OK" : "FAIL");
    if (!c.ok) {
      // Where the errors are, by 16x16 block inside a tile (tile-relative row block, col block).
      std::vector<size_t> hist(size_t(tile_m / 16) * (tile_n / 16), 0);
      for (size_t ri = 0; ri < rows.size(); ++ri)
        for (unsigned n = 0; n < N; ++n) {
          double d = std::fabs(double(out[size_t(rows[ri]) * N + n]) - ref[ri * N + n]);
          if (!(d <= 1e-2 * (1 + std::fabs(ref[ri * N + n])))) hist[(rows[ri] % tile_m) / 16 * (tile_n / 16) + (n % tile_n) / 16]++;
        }
      std::printf("  bad elements by 16x16 block of a tile (rows down, cols across):\n");
      for (long long r = 0; r < tile_m / 16; ++r) {
        std::printf("   ");
        for (long long cc = 0; cc < tile_n / 16; ++cc) std::printf(" %7zu", hist[r * (tile_n / 16) + cc]);
        std::printf("\n");
      }
      for (size_t ri = 0, shown = 0; ri < rows.size() && shown < 8; ++ri)
        for (unsigned n = 0; n < N && shown < 8; ++n) {
          float o = out[size_t(rows[ri]) * N + n];
          double r = ref[ri * N + n];
          if (!(std::fabs(o - r) <= 1e-2 * (1 + std::fabs(r)))) {
            std::printf("  C[%u,%u] = %g, reference %g\n", rows[ri], n, o, r);
            ++shown;
          }
        }
    }
    outs.push_back(std::move(out));
    checks.push_back(c);
  }
  size_t differ = 0;
  if (outs.size() == 2) {
    for (size_t i = 0; i < outs[0].size(); ++i) differ += std::memcmp(&outs[0][i], &outs[1][i], 4) != 0;
    std::printf("linked vs control: %zu of %zu elements differ bitwise\n", differ, outs[0].size());
  }

  // Timing: warm-up, then alternate kernels, median of iters.
  CUevent e0, e1;
  CU(cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CU(cuEventCreate(&e1, CU_EVENT_DEFAULT));
  std::vector<std::vector<float>> ms(kernels.size());
  for (auto& kp : kernels)
    for (int w = 0; w < 5; ++w)
      if (auto s = kp->mod.launch(grid); !s) return 2;
  CU(cuCtxSynchronize());
  for (unsigned it = 0; it < iters; ++it)
    for (size_t i = 0; i < kernels.size(); ++i) {
      CU(cuEventRecord(e0, nullptr));
      if (auto s = kernels[i]->mod.launch(grid); !s) { std::fprintf(stderr, "%s\n", s.message.c_str()); return 2; }
      CU(cuEventRecord(e1, nullptr));
      CU(cuEventSynchronize(e1));
      float t = 0;
      CU(cuEventElapsedTime(&t, e0, e1));
      ms[i].push_back(t);
    }
  std::vector<double> med;
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::vector<float> v = ms[i];
    std::sort(v.begin(), v.end());
    double m = v[v.size() / 2];
    med.push_back(m);
    double tflops = 2.0 * M * N * K / (m * 1e-3) / 1e12;
    std::printf("%-8s median %.4f ms  (%.1f TFLOP/s, min %.4f, max %.4f, %u runs, grid %u x %u threads, %u B smem)\n",
                kernels[i]->label.c_str(), m, tflops, v.front(), v.back(), iters, grid, kernels[i]->mod.threads(),
                kernels[i]->mod.smem_bytes());
  }
  if (med.size() == 2) std::printf("linked / control time: %.4f\n", med[0] / med[1]);

  if (!json.empty()) {
    std::ofstream f(json);
    f << "{\n  \"device\": \"" << name << "\", \"M\": " << M << ", \"N\": " << N << ", \"K\": " << K << ", \"seed\": " << seed
      << ",\n  \"kernels\": [\n";
    for (size_t i = 0; i < kernels.size(); ++i)
      f << "    {\"label\": \"" << kernels[i]->label << "\", \"median_ms\": " << med[i]
        << ", \"tflops\": " << 2.0 * M * N * K / (med[i] * 1e-3) / 1e12 << ", \"rel_err\": " << checks[i].rel_err
        << ", \"unwritten\": " << checks[i].unwritten << ", \"ok\": " << (checks[i].ok ? "true" : "false") << "}"
        << (i + 1 < kernels.size() ? "," : "") << "\n";
    f << "  ],\n  \"linked_vs_control_bitwise_differences\": " << differ << "\n}\n";
  }
  cuMemFree(dA);
  cuMemFree(dB);
  cuMemFree(dC);
  std::printf("%s\n", all_ok && differ == 0 ? "PASS" : "FAIL");
  return all_ok && differ == 0 ? 0 : 1;
}
