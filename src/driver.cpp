// driver — runs the passes in order over one LinkContext and writes the outputs.
//
//   parse_contracts → resolve_facts → check → connect → check_link → insert_transfers → allocate →
//   generate → compile_link → (write_outputs)
//
// A pass runs only if the ones before it reported no error, except that check, connect,
// check_link, insert_transfers and allocate run together so one link reports all of its contract
// and resource errors at once.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include "context.h"
#include "pipelink/targets.h"

#ifndef PIPELINK_INCLUDE_DIR
#define PIPELINK_INCLUDE_DIR ""
#endif

namespace pipelink {

// The environment variable PIPELINK_INCLUDE_DIR wins. Otherwise an installed PipeLink finds
// pipelink/device.cuh relative to the binary holding this code (the CLI, libpipelink_c.so, or a
// program linking libpipelink.a): <dir>/../include (<prefix>/bin -> <prefix>/include) or
// <dir>/include (the Python package's copy). The compile-time source-tree path is the fallback.
std::string default_include_dir() {
  if (const char* e = std::getenv("PIPELINK_INCLUDE_DIR")) return e;
  namespace fs = std::filesystem;
  std::vector<fs::path> modules;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&default_include_dir), &info) && info.dli_fname && info.dli_fname[0])
    modules.emplace_back(info.dli_fname);  // the main program's entry is argv[0]: /proc/self/exe covers it
  modules.emplace_back("/proc/self/exe");
  for (const fs::path& m : modules) {
    std::error_code ec;
    fs::path dir = fs::canonical(m, ec).parent_path();
    if (ec) continue;
    for (const fs::path& inc : {dir.parent_path() / "include", dir / "include"})
      if (fs::is_regular_file(inc / "pipelink" / "device.cuh", ec)) return inc.string();
  }
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

// Files are the same when their canonical paths are, or (both existing) they are one file under
// two names. Never throws.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  const auto ca = std::filesystem::weakly_canonical(a, ec);
  const std::string sa = ec ? a : ca.string();
  const auto cb = std::filesystem::weakly_canonical(b, ec);
  const std::string sb = ec ? b : cb.string();
  if (sa == sb) return true;
  const bool eq = std::filesystem::equivalent(a, b, ec);
  return !ec && eq;
}

std::vector<std::pair<std::string, std::string>> output_paths(const LinkOptions& opt) {
  std::vector<std::pair<std::string, std::string>> out;  // (what, path)
  if (!opt.output.empty() && !opt.check_only) out.push_back({"-o", opt.output});
  if (!opt.map_path.empty()) out.push_back({"--map", opt.map_path});
  if (!opt.map_svg_path.empty()) out.push_back({"--map-svg", opt.map_svg_path});
  if (!opt.check_only && (opt.save_temps || opt.emit_ptx)) {
    const std::string stem = opt.output.empty() ? std::string("pipelink") : opt.output;
    if (opt.save_temps) out.push_back({"--save-temps", stem + ".generated.cu"});
    out.push_back({opt.save_temps ? "--save-temps" : "--emit-ptx", stem + ".ptx"});
  }
  return out;
}

bool check_output_paths(const LinkOptions& opt, const std::vector<std::pair<std::string, std::string>>& inputs,
                        Diagnostics& diags) {
  const auto outs = output_paths(opt);
  bool ok = true;
  for (size_t i = 0; i < outs.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (same_file(outs[i].second, outs[j].second)) {
        diags.error("output", outs[j].first + " and " + outs[i].first + " name the same file '" + outs[i].second + "'");
        ok = false;
      }
    for (const auto& [what, path] : inputs)
      if (same_file(outs[i].second, path)) {
        diags.error("output", outs[i].first + " '" + outs[i].second + "' is the " + what + " ('" + path +
                                  "'); refusing to overwrite an input");
        ok = false;
      }
  }
  return ok;
}

namespace {
LinkResult link_passes(const LinkOptions& options, Diagnostics& diags);
}

