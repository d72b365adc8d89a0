// qwen_select_cli — prints the kernel qwen_select.h selects, for each kind and M, from a kernel set
// given on the command line (no GPU, no cubins): the C++ half of tests/python/test_qwen_select.py.
//
//   qwen_select_cli --sms 132 --M 1-8192 [--token-costs] LABEL:TILE_M:TILE_N[:probe][:packed] ...
//
// Each line of output: "<kind> <M> <label>"; with --token-costs instead the token tile the rule
// weighs and its cost, "<kind> <M> <label> <cost>" ("<kind> <M> none 0" where there is none), so
// the test compares the costs as well as the picks. A label's panels flag is has_panels(label), as
// the bench sets it for named variants.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "qwen_select.h"

int main(int argc, char** argv) {
  unsigned sms = 132, m_lo = 1, m_hi = 8192;
  bool token_costs = false;
  std::vector<qwen_select::Candidate> ks;
  auto die = [](const std::string& m) {
    std::fprintf(stderr, "qwen_select_cli: %s\n", m.c_str());
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--token-costs") {
      token_costs = true;
    } else if (a == "--sms" && i + 1 < argc) {
      sms = unsigned(std::strtoul(argv[++i], nullptr, 10));
    } else if (a == "--M" && i + 1 < argc) {
      const std::string r = argv[++i];
      const size_t dash = r.find('-');
      m_lo = unsigned(std::strtoul(r.c_str(), nullptr, 10));
      m_hi = dash == std::string::npos ? m_lo : unsigned(std::strtoul(r.c_str() + dash + 1, nullptr, 10));
    } else {
      qwen_select::Candidate c;
      std::vector<std::string> f;
      for (size_t at = 0;;) {
        const size_t c2 = a.find(':', at);
        f.push_back(a.substr(at, c2 == std::string::npos ? std::string::npos : c2 - at));
        if (c2 == std::string::npos) break;
        at = c2 + 1;
      }
      if (f.size() < 3) die("a kernel is LABEL:TILE_M:TILE_N[:probe][:packed], not '" + a + "'");
      c.label = f[0];
      c.tile_m = unsigned(std::strtoul(f[1].c_str(), nullptr, 10));
      c.tile_n = unsigned(std::strtoul(f[2].c_str(), nullptr, 10));
      if (c.tile_m == 0 || c.tile_n == 0) die("tile of '" + a + "' is zero");
      for (size_t j = 3; j < f.size(); ++j) {
        if (f[j] == "probe") c.probe = true;
        else if (f[j] == "packed") c.packed_w = true;
        else die("unknown flag '" + f[j] + "' in '" + a + "'");
      }
      c.panels = qwen_select::has_panels(c.label);
      ks.push_back(c);
    }
  }
  if (sms == 0 || m_lo == 0 || m_hi < m_lo) die("bad --sms or --M");
  for (const char* kind : {"fused", "gemm"})
    for (unsigned M = m_lo; M <= m_hi; ++M) {
      if (!token_costs) {
        std::printf("%s %u %s\n", kind, M, qwen_select::select(kind, M, sms, ks).c_str());
        continue;
      }
      double cost = 0;
      const qwen_select::Candidate* t = qwen_select::token_tile(kind, M, sms, ks, cost);
      std::printf("%s %u %s %.17g\n", kind, M, t ? t->label.c_str() : "none", t ? cost : 0.0);
    }
  return 0;
}
