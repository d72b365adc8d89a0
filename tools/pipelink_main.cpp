// pipelink — the command-line driver. Thin: parses arguments into LinkOptions and calls the
// library (include/pipelink/pipelink.h).
//
//   pipelink link  <contract.toml>... -o out.cubin [--map out.map] [--map-svg out.svg] [-arch=sm_90a] [-L dir] [--connect PORT=PIPE]
//                  [--save-temps] [--emit-ptx] [--control] [--pdl] [--tile-order ORDER] [--tile-schedule data-parallel|split-k|stream-k[:W]] [--kernel-name NAME] [-I dir] [-D NAME[=V]] [-v]
//   pipelink check <contract.toml>... [--map out.map] [--map-svg out.svg] [-arch=sm_90a] [--connect PORT=PIPE] [--pdl]
//   pipelink compile <component.cu> -o out.ltoir [-arch=sm_90a] [-I dir] [-D NAME[=V]]
//   pipelink header <contract.toml>... -o <name>.contract.h
//   pipelink targets            the targets -arch accepts, their limits and where each comes from
//   pipelink --version | --help
//
// A contract listed twice is instantiated twice. Repeatable options (-D, -I, -L, --connect)
// take exactly one value per occurrence, so contracts may follow them. Exit status: 0 on success,
// 1 when the link (or compile) is refused with diagnostics (and then nothing is written), 2 on a
// usage error (unknown option, missing argument, malformed --connect).
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "pipelink/pipelink.h"
#include "pipelink/targets.h"

#ifndef PIPELINK_VERSION
#define PIPELINK_VERSION "0.0.0"
#endif

namespace {
constexpr int kUsageError = 2;
// A repeatable option: one value per occurrence (`-D X a.toml` leaves a.toml to the inputs).
CLI::Option* repeatable(CLI::Option* o) { return o->allow_extra_args(false)->expected(1)->take_all(); }
}  // namespace

namespace {
int run(int argc, char** argv);
}

// The library reports through diagnostics and does not throw; this catches what it cannot report
// (memory exhaustion, an argument parser's surprise) so that no input ends in an abort.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "pipelink: error: " << e.what() << " [internal]\n";
    return 1;
  }
}

namespace {
int run(int argc, char** argv) {
  // Linker convention: -arch=sm_90a (single dash). CLI11 wants --arch.
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& a : args)
    if (a.rfind("-arch=", 0) == 0 || a == "-arch") a = "-" + a;
  std::vector<char*> cargs;
  for (std::string& a : args) cargs.push_back(a.data());

  CLI::App app{"PipeLink: a contract-guided linker for GPU kernel components"};
  app.set_version_flag("--version", std::string("pipelink ") + PIPELINK_VERSION);
  app.require_subcommand(1);
  pipelink::LinkOptions opt;
  std::string compile_src;