LinkResult link(const LinkOptions& options, Diagnostics& diags) {
  // The passes report into diags and do not throw; this is the backstop for what they cannot
  // report (memory exhaustion), so a hostile input ends in a diagnostic, not an abort.
  try {
    LinkResult r = link_passes(options, diags);
    // --fatal-warnings: promoted only now, so the passes ran as without it and every real error
    // of the link is reported beside the promoted warnings; the link fails and writes nothing.
    if (options.fatal_warnings && diags.promote_warnings("a warning, made an error by --fatal-warnings") > 0) return {};
    return r;
  } catch (const std::exception& e) {
    diags.error("internal", std::string("the link stopped: ") + e.what());
    return {};
  }
}

namespace {
LinkResult link_passes(const LinkOptions& options, Diagnostics& diags) {
  LinkContext ctx(options, diags);
  ctx.target.arch = options.arch;
  const TargetInfo* ti = find_target(options.arch);
  if (!ti) {
    diags.error("target", "unsupported target '" + printable(options.arch) + "' (PipeLink knows " + target_names() + ")");
    return {};
  }
  // The target's limits, from the one table (src/targets.cpp).
  ctx.target.max_smem = ti->max_smem_block;
  ctx.target.named_barriers = ti->named_barriers;
  ctx.target.max_threads = ti->max_threads;
  ctx.target.regs_per_sm = ti->regs_per_block;
  ctx.target.setmaxnreg = ti->setmaxnreg;
  ctx.target.wgmma = ti->wgmma;
  ctx.target.smem_per_sm = ti->smem_per_sm;
  ctx.target.regs_per_sm_total = ti->regs_per_sm;
  ctx.target.max_threads_per_sm = ti->max_threads_per_sm;
  // --blocks-per-sm N: a block gets an N-th of the SM (its shared memory less the per-block
  // reserve, and its registers); the threads check is in allocate (it needs the block's size).
  if (options.blocks_per_sm < 1 || options.blocks_per_sm > 32) {
    diags.error("input", "--blocks-per-sm " + std::to_string(options.blocks_per_sm) + ": must be 1..32");
    return {};
  }
  ctx.target.blocks_per_sm = options.blocks_per_sm;
  if (options.pdl_early_trigger && !options.pdl) {
    diags.error("input", "--pdl-early-trigger changes where a --pdl entry triggers the next grid: give --pdl too");
    return {};
  }
  if (options.blocks_per_sm > 1) {
    const int64_t n = options.blocks_per_sm;
    // The driver allocates shared memory in 128-byte units, the per-block reserve included.
    ctx.target.max_smem = std::min(ctx.target.max_smem, ((ti->smem_per_sm / n) & ~int64_t{127}) - Target::kSmemReservedPerBlock);
    ctx.target.regs_per_sm = std::min<int64_t>(ti->regs_per_block, ti->regs_per_sm / n);
  }
  // The kernel's name is a C++ symbol in the generated unit and a word of the map's launch line.
  if (!is_identifier(options.kernel_name) || reserved_identifier(options.kernel_name)) {
    diags.error("input", "--kernel-name '" + printable(options.kernel_name) +
                             "' must be an identifier ([A-Za-z_][A-Za-z0-9_]*), not a C++ keyword, CUDA built-in or "
                             "reserved name (starting with __ or pl_)");
    return {};
  }
  timed(ctx, "parse contracts", [&] { parse_contracts(ctx); });
  // Nothing a link writes may be one of its inputs (-o naming a contract would overwrite it):
  // contracts, and the objects and sources of those that parsed. Reported with parse errors.
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const std::string& in : options.inputs) inputs.push_back({"input contract", in});
  for (const auto& c : ctx.contracts) {
    if (!c->object.empty()) {
      inputs.push_back({"object of component '" + c->name + "'", (std::filesystem::path(c->dir) / c->object).string()});
      for (const std::string& dir : options.library_dirs)
        inputs.push_back({"object of component '" + c->name + "'", (std::filesystem::path(dir) / c->object).string()});
    }
    if (!c->source.empty())
      inputs.push_back({"source of component '" + c->name + "'", (std::filesystem::path(c->dir) / c->source).string()});
  }
  check_output_paths(options, inputs, diags);
  if (diags.has_errors()) return {};
  // Holds from here: every contract parsed with exact types, every name non-empty and every
  // identifier usable in C++; ctx.instances lists one instance per input occurrence, in order;
  // no output path names an input.
  timed(ctx, "resolve facts", [&] { resolve_facts(ctx); });
  if (diags.has_errors()) return {};
  // Holds from here: every fact has one value and one provider, every constraint and type agrees,
  // and every Quantity that names only facts has its value.
  timed(ctx, "check", [&] { check(ctx); });
  // Check errors do not stop the passes up to allocate: one link reports its contract
  // disagreements and resource overflows together. ctx.sizes_ok says whether every count and size
  // is in the range allocation can hold.
  timed(ctx, "connect", [&] { connect(ctx); });
  // Holds from here: ctx.pipes is the graph the contracts declare, one pipe per port name (after
  // --connect), each end (instance, port) on exactly one pipe, in input order.
  timed(ctx, "check link", [&] { check_link(ctx); });
  timed(ctx, "insert transfers", [&] { insert_transfers(ctx); });
  // Holds from here (when ctx.sizes_ok): the graph is final. Where consumers read another layout,
  // their pipe is a transfer pipe fed by one generated warp; nothing below adds or re-points a pipe.
  timed(ctx, "allocate", [&] { allocate(ctx); });
  if (diags.has_errors()) return {};
  // Holds from here: the contracts agree with each other and fit the target; every pipe has its
  // producers, consumers, ring, barriers and arrival counts; every instance has its warps,
  // registers, shared-memory offsets, barrier ids and parameter slots, within the binding
  // table's capacities (limits.h). Nothing below changes an allocation.
  ctx.result.map = render_map(ctx);
  ctx.result.svg = render_map_svg(ctx);
  timed(ctx, "generate", [&] { generate(ctx); });
  if (diags.has_errors()) return {};
  // Holds from here: ctx.unit is the connection unit in pieces (the prelude the components link
  // against, the entry, the manifest), and ctx.result.generated_source is ctx.unit.text().
  if (options.check_only) {
    ctx.result.ok = true;
    return ctx.result;
  }
  timed(ctx, "compile and link", [&] { compile_link(ctx); });
  if (diags.has_errors()) return {};
  // Holds from here: every object agreed with its contract (records, each object's own records
  // and fact reads, conformance of its code), the linked kernel waits on no barrier id the linker
  // did not allocate, no binding is undefined, and ctx.result.cubin is the linked kernel.
  {
    // What ptxas actually did (the register-cap line above is the launch bound PipeLink set).
    // With PTX components the log holds a ptxas report per separately assembled unit and, last,
    // the device linker's count for the whole kernel ("Function properties for 'K':" then "used N
    // registers"), which includes what the component functions it calls need: that one is read
    // where present, else the report of the entry itself (an LTO link assembles one unit).
    std::smatch m;
    static const std::regex linked(R"(Function properties for '([A-Za-z_][A-Za-z0-9_]*)':\s*\n[^\n]*?used (\d+) registers(?:, used (\d+) barriers)?)");
    static const std::regex used(R"(Used (\d+) registers(?:, used (\d+) barriers)?)");
    static const std::regex spill(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
    const std::string& log = ctx.result.toolchain_log;
    std::string regs_n, bars_n;
    for (std::sregex_iterator it(log.begin(), log.end(), linked), end; it != end; ++it)
      if ((*it)[1].str() == ctx.opt.kernel_name) regs_n = (*it)[2].str(), bars_n = (*it)[3].matched ? (*it)[3].str() : "";
    if (regs_n.empty()) {
      // the entry's own ptxas block: "Compiling entry function 'K'" ... "Used N registers"
      const size_t at = log.find("Compiling entry function '" + ctx.opt.kernel_name + "'");
      const std::string tail = at == std::string::npos ? log : log.substr(at);
      if (std::regex_search(tail, m, used)) regs_n = m[1].str(), bars_n = m[2].matched ? m[2].str() : "";
    }
    if (!regs_n.empty()) {
      ctx.result.map += "\n== ptxas  (the linked kernel as assembled)\n  registers " + regs_n + " per thread (cap " +
                        std::to_string(ctx.entry_registers) + ")";
      if (!bars_n.empty()) ctx.result.map += ", barriers " + bars_n + " (ptxas count, id 0 included)";
      // Spills: every unit's report summed (a link with PTX components assembles several; an LTO
      // link one), so a spilling component function is not hidden behind the entry's report.
      long long st = 0, ld = 0;
      int reports = 0;
      for (std::sregex_iterator it(log.begin(), log.end(), spill), end; it != end; ++it, ++reports)
        st += std::stoll((*it)[1].str()), ld += std::stoll((*it)[2].str());
      if (reports > 0)
        ctx.result.map += ", spill stores " + std::to_string(st) + " B, loads " + std::to_string(ld) + " B" +
                          (reports > 1 ? " (summed over " + std::to_string(reports) + " ptxas reports)" : "");
      ctx.result.map += "\n";
      // Where ptxas serialized the wgmma pipeline or injected waits for it (the link warns on the first).
      const WgmmaReport w = wgmma_report(log);
      for (const std::string& why : w.serialized) ctx.result.map += "  wgmma SERIALIZED by ptxas (" + why + ")\n";
      if (w.injected_waits + w.injected_arrives > 0)
        ctx.result.map += "  wgmma: ptxas injected " + std::to_string(w.injected_waits) + " warpgroup.wait (C7517), " +
                          std::to_string(w.injected_arrives) + " warpgroup.arrive (C7519)\n";
    }
  }
  if (!ctx.conformance.empty()) {
    ctx.result.map += "\n== conformance  (records and code read from each component's object)\n";
    for (const std::string& line : ctx.conformance) ctx.result.map += "  " + line + "\n";
  }
  // After the conformance section, which the control's map does not have (it runs no conform).
  if (!ctx.role_registers.empty()) {
    ctx.result.map += "\n== registers per role  (each component's code alone, assembled by ptxas within its warpgroup's budget)\n";
    for (const std::string& line : ctx.role_registers) ctx.result.map += "  " + line + "\n";
  }
  ctx.result.ok = true;
  return ctx.result;
}
}  // namespace

