// driver — runs the passes in order over one LinkContext and writes the outputs.
//
//   parse_contracts → resolve_facts → check → allocate → generate → compile_link → (write_outputs)
//
// A pass runs only if the ones before it reported no error, except that check and allocate run
// together so one link reports all of its contract and resource errors at once.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "context.h"

#ifndef PIPELINK_INCLUDE_DIR
#define PIPELINK_INCLUDE_DIR ""
#endif

namespace pipelink {

std::string default_include_dir() {
  if (const char* e = std::getenv("PIPELINK_INCLUDE_DIR")) return e;
  return PIPELINK_INCLUDE_DIR;
}

namespace {
template <class F> void timed(const LinkContext& ctx, const char* name, F f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  if (ctx.opt.verbose)
    std::cerr << "pipelink: " << name << ": "
              << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() << " ms\n";
}
}  // namespace

LinkResult link(const LinkOptions& options, Diagnostics& diags) {
  LinkContext ctx(options, diags);
  ctx.target.arch = options.arch;
  if (options.arch != "sm_90a" && options.arch != "sm_90") {
    diags.error("target", "unsupported target '" + options.arch + "' (PipeLink knows sm_90a and sm_90)");
    return {};
  }
  ctx.target.setmaxnreg = options.arch == "sm_90a";
  timed(ctx, "parse contracts", [&] { parse_contracts(ctx); });
  if (diags.has_errors()) return {};
  timed(ctx, "resolve facts", [&] { resolve_facts(ctx); });
  if (diags.has_errors()) return {};
  timed(ctx, "check", [&] { check(ctx); });
  // Allocation still runs after check errors that leave the model consistent, so resource
  // overflows are reported together with contract disagreements.
  timed(ctx, "allocate", [&] { allocate(ctx); });
  if (diags.has_errors()) return {};
  ctx.result.map = render_map(ctx);
  timed(ctx, "generate", [&] { generate(ctx); });
  if (diags.has_errors()) return {};
  if (options.check_only) {
    ctx.result.ok = true;
    return ctx.result;
  }
  timed(ctx, "compile and link", [&] { compile_link(ctx); });
  if (diags.has_errors()) return {};
  ctx.result.ok = true;
  return ctx.result;
}

namespace {
bool write_atomic(const std::string& path, const char* data, size_t n, Diagnostics& diags) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f || !f.write(data, static_cast<std::streamsize>(n))) {
      diags.error("output", "cannot write '" + path + "'");
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    diags.error("output", "cannot write '" + path + "': " + ec.message());
    return false;
  }
  return true;
}
}  // namespace

bool write_outputs(const LinkOptions& opt, const LinkResult& r, Diagnostics& diags) {
  if (!r.ok || diags.has_errors()) return false;
  bool ok = true;
  if (!opt.output.empty() && !r.cubin.empty()) ok &= write_atomic(opt.output, r.cubin.data(), r.cubin.size(), diags);
  if (!opt.map_path.empty()) ok &= write_atomic(opt.map_path, r.map.data(), r.map.size(), diags);
  if (opt.save_temps || opt.emit_ptx) {
    std::string stem = opt.output.empty() ? std::string("pipelink") : opt.output;
    if (opt.save_temps) ok &= write_atomic(stem + ".generated.cu", r.generated_source.data(), r.generated_source.size(), diags);
    if (!r.linked_ptx.empty()) ok &= write_atomic(stem + ".ptx", r.linked_ptx.data(), r.linked_ptx.size(), diags);
  }
  return ok;
}

}  // namespace pipelink
