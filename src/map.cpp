// map — renders the link map: what was allocated to whom. Plain text, fixed column order,
// deterministic. The "launch" and "param" lines are also what pipelink::Module reads back to
// launch the kernel, so their format is stable: `launch <kernel> threads <n> smem <bytes> [pdl]` and
// `param <name> <type> <slot>` (the manifest's tensormap lines may end `box <rows> <cols> <dtype>
// <swizzle>`; the map writes the same as `box <dtype>[<rows>x<cols>] swizzle <swizzle>`).
// Contract text goes through printable(), so no name, owner or path can start a line of its own.
#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "context.h"

namespace pipelink {

namespace {
std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + printable(v[i]);
  return s;
}
std::string live_str(const std::vector<std::string>& l) { return l.empty() ? "always" : join(l, "+"); }
}  // namespace

bool checked_build(const LinkOptions& opt) {
  for (const std::string& d : opt.defines)
    if (d == "PL_CHECKED" || d.rfind("PL_CHECKED=", 0) == 0) return true;
  return false;
}

std::string render_manifest(const LinkContext& ctx) {
  std::ostringstream o;
  o << "pipelink-manifest 1\n"
    << "launch " << ctx.opt.kernel_name << " threads " << ctx.total_warps * 32 << " smem " << ctx.smem_bytes << "\n"
    << "target " << ctx.target.arch << "\n"
    << "checked " << (checked_build(ctx.opt) ? 1 : 0) << "\n";
  // Only a PDL link has the line (a link without it keeps its manifest, and hash, as before).
  if (ctx.opt.pdl) o << "pdl 1\n";
  // Only a link for several blocks per SM has the line (the runtime checks that the driver fits them).
  if (ctx.target.blocks_per_sm > 1) o << "blocks_per_sm " << ctx.target.blocks_per_sm << "\n";
  // Only a cluster link has the line (a one-block link's manifest, and hash, are as before).
  if (ctx.cluster_size() > 1)
    o << "cluster " << ctx.cluster->dims[0] << " " << ctx.cluster->dims[1] << " " << ctx.cluster->dims[2]
      << (ctx.cluster->size() > 8 ? " nonportable" : "") << "\n";
  // A tensormap whose contracts name the tensor its copies move: `box <rows> <cols> <dtype> <swizzle>`
  // after the slot (Module::set_tensor builds the map from it); other lines are as before.
  for (const ParamSlot& p : ctx.params) {
    o << "param " << p.name << " " << param_type_name(p.type) << " " << p.slot;
    if (auto b = ctx.tmap_boxes.find(p.name); b != ctx.tmap_boxes.end())
      o << " box " << b->second.rows << " " << b->second.cols << " " << b->second.dtype << " " << b->second.swizzle;
    o << "\n";
  }
  // Only a stream-k link has the line: bytes per block and the Args word the runtime fills.
  if (ctx.stream_k && ctx.workspace_stride > 0) o << "workspace " << ctx.workspace_stride << " " << ctx.workspace_slot << "\n";
  for (const auto& [name, f] : ctx.facts) o << "fact " << name << " " << f.value << "\n";
  // The tile sequence (tile size and the extent params), so the runtime can count the tiles of a
  // launch and size a persistent grid from the contracts (pipelink::Module::persistent_grid).
  if (ctx.tiles)
    o << "tiles " << ctx.tiles->tile_m.value << " " << ctx.tiles->tile_n.value << " " << ctx.tiles->extent_m << " "
      << ctx.tiles->extent_n << "\n";
  return o.str();
}

