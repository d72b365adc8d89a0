// pipelink — the command-line driver. Thin: parses arguments into LinkOptions and calls the
// library (include/pipelink/pipelink.h).
//
//   pipelink link  <contract.toml>... -o out.cubin [--map out.map] [-arch=sm_90a] [-L dir] [--connect PORT=PIPE]
//                  [--save-temps] [--emit-ptx] [--control] [-I dir] [-D NAME[=V]] [-v]
//   pipelink check <contract.toml>... [--map out.map] [-arch=sm_90a]
//   pipelink compile <component.cu> -o out.ltoir [-arch=sm_90a] [-I dir] [-D NAME[=V]]
//
// A contract listed twice is instantiated twice. Exit status: 0 on success, 1 on any error
// (and then nothing is written).
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "pipelink/pipelink.h"

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
  app.require_subcommand(1);
  pipelink::LinkOptions opt;
  std::string compile_src;

  std::vector<std::string> connects;
  auto common = [&](CLI::App* s) {
    s->add_option("--arch", opt.arch, "target (sm_90a)");
    s->add_option("-I", opt.include_dirs, "include directory for the generated unit / control");
    s->add_option("-D", opt.defines, "preprocessor definition for the generated unit / control");
    s->add_flag("-v,--verbose", opt.verbose, "pass timings and toolchain logs");
  };
  CLI::App* link = app.add_subcommand("link", "check, allocate, generate and link into one cubin");
  link->add_option("inputs", opt.inputs, "component contracts (.toml); repeat one to instantiate it again")->required();
  link->add_option("-o", opt.output, "output cubin")->required();
  link->add_option("--map", opt.map_path, "write the link map");
  link->add_option("-L", opt.library_dirs, "directory searched for component objects");
  link->add_option("--connect", connects, "PORT=PIPE: ports named PORT join pipe PIPE (repeatable)");
  link->add_flag("--save-temps", opt.save_temps, "keep the generated source (<out>.generated.cu) and linked PTX");
  link->add_flag("--emit-ptx", opt.emit_ptx, "write the linked PTX to <out>.ptx");
  link->add_flag("--control", opt.control, "build the monolithic control (one NVRTC program) instead");
  link->add_option("--kernel-name", opt.kernel_name, "name of the generated __global__ entry");
  common(link);

  CLI::App* check = app.add_subcommand("check", "check and allocate only; write nothing but the map");
  check->add_option("inputs", opt.inputs, "component contracts (.toml)")->required();
  check->add_option("--map", opt.map_path, "write the link map");
  check->add_option("--connect", connects, "PORT=PIPE: ports named PORT join pipe PIPE (repeatable)");
  common(check);

  CLI::App* compile = app.add_subcommand("compile", "compile a component source to LTO-IR with NVRTC");
  compile->add_option("source", compile_src, "component .cu")->required();
  compile->add_option("-o", opt.output, "output .ltoir")->required();
  common(compile);

  // The modified-facts experiment's classic linking (bench/modified_facts): not for normal use.
  std::vector<std::string> sets;
  std::string header_out;
  CLI::App* classic = app.add_subcommand("classic-header", "experiment: bake one component's own copy of the constants");
  classic->add_option("inputs", opt.inputs, "component contracts (.toml)")->required();
  classic->add_option("--component", opt.classic_component, "the component whose copy to write")->required();
  classic->add_option("--set", sets, "FACT=VALUE: what this component believes instead (repeatable)");
  classic->add_option("-o", header_out, "output header")->required();
  common(classic);
  std::vector<std::string> plain_objects;
  CLI::App* plain = app.add_subcommand("plain-link", "experiment: bare nvJitLink -lto of objects, no contracts or checks");
  plain->add_option("objects", plain_objects, "LTO-IR / host objects")->required();
  plain->add_option("-o", opt.output, "output cubin")->required();
  common(plain);

  try {
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  pipelink::Diagnostics diags;
  for (const std::string& c : connects) {
    size_t eq = c.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == c.size()) {
      std::cerr << "pipelink: error: --connect takes PORT=PIPE, got '" << c << "'\n";
      return 1;
    }
    opt.connect[c.substr(0, eq)] = c.substr(eq + 1);
  }
  for (const std::string& f : sets) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "pipelink: error: --set takes FACT=VALUE, got '" << f << "'\n";
      return 1;
    }
    const std::string v = f.substr(eq + 1);
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno == ERANGE) {
      std::cerr << "pipelink: error: --set takes FACT=VALUE with a 64-bit integer VALUE, got '" << f << "'\n";
      return 1;
    }
    opt.fact_overrides[f.substr(0, eq)] = n;
  }
  bool ok = false;
  if (*classic) {
    opt.check_only = true;
    std::string h = pipelink::classic_header(opt, diags);
    if (!h.empty()) ok = pipelink::write_header(header_out, h, opt, diags);
  } else if (*plain) {
    ok = pipelink::plain_link(plain_objects, opt, diags);
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
