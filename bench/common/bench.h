// bench/common/bench.h — the one benchmark harness of bench_qwen_mlp, bench_moe and bench_lvc.
//
//   CU(x), must(status, who)        every driver call checked; a failure exits with status 2
//   Device / open_device()          the primary context (the one the CUDA runtime, cuBLAS and
//                                   PyTorch use), its name, SM count and a stream
//   DeviceBuffer                    an allocation freed with its owner
//   Util                            bench_util.cubin: random fill, GPU spin, and Util::check, the
//                                   per-element check on the GPU
//   poison()                        0xFF bytes: NaN in bf16 and fp32, so unwritten outputs show
//   time_round_robin() / Contender  the spin + round-robin timer (contenders interleaved)
//   Clocks / read_clocks()          SM and memory clocks, temperature, power (NVML, else nvidia-smi)
//   make_map()                      a bf16 TMA tensor map (pipelink::bf16_tensor_map)
// and, from stats.h (no GPU needed):
//   TolCheck / tol_check_host()     per element: |out - ref| <= atol + rtol * |ref|; the count
//                                   over tolerance, the worst element (index, out, ref, err/tol),
//                                   NaNs (unwritten), and the relative L2 error as a side figure
//   Stats / stats_of()              the one median and spread of every bench (see Stats)
//   Ratio / paired_ratio()          a / b per round and its verdict: faster, slower or within noise
//   Json                            a small streaming JSON writer
// GEMM baselines (autotuned cuBLASLt, cublasGemmEx): gemm_baselines.h.
//
// The Python benches use bench/common/bench.py, which defines the same statistics and check
// (tests/python/test_bench_common.py holds the two to each other).
#pragma once

#include <cuda.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "pipelink/runtime.h"
#include "stats.h"

#define CU(x)                                                           \
  do {                                                                  \
    CUresult r_ = (x);                                                  \
    if (r_ != CUDA_SUCCESS) {                                           \
      std::fprintf(stderr, "%s\n", pipelink::cu_error(r_, #x).c_str()); \
      std::exit(2);                                                     \
    }                                                                   \
  } while (0)

namespace plbench {

inline void must(const pipelink::Status& s, const std::string& who) {
  if (!s) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), s.message.c_str());
    std::exit(2);
  }
}

[[noreturn]] inline void die(const std::string& msg) {
  std::fprintf(stderr, "%s\n", msg.c_str());
  std::exit(2);
}

