// pipelink/pipelink.h — the linker's public API.
//
//   pipelink::LinkOptions opt;  opt.inputs = {"loader/contract.toml", ...};  opt.output = "k.cubin";
//   pipelink::Diagnostics diags;
//   pipelink::LinkResult r = pipelink::link(opt, diags);   // r.ok, r.cubin, r.map, ...
//
// link() never writes files; write_outputs() does, and only for a successful result.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pipelink/diagnostics.h"

namespace pipelink {

struct LinkOptions {
  std::vector<std::string> inputs;  // contract files; a contract listed twice is instantiated twice
  std::string output;               // -o
  std::string map_path;             // --map
  std::string arch = "sm_90a";      // -arch
  std::string kernel_name = "pipelink_kernel";
  std::vector<std::string> library_dirs;  // -L: searched for component objects after the contract's dir
  std::vector<std::string> include_dirs;  // for the generated unit and the control (-I)
  std::vector<std::string> defines;       // -D, passed to the generated unit and the control
  std::map<std::string, std::string> connect;  // --connect PORT=PIPE: ports named PORT join pipe PIPE
  bool check_only = false;          // stop after checks and allocation
  bool control = false;             // build the monolithic control instead of linking objects
  bool emit_ptx = false;            // keep the linked PTX in the result (always kept with save_temps)
  bool save_temps = false;          // keep generated source (and PTX) next to the output
  bool verbose = false;             // pass timings and toolchain logs to stderr
};

struct LinkResult {
  bool ok = false;
  std::string generated_source;   // the generated connection unit
  std::string linked_ptx;         // nvJitLink -lto -ptx output
  std::vector<char> cubin;
  std::string map;                // text map (what --map writes)
  std::string toolchain_log;      // ptxas / nvJitLink info log
  unsigned threads = 0;
  unsigned smem_bytes = 0;
};

// Parses, checks, allocates, generates and (unless check_only) compiles and links.
LinkResult link(const LinkOptions& options, Diagnostics& diags);

// Writes the cubin, the map and (with save_temps) the generated source. Files are written to a
// temporary name and renamed, so a failure leaves no partial output.
bool write_outputs(const LinkOptions& options, const LinkResult& result, Diagnostics& diags);

// Compiles one component source to LTO-IR with NVRTC (what `pipelink compile` does), writing
// options.output. Uses options.arch, include_dirs and defines.
bool compile_component(const std::string& source_path, const LinkOptions& options, Diagnostics& diags);

// Where the linker looks for pipelink/device.cuh when compiling the generated unit.
std::string default_include_dir();

}  // namespace pipelink
