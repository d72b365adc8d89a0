// bench/common/stats.h — the parts of the harness that need no GPU (bench.h includes this): the
// one median and spread of every bench, the paired ratio and its verdict, the per-element
// tolerance check, and the JSON writer. Tested without a GPU by bench_stats_selftest (the Python
// twin, bench/common/bench.py, is compared against it by tests/python/test_bench_common.py).
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace plbench {

std::string fmt(const char* f, double v);  // snprintf of one number

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
