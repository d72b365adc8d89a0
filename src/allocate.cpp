// allocate — places everything jointly: warps and warpgroups, register budgets, named-barrier
// ids, kernel-parameter slots, pipes (and the transfers connect inserted), shared-memory offsets
// and mbarrier slots. Does not add, remove or re-point pipes (connect.cpp owns the graph). Checks the totals against the target as it goes (smem, barriers, threads, registers).
//
// Deterministic: warps are placed in a canonical order independent of the input order (see
// place_warps); everything else visits instances in input order and pipes in first-mention order,
// and smem blocks are placed largest first with ties broken by creation order. Shared memory is
// shared only between regions of one instance with disjoint live phases (see meet in place_smem). Runs only when check found
// every quantity in range (ctx.sizes_ok); sizes and offsets stay int64 here. Does not: generate code.
#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>

#include "context.h"

namespace pipelink {

namespace {

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

bool phases_disjoint(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) return false;  // empty = always live
  for (const auto& x : a)
    for (const auto& y : b)
      if (x == y) return false;
  return true;
}

// Two blocks may share bytes only when the linker can prove they are never live at once. `live`
// phases are steps of one instance's own code, which runs them in order; instances (and pipes,
// and mbarriers) run concurrently and the contracts declare no order between one instance's
// phases and another's. So: same instance, both with phase lists, no phase in common (the
// placement's `meet` below, on interned phase ids).

// Warp placement does not depend on the order of the contracts on the command line: roles are
// placed by a canonical key, (warps descending, component name, instance index), so instance
// indices stay those of the input order and the same set of contracts always packs the same way.
//  1. Warpgroup roles first, from warp 0, each at a multiple of 4.
//  2. Then packed (non-warpgroup) instances. When any register budget is in play, setmaxnreg
//     applies per warpgroup, so no packed instance may straddle a warpgroup boundary: first fit
//     decreasing into the packed warpgroups (an instance goes to the first one with room), and one
//     of more than 4 warps takes whole warpgroups of its own. Without budgets they are contiguous.
//  3. Then the generated transfer warps (one each, pipe order), placed the same way.
void place_warps(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  std::vector<int> packed, aligned;
  for (size_t i = 0; i < ctx.instances.size(); ++i) {
    Instance& in = ctx.instances[i];
    in.warps = static_cast<unsigned>(in.contract->warps.value);  // 1..32 (check)
    (in.contract->warpgroup ? aligned : packed).push_back(static_cast<int>(i));
  }
  const auto canonical = [&](int a, int b) {
    const Instance& x = ctx.instances[a];
    const Instance& y = ctx.instances[b];
    if (x.warps != y.warps) return x.warps > y.warps;
    if (x.contract->name != y.contract->name) return x.contract->name < y.contract->name;
    return x.index < y.index;
  };
  std::sort(aligned.begin(), aligned.end(), canonical);
  std::sort(packed.begin(), packed.end(), canonical);
  bool any_registers = false;
  for (const Instance& in : ctx.instances) any_registers |= in.contract->registers.has_value();
  unsigned warp = 0;
  for (int i : aligned) {
    Instance& in = ctx.instances[i];
    warp = static_cast<unsigned>(align_up(warp, 4));
    in.warp_base = warp;
    warp += in.warps;
  }
  if (!aligned.empty()) warp = static_cast<unsigned>(align_up(warp, 4));
  const unsigned packed_from = warp;
  std::vector<unsigned> fill;  // with budgets: warps used in each packed warpgroup (from packed_from)
  auto place = [&](unsigned w) -> unsigned {
    if (!any_registers) { unsigned at = warp; warp += w; return at; }
    if (w > 4) {  // whole warpgroups of its own
      unsigned at = packed_from + 4 * static_cast<unsigned>(fill.size());
      for (unsigned k = 0; k < (w + 3) / 4; ++k) fill.push_back(4);
      warp = packed_from + 4 * static_cast<unsigned>(fill.size());
      return at;
    }
    for (size_t g = 0; g < fill.size(); ++g)
      if (fill[g] + w <= 4) {
        unsigned at = packed_from + 4 * static_cast<unsigned>(g) + fill[g];
        fill[g] += w;
        return at;
      }
    fill.push_back(w);
    unsigned at = packed_from + 4 * static_cast<unsigned>(fill.size() - 1);
    warp = at + w;
    return at;
  };
  for (int i : packed) ctx.instances[i].warp_base = place(ctx.instances[i].warps);
  for (Pipe& p : ctx.pipes)
    if (p.transfer_to >= 0) p.transfer_warp = place(1);
  // With budgets setmaxnreg runs per warpgroup (.sync.aligned: all four warps), so the block is
  // whole warpgroups.
  if (any_registers) warp = packed_from + 4 * static_cast<unsigned>(fill.size());
  ctx.total_warps = warp;
  int64_t threads = int64_t(warp) * 32;
  if (threads > ctx.target.max_threads) {
    Diagnostic& x = d.error("threads-limit", "the link needs " + std::to_string(threads) + " threads per block (" +
                                                 std::to_string(warp) + " warps); the target allows " +
                                                 std::to_string(ctx.target.max_threads),
                            ctx.instances.front().contract->warps.loc);
    unsigned declared = 0;
    for (const Instance& in : ctx.instances) {
      declared += in.warps;
      x.notes.push_back(in.name + ": " + std::to_string(in.warps) + (in.warps == 1 ? " warp" : " warps") + ", declared at " +
                        in.contract->warps.loc.str());
    }
    unsigned transfers = 0;
    for (const Pipe& p : ctx.pipes) transfers += p.transfer_to >= 0;
    if (transfers) x.notes.push_back(std::to_string(transfers) + " generated transfer warp(s)");
    if (warp > declared + transfers)
      x.notes.push_back(std::to_string(warp - declared - transfers) + " idle warp(s) that complete a warpgroup (warpgroup roles start at a multiple of 4 warps; setmaxnreg needs whole warpgroups)");
    return;  // no warpgroups, register budgets or barrier checks over a block that cannot launch
  }
  if (ctx.target.blocks_per_sm > 1 && threads * ctx.target.blocks_per_sm > ctx.target.max_threads_per_sm) {
    Diagnostic& x = d.error("threads-limit", "the link needs " + std::to_string(threads) + " threads per block; " +
                                                 std::to_string(ctx.target.blocks_per_sm) + " blocks need " +
                                                 std::to_string(threads * ctx.target.blocks_per_sm) + ", and an SM of " +
                                                 ctx.target.arch + " holds " + std::to_string(ctx.target.max_threads_per_sm) +
                                                 ctx.target.occupancy(),
                            ctx.instances.front().contract->warps.loc);
    for (const Instance& in : ctx.instances)
      x.notes.push_back(in.name + ": " + std::to_string(in.warps) + (in.warps == 1 ? " warp" : " warps") + ", declared at " +
                        in.contract->warps.loc.str());
    return;
  }
  if (warp == 0) return;
  unsigned groups = (warp + 3) / 4;
  for (unsigned g = 0; g < groups; ++g) {
    WarpGroup wg;
    wg.index = g;
    for (size_t i = 0; i < ctx.instances.size(); ++i) {
      const Instance& in = ctx.instances[i];
      if (in.warps && in.warp_base / 4 <= g && (in.warp_base + in.warps - 1) / 4 >= g) wg.instances.push_back(static_cast<int>(i));
    }
    std::sort(wg.instances.begin(), wg.instances.end(),
              [&](int a, int b) { return ctx.instances[a].warp_base < ctx.instances[b].warp_base; });
    for (const Pipe& p : ctx.pipes)
      if (p.transfer_to >= 0 && p.transfer_warp / 4 == g) wg.has_transfer = true;
    ctx.warpgroups.push_back(wg);
  }
}

void assign_registers(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  unsigned threads = ctx.total_warps * 32;
  if (!threads || ctx.warpgroups.empty()) return;
  const Target& t = ctx.target;
  int64_t cap = std::min<int64_t>(t.regs_per_sm / threads, 255) / t.regs_step * t.regs_step;
  ctx.entry_registers = static_cast<int>(cap);
  bool any = false;
  for (WarpGroup& wg : ctx.warpgroups) {
    // setmaxnreg applies per warpgroup: the largest budget in it holds for every warp in it.
    int budget = 0;
    const Instance* top = nullptr;
    for (int i : wg.instances) {
      const Instance& in = ctx.instances[i];
      if (in.contract->registers && in.contract->registers->value > budget) {
        budget = static_cast<int>(in.contract->registers->value);
        top = &in;
      }
    }
    for (int i : wg.instances) {
      Instance& in = ctx.instances[i];
      in.registers = budget;
      if (!budget || &in == top) continue;
      const std::string shares = " shares warpgroup " + std::to_string(wg.index) + " with '" + top->name + "' (" +
                                 std::to_string(budget) + " registers); setmaxnreg applies per warpgroup, so '" + in.name +
                                 "' runs with " + std::to_string(budget) + " registers per thread";
      if (!in.contract->registers)
        d.warning("registers", "'" + in.name + "' declares no register budget but" + shares, in.contract->warps_loc);
      else if (in.contract->registers->value != budget)
        d.warning("registers", "'" + in.name + "' asks " + std::to_string(in.contract->registers->value) + " registers but" + shares,
                  in.contract->registers->loc);
    }
    wg.registers = budget;
    any |= budget > 0;
  }
  if (ctx.opt.min_registers) {
    // --min-registers: the smallest entry cap whose pool holds every budget. A warpgroup of generated
    // transfer warps only has no budget and runs at the cap itself, so it adds the cap to the pool
    // and its share of the sum alike: the cap must hold the budgeted warpgroups' mean. A warpgroup
    // with a component but no budget is refused (once per component).
    if (!t.setmaxnreg) {
      d.error("registers", "--min-registers lowers the entry's register cap and lets setmaxnreg raise the warpgroups to "
                           "their budgets; target " + t.arch + " has no setmaxnreg (use sm_90a), so link without --min-registers",
              ctx.instances.front().contract->warps.loc);
      return;
    }
    int64_t sum_budgets = 0, budgeted = 0;
    std::set<int> unbudgeted;
    for (const WarpGroup& wg : ctx.warpgroups) {
      if (wg.registers) {
        sum_budgets += wg.registers;
        ++budgeted;
        continue;
      }
      for (int i : wg.instances) unbudgeted.insert(i);
    }
    for (int i : unbudgeted) {
      const Instance& in = ctx.instances[i];
      d.error("registers", "--min-registers: '" + in.name + "' declares no register budget, so the link cannot tell how few "
                               "registers it may launch with; give its [warps] a registers = N, or link without --min-registers",
              in.contract->warps_loc);
    }
    if (!unbudgeted.empty()) return;
    if (budgeted) {
      int64_t need = (sum_budgets + budgeted - 1) / budgeted;
      need = std::max<int64_t>((need + t.regs_step - 1) / t.regs_step * t.regs_step, t.min_regs);
      if (need < cap) cap = need;  // (over the full cap, the pool check below reports it)
      ctx.entry_registers = static_cast<int>(cap);
    }
  }
  if (!any) return;
  if (!t.setmaxnreg) {
    d.error("registers", "register budgets need setmaxnreg, which target " + t.arch + " lacks (use sm_90a)");
    return;
  }
  // setmaxnreg moves registers within the block's launch allocation (cap * threads). An increase
  // that the pool cannot satisfy waits forever: the hang in NVIDIA/cutlass#2007.
  int64_t sum = 0;
  std::ostringstream terms;
  std::map<int, int> by_budget;
  for (const WarpGroup& wg : ctx.warpgroups) by_budget[wg.registers ? wg.registers : static_cast<int>(cap)]++;
  bool first_term = true;
  for (auto it = by_budget.rbegin(); it != by_budget.rend(); ++it) {
    sum += int64_t(it->first) * it->second;
    terms << (first_term ? "" : " + ") << it->first << "*" << it->second;
    first_term = false;
  }
  int64_t pool = cap * int64_t(ctx.warpgroups.size());
  if (sum > pool) {
    SourceLoc loc;  // the first budget declared
    for (const Instance& in : ctx.instances)
      if (in.contract->registers && !loc.known()) loc = in.contract->registers->loc;
    Diagnostic& x = d.error("registers", "register budgets over-subscribe the block's register file: " + terms.str() + " = " +
                                             std::to_string(sum) + " > " + std::to_string(cap) + "*" +
                                             std::to_string(ctx.warpgroups.size()) + " = " + std::to_string(pool) +
                                             " registers per thread-of-warpgroup (" + std::to_string(threads) +
                                             " threads launch with " + std::to_string(cap) + " each" + t.occupancy() +
                                             "); setmaxnreg.inc would wait forever",
                            loc);
    for (const Instance& in : ctx.instances)
      if (in.contract->registers) x.notes.push_back(in.name + " asks " + std::to_string(in.contract->registers->value) + " at " +
                                                    in.contract->registers->loc.str());
  }
}

void assign_barriers(LinkContext& ctx) {
  unsigned next = 1;  // id 0 is __syncthreads
  // A barrier's thread count is checked against its own instance's threads (check), which the
  // block's threads include.
  for (Instance& in : ctx.instances) {
    for (const NamedBarrier& b : in.contract->barriers) {
      in.bar.push_back(next);
      ctx.barriers.push_back({next, in.name, b.name, b.threads.value, b.loc});
      ++next;
    }
  }
  unsigned used = next - 1;
  if (used > ctx.target.named_barriers - 1) {
    // Located at the first barrier that gets no id.
    Diagnostic& x = ctx.diags.error("barrier-limit", "the link needs " + std::to_string(used) + " named barriers; the target has " +
                                                         std::to_string(ctx.target.named_barriers - 1) + " (ids 1.." +
                                                         std::to_string(ctx.target.named_barriers - 1) + ", id 0 is __syncthreads)",
                                    ctx.barriers[ctx.target.named_barriers - 1].loc);
    std::map<std::string, int> per;
    std::vector<std::string> order;
    for (const BarrierSlot& b : ctx.barriers) { if (!per[b.owner]++) order.push_back(b.owner); }
    for (const std::string& o : order) x.notes.push_back(o + " holds " + std::to_string(per[o]));
  }
}

void assign_params(LinkContext& ctx) {
  std::map<std::string, size_t> index;
  for (Instance& in : ctx.instances) {
    for (const ParamDecl& p : in.contract->params) {
      auto [it, fresh] = index.emplace(p.name, ctx.params.size());
      if (fresh) {
        ParamSlot s;
        s.name = p.name;
        s.type = p.type;
        s.loc = p.loc;
        s.slot = p.type == ParamType::TensorMap ? ctx.tmap_slots++ : ctx.word_slots++;
        ctx.params.push_back(s);
      }
      ParamSlot& s = ctx.params[it->second];
      if (std::find(s.users.begin(), s.users.end(), in.contract->name) == s.users.end()) s.users.push_back(in.contract->name);
      in.params.push_back(s.slot);
    }
  }
  // The tile sequence reads its extents: u32 params, declared here if no component declares them.
  if (ctx.tiles)
    for (const std::string& e : {ctx.tiles->extent_m, ctx.tiles->extent_n}) {
      auto [it, fresh] = index.emplace(e, ctx.params.size());
      if (fresh) {
        ParamSlot s;
        s.name = e;
        s.type = ParamType::U32;
        s.loc = ctx.tiles->loc;
        s.slot = ctx.word_slots++;
        ctx.params.push_back(s);
      }
      ctx.params[it->second].users.push_back("tile sequence");
    }
  // Units read the k extent (declared by the components that walk k ranges); under stream-k the
  // workspace's address is one more word, which the runtime fills (manifest line `workspace`).
  if (ctx.k_walk) {
    auto it = index.find(ctx.k_extent);
    if (it != index.end()) ctx.params[it->second].users.push_back("tile sequence (k)");
  }
  if (ctx.stream_k && ctx.partials_owner) {
    ctx.workspace_slot = ctx.word_slots++;
    ctx.workspace_stride = (ctx.partial_bytes * ctx.partial_instances + 127) / 128 * 128 + 128;
    if (ctx.partial_instances > 32)
      ctx.diags.error("capacity", "component '" + ctx.partials_owner->name + "' has " + std::to_string(ctx.partial_instances) +
                                      " instances summing partials; a block's flag line holds 32", ctx.partials_owner->tiles.partial_loc);
  }
  if (ctx.tmap_slots > pl::kArgTensorMaps)
    ctx.diags.error("capacity", "the link has " + std::to_string(ctx.tmap_slots) + " tensormap params; pl::Args holds " +
                                    std::to_string(pl::kArgTensorMaps));
  if (ctx.word_slots > pl::kArgWords)
    ctx.diags.error("capacity", "the link has " + std::to_string(ctx.word_slots) + " scalar/pointer params; pl::Args holds " +
                                    std::to_string(pl::kArgWords));
}

void bind_ports(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  for (Instance& in : ctx.instances) in.ports.assign(in.contract->ports.size(), PortBinding{});
  for (size_t pi = 0; pi < ctx.pipes.size(); ++pi) {
    Pipe& p = ctx.pipes[pi];
    int64_t data = 0;
    for (PipeTensor& t : p.tensors) {
      int64_t a = swizzle_align(t.swizzle);
      data = align_up(data, a);
      t.offset = data;
      data += t.bytes();
    }
    // consumer_view shares offsets (same shapes, same order)
    for (size_t k = 0; k < p.consumer_view.size() && k < p.tensors.size(); ++k) p.consumer_view[k].offset = p.tensors[k].offset;
    p.stage_bytes = align_up(data, 1024);
    int64_t full = 0, empty = 0;
    std::vector<PipeEnd> tx;  // producers that complete with transaction bytes
    // part / parts number an instance among the instances of its own component on this end: the
    // split a component's code can act on (each component fills its own tensors, see `writes`).
    auto number = [&](const std::vector<PipeEnd>& ends, size_t k, PortBinding& b) {
      const Contract* c = ctx.instances[ends[k].instance].contract;
      unsigned part = 0, parts = 0;
      for (size_t j = 0; j < ends.size(); ++j)  // the instances of this port (another port of the component has its own)
        if (ctx.instances[ends[j].instance].contract == c && ends[j].port == ends[k].port) { part += j < k; ++parts; }
      b.part = part;
      b.parts = parts;
    };
    for (size_t k = 0; k < p.producers.size(); ++k) {
      Instance& in = ctx.instances[p.producers[k].instance];
      const PortDecl& pd = in.contract->ports[p.producers[k].port];
      full += arrivals_per_instance(pd.arrive, in.warps);
      if (pd.completion == Completion::Tx) tx.push_back(p.producers[k]);
      PortBinding& b = in.ports[p.producers[k].port];
      b.pipe = static_cast<int>(pi);
      number(p.producers, k, b);
    }
    if (p.transfer_from >= 0) full += 1;  // the transfer warp's lane 0
    for (size_t k = 0; k < p.consumers.size(); ++k) {
      Instance& in = ctx.instances[p.consumers[k].instance];
      const PortDecl& pd = in.contract->ports[p.consumers[k].port];
      empty += arrivals_per_instance(pd.arrive, in.warps);
      PortBinding& b = in.ports[p.consumers[k].port];
      b.pipe = static_cast<int>(pi);
      number(p.consumers, k, b);
    }
    if (p.transfer_to >= 0) empty += 1;
    // A multicast pipe's stage is written by every block of its group, so every block's producer
    // must wait until the consumers of every block of the group released it: each consumer
    // arrives on the empty barrier of every block of the group (remote arrives, pl::PipeReader).
    empty *= p.multicast;
    p.full_count = full;
    p.empty_count = empty;
    if (tx.empty()) continue;
    // Transaction bytes are what the copies write: the tensors, not the alignment gaps between
    // them. A stale or padded count leaves the full barrier waiting forever (NVIDIA/cutlass#1748).
    // A TMA producer that declares `writes` announces those tensors' bytes; otherwise the TMA
    // producer instances share every tensor equally, so the share must be exact.
    std::vector<PipeEnd> shared_tx;
    for (const PipeEnd& e : tx) {
      const PortDecl& pd = ctx.instances[e.instance].contract->ports[e.port];
      if (pd.writes.empty()) { shared_tx.push_back(e); continue; }
      unsigned same = 0;  // instances of this port on the pipe split its tensors (another port of the
                          // component, joined by --connect, writes its own: connect keeps them apart)
      for (const PipeEnd& o : tx) same += ctx.instances[o.instance].contract == ctx.instances[e.instance].contract && o.port == e.port;
      int64_t bytes = 0;
      for (const PipeTensor& t : p.tensors)
        for (const std::string& w : pd.writes) bytes += t.name == w ? t.bytes() : 0;
      if (bytes % same != 0)
        d.error("port-mismatch", "pipe '" + p.name + "': " + std::to_string(bytes) + " bytes cannot be split evenly among " +
                                     std::to_string(same) + " instances of '" + ctx.instances[e.instance].contract->name + "'", pd.loc);
      ctx.instances[e.instance].ports[e.port].tx_bytes = bytes / same;
    }
    tx = shared_tx;
    if (tx.empty()) continue;
    int64_t written = 0;
    for (const PipeTensor& t : p.tensors) written += t.bytes();
    const int64_t n = static_cast<int64_t>(tx.size());
    if (written % n != 0) {
      const PortDecl& first = ctx.instances[tx.front().instance].contract->ports[tx.front().port];
      Diagnostic& x = d.error("port-mismatch", "pipe '" + p.name + "': " + std::to_string(written) +
                                                   " bytes per stage cannot be split evenly among " + std::to_string(n) +
                                                   " TMA producer instances (each announces an equal share of the transaction bytes)",
                              first.loc);
      std::map<const PortDecl*, int> count;  // instances per declaring port, noted once each
      for (const PipeEnd& e : tx) ++count[&ctx.instances[e.instance].contract->ports[e.port]];
      for (const PipeEnd& e : tx) {
        const Contract& c = *ctx.instances[e.instance].contract;
        const PortDecl* pd = &c.ports[e.port];
        auto it = count.find(pd);
        if (it == count.end()) continue;  // already noted
        x.notes.push_back("producer " + c.name + " (" + c.owner + ")" +
                          (it->second > 1 ? ", " + std::to_string(it->second) + " instances," : std::string()) +
                          " declares the port at " + pd->loc.str());
        count.erase(it);
      }
      continue;
    }
    for (const PipeEnd& e : tx) ctx.instances[e.instance].ports[e.port].tx_bytes = written / n;
  }
}

struct Block { SmemBlock b; size_t order; };

void place_smem(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  std::vector<SmemBlock> blocks;
  // Rings, then component regions, then the mbarrier block (always live: an mbarrier's bytes are
  // never shared with anything, see facebookexperimental/triton#462).
  for (const Pipe& p : ctx.pipes) {
    int64_t align = 128;
    for (const PipeTensor& t : p.tensors) align = std::max(align, swizzle_align(t.swizzle));
    SmemBlock b;
    b.name = "ring";
    b.owner = "pipe " + p.name;
    b.bytes = p.stage_bytes * p.stages;
    b.align = align;
    const std::vector<PipeEnd>& ends = p.producers.empty() ? p.consumers : p.producers;  // a transfer's pipe: its consumers
    if (!ends.empty()) b.loc = ctx.instances[ends.front().instance].contract->ports[ends.front().port].loc;
    blocks.push_back(b);
  }
  for (size_t ii = 0; ii < ctx.instances.size(); ++ii)
    for (const SmemRegion& r : ctx.instances[ii].contract->smem) {
      const Instance& in = ctx.instances[ii];
      SmemBlock b;
      b.name = r.name;
      b.owner = in.name;
      b.instance = static_cast<int>(ii);
      b.bytes = r.bytes.value;
      b.align = r.align;
      b.live = r.live;
      b.loc = r.bytes.loc;
      blocks.push_back(b);
    }
  // mbarriers: 8 bytes each; pipes' full/empty first, then component groups.
  int64_t mb = 0;
  for (const Pipe& p : ctx.pipes) mb += 2 * p.stages;
  for (const Instance& in : ctx.instances)
    for (const MbarrierGroup& m : in.contract->mbarriers) mb += m.count.value;
  if (mb) {
    SmemBlock b;
    b.name = "mbarriers";
    b.owner = "pipelink";
    b.bytes = mb * 8;
    b.align = 8;
    blocks.push_back(b);
  }
  // Sharing the contracts ask for but the rule refuses (regions of different instances with
  // disjoint phase names): placed apart, with a warning per pair of declarations.
  // One warning per region declaration at most (the first refused partner), so a link of many
  // contracts stays linear in its output.
  {
    std::set<const SmemRegion*> warned;
    std::vector<std::pair<const Instance*, const SmemRegion*>> regions;
    for (const Instance& in : ctx.instances)
      for (const SmemRegion& r : in.contract->smem)
        if (!r.live.empty()) regions.push_back({&in, &r});
    for (size_t j = 0; j < regions.size(); ++j)
      for (size_t i = 0; i < j; ++i) {
        const auto& [ia, ra] = regions[i];
        const auto& [ib, rb] = regions[j];
        if (warned.count(rb)) break;
        if (ia == ib || !phases_disjoint(ra->live, rb->live)) continue;
        warned.insert(rb);
        d.warning("smem-live", "smem region '" + rb->name + "' of '" + ib->name + "' and region '" + ra->name + "' of '" +
                                   ia->name + "' have disjoint live phases but belong to different instances, which run "
                                   "concurrently; they get separate bytes", rb->loc)
            .notes.push_back("'" + ra->name + "' of '" + ia->name + "' is declared at " + ra->loc.str() +
                             "; live phases order only the regions of one instance");
      }
  }
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return blocks[a].bytes > blocks[b].bytes; });
  // Phases interned once: a block's live set is a sorted vector of ids, so two sets meet in a
  // linear merge.
  std::map<std::string, int> phase_id;
  std::vector<std::vector<int>> live(blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    for (const std::string& ph : blocks[i].live) live[i].push_back(phase_id.emplace(ph, static_cast<int>(phase_id.size())).first->second);
    std::sort(live[i].begin(), live[i].end());
  }
  // Whether two blocks may be live at once: always, unless they belong to the same instance and
  // both phase lists exist and have no phase in common.
  auto meet = [&](size_t a, size_t b) {
    if (blocks[a].instance < 0 || blocks[a].instance != blocks[b].instance) return true;
    const std::vector<int>& x = live[a];
    const std::vector<int>& y = live[b];
    if (x.empty() || y.empty()) return true;
    for (size_t i = 0, j = 0; i < x.size() && j < y.size();) {
      if (x[i] == y[j]) return true;
      x[i] < y[j] ? ++i : ++j;
    }
    return false;
  };
  // First fit, largest first: the lowest offset among 0 and the ends of the placed blocks whose
  // lifetimes meet this one's, aligned, that overlaps none of them. One sweep over those blocks
  // sorted by offset finds it: O(n log n) per block, O(n^2 log n) in all.
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of the placed blocks that meet
  int64_t total = 0;
  for (size_t i : order) {
    SmemBlock& b = blocks[i];
    busy.clear();
    for (size_t j : placed)
      if (meet(i, j)) busy.push_back({blocks[j].offset, blocks[j].offset + blocks[j].bytes});
    std::sort(busy.begin(), busy.end());
    int64_t off = 0;
    for (const auto& [start, end] : busy) {
      if (end <= off) continue;
      if (start >= off + b.bytes) break;
      off = align_up(end, b.align);
    }
    b.offset = off;
    placed.push_back(i);
    total = std::max(total, off + b.bytes);
  }
  ctx.smem = blocks;
  ctx.smem_bytes = align_up(total, 128);
  if (total > ctx.target.max_smem) {
    // Located at the largest block whose declaration is known (order is largest first).
    SourceLoc loc;
    for (size_t i : order)
      if (blocks[i].loc.known()) { loc = blocks[i].loc; break; }
    Diagnostic& x = d.error("smem-limit", "the link needs " + std::to_string(total) + " bytes of shared memory per block; " +
                                              ctx.target.arch + " allows " + std::to_string(ctx.target.max_smem) +
                                              ctx.target.occupancy(), loc);
    for (size_t i : order)
      x.notes.push_back(blocks[i].owner + " '" + blocks[i].name + "': " + std::to_string(blocks[i].bytes) + " bytes" +
                        (blocks[i].loc.known() ? " at " + blocks[i].loc.str() : ""));
  }
  // Hand the offsets back to pipes and instances (same creation order as above).
  size_t k = 0;
  for (Pipe& p : ctx.pipes) p.buffer = blocks[k++].offset;
  for (Instance& in : ctx.instances)
    for (size_t r = 0; r < in.contract->smem.size(); ++r) in.smem.push_back(blocks[k++].offset);
  if (mb) {
    int64_t at = blocks[k].offset;
    for (Pipe& p : ctx.pipes) {
      p.full = at;
      ctx.mbarriers.push_back({at, p.stages, p.full_count, "pipe " + p.name, "full"});
      at += 8 * p.stages;
      p.empty = at;
      ctx.mbarriers.push_back({at, p.stages, p.empty_count, "pipe " + p.name, "empty"});
      at += 8 * p.stages;
    }
    for (Instance& in : ctx.instances)
      for (const MbarrierGroup& m : in.contract->mbarriers) {
        in.mbar.push_back(at);
        ctx.mbarriers.push_back({at, m.count.value, m.arrivals.value, in.name, m.name});
        at += 8 * m.count.value;
      }
  }
}

}  // namespace

void allocate(LinkContext& ctx) {
  if (!ctx.sizes_ok) return;  // check reported a quantity out of range: nothing to place
  place_warps(ctx);
  assign_registers(ctx);
  assign_barriers(ctx);
  assign_params(ctx);
  bind_ports(ctx);
  place_smem(ctx);
}

}  // namespace pipelink
