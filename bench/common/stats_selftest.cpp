// bench_stats_selftest — bench/common/stats.h without a GPU.
//   bench_stats_selftest              fixed cases with known answers; exit 1 on a mismatch
//   bench_stats_selftest --stats      samples on stdin -> Stats as JSON
//   bench_stats_selftest --ratio      two lines of samples (a, b) on stdin -> paired ratio as JSON
//   bench_stats_selftest --tol A R    two lines (out, ref; "nan" allowed) -> TolCheck as JSON
// tests/python/test_bench_common.py drives the last three to hold bench/common/bench.py to the
// same definitions.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "stats.h"

using namespace plbench;

namespace {

std::vector<double> read_line() {
  std::string line;
  std::getline(std::cin, line);
  std::vector<double> v;
  std::istringstream ss(line);
  for (std::string w; ss >> w;) v.push_back(w == "nan" ? NAN : std::strtod(w.c_str(), nullptr));
  return v;
}

int failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL: %s\n", what);
    ++failures;
  }
}
bool near(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b)); }

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "--stats") {
    Json j;
    j.stats(stats_of(read_line()));
    std::cout << j.text();
    return 0;
  }
  if (mode == "--ratio") {
    const std::vector<double> a = read_line(), b = read_line();
    const Ratio r = paired_ratio(a, b);
    Json j;
    j.obj().key("ratio").stats(r.s).key("verdict").str(r.verdict).end();
    std::cout << j.text();
    return 0;
  }
  if (mode == "--tol" && argc == 4) {
    const std::vector<double> out = read_line(), ref = read_line();
    Json j;
    j.tol(tol_check_host(out, ref, std::strtod(argv[2], nullptr), std::strtod(argv[3], nullptr)));
    std::cout << j.text();
    return 0;
  }
  if (!mode.empty()) {
    std::fprintf(stderr, "usage: bench_stats_selftest [--stats | --ratio | --tol ATOL RTOL]\n");
    return 2;
  }
  // Known answers.
  Stats s = stats_of({4, 1, 3, 2});
  expect(s.n == 4 && near(s.median, 2.5) && near(s.q1, 1.75) && near(s.q3, 3.25) && s.min == 1 && s.max == 4, "stats of 1..4");
  expect(near(s.spread, (3.25 - 1.75) / 5.0), "spread = (q3 - q1) / (2 median)");
  s = stats_of({5, 1, 3});
  expect(near(s.median, 3) && near(s.q1, 2) && near(s.q3, 4), "stats of an odd count");
  expect(std::isnan(stats_of({}).median), "stats of nothing is NaN");
  Ratio r = paired_ratio({1, 1, 1, 1}, {2, 2, 2, 2});
  expect(near(r.s.median, 0.5) && r.verdict == "faster", "a / b = 0.5: faster");
  r = paired_ratio({2, 2, 2, 2}, {1, 1, 1, 1});
  expect(r.verdict == "slower", "a / b = 2: slower");
  r = paired_ratio({0.9, 1.1, 0.95, 1.05}, {1, 1, 1, 1});
  expect(r.verdict == "within noise", "quartiles around 1: within noise");
  TolCheck t = tol_check_host({1.0, NAN, 2.1, 0.0}, {1.0, 1.0, 2.0, 0.005}, 0.01, 0.01);
  expect(t.nans == 1 && t.over == 1 && t.worst_index == 2 && near(t.worst_ratio, 0.1 / 0.03) && !t.ok(), "tolerance: NaN and one over");
  t = tol_check_host({1.0, 2.0}, {1.0, 2.0}, 0, 0);
  expect(t.ok() && t.over == 0 && t.worst_ratio == 0, "tolerance: exact outputs pass with zero tolerance");
  Json j;
  j.obj().key("a").num(NAN).key("b").arr().num(1).str("x\"y").end().key("c").boolean(true).end();
  expect(j.text() == "{\"a\": null, \"b\": [1, \"x\\\"y\"], \"c\": true}\n", "JSON text");
  std::printf("%s\n", failures ? "FAIL" : "PASS: bench/common statistics, checks and JSON");
  return failures ? 1 : 0;
}
