// pipelink/pipelink.h — the linker's public API.
//
//   pipelink::LinkOptions opt;  opt.inputs = {"loader/contract.toml", ...};  opt.output = "k.cubin";
//   pipelink::Diagnostics diags;
//   pipelink::LinkResult r = pipelink::link(opt, diags);   // r.ok, r.cubin, r.map, ...
//
// link() never writes files; write_outputs() does, and only for a successful result.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pipelink/diagnostics.h"

namespace pipelink {

struct LinkOptions {
  std::vector<std::string> inputs;  // contract files; a contract listed twice is instantiated twice
  std::string output;               // -o
  std::string map_path;             // --map
  std::string map_svg_path;         // --map-svg: the map as a picture (SVG)
  std::string arch = "sm_90a";      // -arch
  std::string kernel_name = "pipelink_kernel";
  std::vector<std::string> library_dirs;  // -L: searched for component objects after the contract's dir
  std::vector<std::string> include_dirs;  // for the generated unit and the control (-I)
  std::vector<std::string> defines;       // -D, passed to the generated unit and the control
  std::map<std::string, std::string> connect;  // --connect PORT=PIPE: ports named PORT join pipe PIPE
  // FACT=VALUE: replaces a provided fact's value (the modified-facts experiment's classic-header,
  // bench/modified_facts/classic, bakes a component's belief with it; the CLI never sets it).
  std::map<std::string, int64_t> fact_overrides;
  bool check_only = false;          // stop after checks and allocation
  bool control = false;             // build the monolithic control instead of linking objects
  // --pdl: programmatic dependent launch. The generated entry runs `griddepcontrol.wait` after its
  // prologue (mbarrier init, fences, block/cluster sync, setmaxnreg) and before any component role,
  // then `griddepcontrol.launch_dependents`; the manifest and the map say `pdl`, so the runtime
  // launches with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION. The control gets the same.
  bool pdl = false;
  // --pdl-early-trigger (with --pdl): each warpgroup's branch lets the next grid launch
  // (griddepcontrol.launch_dependents) before its wait instead of after it, so a kernel after this
  // one may become resident, and start what needs no earlier output (pdl_wait = "own"), while this
  // one still waits for its predecessor. Still safe: the next grid's wait returns only once this
  // grid has completed, which it does only after its own wait returned.
  bool pdl_early_trigger = false;
  // --tile-order ORDER: the order of the link's one tile sequence, row_major, col_major or
  // grouped:G. Components whose [tiles] say order = "any" walk whatever the link chooses; one that
  // names an order refuses any other ([tiles] rule). "" = the order the contracts name (row_major
  // when every one says "any").
  std::string tile_order;
  // --tile-schedule SCHEDULE: how the tile sequence's work is shared among the blocks.
  // "data-parallel" (the default, also ""): block b takes tiles b, b + grid, ... whole.
  // "split-k": where the tiles are not a multiple of the grid, the R tiles of the partial last
  // wave come first, each cut into grid / R equal pieces of k slices that run side by side.
  // "stream-k[:W]": the last partial wave plus W = 1 (default) or 0 full waves are cut into equal
  // contiguous shares of k slices, one per block. Either way the rest stays data-parallel, and a
  // tile split across blocks is summed by the block holding its first k slice from the others'
  // partials in a workspace the runtime allocates. Needs components whose [tiles] declare
  // k_extent (they walk pl::unit_at) and one that declares partial_bytes (docs/contracts.md).
  std::string tile_schedule;
  // --blocks-per-sm N: the link is allocated so that N of its blocks fit on one SM at once (the
  // register cap at entry, the register budgets' pool and the shared memory a block may use are
  // the SM's divided by N; N blocks' threads within the SM's). With programmatic dependent launch
  // this lets the next kernel's blocks become resident beside this one's and start their
  // independent work (pdl_wait = "own") before this kernel ends. 1: the whole SM for one block.
  int blocks_per_sm = 1;
  // --min-registers: the block launches with the fewest registers per thread that its warpgroups'
  // register budgets fit in (the budgets' mean over the warpgroups, rounded up to setmaxnreg's
  // step) instead of the SM's whole register file divided among its threads; setmaxnreg then moves
  // registers between its warpgroups as before. The rest of the SM's registers stay free for other
  // kernels' blocks, e.g. the small kernel between two linked GEMMs under programmatic dependent
  // launch. Every warpgroup must have a budget ([warps] registers).
  bool min_registers = false;
  // --fatal-warnings (lld's flag): once every pass ran, every warning is reported as an error, so a
  // link that would only have warned (a spilling kernel, serialized wgmma, a PTX component) fails
  // and writes nothing. link() and check only (compile_component reports no warnings of its own).
  bool fatal_warnings = false;
  bool emit_ptx = false;            // keep the linked PTX in the result (always kept with save_temps)
  bool save_temps = false;          // keep generated source (and PTX) next to the output
  bool verbose = false;             // pass timings and toolchain logs to stderr
  std::string cache_dir;            // --cache-dir: NVRTC output reused across links ("" = no cache)
};

struct LinkResult {
  bool ok = false;
  std::string generated_source;   // the generated connection unit
  std::string linked_ptx;         // nvJitLink -lto -ptx output
  std::string probe_ptx;          // the conform pass's probe link (slots not folded), for inspection
  std::vector<char> cubin;
  std::string map;                // text map (what --map writes)
  std::string svg;                // the map as an SVG picture (what --map-svg writes)
  std::string toolchain_log;      // ptxas / nvJitLink info log
  unsigned threads = 0;
  unsigned smem_bytes = 0;
};

// Parses, checks, allocates, generates and (unless check_only) compiles and links.
LinkResult link(const LinkOptions& options, Diagnostics& diags);

// Writes the cubin, the map, the SVG map and (with save_temps) the generated source. Files are written to a
// temporary name and renamed, so a failure leaves no partial output.
bool write_outputs(const LinkOptions& options, const LinkResult& result, Diagnostics& diags);

// Compiles one component source to LTO-IR with NVRTC (what `pipelink compile` does), writing
// options.output. Uses options.arch, include_dirs and defines.
bool compile_component(const std::string& source_path, const LinkOptions& options, Diagnostics& diags);

// Writes a header (`pipelink header`) to `path`, refusing a path that is one of options.inputs.
bool write_header(const std::string& path, const std::string& text, const LinkOptions& options, Diagnostics& diags);

// The contract header (`pipelink header`): namespace pl_contract::<entry> with named, typed
// accessors for the contract's params, ports, tensors, smem regions, named barriers and mbarrier
// groups, port types whose release(ctx) / commit(ctx) arrive as each port's `arrive` mode says, and
// the records its constants imply (see docs/components.md). Several contracts of one entry (the
// variants of one source) give one header of their common part: tables must agree in names and
// order; a value that differs between them gets no constant. Deterministic. Reports errors as a
// link does (contract syntax) or with rule "header", and then returns "".
std::string contract_header(const std::vector<std::string>& contracts, Diagnostics& diags);

// Where the linker looks for pipelink/device.cuh when compiling the generated unit.
std::string default_include_dir();

// The launch manifest binds a cubin to its map. The linker embeds the manifest text (kernel,
// threads, shared memory, parameters and their slots, facts, checked or not) in the cubin as the
// device string `pl_manifest` (a PDL link adds the line `pdl 1`), and writes its hash on the map's `manifest` line;
// pipelink::Module refuses a cubin whose manifest does not hash to the map's line.
// FNV-1a, 64 bits.
inline unsigned long long manifest_hash(const std::string& text) {
  unsigned long long h = 1469598103934665603ull;
  for (unsigned char ch : text) { h ^= ch; h *= 1099511628211ull; }
  return h;
}

}  // namespace pipelink
