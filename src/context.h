// context.h — the one object every pass reads and writes (no global state).
//
// Pass order (driver.cpp): parse_contracts → resolve_facts → check → connect → check_link →
// insert_transfers → allocate → generate → compile_link → write_outputs. Each pass fills its own
// section below; later passes only read what earlier ones wrote. All containers iterate in a
// deterministic order (input order, or std::map order by name).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pipelink/contract.h"
#include "pipelink/diagnostics.h"
#include "pipelink/limits.h"
#include "pipelink/pipelink.h"

namespace pipelink {

// Limits of the target the checks compare against: the driver fills them from the target table
// (pipelink/targets.h, src/targets.cpp) for -arch; the defaults are sm_90a's.
struct Target {
  std::string arch = "sm_90a";
  int64_t max_smem = 232448;        // dynamic shared memory per block after opt-in
  int64_t named_barriers = 16;      // ids 0..15, id 0 is __syncthreads
  int64_t max_threads = 1024;
  int64_t regs_per_sm = 65536;
  int64_t min_regs = 24, max_regs = 256, regs_step = 8;  // setmaxnreg's operand range
  bool setmaxnreg = true;           // sm_90a, sm_100a, sm_103a, sm_120a; not sm_90
  bool wgmma = true;                // sm_90a only
  // --blocks-per-sm: how many of the link's blocks must fit on one SM; max_smem and regs_per_sm
  // above are then already the share of one block (driver.cpp), and occupancy() names it.
  int blocks_per_sm = 1;
  int64_t smem_per_sm = 233472, regs_per_sm_total = 65536, max_threads_per_sm = 2048;
  static constexpr int64_t kSmemReservedPerBlock = 1024;  // CUDA C++ Programming Guide, shared memory: 1 KB per block
  // "" for one block per SM, else " at N blocks per SM (--blocks-per-sm N)": appended to the limits' diagnostics.
  std::string occupancy() const {
    return blocks_per_sm > 1 ? " at " + std::to_string(blocks_per_sm) + " blocks per SM (--blocks-per-sm " + std::to_string(blocks_per_sm) + ")"
                             : std::string();
  }
};

// ---- resolve_facts ----
struct ResolvedFact {
  std::string name;
  int64_t value = 0;
  FactType type = FactType::U32;
  const Contract* provider = nullptr;
  SourceLoc provided_at;
  std::vector<std::string> users;   // instance-independent: component names, in input order
};

// ---- instances (parse) and their allocation (allocate) ----
// Offsets, sizes and counts are int64 throughout allocation; generate writes them only after the
// link has no errors, when check and allocate have bounded every one of them.
struct PortBinding {
  int pipe = -1;          // index into LinkContext::pipes
  bool transfer_side = false;
  unsigned part = 0, parts = 1;
  int64_t tx_bytes = 0;
};

struct Instance {
  const Contract* contract = nullptr;
  std::string name;        // component#k
  unsigned index = 0;      // among instances of the same contract
  unsigned count = 1;
  unsigned warp_base = 0, warps = 0;
  int registers = 0;       // 0 = no budget declared
  std::vector<int64_t> smem;      // offsets, per [[smem]]
  std::vector<unsigned> bar;      // ids, per [[named_barrier]]
  std::vector<int64_t> mbar;      // offsets, per [[mbarrier]]
  std::vector<PortBinding> ports; // per [[port]]
  std::vector<unsigned> params;   // slot per [[param]]
};

struct PipeEnd { int instance; int port; };

struct PipeTensor {
  std::string name, dtype;
  int64_t rows = 0, cols = 0, elem_bytes = 0;
  std::string layout, swizzle;
  int64_t offset = 0;      // within a stage
  std::string tile_coords; // the producer's tile_coords as written ("[\"n\"]"); empty if undeclared
  int64_t bytes() const { return rows * cols * elem_bytes; }
};

// A tensormap param's copy: rows x cols elements of dtype, in the shared-memory swizzle.
struct TensorMapBox {
  int64_t rows = 0, cols = 0;
  std::string dtype, swizzle;
};

struct Pipe {
  std::string name;
  std::vector<PipeEnd> producers, consumers;
  int64_t stages = 0;
  std::vector<PipeTensor> tensors;        // producer's view
  std::vector<PipeTensor> consumer_view;  // consumer's view (differs only in layout/swizzle)
  bool tx = false;                        // producers complete with transaction bytes
  int64_t stage_bytes = 0;
  int64_t buffer = 0, full = 0, empty = 0;    // smem offsets
  int64_t full_count = 0, empty_count = 0;    // mbarrier arrival counts
  // A transfer: producers fill this pipe, a generated role copies each stage into `to` (which
  // has the consumer view), consumers read `to`. -1 when none.
  int transfer_to = -1;
  int transfer_from = -1;
  unsigned transfer_warp = 0;
  // Cluster multicast (check_link: check_cluster): the stage is filled jointly by `multicast` blocks
  // of the cluster, each copying its share of multicast_tensors into every block of its group;
  // the empty barrier then counts the consumers of every block of the group. 1 = one block.
  int64_t multicast = 1;
  std::vector<std::string> multicast_tensors;
  int64_t multicast_mask = 0;   // the group of rank 0 ((1 << multicast) - 1); rank r's group: << (r / multicast * multicast)
};

struct SmemBlock {
  std::string name, owner;       // owner: instance name, "pipe <name>" or "pipelink"
  int instance = -1;             // index into LinkContext::instances for a [[smem]] region; -1 otherwise
  int64_t bytes = 0, align = 16;
  std::vector<std::string> live; // empty = always; phase names of its own instance
  int64_t offset = 0;            // int64 while placing: narrowed only once the total fits
  SourceLoc loc;                 // the [[smem]] size, or a ring's producer port
};

struct BarrierSlot { unsigned id; std::string owner, name; int64_t threads; SourceLoc loc; };  // loc: [[named_barrier]]
struct MbarSlot { int64_t offset; int64_t count; int64_t arrivals; std::string owner, name; };

struct WarpGroup {
  unsigned index = 0;
  std::vector<int> instances;    // instance indices with warps in it
  int registers = 0;             // setmaxnreg target; 0 = leave as is
  bool has_transfer = false;
};

struct ParamSlot {
  std::string name;
  ParamType type;
  unsigned slot = 0;             // index into Args::tmap or Args::word
  std::vector<std::string> users;
  SourceLoc loc;
};

// What generate hands compile_link: the connection unit in pieces. text() is the whole unit.
struct GeneratedUnit {
  // What the components link against: the device header, facts, the checked-build names, the
  // launch manifest (as pl_manifest), the entries' declarations, the per-instance slot tables,
  // the tile sequence and the generated transfers. A probe kernel may follow it in place of entry.
  std::string prelude;
  std::string entry;     // the __global__ kernel: mbarrier initialisation, warp-role dispatch
  std::string manifest;  // the launch manifest (render_manifest), as the prelude embeds it
  std::string text() const { return prelude + entry; }
};

struct LinkContext {
  const LinkOptions& opt;
  Diagnostics& diags;
  Target target;

