// bench/common/stats.cpp — see stats.h. No GPU, no CUDA.
#include "stats.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace plbench {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string TolCheck::summary() const {
  char b[400];
  std::snprintf(b, sizeof b,
                "%s: %llu elements, %llu NaN (unwritten), %llu over |err| <= %.2g + %.2g|ref|; worst element %llu: out %.6g ref %.6g "
                "(err/tol %.3f); max abs err %.3g, rel L2 %.3e",
                ok() ? "OK" : "FAIL", n, nans, over, atol, rtol, worst_index, worst_out, worst_ref, worst_ratio, max_abs, rel_l2);
  return b;
}

TolCheck tol_check_host(const std::vector<double>& out, const std::vector<double>& ref, double atol, double rtol) {
  TolCheck t;
  t.atol = atol, t.rtol = rtol, t.n = out.size();
  double d2 = 0, r2 = 0;
  for (size_t i = 0; i < out.size() && i < ref.size(); ++i) {
    const double o = out[i], r = ref[i];
    if (std::isnan(o)) {
      ++t.nans;
      continue;
    }
    const double err = std::fabs(o - r), tol = atol + rtol * std::fabs(r);
    double ratio = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0);
    if (std::isnan(ratio)) ratio = INFINITY;
    t.over += ratio > 1;
    if (ratio > t.worst_ratio || i == 0) t.worst_ratio = ratio, t.worst_index = i, t.worst_out = o, t.worst_ref = r;
    t.max_abs = std::max(t.max_abs, err);
    d2 += (o - r) * (o - r);
    r2 += r * r;
  }
  t.rel_l2 = r2 > 0 ? std::sqrt(d2 / r2) : (d2 > 0 ? INFINITY : 0);
  return t;
}

// ---- statistics ----------------------------------------------------------------------------------
Stats stats_of(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double p) {
    const double pos = p * double(v.size() - 1);
    const size_t i = size_t(pos);
    return i + 1 < v.size() ? v[i] + (pos - double(i)) * (v[i + 1] - v[i]) : v[i];
  };
  s.median = q(0.5);  // = the middle sample, or the mean of the two middle ones
  s.q1 = q(0.25);
  s.q3 = q(0.75);
  s.min = v.front();
  s.max = v.back();
  s.spread = s.median != 0 ? (s.q3 - s.q1) / (2 * s.median) : NAN;
  return s;
}

Ratio paired_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> r;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (b[i] > 0) r.push_back(a[i] / b[i]);
  Ratio out;
  out.s = stats_of(r);
  out.verdict = r.empty() ? "no samples" : out.s.q3 < 1 ? "faster" : out.s.q1 > 1 ? "slower" : "within noise";
  return out;
}

// ---- JSON ----------------------------------------------------------------------------------------
std::string Json::quote(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\', o += ch;
    else if (static_cast<unsigned char>(ch) < 0x20) o += ' ';
    else o += ch;
  }
  return o + "\"";
}
std::string Json::number(double v) {
  if (!std::isfinite(v)) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}
void Json::sep() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ << ", ";
    first_.back() = false;
  }
}
Json& Json::obj() {
  sep();
  out_ << "{";
  first_.push_back(true);
  close_.push_back('}');
  return *this;
}
Json& Json::arr() {
  sep();
  out_ << "[";
  first_.push_back(true);
  close_.push_back(']');
  return *this;
}
Json& Json::end() {
  if (close_.empty()) {
    std::fprintf(stderr, "Json::end: nothing open\n");
    std::exit(2);
  }
  out_ << close_.back();
  close_.pop_back();
  first_.pop_back();
  return *this;
}
Json& Json::key(const std::string& k) {
  sep();
  out_ << quote(k) << ": ";
  after_key_ = true;
  return *this;
}
Json& Json::str(const std::string& s) {
  sep();
  out_ << quote(s);
  return *this;
}
Json& Json::num(double v) {
  sep();
  out_ << number(v);
  return *this;
}
Json& Json::integer(long long v) {
  sep();
  out_ << v;
  return *this;
}
Json& Json::boolean(bool b) {
  sep();
  out_ << (b ? "true" : "false");
  return *this;
}
Json& Json::raw(const std::string& json) {
  sep();
  out_ << json;
  return *this;
}
Json& Json::stats(const Stats& s) {
  obj();
  key("n").integer(static_cast<long long>(s.n));
  key("median").num(s.median);
  key("q1").num(s.q1);
  key("q3").num(s.q3);
  key("min").num(s.min);
  key("max").num(s.max);
  key("spread").num(s.spread);
  return end();
}
Json& Json::tol(const TolCheck& t) {
  obj();
  key("ok").boolean(t.ok());
  key("atol").num(t.atol);
  key("rtol").num(t.rtol);
  key("elements").integer(static_cast<long long>(t.n));
  key("unwritten").integer(static_cast<long long>(t.nans));
  key("over_tolerance").integer(static_cast<long long>(t.over));
  key("worst_index").integer(static_cast<long long>(t.worst_index));
  key("worst_out").num(t.worst_out);
  key("worst_ref").num(t.worst_ref);
  key("worst_err_over_tol").num(t.worst_ratio);
  key("max_abs_err").num(t.max_abs);
  key("rel_l2").num(t.rel_l2);
  return end();
}
Json& Json::samples(const std::vector<double>& v) {
  arr();
  for (double x : v) num(x);
  return end();
}
bool Json::write(const std::string& path) const {
  std::ofstream f(path);
  if (!f) return false;
  f << text();
  return bool(f);
}

}  // namespace plbench