  std::vector<std::string> connects;
  auto common = [&](CLI::App* s) {
    s->add_option("--arch", opt.arch, "target: " + pipelink::target_names() + " (default sm_90a; `pipelink targets` lists their limits); also written -arch=sm_90a");
    repeatable(s->add_option("-I", opt.include_dirs, "include directory for the generated unit / control (repeatable)"));
    repeatable(s->add_option("-D", opt.defines, "NAME[=VALUE]: preprocessor definition for the generated unit / control (repeatable)"));
    s->add_flag("-v,--verbose", opt.verbose, "pass timings and toolchain logs");
  };
  CLI::App* link = app.add_subcommand("link", "check, allocate, generate and link into one cubin");
  link->add_option("inputs", opt.inputs, "component contracts (.toml); repeat one to instantiate it again")->required();
  link->add_option("-o", opt.output, "output cubin")->required();
  link->add_option("--map", opt.map_path, "write the link map");
  link->add_option("--map-svg", opt.map_svg_path, "write the link map as a picture (SVG)");
  repeatable(link->add_option("-L", opt.library_dirs, "directory searched for component objects (repeatable)"));
  repeatable(link->add_option("--connect", connects, "PORT=PIPE: ports named PORT join pipe PIPE (repeatable)"));
  const std::string fatal_help = "report warnings as errors (after every pass ran, so all errors show; the link fails and writes nothing)";
  link->add_flag("--fatal-warnings", opt.fatal_warnings, fatal_help);
  link->add_flag("--save-temps", opt.save_temps, "keep the generated source (<out>.generated.cu) and linked PTX");
  link->add_flag("--emit-ptx", opt.emit_ptx, "write the linked PTX to <out>.ptx");
  link->add_flag("--control", opt.control, "build the monolithic control (one NVRTC program) instead");
  const char* pdl_help = "programmatic dependent launch: the entry waits (griddepcontrol.wait) after its prologue and before any "
                         "component role, then lets the next grid launch; the map and manifest say pdl, and the runtime launches "
                         "with the programmatic-stream-serialization attribute";
  link->add_flag("--pdl", opt.pdl, pdl_help);
  const char* early_help = "with --pdl: the entry lets the next grid launch before its wait instead of after it, so the next kernel "
                           "may become resident (and start what needs no earlier output) while this one still waits";
  link->add_flag("--pdl-early-trigger", opt.pdl_early_trigger, early_help);
  const char* order_help = "the tile sequence's order: row_major, col_major or grouped:G (G tiles along m per band); components "
                           "whose [tiles] say order = \"any\" follow it, one that names another order refuses the link";
  link->add_option("--tile-order", opt.tile_order, order_help);
  const char* sched_help = "how blocks share the tiles: data-parallel (default: whole tiles, b, b+grid, ...), split-k (the "
                           "partial last wave's tiles cut into grid / R equal k pieces that run side by side) or stream-k[:W] (the "
                           "last partial wave and W = 1 (default) or 0 full waves cut into equal contiguous k shares); a split "
                           "schedule needs components that walk k ranges ([tiles] k_extent) and one that sums partials ([tiles] "
                           "partial_bytes)";
  link->add_option("--tile-schedule", opt.tile_schedule, sched_help);
  link->add_option("--kernel-name", opt.kernel_name, "name of the generated __global__ entry");
  const char* bps_help = "allocate the link so that N of its blocks fit on one SM (an N-th of the SM's shared memory, less 1 KB "
                         "per block, and of its registers for each block; default 1); the runtime checks that the driver fits them";
  link->add_option("--blocks-per-sm", opt.blocks_per_sm, bps_help)->check(CLI::Range(1, 32));
  const char* minreg_help = "launch with the fewest registers per thread that the warpgroups' register budgets fit in (their mean, "
                            "in steps of 8) instead of the whole register file, leaving the rest of the SM's registers to other "
                            "kernels' blocks (e.g. a small kernel between two linked GEMMs under --pdl); every warpgroup needs a budget";
  link->add_flag("--min-registers", opt.min_registers, minreg_help);
  link->add_option("--cache-dir", opt.cache_dir,
                   "reuse NVRTC output (the generated unit, the conformance probe) from this directory, keyed by a hash of "
                   "source, options, PipeLink's device headers and the NVRTC version (default: $PIPELINK_CACHE_DIR; none: no cache)");
  common(link);

  CLI::App* check = app.add_subcommand("check", "check and allocate only; write nothing but the map (text and/or SVG)");
  check->add_option("inputs", opt.inputs, "component contracts (.toml)")->required();
  check->add_option("--map", opt.map_path, "write the link map");
  check->add_option("--map-svg", opt.map_svg_path, "write the link map as a picture (SVG)");
  repeatable(check->add_option("--connect", connects, "PORT=PIPE: ports named PORT join pipe PIPE (repeatable)"));
  check->add_flag("--fatal-warnings", opt.fatal_warnings, fatal_help);
  check->add_flag("--pdl", opt.pdl, pdl_help);
  check->add_flag("--pdl-early-trigger", opt.pdl_early_trigger, early_help);
  check->add_option("--tile-order", opt.tile_order, order_help);
  check->add_option("--tile-schedule", opt.tile_schedule, sched_help);
  check->add_option("--blocks-per-sm", opt.blocks_per_sm, bps_help)->check(CLI::Range(1, 32));
  check->add_flag("--min-registers", opt.min_registers, minreg_help);
  common(check);

