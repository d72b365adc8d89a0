// contract_fuzz — libFuzzer target over contracts and expressions (built with clang
// -fsanitize=fuzzer,address,undefined; see tests/fuzz/run_fuzz.sh).
//
// One input is (1) parsed and evaluated as an expression, with every Expr entry point, and (2)
// split at lines "#%%" into up to four contracts, written to a scratch directory and linked with
// LinkOptions::check_only: parse, resolve, check, allocate, generate and the map, with every
// diagnostic rendered. Any crash, sanitizer report, hang (-timeout) or memory blow-up
// (-rss_limit_mb) is a finding.
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "pipelink/expr.h"
#include "pipelink/pipelink.h"

namespace {

const std::string& scratch() {
  static const std::string dir = [] {
    char t[] = "/tmp/pipelink-fuzz-XXXXXX";
    const char* d = ::mkdtemp(t);
    return std::string(d ? d : "/tmp");
  }();
  return dir;
}

void fuzz_expr(const std::string& text) {
  static const std::map<std::string, int64_t> facts{{"tile_m", 128}, {"tile_k", 64}, {"zero", 0}, {"neg", -1},
                                                    {"big", INT64_MAX}, {"small", INT64_MIN}};
  auto lookup = [](const std::string& n) -> std::optional<int64_t> {
    auto it = facts.find(n);
    if (it == facts.end()) return std::nullopt;
    return it->second;
  };
  pipelink::Expr e;
  std::string err;
  if (!pipelink::Expr::parse(text, e, err)) return;
  e.eval(lookup, err);
  std::optional<int64_t> v;
  std::string err2;
  e.check(lookup, [](const std::string& n) { return n == "K"; }, v, err2);
  (void)e.names();
  (void)e.to_cpp([](const std::string& n) { return "x_" + n; });
  pipelink::Expr copy = e;  // shared tree: destroyed twice over
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find('\n') == std::string::npos && size <= 8192) fuzz_expr(text);

  std::vector<std::string> parts;
  size_t at = 0;
  while (parts.size() < 4) {
    size_t cut = text.find("\n#%%\n", at);
    if (cut == std::string::npos || parts.size() == 3) { parts.push_back(text.substr(at)); break; }
    parts.push_back(text.substr(at, cut - at));
    at = cut + 5;
  }
  pipelink::LinkOptions opt;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string path = scratch() + "/c" + std::to_string(i) + ".toml";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << parts[i];
    opt.inputs.push_back(path);
  }
  // A contract listed twice is instantiated twice: exercise that too.
  if (!parts.empty() && (size & 1)) opt.inputs.push_back(opt.inputs.front());
  opt.check_only = true;
  pipelink::Diagnostics diags;
  pipelink::LinkResult r = pipelink::link(opt, diags);
  std::ostringstream out;
  diags.print(out);
  (void)r;
  return 0;
}
