// bench/common/bench.h — the one benchmark harness of bench_qwen_mlp, bench_moe and bench_lvc.
//
//   CU(x), must(status, who)        every driver call checked; a failure exits with status 2
//   Device / open_device()          the primary context (the one the CUDA runtime, cuBLAS and
//                                   PyTorch use), its name, SM count and a stream
//   DeviceBuffer                    an allocation freed with its owner
//   Util                            bench_util.cubin: random fill, GPU spin, per-element check
//   poison()                        0xFF bytes: NaN in bf16 and fp32, so unwritten outputs show
//   tol_check() / tol_check_host()  per element: |out - ref| <= atol + rtol * |ref|; the count
//                                   over tolerance, the worst element (index, out, ref, err/tol),
//                                   NaNs (unwritten), and the relative L2 error as a side figure
//   Stats / stats_of()              the one median and spread of every bench (see Stats)
//   Ratio / paired_ratio()          a / b per round and its verdict: faster, slower or within noise
//   RoundRobinTimer                 the spin + round-robin timer (contenders interleaved)
//   Clocks / read_clocks()          SM and memory clocks, temperature, power (NVML, else nvidia-smi)
//   Json                            a small streaming JSON writer
//   make_map()                      a bf16 TMA tensor map (pipelink::bf16_tensor_map)
//
// The Python benches use bench/common/bench.py, which defines the same statistics.
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
std::string fmt(const char* f, double v);           // snprintf of one number
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
// Per-element tolerance: element i passes when |out_i - ref_i| <= atol + rtol * |ref_i| and out_i
// is not NaN. A NaN output counts as unwritten (outputs are poisoned first).
struct TolCheck {
  double atol = 0, rtol = 0;
  unsigned long long n = 0, nans = 0, over = 0;
  double worst_ratio = 0;        // max over elements of |out - ref| / (atol + rtol |ref|)
  unsigned long long worst_index = 0;
  double worst_out = 0, worst_ref = 0;
  double max_abs = 0;
  double rel_l2 = 0;             // ||out - ref|| / ||ref|| over non-NaN elements (a side figure)
  bool ok() const { return n > 0 && nans == 0 && over == 0 && std::isfinite(rel_l2); }
  std::string summary() const;   // one line
};
// On the host: out and ref as doubles (NaN in out = unwritten).
TolCheck tol_check_host(const std::vector<double>& out, const std::vector<double>& ref, double atol, double rtol);

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

// ---- statistics ----------------------------------------------------------------------------------
// The one definition used by every bench (C++ and Python): median = the middle sample (the mean of
// the two middle ones for an even count); q1, q3 = quartiles by linear interpolation; spread =
// (q3 - q1) / (2 * median), the half inter-quartile range relative to the median, printed as ±%.
struct Stats {
  size_t n = 0;
  double median = NAN, q1 = NAN, q3 = NAN, min = NAN, max = NAN, spread = NAN;
};
Stats stats_of(std::vector<double> v);

// a / b over paired samples (the same round of a round-robin timer). verdict: "faster" when
// q3 < 1 (a takes less time in more than three rounds of four), "slower" when q1 > 1, otherwise
// "within noise". Claims are made from the verdict only.
struct Ratio {
  Stats s;
  std::string verdict;
};
Ratio paired_ratio(const std::vector<double>& a, const std::vector<double>& b);

// ---- the timer -----------------------------------------------------------------------------------
struct Contender {
  std::string label;
  std::function<void(CUstream)> enqueue;  // one run
  std::vector<double> ms;                 // one sample per round (time per run)
  unsigned reps = 1;                      // runs per timed region
  Stats stats() const { return stats_of(ms); }
};

// Rounds in which every contender runs once (or `reps` times back to back, for short kernels),
// between its own pair of events; the order rotates by one each round, so no contender always
// follows the same neighbour. A round is enqueued behind a GPU spin long enough to cover the host's
// enqueueing, so host launch latency never lands between a run's events. Warm-up runs first.
struct TimerOptions {
  unsigned warmup = 3;
  unsigned rounds = 20;
  double target_ms = 0;         // > 0: reps per contender so that a timed region lasts this long
  unsigned max_reps = 64;
  bool common_reps = false;     // one reps for all, from the median of every warm-up estimate
  unsigned long long spin_ns = 0;  // 0: 300 us + 15 us per enqueued run
};
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

// ---- JSON ----------------------------------------------------------------------------------------
// A streaming writer: j.obj(); j.key("a").num(1); j.key("b").arr(); j.num(2); j.end(); j.end();
// Non-finite numbers are written as null. raw() inserts pre-made JSON (e.g. Clocks::json()).
class Json {
 public:
  Json& obj();
  Json& arr();
  Json& end();
  Json& key(const std::string& k);
  Json& str(const std::string& s);
  Json& num(double v);
  Json& integer(long long v);
  Json& boolean(bool b);
  Json& raw(const std::string& json);
  Json& stats(const Stats& s);        // {"n":..,"median":..,"q1":..,"q3":..,"min":..,"max":..,"spread":..}
  Json& tol(const TolCheck& t);
  Json& samples(const std::vector<double>& v);
  std::string text() const { return out_.str() + "\n"; }
  bool write(const std::string& path) const;  // false if it cannot be written
  static std::string quote(const std::string& s);
  static std::string number(double v);

 private:
  void sep();
  std::ostringstream out_;
  std::vector<bool> first_;  // per open container: nothing written yet
  std::vector<char> close_;  // per open container: its closing bracket
  bool after_key_ = false;
};

}  // namespace plbench