  CLI::App* compile = app.add_subcommand("compile", "compile a component source to LTO-IR with NVRTC");
  compile->add_option("source", compile_src, "component .cu")->required();
  compile->add_option("-o", opt.output, "output .ltoir")->required();
  common(compile);

  std::vector<std::string> header_inputs;
  std::string header_path;
  CLI::App* header = app.add_subcommand("header", "write the C++ header a component includes for its contract");
  header->add_option("inputs", header_inputs, "the component's contract; several: variants of one source (their common part)")->required();
  header->add_option("-o", header_path, "output header (<name>.contract.h)")->required();

  CLI::App* targets = app.add_subcommand("targets", "list the targets -arch accepts, with their limits and sources");

    try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every parse error is a usage error.
    return app.exit(e) == 0 ? 0 : kUsageError;
  }

  pipelink::Diagnostics diags;
  for (const std::string& c : connects) {
    size_t eq = c.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == c.size()) {
      std::cerr << "pipelink: error: --connect takes PORT=PIPE, got '" << c << "'\n";
      return kUsageError;
    }
    opt.connect[c.substr(0, eq)] = c.substr(eq + 1);
  }
  bool ok = false;
  if (*targets) {
    std::printf("%-8s %-4s %11s %8s %9s %11s %6s %8s %10s %11s %14s %11s\n", "target", "CC", "smem/block",
                "smem/SM", "barriers", "setmaxnreg", "wgmma", "regs/SM", "regs/block", "regs/thread", "threads/block",
                "threads/SM");
    for (const pipelink::TargetInfo& t : pipelink::targets())
      std::printf("%-8s %-4s %11lld %8lld %9d %11s %6s %8lld %10lld %11d %14d %11d\n", t.arch, t.compute_capability,
                  static_cast<long long>(t.max_smem_block), static_cast<long long>(t.smem_per_sm), t.named_barriers,
                  t.setmaxnreg ? "yes" : "no", t.wgmma ? "yes" : "no", static_cast<long long>(t.regs_per_sm),
                  static_cast<long long>(t.regs_per_block), t.max_regs_per_thread, t.max_threads, t.max_threads_per_sm);
    std::printf("\nGPUs:\n");
    for (const pipelink::TargetInfo& t : pipelink::targets()) std::printf("  %-8s %s\n", t.arch, t.gpus);
    std::printf("\nsources:\n");
    const pipelink::TargetInfo& t0 = pipelink::targets().front();
    std::printf("  shared memory, registers, threads: %s\n  named barriers: %s\n  setmaxnreg: %s\n", t0.limits_source,
                t0.barriers_source, t0.setmaxnreg_source);
    for (const pipelink::TargetInstruction& i : pipelink::target_instructions())
      std::printf("  %s: only %s; %s\n", i.name, i.targets, i.source);
    return 0;
  }
  if (opt.cache_dir.empty())
    if (const char* e = std::getenv("PIPELINK_CACHE_DIR")) opt.cache_dir = e;
  if (*header) {
    std::string h = pipelink::contract_header(header_inputs, diags);
    if (!h.empty()) {
      opt.inputs = header_inputs;
      ok = pipelink::write_header(header_path, h, opt, diags);
    }
  } else if (*compile) {
    ok = pipelink::compile_component(compile_src, opt, diags);
  } else {
    opt.check_only = static_cast<bool>(*check);
    pipelink::LinkResult r = pipelink::link(opt, diags);
    if (r.ok) ok = pipelink::write_outputs(opt, r, diags);
    diags.print(std::cerr);
    if (ok && opt.check_only)
      std::cerr << "pipelink: check passed: " << opt.inputs.size() << (opt.inputs.size() == 1 ? " instance, " : " instances, ")
                << r.threads << " threads, " << r.smem_bytes << " bytes of shared memory\n";
    return ok && !diags.has_errors() ? 0 : 1;
  }
  diags.print(std::cerr);
  return ok && !diags.has_errors() ? 0 : 1;
}
}  // namespace
