// bench/common/bench.cpp — the harness of bench/common/bench.h.
#include "bench.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <random>

namespace plbench {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::string exe_dir(const char* argv0) {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  const std::string exe = n > 0 ? std::string(buf, size_t(n)) : std::string(argv0);
  const size_t slash = exe.rfind('/');
  return slash == std::string::npos ? std::string(".") : exe.substr(0, slash);
}

std::vector<unsigned> parse_list(const std::string& s, const char* what) {
  std::vector<unsigned> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    const unsigned long x = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || x == 0 || x > (1u << 24)) die(std::string(what) + ": bad value '" + item + "'");
    v.push_back(unsigned(x));
  }
  if (v.empty()) die(std::string(what) + ": empty list");
  return v;
}

Device open_device(int ordinal, bool non_blocking) {
  Device d;
  CU(cuInit(0));
  CU(cuDeviceGet(&d.dev, ordinal));
  CU(cuDevicePrimaryCtxRetain(&d.ctx, d.dev));  // the primary context: the one cuBLAS's runtime uses too
  CU(cuCtxSetCurrent(d.ctx));
  char name[256];
  CU(cuDeviceGetName(name, sizeof name, d.dev));
  d.name = name;
  CU(cuDeviceGetAttribute(&d.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d.dev));
  CU(cuStreamCreate(&d.stream, non_blocking ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
  return d;
}

CUtensorMap make_map(CUdeviceptr base, uint64_t rows, uint64_t cols, uint32_t box_rows, uint32_t box_cols,
                     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion) {
  CUtensorMap m;
  must(pipelink::bf16_tensor_map(m, base, rows, cols, box_rows, box_cols, swizzle, promotion), "tensor map");
  return m;
}

// ---- Util ----------------------------------------------------------------------------------------
Util::Util(const std::string& cubin, unsigned sms, CUstream s) : sms_(sms), s_(s), scratch_(64) {
  CU(cuModuleLoad(&mod_, cubin.c_str()));
  CU(cuModuleGetFunction(&fill16_, mod_, "fill_random_bf16"));
  CU(cuModuleGetFunction(&fill32_, mod_, "fill_random_f32"));
  CU(cuModuleGetFunction(&spin_, mod_, "gpu_spin"));
  CU(cuModuleGetFunction(&check16_, mod_, "check_tol_bf16"));
  CU(cuModuleGetFunction(&check32_, mod_, "check_tol_f32"));
}
Util::~Util() {
  if (mod_) cuModuleUnload(mod_);
}

void Util::grid_stride(CUfunction f, unsigned long long work, void** args) {
  const unsigned long long blocks = std::max<unsigned long long>(1, std::min<unsigned long long>((work + 255) / 256, 8ull * sms_));
  CU(cuLaunchKernel(f, unsigned(blocks), 1, 1, 256, 1, 1, 0, s_, args, nullptr));
}

void Util::fill_bf16(CUdeviceptr p, unsigned long long n, unsigned long long seed, float scale) {
  void* a[] = {&p, &n, &seed, &scale};
  grid_stride(fill16_, n, a);
}
void Util::fill_f32(CUdeviceptr p, unsigned long long n, unsigned long long seed, float scale) {
  void* a[] = {&p, &n, &seed, &scale};
  grid_stride(fill32_, n, a);
}
void Util::spin(unsigned long long ns) {
  void* a[] = {&ns};
  CU(cuLaunchKernel(spin_, 1, 1, 1, 1, 1, 1, 0, s_, a, nullptr));
}

TolCheck Util::check(CUdeviceptr out, bool out_bf16, CUdeviceptr ref, unsigned long long n, double atol, double rtol) {
  if (n >= (1ull << 32)) die("Util::check: more than 2^32 elements");
  TolCheck t;
  t.atol = atol, t.rtol = rtol, t.n = n;
  CU(cuMemsetD8Async(scratch_.p, 0, scratch_.bytes, s_));
  float fa = float(atol), fr = float(rtol);
  CUdeviceptr acc = scratch_.p;
  void* a[] = {&out, &ref, &n, &fa, &fr, &acc};
  grid_stride(out_bf16 ? check16_ : check32_, n, a);
  CU(cuStreamSynchronize(s_));
  unsigned long long raw[6];
  CU(cuMemcpyDtoH(raw, scratch_.p, sizeof raw));
  double d2, r2;
  std::memcpy(&d2, &raw[0], 8);
  std::memcpy(&r2, &raw[1], 8);
  t.nans = raw[2];
  t.over = raw[3];
  const uint32_t ratio_bits = uint32_t(raw[4] >> 32);
  float ratio, mx;
  std::memcpy(&ratio, &ratio_bits, 4);
  const uint32_t mx_bits = uint32_t(raw[5]);
  std::memcpy(&mx, &mx_bits, 4);
  t.worst_ratio = ratio;
  t.worst_index = raw[4] & 0xFFFFFFFFull;
  t.max_abs = mx;
  t.rel_l2 = r2 > 0 ? std::sqrt(d2 / r2) : (d2 > 0 ? INFINITY : 0);
  if (t.nans < n) {
    float r = 0;
    CU(cuMemcpyDtoH(&r, ref + t.worst_index * 4, 4));
    t.worst_ref = r;
    if (out_bf16) {
      uint16_t h = 0;
      CU(cuMemcpyDtoH(&h, out + t.worst_index * 2, 2));
      t.worst_out = bf16_to_f(h);
    } else {
      float o = 0;
      CU(cuMemcpyDtoH(&o, out + t.worst_index * 4, 4));
      t.worst_out = o;
    }
  }
  return t;
}

// ---- the timer -----------------------------------------------------------------------------------
std::vector<size_t> round_order(size_t n, unsigned long long seed, unsigned round) {
  // One generator per round (seed mixed with the round), so a round's order does not depend on
  // how many rounds came before it.
  std::mt19937_64 rng(seed ^ (0x9E3779B97F4A7C15ull * (round + 1ull)));
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  for (size_t i = n; i > 1; --i) std::swap(v[i - 1], v[size_t(rng() % i)]);
  return v;
}

void time_round_robin(std::vector<Contender>& cs, const TimerOptions& o, Util& util) {
  time_round_robin(cs, o, util.stream(), [&util](unsigned long long ns) { util.spin(ns); });
}

void time_round_robin(std::vector<Contender>& cs, const TimerOptions& o, CUstream s,
                      const std::function<void(unsigned long long)>& spin) {
  std::vector<CUevent> ev(2 * cs.size());
  for (CUevent& e : ev) CU(cuEventCreate(&e, CU_EVENT_DEFAULT));
  // Warm-up, each run timed on its own: the estimates that set reps.
  std::vector<double> all_est, est_of(cs.size());
  for (size_t i = 0; i < cs.size(); ++i) {
    std::vector<double> est;
    for (unsigned w = 0; w < std::max(1u, o.warmup); ++w) {
      CU(cuEventRecord(ev[0], s));
      cs[i].enqueue(s);
      CU(cuEventRecord(ev[1], s));
      CU(cuEventSynchronize(ev[1]));
      float t = 0;
      CU(cuEventElapsedTime(&t, ev[0], ev[1]));
      est.push_back(t);
      all_est.push_back(t);
    }
    est_of[i] = stats_of(est).median;
    cs[i].ms.clear();
  }
  for (size_t i = 0; i < cs.size(); ++i) {
    const double t_est = o.common_reps ? stats_of(all_est).median : est_of[i];
    cs[i].reps = o.target_ms > 0 ? unsigned(std::min<double>(o.max_reps, std::max(1.0, std::ceil(o.target_ms / std::max(t_est, 1e-4)))))
                                 : 1u;
  }
  std::vector<unsigned> pre(cs.size(), 0);  // sustain_ms: untimed runs before each timed region
  if (o.sustain_ms > 0)
    for (size_t i = 0; i < cs.size(); ++i)
      pre[i] = unsigned(std::min(4096.0, std::ceil(o.sustain_ms / std::max(est_of[i], 1e-3))));
  // The spin covers the enqueueing of the timed runs; untimed runs before a region take the GPU
  // longer than the host takes to enqueue them, so they need no more of it.
  unsigned long long runs = 0;
  for (const Contender& c : cs) runs += c.reps;
  const unsigned long long spin_ns = o.spin_ns ? o.spin_ns : 300000ull + 15000ull * runs;
  for (unsigned round = 0; round < o.rounds; ++round) {
    spin(spin_ns);
    const std::vector<size_t> order = round_order(cs.size(), o.order_seed, round);
    for (size_t i : order) {
      for (unsigned k = 0; k < pre[i]; ++k) cs[i].enqueue(s);
      CU(cuEventRecord(ev[2 * i], s));
      for (unsigned k = 0; k < cs[i].reps; ++k) cs[i].enqueue(s);
      CU(cuEventRecord(ev[2 * i + 1], s));
    }
    CU(cuStreamSynchronize(s));
    for (size_t i = 0; i < cs.size(); ++i) {
      float t = 0;
      CU(cuEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
      cs[i].ms.push_back(double(t) / cs[i].reps);
    }
  }
  for (CUevent e : ev) CU(cuEventDestroy(e));
}

// ---- clocks --------------------------------------------------------------------------------------
namespace {
// The few NVML entry points used, declared here (no nvml.h needed), loaded with dlopen.
typedef int (*nvml_init_t)();
typedef int (*nvml_handle_t)(unsigned, void**);
typedef int (*nvml_clock_t)(void*, int, unsigned*);
typedef int (*nvml_temp_t)(void*, int, unsigned*);
typedef int (*nvml_power_t)(void*, unsigned*);

bool read_nvml(int ordinal, Clocks& c) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return false;
  auto init = reinterpret_cast<nvml_init_t>(dlsym(lib, "nvmlInit_v2"));
  auto handle = reinterpret_cast<nvml_handle_t>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto clock = reinterpret_cast<nvml_clock_t>(dlsym(lib, "nvmlDeviceGetClockInfo"));
  auto temp = reinterpret_cast<nvml_temp_t>(dlsym(lib, "nvmlDeviceGetTemperature"));
  auto power = reinterpret_cast<nvml_power_t>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
  void* h = nullptr;
  if (!init || !handle || !clock || init() != 0 || handle(unsigned(ordinal), &h) != 0) return false;
  unsigned v = 0;
  if (clock(h, 1 /*NVML_CLOCK_SM*/, &v) == 0) c.sm_mhz = v;
  if (clock(h, 2 /*NVML_CLOCK_MEM*/, &v) == 0) c.mem_mhz = v;
  if (temp && temp(h, 0 /*NVML_TEMPERATURE_GPU*/, &v) == 0) c.temp_c = v;
  if (power && power(h, &v) == 0) c.power_w = v / 1000.0;  // milliwatts
  c.source = "nvml";
  return true;  // the library stays loaded: later reads are cheap
}

bool read_smi(int ordinal, Clocks& c) {
  const std::string cmd = "nvidia-smi -i " + std::to_string(ordinal) +
                          " --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader,nounits 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return false;
  char line[256] = {0};
  const bool got = std::fgets(line, sizeof line, p) != nullptr;
  pclose(p);
  if (!got) return false;
  double v[4];
  for (double& x : v) x = NAN;
  std::stringstream ss(line);
  std::string item;
  for (int i = 0; i < 4 && std::getline(ss, item, ','); ++i) {
    char* end = nullptr;
    const double x = std::strtod(item.c_str(), &end);
    if (end != item.c_str()) v[i] = x;
  }
  c.sm_mhz = v[0], c.mem_mhz = v[1], c.temp_c = v[2], c.power_w = v[3];
  c.source = "nvidia-smi";
  return true;
}
}  // namespace

Clocks read_clocks(int ordinal) {
  Clocks c;
  c.source = "none";
  if (!read_nvml(ordinal, c)) read_smi(ordinal, c);
  return c;
}

std::string Clocks::json() const {
  return "{\"source\": " + Json::quote(source) + ", \"sm_mhz\": " + Json::number(sm_mhz) + ", \"mem_mhz\": " + Json::number(mem_mhz) +
         ", \"temp_c\": " + Json::number(temp_c) + ", \"power_w\": " + Json::number(power_w) + "}";
}
std::string Clocks::line() const {
  char b[160];
  std::snprintf(b, sizeof b, "SM %.0f MHz, memory %.0f MHz, %.0f C, %.0f W (%s)", sm_mhz, mem_mhz, temp_c, power_w, source.c_str());
  return b;
}

}  // namespace plbench