// All or nothing: every file goes to a temporary name unique to this process first; only when
// all are written are they renamed into place. On any failure the temporaries and whatever was
// already renamed are removed, so "nothing written" holds.
bool write_files(const std::vector<OutputFile>& files, Diagnostics& diags) {
  const std::string suffix = ".tmp." + std::to_string(static_cast<long>(::getpid()));
  std::vector<std::string> temps, done;
  auto undo = [&] {
    std::error_code ec;
    for (const std::string& t : temps) std::filesystem::remove(t, ec);
    for (const std::string& d : done) std::filesystem::remove(d, ec);
  };
  for (const OutputFile& f : files) {
    const std::string tmp = f.path + suffix;
    temps.push_back(tmp);
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    if (!o || !o.write(f.data, static_cast<std::streamsize>(f.size)) || !o.flush()) {
      diags.error("output", "cannot write '" + f.path + "'");
      o.close();
      undo();
      return false;
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temps[i], files[i].path, ec);
    if (ec) {
      diags.error("output", "cannot write '" + files[i].path + "': " + ec.message());
      undo();
      return false;
    }
    done.push_back(files[i].path);
  }
  return true;
}

bool write_outputs(const LinkOptions& opt, const LinkResult& r, Diagnostics& diags) {
  if (!r.ok || diags.has_errors()) return false;
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const std::string& in : opt.inputs) inputs.push_back({"input contract", in});
  if (!check_output_paths(opt, inputs, diags)) return false;
  std::vector<OutputFile> files;
  if (!opt.output.empty() && !r.cubin.empty()) files.push_back({opt.output, r.cubin.data(), r.cubin.size()});
  if (!opt.map_path.empty()) files.push_back({opt.map_path, r.map.data(), r.map.size()});
  if (!opt.map_svg_path.empty()) files.push_back({opt.map_svg_path, r.svg.data(), r.svg.size()});
  if (opt.save_temps || opt.emit_ptx) {
    std::string stem = opt.output.empty() ? std::string("pipelink") : opt.output;
    if (opt.save_temps) files.push_back({stem + ".generated.cu", r.generated_source.data(), r.generated_source.size()});
    if (!r.linked_ptx.empty()) files.push_back({stem + ".ptx", r.linked_ptx.data(), r.linked_ptx.size()});
    if (opt.save_temps && !r.probe_ptx.empty())
      files.push_back({stem + ".probe.ptx", r.probe_ptx.data(), r.probe_ptx.size()});
  }
  return write_files(files, diags);
}

}  // namespace pipelink