  // parse_contracts
  std::vector<std::unique_ptr<Contract>> contracts;  // unique contracts, input order
  std::vector<Instance> instances;                   // one per input occurrence

  // check: false when some quantity is outside the range allocation can hold (a warp count,
  // stage count, tensor or region size, mbarrier count...); allocate then does not run.
  bool sizes_ok = true;

  // resolve_facts
  std::map<std::string, ResolvedFact> facts;

  // connect (the graph; insert_transfers adds transfer pipes; allocate fills in offsets and counts)
  std::vector<Pipe> pipes;

  // allocate
  std::vector<SmemBlock> smem;
  int64_t smem_bytes = 0;
  std::vector<BarrierSlot> barriers;
  std::vector<MbarSlot> mbarriers;
  std::vector<WarpGroup> warpgroups;
  unsigned total_warps = 0;
  int entry_registers = 0;     // register cap at entry (launch bounds)
  std::vector<ParamSlot> params;
  unsigned tmap_slots = 0, word_slots = 0;
  const TilesDecl* tiles = nullptr;   // the one tile sequence (order resolved: never "any")
  TilesDecl tiles_resolved;           // what `tiles` points to when the order is the link's choice
  bool tile_order_from_link = false;  // --tile-order chose it
  // check_schedule: k_walk when a component walks k ranges (its [tiles] k_extent: pl::unit_at);
  // stream_k under --tile-schedule stream-k. The k extent (a u32 param) and slice, the one
  // contract that sums a split tile's partials, its bytes per instance and instances per block.
  bool k_walk = false, stream_k = false;
  int sk_waves = 1;  // stream-k:W: full waves split along k besides the partial last one (0 or 1)
  bool split_k = false;  // split-k: the partial last wave's tiles each cut into equal k pieces (stream_k is set too)
  std::string k_extent;
  int64_t k_tile = 0;
  const Contract* partials_owner = nullptr;
  int64_t partial_bytes = 0, partial_instances = 0;
  // allocate: the workspace (stream_k only): bytes per block (the partials rounded up to 128, then
  // one 128-byte line of flags, one u32 per instance) and the Args word holding its address.
  int64_t workspace_stride = 0;
  unsigned workspace_slot = 0;
  const Instance* tiles_owner = nullptr;
  // check_link (check_cluster): the thread-block cluster every component agrees on; size 1 = none.
  const ClusterDecl* cluster = nullptr;
  const Contract* cluster_owner = nullptr;
  int64_t cluster_size() const { return cluster ? cluster->size() : 1; }
  // check_cluster: the tile coordinate along which the blocks of a cluster take adjacent tiles,
  // one per rank (generate's scheduler); they share the other one. 'n' for row_major, 'm' for
  // col_major, grouped and no [tiles], unless a multicast tensor's tile_coords decide it
  // (cluster_axis_why says which one; empty when nothing did).
  char cluster_axis = 'm';
  std::string cluster_axis_why;
  // check_link (check_tensormaps): what one TMA copy of a tensormap param moves, where a contract
  // names the tensor ([[param]] tensor / box), by param name: the manifest's `box` words.
  std::map<std::string, TensorMapBox> tmap_boxes;
  // and, by (contract name, param name), what conform checks a PL_COPIES record against: the tensor
  // the param names, its box's rows, and the rows one instance's copies into that tensor must add up
  // to per stage (lo == hi: a tx producer's share; otherwise several arrive producers or consumers
  // whose split is their code's, from an equal share up to the whole tensor).
  struct TensorMapCopies {
    std::string tensor;  // "<port>.<tensor>"
    int64_t box_rows = 0, lo_rows = 0, hi_rows = 0;
  };
  std::map<std::pair<std::string, std::string>, TensorMapCopies> tmap_copies;