inline float bf16_to_f(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::string utc_now();                              // 2026-11-30T07:00:00Z
std::string exe_dir(const char* argv0);             // the directory of this executable
std::vector<unsigned> parse_list(const std::string& s, const char* what);  // "16,64" -> {16, 64}; bad -> exit 2

// ---- device ------------------------------------------------------------------------------------
struct Device {
  CUdevice dev = 0;
  CUcontext ctx = nullptr;  // the primary context, retained and current
  std::string name;
  int sms = 0;
  CUstream stream = nullptr;
};
// cuInit, the primary context of `ordinal` made current, and a stream (non-blocking unless told).
Device open_device(int ordinal = 0, bool non_blocking = true);

struct DeviceBuffer {
  CUdeviceptr p = 0;
  size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) : bytes(n) { CU(cuMemAlloc(&p, n)); }
  ~DeviceBuffer() { if (p) cuMemFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// 0xFF bytes: a NaN in bf16 (0xFFFF) and in fp32 (0xFFFFFFFF).
inline void poison(CUdeviceptr p, size_t bytes, CUstream s) { CU(cuMemsetD8Async(p, 0xFF, bytes, s)); }

// A 2-D row-major bf16 tensor map (box_cols: the inner, contiguous dimension).
CUtensorMap make_map(CUdeviceptr base, uint64_t rows, uint64_t cols, uint32_t box_rows, uint32_t box_cols,
                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion);

// ---- checks ------------------------------------------------------------------------------------
// TolCheck and tol_check_host(): stats.h. On the GPU: Util::check below.

// ---- the helper kernels of bench_util.cubin --------------------------------------------------------
class Util {
 public:
  Util(const std::string& cubin, unsigned sms, CUstream s);
  ~Util();
  Util(const Util&) = delete;
  Util& operator=(const Util&) = delete;
  // p[0..n) = scale * N(0,1), a pure function of (seed, index).
  void fill_bf16(CUdeviceptr p, unsigned long long n, unsigned long long seed, float scale);
  void fill_f32(CUdeviceptr p, unsigned long long n, unsigned long long seed, float scale);
  // Occupies the stream for `ns` nanoseconds (one thread).
  void spin(unsigned long long ns);
  // out[0..n) (bf16 when out_bf16, else fp32) against ref[0..n) fp32, on the GPU; waits.
  TolCheck check(CUdeviceptr out, bool out_bf16, CUdeviceptr ref, unsigned long long n, double atol, double rtol);
  CUstream stream() const { return s_; }
  CUmodule module() const { return mod_; }

 private:
  void grid_stride(CUfunction f, unsigned long long work, void** args);
  unsigned sms_;
  CUstream s_;
  CUmodule mod_ = nullptr;
  CUfunction fill16_ = nullptr, fill32_ = nullptr, spin_ = nullptr, check16_ = nullptr, check32_ = nullptr;
  DeviceBuffer scratch_;
};

// ---- the timer -----------------------------------------------------------------------------------
struct Contender {
  std::string label;
  std::function<void(CUstream)> enqueue;  // one run
  std::vector<double> ms;                 // one sample per round (time per run)
  unsigned reps = 1;                      // runs per timed region
  Stats stats() const { return stats_of(ms); }
};

// Rounds in which every contender runs once (or `reps` times back to back, for short kernels),
// between its own pair of events; the order is shuffled each round (Fisher-Yates driven by a
// mt19937_64 seeded with order_seed, so a run's orders can be replayed from the recorded seed), so
// no contender always follows the same neighbour. A round is enqueued behind a GPU spin long enough to cover the host's
// enqueueing, so host launch latency never lands between a run's events. Warm-up runs first.
struct TimerOptions {
  unsigned warmup = 3;
  unsigned rounds = 20;
  double target_ms = 0;         // > 0: reps per contender so that a timed region lasts this long
  unsigned max_reps = 64;
  bool common_reps = false;     // one reps for all, from the median of every warm-up estimate
  unsigned long long spin_ns = 0;  // 0: 300 us + 15 us per enqueued run
  unsigned long long order_seed = 0;  // seeds the per-round shuffle of the order; record it
  // > 0: before each timed region the contender also runs back to back, untimed, for about this
  // long, so that the region sees the clock its own power draw sustains. Without it (0) a region
  // of a few ms runs at the clock its predecessors in the round left: on a power-capped card the
  // mix of the round then sets every contender's clock (bench/NOTES.md, session 17). The count
  // comes from the warm-up estimate and is capped at 4096 runs.
  double sustain_ms = 0;
};
// The order of round `round` (0-based) for n contenders under `seed`: a permutation of 0..n-1.
std::vector<size_t> round_order(size_t n, unsigned long long seed, unsigned round);
void time_round_robin(std::vector<Contender>& cs, const TimerOptions& o, Util& util);
// The same with any spin kernel (spin(ns) enqueues it on s).
void time_round_robin(std::vector<Contender>& cs, const TimerOptions& o, CUstream s,
                      const std::function<void(unsigned long long)>& spin);

// ---- clocks --------------------------------------------------------------------------------------
struct Clocks {
  std::string source;  // "nvml", "nvidia-smi" or "none"
  double sm_mhz = NAN, mem_mhz = NAN, temp_c = NAN, power_w = NAN;
  std::string json() const;
  std::string line() const;
};
Clocks read_clocks(int ordinal = 0);

}  // namespace plbench