std::string render_map(const LinkContext& ctx) {
  std::ostringstream o;
  const unsigned threads = ctx.total_warps * 32;
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", manifest_hash(render_manifest(ctx)));
  o << "# PipeLink link map\n"
    << "launch " << ctx.opt.kernel_name << " threads " << threads << " smem " << ctx.smem_bytes << (ctx.opt.pdl ? " pdl" : "")
    << (ctx.opt.pdl && ctx.opt.pdl_early_trigger ? " early-trigger" : "")
    << "\n"
    << "manifest " << hash << "  (the cubin's pl_manifest; pipelink::Module refuses a cubin from another link)\n"
    << "target " << ctx.target.arch << "  warps " << ctx.total_warps << "  warpgroups " << ctx.warpgroups.size()
    << "  register-cap " << ctx.entry_registers;
  if (ctx.opt.min_registers)
    o << "  (--min-registers: " << ctx.total_warps * 32 << " threads x " << ctx.entry_registers << " = "
      << int64_t(ctx.total_warps) * 32 * ctx.entry_registers << " of the SM's " << ctx.target.regs_per_sm_total << " registers)";
  o << "\n";
  if (ctx.target.blocks_per_sm > 1)
    o << "blocks-per-sm " << ctx.target.blocks_per_sm << "  (--blocks-per-sm: each block may use " << ctx.target.max_smem
      << " of the SM's " << ctx.target.smem_per_sm << " bytes of shared memory and " << ctx.target.regs_per_sm << " of its "
      << ctx.target.regs_per_sm_total << " registers)\n";
  if (ctx.cluster_size() > 1)
    o << "cluster " << ctx.cluster->dims[0] << " " << ctx.cluster->dims[1] << " " << ctx.cluster->dims[2] << "  (launch with the cluster "
      << "dimension; the grid is a multiple of " << ctx.cluster_size() << "; declared by " << printable(ctx.cluster_owner->name) << " at "
      << printable(ctx.cluster->loc.str()) << ")\n";

  o << "\n== inputs\n";
  for (const Instance& in : ctx.instances)
    o << "  " << std::left << std::setw(20) << printable(in.name) << " owner " << std::setw(16) << printable(in.contract->owner)
      << " entry " << std::setw(24) << in.contract->entry << " " << printable(in.contract->path)
      << (in.contract->pdl_own_wait ? "  (pdl_wait own)" : "") << "\n";

  o << "\n== facts  (name = value type: provider; users)\n";
  for (const auto& [name, f] : ctx.facts)
    o << "  " << std::setw(16) << name << " = " << std::setw(8) << f.value << " " << fact_type_name(f.type) << ": "
      << printable(f.provider->name) << " (" << printable(f.provided_at.str()) << "); used by "
      << (f.users.empty() ? std::string("-") : join(f.users)) << "\n";

  o << "\n== shared memory  (" << ctx.smem_bytes << " bytes of " << ctx.target.max_smem << ")\n"
    << "  " << std::right << std::setw(8) << "offset" << " " << std::setw(8) << "bytes" << " " << std::setw(6) << "align" << "  "
    << std::left << std::setw(18) << "live" << " owner/region\n";
  std::vector<const SmemBlock*> by_off;
  for (const SmemBlock& b : ctx.smem) by_off.push_back(&b);
  std::stable_sort(by_off.begin(), by_off.end(), [](const SmemBlock* a, const SmemBlock* b) { return a->offset < b->offset; });
  for (const SmemBlock* b : by_off)
    o << "  " << std::right << std::setw(8) << b->offset << " " << std::setw(8) << b->bytes << " " << std::setw(6) << b->align
      << "  " << std::left << std::setw(18) << live_str(b->live) << " " << printable(b->owner) << " " << printable(b->name) << "\n";

  o << "\n== pipes\n";
  for (const Pipe& p : ctx.pipes) {
    std::vector<std::string> prod, cons;
    for (const PipeEnd& e : p.producers) {
      // Each producer's share of the full barrier: its arrivals, and the bytes it announces.
      const Instance& in = ctx.instances[e.instance];
      const PortDecl& pd = in.contract->ports[e.port];
      std::string share = std::to_string(arrivals_per_instance(pd.arrive, in.warps)) + " arrival";
      if (arrivals_per_instance(pd.arrive, in.warps) != 1) share += "s";
      if (pd.completion == Completion::Tx) share += " + " + std::to_string(in.ports[e.port].tx_bytes) + " tx bytes";
      if (!pd.writes.empty()) share += ", writes " + join(pd.writes, "+");
      prod.push_back(in.name + " (" + share + ")");
    }
    if (p.transfer_from >= 0) prod.push_back("transfer(warp " + std::to_string(ctx.pipes[p.transfer_from].transfer_warp) + ")");
    for (const PipeEnd& e : p.consumers) cons.push_back(ctx.instances[e.instance].name);
    if (p.transfer_to >= 0) cons.push_back("transfer(warp " + std::to_string(p.transfer_warp) + ")");
    o << "  " << printable(p.name) << ": " << p.stages << " stages x " << p.stage_bytes << " bytes at " << p.buffer << "; full@" << p.full
      << " arrivals " << p.full_count << (p.tx ? " + tx" : "") << ", empty@" << p.empty << " arrivals " << p.empty_count << "\n"
      << "    producers: " << join(prod) << "\n    consumers: " << join(cons) << "\n";
    if (p.multicast > 1) {
      // What the full barrier of each block receives, and from whom; who arrives on its empty one.
      // written: what the block's tx producers announce (allocate's tx_bytes); a tensor an arrive
      // producer fills (connect made every producer of a mixed pipe declare its writes) is no tx byte.
      int64_t shared = 0, written = 0;
      std::vector<std::string> by_arrive;
      for (const PipeEnd& e : p.producers) {
        written += ctx.instances[e.instance].ports[e.port].tx_bytes;
        const PortDecl& q = ctx.instances[e.instance].contract->ports[e.port];
        if (q.completion != Completion::Tx)
          for (const std::string& w : q.writes)
            if (std::find(by_arrive.begin(), by_arrive.end(), w) == by_arrive.end()) by_arrive.push_back(w);
      }
      for (const PipeTensor& t : p.tensors)
        for (const std::string& m : p.multicast_tensors) shared += t.name == m ? t.bytes() : 0;
      char mask[16];
      std::snprintf(mask, sizeof mask, "0x%llx", static_cast<unsigned long long>(p.multicast_mask));
      o << "    multicast across " << p.multicast << " blocks of the cluster, mask " << mask << " << (rank / " << p.multicast
        << " * " << p.multicast << "): tensors " << join(p.multicast_tensors, "+") << " (" << shared
        << " bytes per stage), each block copies " << shared / p.multicast << " bytes into every block of its group\n"
        << "    full barrier of each block: its producers' tx bytes = " << shared / p.multicast << " local + "
        << shared - shared / p.multicast << " from " << p.multicast - 1 << (p.multicast == 2 ? " peer" : " peers")
        << " (multicast) + " << written - shared << " unshared"
        << (by_arrive.empty() ? std::string() : " (" + join(by_arrive, "+") + ": filled by arrive, no tx bytes)")
        << "; empty barrier: " << p.empty_count / p.multicast
        << " arrivals from each of the " << p.multicast << " blocks (remote arrives)\n";
    }
    for (const PipeTensor& t : p.tensors) {
      o << "    tensor " << printable(t.name) << " " << t.dtype << "[" << t.rows << "x" << t.cols << "] " << t.layout << "/" << t.swizzle
        << " at +" << t.offset << " (" << t.bytes() << " bytes)"
        << (t.tile_coords.empty() ? std::string() : ", tile_coords " + t.tile_coords) << "\n";
      // A component's threads (not TMA, not a generated transfer) fill this stage, and its
      // unswizzled lines are a whole number of 128-byte bank cycles apart: a store that covers one
      // column slice of 8 lines (a wgmma accumulator fragment does) puts all 8 in the same banks.
      // A note, not a warning: the linker sees the layout, not the access pattern
      // (docs/components.md, section 5.3a).
      const bool row = t.layout == "row";
      const int64_t lines = row ? t.rows : t.cols, pitch = (row ? t.cols : t.rows) * t.elem_bytes;
      if (!p.tx && p.transfer_from < 0 && t.swizzle == "none" && lines >= 8 && pitch >= 128 && pitch % 128 == 0)
        o << "      note: filled by thread stores; its " << lines << " lines are " << pitch
          << " bytes apart, a multiple of the 128-byte bank cycle: a store covering one column slice of 8 lines is an 8-way "
             "bank conflict (128B-swizzled panels avoid it: docs/components.md 5.3a)\n";
    }
  }

  o << "\n== named barriers  (id 0 = __syncthreads)\n";
  for (const BarrierSlot& b : ctx.barriers)
    o << "  id " << std::right << std::setw(2) << b.id << "  threads " << std::setw(4) << b.threads << "  " << printable(b.owner) << " "
      << printable(b.name) << "\n";

  o << "\n== mbarriers\n";
  for (const MbarSlot& m : ctx.mbarriers)
    o << "  @" << std::left << std::setw(7) << m.offset << " x" << std::setw(3) << m.count << " arrivals " << std::setw(5)
      << m.arrivals << " " << printable(m.owner) << " " << printable(m.name) << "\n";

  o << "\n== warps and registers\n";
  for (const WarpGroup& wg : ctx.warpgroups) {
    o << "  warpgroup " << wg.index << " (warps " << wg.index * 4 << "-" << wg.index * 4 + 3 << "): registers "
      << (wg.registers ? std::to_string(wg.registers) : std::to_string(ctx.entry_registers) + " (entry cap)");
    if (wg.registers && wg.registers != ctx.entry_registers)
      o << " (setmaxnreg." << (wg.registers < ctx.entry_registers ? "dec" : "inc") << ")";
    o << "\n";
    for (int i : wg.instances) {
      const Instance& in = ctx.instances[i];
      o << "    warps " << in.warp_base << "-" << in.warp_base + in.warps - 1 << "  " << printable(in.name) << "\n";
    }
    for (const Pipe& p : ctx.pipes)
      if (p.transfer_to >= 0 && p.transfer_warp / 4 == wg.index)
        o << "    warp " << p.transfer_warp << "  transfer for pipe " << printable(p.name) << "\n";
  }

  o << "\n== params  (pl::Args slots)\n";
  for (const ParamSlot& p : ctx.params) {
    o << "param " << std::left << std::setw(12) << p.name << " " << std::setw(9) << param_type_name(p.type) << " " << p.slot;
    if (auto b = ctx.tmap_boxes.find(p.name); b != ctx.tmap_boxes.end())
      o << "  box " << b->second.dtype << "[" << b->second.rows << "x" << b->second.cols << "] swizzle " << b->second.swizzle;
    o << "    # used by " << join(p.users) << "\n";
  }

  o << "\n== tile sequence\n";
  if (ctx.tiles)
    o << "  " << ctx.tiles->order << (ctx.tile_order_from_link ? " (--tile-order)" : "") << ", tile " << ctx.tiles->tile_m.value << "x" << ctx.tiles->tile_n.value << " over ["
      << ctx.tiles->extent_m << ", " << ctx.tiles->extent_n << "], " << [&] {
           std::string dev;
           for (const ParamSlot& p : ctx.params)
             if (p.type == ParamType::Ptr && (p.name == ctx.tiles->extent_m || p.name == ctx.tiles->extent_n))
               dev += (dev.empty() ? "" : ", ") + p.name;
           return dev.empty() ? std::string() : "extent " + dev + " read from device memory (a u32), ";
         }()
      << (ctx.tiles->order == "grouped" ? "bands of " + std::to_string(ctx.tiles->group) + " tiles along m (m fastest within a band), "
                                        : std::string())
      << (ctx.cluster_size() > 1 ? "persistent by cluster (cluster c takes groups c, c+clusters, ...; a group is " +
                                       std::to_string(ctx.cluster_size()) + " adjacent tiles along " + ctx.cluster_axis +
                                       ", one per rank" +
                                       (ctx.cluster_axis_why.empty() ? std::string()
                                                                     : std::string(", sharing ") + (ctx.cluster_axis == 'm' ? "n" : "m") +
                                                                           ": " + printable(ctx.cluster_axis_why)) +
                                       ")\n"
                                 : ctx.stream_k ? std::string(ctx.split_k ? "split-k" : "stream-k") + " (--tile-schedule): see below\n"
                                                : std::string("persistent (block b takes b, b+grid, ...)\n"));
  if (ctx.tiles && ctx.k_walk) {
    std::vector<std::string> walkers;
    for (const auto& c : ctx.contracts)
      if (c->tiles.present && !c->tiles.k_extent.empty()) walkers.push_back(printable(c->name));
    o << "  units: " << join(walkers) << " walk k ranges of ceil(" << ctx.k_extent << " / " << ctx.k_tile << ") slices (pl::unit_at)";
    if (ctx.split_k)
      o << "; split-k: with T tiles on G blocks and R = T % G > 0, the first R tiles are each cut into s = G / R equal "
           "pieces of k slices (none when s < 2: data-parallel), block b < R s taking piece b % s of tile b / s first, then its whole tiles b + R, b + R + G, ...; "
           "a split tile is emitted by the block holding its first piece after adding the others' partials\n";
    else if (ctx.stream_k)
      o << "; with T tiles on G blocks and R = T % G > 0, the first " << (ctx.sk_waves ? "R + G" : "R") << " tiles (all when T < G) are cut into min(G, slices / 4) equal "
           "shares of k slices, block b's share first, then its whole tiles " << (ctx.sk_waves ? "b + R + G, b + R + 2G" : "b + R, b + R + G")
        << ", ...; a tile split across blocks is emitted by "
           "the block holding its first slice after adding the others' partials\n";
    if (ctx.stream_k)
      o << "  workspace: " << ctx.workspace_stride << " bytes per block (" << ctx.partial_instances << " x " << ctx.partial_bytes
        << " bytes of " << printable(ctx.partials_owner ? ctx.partials_owner->name : std::string("?"))
        << "'s partials, then 128 bytes of flags) at Args word " << ctx.workspace_slot
        << ", allocated and zeroed once by the runtime; the grid must be resident at once\n";
    else
      o << "; data-parallel: each unit is a whole tile\n";
  }
  if (!ctx.tiles) o << "  none declared: one tile per block\n";
  return o.str();
}

}  // namespace pipelink