  // conform: one line per component, what was read from its object (appended to the map); the
  // probe link's kernel of each component (its PTX is result.probe_ptx)
  std::vector<std::string> conformance;
  std::vector<std::pair<std::string, const Contract*>> probe_kernels;
  // conform: one line per component when register budgets are in play: its code alone, assembled
  // by ptxas within its warpgroup's budget (appended to the map)
  std::vector<std::string> role_registers;

  // generate
  GeneratedUnit unit;

  // generate (generated_source = unit.text(), threads, smem) / compile_link / write
  LinkResult result;

  LinkContext(const LinkOptions& o, Diagnostics& d) : opt(o), diags(d) {}
  // Looks up a resolved fact's value (for expression evaluation).
  std::optional<int64_t> fact_value(const std::string& name) const {
    auto it = facts.find(name);
    if (it == facts.end()) return std::nullopt;
    return it->second.value;
  }
};

// The passes, one per file.
void parse_contracts(LinkContext& ctx);
void resolve_facts(LinkContext& ctx);
void check(LinkContext& ctx);             // each contract alone and against the target
void connect(LinkContext& ctx);           // connect.cpp: ctx.pipes, and the ends of each pipe agree
void check_link(LinkContext& ctx);        // check.cpp: the link as a whole (params, tiles, per_tile, asserts)
void insert_transfers(LinkContext& ctx);  // connect.cpp: a transfer pipe where consumers read another layout
void allocate(LinkContext& ctx);
void generate(LinkContext& ctx);
void compile_link(LinkContext& ctx);
std::string render_map(const LinkContext& ctx);
// ptxas's "wgmma.mma_async instructions are serialized due to <reason>" notes in a toolchain log
// ("C7515: <reason>" each, in log order; none when ptxas kept the wgmma pipeline), and how many
// warpgroup.wait (C7517) and warpgroup.arrive (C7519) ptxas injected.
struct WgmmaReport {
  std::vector<std::string> serialized;
  int injected_waits = 0, injected_arrives = 0;
};
WgmmaReport wgmma_report(const std::string& log);
// The map as a picture: a standalone SVG (map_svg.cpp), what --map-svg writes.
std::string render_map_svg(const LinkContext& ctx);
// The launch manifest (see manifest_hash in pipelink.h): what a host needs to launch the kernel.
std::string render_manifest(const LinkContext& ctx);
bool checked_build(const LinkOptions& opt);  // -D PL_CHECKED given

// Shared helpers.
// Generated symbols derive from indices, never from contract strings: pl_slots_<instance index>.
std::string slots_name(size_t instance_index);
bool is_identifier(const std::string& s);       // [A-Za-z_][A-Za-z0-9_]*
// A C++ keyword, CUDA built-in or reserved name (__x, _X, pl_x, pl): cannot name a C++ symbol.
bool reserved_identifier(const std::string& s);
// Contract text made safe for a // or /* */ comment and for one line of the map: control
// characters become \n, \xHH escapes and "*/" becomes "* /".
std::string printable(const std::string& s);
// One output file; write_files() writes a set of them all or nothing.
struct OutputFile { std::string path; const char* data; size_t size; };
bool write_files(const std::vector<OutputFile>& files, Diagnostics& diags);
// Whether two paths name one file (canonical paths, or one existing file under two names).
bool same_file(const std::string& a, const std::string& b);
// Reports (rule "output") any output path of `opt` that names another output or one of `inputs`
// ((what, path) pairs); returns false if it did.
bool check_output_paths(const LinkOptions& opt, const std::vector<std::pair<std::string, std::string>>& inputs,
                        Diagnostics& diags);
int64_t dtype_bytes(const std::string& dtype);  // 0 if unknown
// check.cpp, shared with connect.cpp.
bool stages_ok(const PortDecl& p);  // 1..kMaxStages
// A tensor's bytes, without overflow; nullopt when rows or cols is not positive or the product
// exceeds `max`.
std::optional<int64_t> tensor_bytes(int64_t rows, int64_t cols, int64_t elem, int64_t max);
// A tensor's TMA / wgmma swizzle, "none", "32B", "64B" or "128B", as its span in bytes (0 for none):
// the swizzle permutes 16-byte chunks within each span-byte line, in atoms of 8 lines.
inline int swizzle_span(const std::string& s) { return s == "128B" ? 128 : s == "64B" ? 64 : s == "32B" ? 32 : 0; }
// The shared-memory alignment a tensor needs: one 8-line swizzle atom (1024 / 512 / 256 bytes), else 128.
inline int64_t swizzle_align(const std::string& s) { return swizzle_span(s) ? 8 * swizzle_span(s) : 128; }
// Reports (port-mismatch) a swizzled tensor whose contiguous extent is not one swizzle line.
void check_swizzle(LinkContext& ctx, const Contract& c, const PortDecl& p, const TensorDecl& t, int64_t rows, int64_t cols);
int64_t arrivals_per_instance(Arrive a, unsigned warps);

}  // namespace pipelink
