// check — compares contracts with each other and with the target, before anything is allocated.
//
// Does: instance counts, entries, warp and register declarations, binding-table capacities, the
// range of every count and size (out of range clears ctx.sizes_ok and allocate does not run, so
// nothing downstream can overflow or wrap when narrowed to the 32-bit slots), pipe connectivity and agreement (stages, dtypes, shapes, swizzle spans,
// guarantees; layout differences become transfers), parameter types, one tile sequence. Two
// entry points around connect (connect.cpp, which builds ctx.pipes): check() looks at each
// contract alone and against the target; check_link() at the link as a whole (parameters, the
// tile sequence, per_tile over the pipes, asserts). Does not: build or change the pipe graph,
// place anything or check totals against the target (allocate does, since totals exist only once
// things are placed).
#include <climits>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>

#include "context.h"

namespace pipelink {

const char* param_type_name(ParamType t) {
  switch (t) {
    case ParamType::TensorMap: return "tensormap";
    case ParamType::Ptr: return "ptr";
    case ParamType::U32: return "u32";
    case ParamType::I32: return "i32";
    case ParamType::U64: return "u64";
    case ParamType::F32: return "f32";
  }
  return "?";
}

int64_t dtype_bytes(const std::string& t) {
  if (t == "f32" || t == "i32" || t == "u32") return 4;
  if (t == "bf16" || t == "f16") return 2;
  if (t == "u8" || t == "i8" || t == "f8e4m3" || t == "f8e5m2") return 1;
  return 0;
}

int64_t arrivals_per_instance(Arrive a, unsigned warps) {
  switch (a) {
    case Arrive::One: return 1;
    case Arrive::Warp: return warps;
    case Arrive::Thread: return int64_t(warps) * 32;
  }
  return 1;
}

namespace {

std::string who(const Contract& c) { return c.name + " (" + c.owner + ")"; }

// Limits on single declarations; totals are allocate's.
constexpr int64_t kMaxWarps = 32;          // per instance: 1024 threads
constexpr int64_t kMaxStages = 64;         // per pipe
constexpr int64_t kMaxMbarriers = 1024;    // per [[mbarrier]] group
constexpr int64_t kMaxArrivals = (1 << 20) - 1;

std::string range(int64_t lo, int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }
}  // namespace

// Shared with connect.cpp (context.h).
bool stages_ok(const PortDecl& p) { return p.stages.value >= 1 && p.stages.value <= kMaxStages; }

// A tensor's bytes, without overflow; nullopt when rows or cols is not positive or the product
// exceeds `max`.
std::optional<int64_t> tensor_bytes(int64_t rows, int64_t cols, int64_t elem, int64_t max) {
  int64_t n = 0;
  if (rows <= 0 || cols <= 0 || __builtin_mul_overflow(rows, cols, &n) || __builtin_mul_overflow(n, elem, &n) || n > max)
    return std::nullopt;
  return n;
}

// A swizzle of S bytes (32B, 64B, 128B) permutes 16-byte chunks within each S-byte line (and
// 8-line atoms): the contiguous extent must be exactly one line.
void check_swizzle(LinkContext& ctx, const Contract& c, const PortDecl& p, const TensorDecl& t, int64_t rows, int64_t cols) {
  const int need = swizzle_span(t.swizzle);
  if (!need) return;
  const bool row = t.layout == "row";
  const int64_t span = (row ? cols : rows) * dtype_bytes(t.dtype);
  if (span != need)
    ctx.diags.error("port-mismatch", "component '" + c.name + "': tensor '" + t.name + "' of port '" + p.name + "' has " + t.swizzle +
                                         " swizzle but its contiguous extent (" + (row ? "cols" : "rows") + " = " +
                                         std::to_string(row ? cols : rows) + " x " + std::to_string(dtype_bytes(t.dtype)) +
                                         " bytes) is " + std::to_string(span) + " bytes; " + t.swizzle + " swizzle needs exactly " +
                                         std::to_string(need) + " bytes", t.loc);
}

namespace {

void check_capacity(LinkContext& ctx, const Contract& c) {
  // Past these capacities nothing is allocated (ctx.sizes_ok): allocation's work stays bounded
  // by instances x capacity however large a contract is.
  auto cap = [&](size_t n, unsigned max, const char* what, const SourceLoc& loc) {
    if (n > max) ctx.sizes_ok = false;
    if (n > max)
      ctx.diags.error("capacity", "component '" + c.name + "' declares " + std::to_string(n) + " " + what +
                                      "; a component's binding table holds at most " + std::to_string(max), loc);
  };
  // The first declaration past the capacity is where the error points.
  auto past = [&](const auto& v, unsigned max) { return v.size() > max ? v[max].loc : c.loc; };
  cap(c.smem.size(), pl::kMaxSmem, "[[smem]] regions", past(c.smem, pl::kMaxSmem));
  cap(c.barriers.size(), pl::kMaxBarriers, "named barriers", past(c.barriers, pl::kMaxBarriers));
  cap(c.mbarriers.size(), pl::kMaxMbarriers, "mbarrier groups", past(c.mbarriers, pl::kMaxMbarriers));
  cap(c.ports.size(), pl::kMaxPorts, "ports", past(c.ports, pl::kMaxPorts));
  cap(c.params.size(), pl::kMaxParams, "params", past(c.params, pl::kMaxParams));
  for (const PortDecl& p : c.ports)
    cap(p.tensors.size(), pl::kMaxTensors, ("tensors on port '" + p.name + "'").c_str(), p.loc);
}

void check_component(LinkContext& ctx, const Contract& c, unsigned instances) {
  Diagnostics& d = ctx.diags;
  check_capacity(ctx, c);
  if (c.instances && c.instances->value != instances)
    d.error("instances", "component '" + c.name + "' must be instantiated " + std::to_string(c.instances->value) +
                             " times (instances = " + c.instances->expr.text() + ") but the link has " +
                             std::to_string(instances), c.instances->loc)
        .notes.push_back("list its contract " + std::to_string(c.instances->value) + " times on the command line");
  // Ranges: an out-of-range value stops allocation (ctx.sizes_ok), so nothing can wrap later.
  auto bad = [&](const char* rule, const std::string& msg, const SourceLoc& loc) {
    d.error(rule, "component '" + c.name + "': " + msg, loc);
    ctx.sizes_ok = false;
  };
  if (c.warps.value <= 0)
    bad("warpgroup", "must run on at least one warp (count = " + std::to_string(c.warps.value) + ")", c.warps.loc);
  else if (c.warps.value > kMaxWarps)
    bad("threads-limit", "declares " + std::to_string(c.warps.value) + " warps; an instance runs on " + range(1, kMaxWarps) +
                             " warps (" + std::to_string(ctx.target.max_threads) + " threads)", c.warps.loc);
  if (c.warpgroup && c.warps.value % 4 != 0)
    d.error("warpgroup", "component '" + c.name + "' needs whole warpgroups but declares " + std::to_string(c.warps.value) +
                             " warps; a warpgroup is 4 consecutive warps starting at a multiple of 4", c.warps.loc);
  if (c.registers) {
    int64_t r = c.registers->value;
    const Target& t = ctx.target;
    if (r <= 0 || r > t.regs_per_sm) ctx.sizes_ok = false;  // not even a register count: nothing to place
    if (r < t.min_regs || r > t.max_regs || r % t.regs_step != 0)
      d.error("registers", "component '" + c.name + "': register budget " + std::to_string(r) +
                               " is not a setmaxnreg value (" + std::to_string(t.min_regs) + ".." + std::to_string(t.max_regs) +
                               " in steps of " + std::to_string(t.regs_step) + ")", c.registers->loc);
  }
  for (const NamedBarrier& b : c.barriers) {
    if (b.threads.value <= 0 || b.threads.value % 32 != 0 || b.threads.value > ctx.target.max_threads) {
      bad("barrier-limit", "named barrier '" + b.name + "' takes " + std::to_string(b.threads.value) +
                               " threads; bar.sync needs a positive multiple of 32 up to " + std::to_string(ctx.target.max_threads),
          b.threads.loc);
      continue;
    }
    // A named barrier's id is private to one instance, so only that instance's threads can
    // arrive: a barrier waiting for more than them never completes.
    const int64_t own = c.warps.value * 32;
    if (c.warps.value > 0 && c.warps.value <= kMaxWarps && b.threads.value > own)
      d.error("barrier-limit", "component '" + c.name + "': named barrier '" + b.name + "' waits for " +
                                   std::to_string(b.threads.value) + " threads but an instance runs on " +
                                   std::to_string(c.warps.value) + (c.warps.value == 1 ? " warp (" : " warps (") +
                                   std::to_string(own) + " threads); its id is private to the instance, so it never completes",
              b.threads.loc)
          .notes.push_back("warps declared at " + c.warps.loc.str());
  }
  for (const SmemRegion& r : c.smem)
    if (r.bytes.value <= 0 || r.bytes.value > ctx.target.max_smem)
      bad("smem-limit", "smem region '" + r.name + "' has " + std::to_string(r.bytes.value) + " bytes; a region holds " +
                            range(1, ctx.target.max_smem) + " (" + ctx.target.arch + ctx.target.occupancy() + ")", r.bytes.loc);
  for (const MbarrierGroup& m : c.mbarriers) {
    if (m.count.value <= 0 || m.count.value > kMaxMbarriers)
      bad("mbarrier", "mbarrier group '" + m.name + "' has count " + std::to_string(m.count.value) + "; a group holds " +
                          range(1, kMaxMbarriers), m.count.loc);
    if (m.arrivals.value <= 0 || m.arrivals.value > kMaxArrivals)
      bad("mbarrier", "mbarrier group '" + m.name + "' has " + std::to_string(m.arrivals.value) + " arrivals; an mbarrier counts " +
                          range(1, kMaxArrivals), m.arrivals.loc);
  }
  for (const PortDecl& p : c.ports) {
    if (p.stages.value <= 0 || p.stages.value > kMaxStages)
      bad("port-mismatch", "port '" + p.name + "' has " + std::to_string(p.stages.value) + " stages; a pipe has " +
                               range(1, kMaxStages), p.stages.loc);
    for (const TensorDecl& t : p.tensors) {
      if (t.any_shape) continue;  // the producer's shape, checked there
      if (!tensor_bytes(t.rows.value, t.cols.value, dtype_bytes(t.dtype), ctx.target.max_smem)) {
        const bool empty = t.rows.value <= 0 || t.cols.value <= 0;
        bad(empty ? "port-mismatch" : "smem-limit",
            "tensor '" + t.name + "' of port '" + p.name + "' has shape [" + std::to_string(t.rows.value) + ", " +
                std::to_string(t.cols.value) + "] of " + t.dtype + (empty ? "; rows and cols must be positive"
                                                                          : ", more than the " + std::to_string(ctx.target.max_smem) +
                                                                                " bytes of shared memory " + ctx.target.arch + " has"),
            t.loc);
        continue;
      }
      check_swizzle(ctx, c, p, t, t.rows.value, t.cols.value);
    }
  }
}

// Two different contracts must not declare one entry (their objects would define it twice), nor
// the kernel's own name.
void check_entries(LinkContext& ctx) {
  std::map<std::string, const Contract*> first;
  for (const auto& c : ctx.contracts) {
    if (c->entry.empty()) continue;
    if (c->entry == ctx.opt.kernel_name)
      ctx.diags.error("entry", "component '" + c->name + "': entry '" + c->entry + "' is the name of the generated kernel", c->loc);
    auto [it, fresh] = first.emplace(c->entry, c.get());
    if (!fresh)
      ctx.diags.error("entry", "components '" + it->second->name + "' and '" + c->name + "' both declare entry '" + c->entry + "'", c->loc)
          .notes.push_back(it->second->name + " declares it at " + it->second->loc.str());
  }
}

void check_params(LinkContext& ctx) {
  std::map<std::string, std::pair<const Contract*, const ParamDecl*>> first;
  for (const auto& c : ctx.contracts)
    for (const ParamDecl& p : c->params) {
      auto [it, fresh] = first.emplace(p.name, std::make_pair(c.get(), &p));
      if (!fresh && it->second.second->type != p.type)
        ctx.diags.error("param-type", "param '" + p.name + "' is " + param_type_name(p.type) + " in '" + c->name + "' but " +
                                          param_type_name(it->second.second->type) + " in '" + it->second.first->name + "'", p.loc)
            .notes.push_back("first declared by " + who(*it->second.first) + " at " + it->second.second->loc.str());
    }
}

// --tile-order's value: row_major, col_major or grouped:G (false if it is none of them).
static bool parse_tile_order(const std::string& s, std::string& order, int64_t& group) {
  if (s == "row_major" || s == "col_major") { order = s; group = 0; return true; }
  if (s.rfind("grouped:", 0) != 0) return false;
  const std::string g = s.substr(8);
  if (g.empty() || g.size() > 4 || g.find_first_not_of("0123456789") != std::string::npos) return false;
  order = "grouped";
  group = std::stoll(g);
  return group >= 1 && group <= 4096;
}

void check_tiles(LinkContext& ctx) {
  const Instance* ref = nullptr;    // the first component that walks tiles: tile shape and extents
  const Instance* named = nullptr;  // the first that names an order (not "any")
  std::set<const Contract*> compared;
  for (const Instance& in : ctx.instances) {
    const TilesDecl& t = in.contract->tiles;
    if (!t.present) continue;
    if (t.order != "any" && !named) named = &in;
    if (!ref) { ref = &in; continue; }
    const TilesDecl& r = ref->contract->tiles;
    if (ref->contract == in.contract || !compared.insert(in.contract).second) continue;
    std::vector<std::string> diff;
    // "any" agrees with every order; two named orders must be the same (checked against the first)
    const TilesDecl& o = named ? named->contract->tiles : r;
    if (t.order != "any" && o.order != "any" && named != &in) {
      if (t.order != o.order) diff.push_back("order " + t.order + " vs " + o.order + " (" + named->contract->name + ")");
      else if (t.group != o.group) diff.push_back("group " + std::to_string(t.group) + " vs " + std::to_string(o.group) + " (" + named->contract->name + ")");
    }
    if (t.tile_m.value != r.tile_m.value || t.tile_n.value != r.tile_n.value)
      diff.push_back("tile " + std::to_string(t.tile_m.value) + "x" + std::to_string(t.tile_n.value) + " vs " +
                     std::to_string(r.tile_m.value) + "x" + std::to_string(r.tile_n.value));
    if (t.extent_m != r.extent_m || t.extent_n != r.extent_n)
      diff.push_back("extent [" + t.extent_m + ", " + t.extent_n + "] vs [" + r.extent_m + ", " + r.extent_n + "]");
    for (const std::string& x : diff)
      ctx.diags.error("tiles", "components '" + in.contract->name + "' and '" + ref->contract->name +
                                   "' walk different tile sequences: " + x, t.loc)
          .notes.push_back(ref->contract->name + " declares its sequence at " + r.loc.str());
  }
  if (!ref) {
    if (!ctx.opt.tile_order.empty())
      ctx.diags.warning("tiles", "--tile-order " + ctx.opt.tile_order + " has no effect: no component declares [tiles]", SourceLoc{});
    return;
  }
  // The order: --tile-order where given (every component that names an order must name that one),
  // else the order the contracts name, else (all say "any") row_major.
  ctx.tiles_resolved = ref->contract->tiles;
  ctx.tiles = &ctx.tiles_resolved;
  ctx.tiles_owner = ref;
  if (!ctx.opt.tile_order.empty()) {
    std::string order;
    int64_t group = 0;
    if (!parse_tile_order(ctx.opt.tile_order, order, group)) {
      ctx.diags.error("tiles", "--tile-order " + ctx.opt.tile_order + ": the order is row_major, col_major or grouped:G (G tiles along m per band, 1..4096)",
                      SourceLoc{});
    } else {
      std::set<const Contract*> told;
      for (const Instance& in : ctx.instances) {
        const TilesDecl& t = in.contract->tiles;
        if (!t.present || t.order == "any" || !told.insert(in.contract).second) continue;
        if (t.order != order || t.group != group)
          ctx.diags.error("tiles", "component '" + in.contract->name + "' walks its tiles in " +
                                       (t.order == "grouped" ? "grouped:" + std::to_string(t.group) : t.order) + " order, but --tile-order asks " +
                                       ctx.opt.tile_order, t.loc)
              .notes.push_back("a component whose code does not depend on the order says [tiles] order = \"any\"; the link then chooses");
      }
      ctx.tiles_resolved.order = order;
      ctx.tiles_resolved.group = group;
      ctx.tile_order_from_link = true;
    }
  } else if (named) {
    ctx.tiles_resolved.order = named->contract->tiles.order;
    ctx.tiles_resolved.group = named->contract->tiles.group;
  } else {
    ctx.tiles_resolved.order = "row_major";
    ctx.tiles_resolved.group = 0;
  }
  for (const std::string& e : {ctx.tiles->extent_m, ctx.tiles->extent_n}) {
    const Contract* as_ptr = nullptr;  // a component that declares the extent as a ptr param
    const ParamDecl* ptr_decl = nullptr;
    const Contract* asks = nullptr;    // a component whose [tiles] says device_extent = [e]
    for (const auto& c : ctx.contracts) {
      for (const ParamDecl& p : c->params)
        if (p.name == e) {
          // ptr: the extent is the u32 at that device address, read by the tile sequence when
          // it runs (an extent an earlier kernel computes: the MoE layer's routed row count).
          if (p.type != ParamType::U32 && p.type != ParamType::Ptr)
            ctx.diags.error("tiles", "tile extent '" + e + "' must be a u32 param (or a ptr to a u32 in device memory), but '" +
                                         c->name + "' declares it " + param_type_name(p.type), p.loc);
          if (p.type == ParamType::Ptr && !as_ptr) as_ptr = c.get(), ptr_decl = &p;
        }
      for (const std::string& d : c->tiles.device_extent)
        if (d == e && !asks) asks = c.get();
    }
    // An extent is read from device memory only where a contract asks for it: a ptr param that
    // merely shares the extent's name must not change what the tile sequence does.
    if (as_ptr && !asks)
      ctx.diags.error("tiles", "tile extent '" + e + "' is declared as a ptr param by '" + as_ptr->name +
                                   "', but no contract's [tiles] says device_extent = [\"" + e +
                                   "\"]: declare it u32 (a launch value), or add device_extent to read the u32 at that address",
                      ptr_decl->loc);
    else if (asks && !as_ptr)
      ctx.diags.error("tiles", "'" + asks->name + "' asks for device_extent '" + e + "', but no component declares '" + e +
                                   "' as a ptr param (the address of the u32 the tile sequence reads)",
                      asks->tiles.device_extent_loc);
    else if (asks && std::any_of(ctx.contracts.begin(), ctx.contracts.end(),
                                 [](const auto& c) { return c->cluster.present && c->cluster.size() > 1; }))  // check_cluster runs later
      // A cluster's last group may walk tiles past the extent, which only TMA's bounds keep
      // harmless; tensor maps sized for the largest device extent would not clip them.
      ctx.diags.error("tiles", "device_extent '" + e + "' in a cluster link: the blocks of a cluster walk tiles in groups, "
                                   "and the last group's tiles past the extent are harmless only where the tensor maps end at "
                                   "the extent; an extent read from device memory is for one-block links",
                      asks->tiles.device_extent_loc);
  }
  // The scheduler computes in u32: (extent + tile - 1) / tile.
  for (int64_t v : {ctx.tiles->tile_m.value, ctx.tiles->tile_n.value})
    if (v <= 0 || v > INT32_MAX) {
      ctx.diags.error("tiles", "tile sizes must be in " + range(1, INT32_MAX) + ", not " + std::to_string(v), ctx.tiles->loc);
      ctx.sizes_ok = false;
      break;
    }
}

// per_tile: stages per tile. Every end of a pipe that declares it (producers and consumers) must
// declare the same count: equal values when it is over facts alone, the same expression when it
// reads u32 params (known only at run time). Over facts it must be at least 1, and when a stage's
// tensor is a slab of the tile's rows (fewer rows than the tile sequence's tile_m), per_tile
// stages must cover the tile: rows x per_tile >= tile_m, or rows of every tile are never written.
void check_per_tile(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  const auto lookup = [&](const std::string& n) { return ctx.fact_value(n); };
  const auto canon = [](const Expr& e) { return e.to_cpp([](const std::string& n) { return n; }); };
  for (const Pipe& pipe : ctx.pipes) {
    std::vector<PipeEnd> ends = pipe.producers;
    ends.insert(ends.end(), pipe.consumers.begin(), pipe.consumers.end());
    const PortDecl* ref = nullptr;
    const Contract* ref_c = nullptr;
    std::optional<int64_t> ref_v;
    std::set<const PortDecl*> seen;  // a contract listed twice is compared (and reported) once
    for (const PipeEnd& e : ends) {
      const Contract& c = *ctx.instances[e.instance].contract;
      const PortDecl& p = c.ports[e.port];
      if (!p.per_tile_declared || !seen.insert(&p).second) continue;
      std::string err;
      const std::optional<int64_t> v = p.per_tile.eval(lookup, err);
      if (v && *v < 1) {
        d.error("port-mismatch", "component '" + c.name + "': port '" + p.name + "' declares per_tile = " + std::to_string(*v) +
                                     " ('" + p.per_tile.text() + "'); a pipe moves at least 1 stage per tile", p.per_tile_loc);
        continue;
      }
      if (!ref) { ref = &p; ref_c = &c; ref_v = v; continue; }
      const bool same = v && ref_v ? *v == *ref_v : canon(p.per_tile) == canon(ref->per_tile);
      if (!same) {
        auto shown = [](const Expr& x, const std::optional<int64_t>& val) {
          if (val && x.text() == std::to_string(*val)) return x.text();
          return "'" + x.text() + "'" + (val ? " = " + std::to_string(*val) : std::string());
        };
        d.error("port-mismatch", "pipe '" + pipe.name + "': '" + c.name + "' declares per_tile " + shown(p.per_tile, v) + " but '" +
                                     ref_c->name + "' declares " + shown(ref->per_tile, ref_v) +
                                     "; every end of a pipe must move the same number of stages per tile", p.per_tile_loc)
            .notes.push_back(ref_c->name + " (" + ref_c->owner + ") declares it at " + ref->per_tile_loc.str());
      }
    }
    if (!ref || !ref_v || !ctx.tiles) continue;
    const int64_t tile_m = ctx.tiles->tile_m.value;
    if (tile_m <= 0 || tile_m > INT32_MAX) continue;  // reported by check_tiles
    for (const PipeTensor& t : pipe.tensors) {
      if (t.rows <= 0 || t.rows >= tile_m) continue;  // a stage that spans the tile's rows by itself
      int64_t covered = 0;
      if (!__builtin_mul_overflow(t.rows, *ref_v, &covered) && covered >= tile_m) continue;
      d.error("port-mismatch", "pipe '" + pipe.name + "': a stage holds " + std::to_string(t.rows) + " rows of tensor '" + t.name +
                                   "' and '" + ref_c->name + "' declares per_tile = " + std::to_string(*ref_v) + " ('" +
                                   ref->per_tile.text() + "'), which covers " + std::to_string(covered) + " of the tile's " +
                                   std::to_string(tile_m) + " rows; rows x per_tile must be at least tile_m",
              ref->per_tile_loc)
          .notes.push_back("the tile sequence (tile_m = " + std::to_string(tile_m) + ") is declared by " +
                           ctx.tiles_owner->contract->name + " at " + ctx.tiles->loc.str());
      break;  // one error per pipe
    }
  }
}

// [[assert]]: relations between resolved facts. Evaluated once per contract (not per instance).
void check_asserts(LinkContext& ctx) {
  for (const auto& c : ctx.contracts)
    for (const AssertDecl& a : c->asserts) {
      const auto lookup = [&](const std::string& n) { return ctx.fact_value(n); };
      std::string e;
      auto v = a.expr.eval(lookup, e);
      if (!v) {
        std::string unknown;
        for (const std::string& n : a.expr.names())
          if (!ctx.facts.count(n) && unknown.empty()) unknown = n;
        ctx.diags.error("expr", "component '" + c->name + "': assert '" + a.expr.text() + "': " +
                                    (unknown.empty() ? e : "names fact '" + unknown + "', which no component provides"), a.loc);
        continue;
      }
      if (*v != 0) continue;
      std::string values;
      for (const std::string& n : a.expr.names())
        values += (values.empty() ? "" : ", ") + n + " = " + std::to_string(ctx.facts.at(n).value);
      Diagnostic& x = ctx.diags.error("assert", "component '" + c->name + "': assert '" + a.expr.text() + "' fails" +
                                                    (values.empty() ? std::string() : " with " + values), a.loc);
      if (!a.message.empty()) x.notes.push_back(c->name + " (" + c->owner + "): " + printable(a.message));
      for (const std::string& n : a.expr.names()) {
        const ResolvedFact& f = ctx.facts.at(n);
        x.notes.push_back(n + " provided by " + f.provider->name + " (" + f.provider->owner + ") at " + f.provided_at.str());
      }
    }
}

// The tile coordinate the ranks of a cluster walk along (ctx.cluster_axis). The generated
// scheduler gives the blocks of a cluster one tile group per step: `size` adjacent tiles along the
// axis, one per rank, so every block of the cluster, and of each multicast group in it, has the same
// value of the other coordinate for every tile, whatever the extents (a rank past the extent gets a
// tile past it, in the same group). A multicast tensor is one copy for every block of its group,
// so its content may depend only on that shared coordinate: tile_coords = ["n"] puts the ranks
// along m, ["m"] along n, in any order; [] leaves the order's own axis (n for row_major, m
// otherwise). A tensor that depends on both, tensors that ask for both axes, or ranks along n in a
// link without [tiles] (one tile per block: m = blockIdx.x) cannot be served, and are refused.
void cluster_axis(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  ctx.cluster_axis = ctx.tiles && ctx.tiles->order == "row_major" ? 'n' : 'm';
  ctx.cluster_axis_why.clear();
  struct Need { char axis; const Contract* c; const TensorDecl* t; std::string pipe; };
  std::vector<Need> needs;
  for (const Pipe& pipe : ctx.pipes) {
    if (pipe.multicast <= 1) continue;
    std::set<const PortDecl*> seen;
    for (const PipeEnd& e : pipe.producers) {
      const Contract& c = *ctx.instances[e.instance].contract;
      const PortDecl& p = c.ports[e.port];
      if (p.multicast <= 1 || !seen.insert(&p).second) continue;
      for (const std::string& m : p.multicast_tensors)
        for (const TensorDecl& t : p.tensors) {
          if (t.name != m || !t.tile_coords_declared) continue;  // undeclared: parse_contracts reported it
          const std::string who = "pipe '" + pipe.name + "': '" + c.name + "' multicasts tensor '" + t.name + "' across " +
                                  std::to_string(p.multicast) + " blocks";
          if (t.follows_m && t.follows_n)
            d.error("cluster", who + ", but its content depends on both tile coordinates (tile_coords = [\"m\", \"n\"]): "
                                   "the blocks of a group work on different tiles, so no one copy serves them all",
                    t.tile_coords_loc)
                .notes.push_back("multicast only what the blocks of a group share (tile_coords = [\"n\"], [\"m\"] or []); "
                                 "copy the rest per block");
          else if (t.follows_m || t.follows_n)
            needs.push_back({t.follows_n ? 'm' : 'n', &c, &t, pipe.name});
        }
    }
  }
  if (needs.empty()) return;
  const Need& first = needs.front();
  auto follows = [](const Need& n) { return std::string(n.axis == 'm' ? "n" : "m"); };
  for (const Need& n : needs)
    if (n.axis != first.axis) {
      const bool same = n.pipe == first.pipe && n.c == first.c;
      d.error("cluster", "pipe '" + n.pipe + "': '" + n.c->name + "' multicasts tensor '" + n.t->name + "', which follows tile " +
                             follows(n) + ", and " + (same ? std::string() : "pipe '" + first.pipe + "': '" + first.c->name + "' multicasts ") +
                             "tensor '" + first.t->name + "', which follows tile " + follows(first) +
                             "; the blocks of a group cannot share both m and n (they work on different tiles)",
              n.t->tile_coords_loc)
          .notes.push_back(first.c->name + " (" + first.c->owner + ") declares tile_coords at " + first.t->tile_coords_loc.str());
      return;
    }
  if (!ctx.tiles && first.axis == 'n') {
    d.error("cluster", "pipe '" + first.pipe + "': '" + first.c->name + "' multicasts tensor '" + first.t->name +
                           "', whose content follows tile m, but the link declares no tile sequence: each block takes one tile, "
                           "m = its block index, so the blocks of a group have different m",
            first.t->tile_coords_loc)
        .notes.push_back("declare [tiles] in a contract of the link: the blocks of a cluster then take adjacent tiles along n");
    return;
  }
  ctx.cluster_axis = first.axis;
  ctx.cluster_axis_why = "pipe '" + first.pipe + "' multicasts '" + first.t->name + "', which follows tile " + follows(first);
}

// Thread-block clusters. Every contract that declares [cluster] declares the same shape (the
// others are cluster-agnostic); a shape above the portable 8 blocks needs allow_nonportable. A
// producer port with multicast = N fills each stage jointly with the other blocks of its group
// of N, so the link needs a cluster that N divides; its multicast tensors split evenly by rows
// (each block copies rows / N of them), and a pipe that crosses blocks cannot take a generated
// transfer (the transfer warp would release only its own block's stage).
void check_cluster(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  constexpr int64_t kPortable = 8, kNonPortable = 16;  // sm_90: 8 portable, 16 with the opt-in
  for (const auto& c : ctx.contracts) {
    const ClusterDecl& k = c->cluster;
    if (!k.present) continue;
    const int64_t n = k.size();
    if (n > kNonPortable)
      d.error("cluster", "component '" + c->name + "' asks for a cluster of " + std::to_string(n) + " blocks; " + ctx.target.arch +
                             " runs at most " + std::to_string(kNonPortable), k.loc);
    else if (n > kPortable && !k.nonportable)
      d.error("cluster", "component '" + c->name + "' asks for a cluster of " + std::to_string(n) +
                             " blocks, beyond the portable limit of " + std::to_string(kPortable), k.loc)
          .notes.push_back("set allow_nonportable = true in [cluster] if the kernel is meant for a GPU that allows " +
                           std::to_string(kNonPortable) + " (the launch then opts in to non-portable cluster sizes)");
    if (!ctx.cluster) { ctx.cluster = &k; ctx.cluster_owner = c.get(); continue; }
    const ClusterDecl& r = *ctx.cluster;
    if (r.dims[0] != k.dims[0] || r.dims[1] != k.dims[1] || r.dims[2] != k.dims[2]) {
      auto shape = [](const ClusterDecl& x) {
        return "[" + std::to_string(x.dims[0]) + ", " + std::to_string(x.dims[1]) + ", " + std::to_string(x.dims[2]) + "]";
      };
      d.error("cluster", "components '" + c->name + "' and '" + ctx.cluster_owner->name + "' ask for different clusters: " +
                             shape(k) + " vs " + shape(r) + "; a kernel launches with one cluster shape", k.loc)
          .notes.push_back(ctx.cluster_owner->name + " (" + ctx.cluster_owner->owner + ") declares its cluster at " + r.loc.str());
    }
  }
  const int64_t size = ctx.cluster_size();
  for (Pipe& pipe : ctx.pipes) {
    const PortDecl* ref = nullptr;
    const Contract* ref_c = nullptr;
    for (const PipeEnd& e : pipe.producers) {
      const Contract& c = *ctx.instances[e.instance].contract;
      const PortDecl& p = c.ports[e.port];
      if (p.multicast <= 1) continue;
      if (!ref) { ref = &p; ref_c = &c; }
      else if (p.multicast != ref->multicast && &p != ref)
        d.error("cluster", "pipe '" + pipe.name + "': producers '" + ref_c->name + "' and '" + c.name + "' multicast across " +
                               std::to_string(ref->multicast) + " and " + std::to_string(p.multicast) + " blocks; a stage has one group",
                p.multicast_loc);
    }
    if (!ref) continue;
    const std::string who = "pipe '" + pipe.name + "': '" + ref_c->name + "' multicasts each stage across " +
                            std::to_string(ref->multicast) + " blocks";
    if (!ctx.cluster || size == 1) {
      d.error("cluster", who + (ctx.cluster ? ", but the link's cluster has 1 block (dims = [1, 1, 1] is no cluster)"
                                            : ", but the link has no cluster (no component declares [cluster])") +
                             "; a pipe cannot cross blocks without one",
              ref->multicast_loc)
          .notes.push_back("declare [cluster] dims = [" + std::to_string(ref->multicast) + ", 1, 1] in a contract of the link");
      continue;
    }
    if (ref->multicast > size) {
      d.error("cluster", who + ", beyond the cluster of " + std::to_string(size) + " blocks (multicast mask 0x" +
                             [&] { char b[24]; std::snprintf(b, sizeof b, "%llx", (1ull << ref->multicast) - 1); return std::string(b); }() +
                             " reaches blocks outside the cluster)", ref->multicast_loc)
          .notes.push_back(ctx.cluster_owner->name + " declares the cluster at " + ctx.cluster->loc.str());
      continue;
    }
    if (size % ref->multicast != 0) {
      d.error("cluster", who + ", which does not divide the cluster of " + std::to_string(size) +
                             " blocks into whole groups", ref->multicast_loc)
          .notes.push_back(ctx.cluster_owner->name + " declares the cluster at " + ctx.cluster->loc.str());
      continue;
    }
    // The tensors multicast on this pipe: every multicasting producer's, in producer order (two
    // producers may each multicast their own tensor; the first one's alone left the second's
    // unshared in the boxes, the copies check and the map).
    std::vector<std::string> mtensors;
    std::vector<std::pair<const Contract*, const PortDecl*>> mowner;  // who multicasts each
    for (const PipeEnd& e : pipe.producers) {
      const Contract& c = *ctx.instances[e.instance].contract;
      const PortDecl& p = c.ports[e.port];
      if (p.multicast > 1)
        for (const std::string& m : p.multicast_tensors)
          if (std::find(mtensors.begin(), mtensors.end(), m) == mtensors.end()) mtensors.push_back(m), mowner.push_back({&c, &p});
    }
    for (size_t i = 0; i < mtensors.size(); ++i) {
      const std::string& m = mtensors[i];
      const std::string owner = "pipe '" + pipe.name + "': '" + mowner[i].first->name + "' multicasts each stage across " +
                                std::to_string(ref->multicast) + " blocks";
      for (const PipeTensor& t : pipe.tensors)
        if (t.name == m && t.rows % ref->multicast != 0)
          d.error("cluster", owner + ": tensor '" + m + "' has " + std::to_string(t.rows) + " rows, which " +
                                 std::to_string(ref->multicast) + " blocks cannot share evenly (each copies rows / " +
                                 std::to_string(ref->multicast) + ")", mowner[i].second->multicast_loc);
        else if (t.name == m && (t.bytes() / ref->multicast) % 128 != 0)
          // Each block's slice starts at offset + part * bytes / N: a tensor copy's shared-memory
          // destination must be 128-byte aligned (PTX ISA, cp.async.bulk.tensor).
          d.error("cluster", owner + ": tensor '" + m + "' is " + std::to_string(t.bytes()) + " bytes, so each block's slice of " +
                                 std::to_string(t.bytes() / ref->multicast) + " bytes is not a multiple of 128 and the next block's "
                                 "copy would start unaligned", mowner[i].second->multicast_loc);
    }
    for (size_t k = 0; k < pipe.tensors.size() && k < pipe.consumer_view.size(); ++k)
      if (pipe.tensors[k].layout != pipe.consumer_view[k].layout || pipe.tensors[k].swizzle != pipe.consumer_view[k].swizzle) {
        d.error("cluster", who + ", and its consumers read tensor '" + pipe.tensors[k].name +
                               "' in another layout; a generated transfer cannot serve a pipe that crosses blocks", ref->multicast_loc);
        break;
      }
    pipe.multicast = ref->multicast;
    pipe.multicast_tensors = mtensors;
    pipe.multicast_mask = static_cast<int64_t>((1ull << ref->multicast) - 1);
  }
  cluster_axis(ctx);
  if (ctx.tiles && ctx.tiles->order == "grouped" && ctx.cluster_axis == 'm' && ctx.tiles->group % size != 0)
    d.error("cluster", "the tile sequence's bands of " + std::to_string(ctx.tiles->group) + " tiles (order = \"grouped\") do not split into "
                           "the cluster's groups of " + std::to_string(size) + " blocks; group must be a multiple of the cluster",
            ctx.tiles->loc);
}

}  // namespace

void check(LinkContext& ctx) {
  for (const auto& c : ctx.contracts) {
    unsigned n = 0;
    for (const Instance& in : ctx.instances) n += in.contract == c.get();
    check_component(ctx, *c, n);
  }
  check_entries(ctx);
}

// The schedule (--tile-schedule) and the components that walk k ranges. Every component whose
// [tiles] declares k_extent walks units (pl::unit_at) over the same k extent and slice; at most one
// contract sums partials. Under stream-k a tile's k slices may be split across blocks, so every
// end of a pipe whose per_tile names the k extent (stages per k slice) must walk units, or it
// would move a whole tile's stages where its peer moves a piece's; a transfer (generated code that
// walks whole tiles) cannot sit on such a pipe; and there is no cluster (the blocks of a cluster
// walk tiles in step). A component walking k ranges is fine in a data-parallel link: each unit is
// a whole tile.
void check_schedule(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  const std::string& sched = ctx.opt.tile_schedule;
  const bool sk = sched == "stream-k" || sched == "stream-k:1" || sched == "stream-k:0" || sched == "split-k";
  if (!sched.empty() && sched != "data-parallel" && !sk) {
    d.error("tiles", "--tile-schedule " + sched + ": the schedule is data-parallel, stream-k[:W] (W = 0 or 1 full waves "
                     "besides the partial last one split along k; stream-k = stream-k:1) or split-k (the partial last wave's "
                     "tiles each split along k into equal pieces, as many as fill the grid)", SourceLoc{});
    return;
  }
  ctx.sk_waves = sched == "stream-k:0" ? 0 : 1;
  ctx.split_k = sched == "split-k";
  const Contract* kref = nullptr;
  std::set<const Contract*> seen;
  for (const Instance& in : ctx.instances) {
    const Contract& c = *in.contract;
    if (!c.tiles.present || c.tiles.k_extent.empty() || !seen.insert(&c).second) continue;
    if (!kref) { kref = &c; continue; }
    if (c.tiles.k_extent != kref->tiles.k_extent || c.tiles.k_tile.value != kref->tiles.k_tile.value)
      d.error("tiles", "components '" + c.name + "' and '" + kref->name + "' walk different k ranges: k_extent " + c.tiles.k_extent +
                           ", k_tile " + std::to_string(c.tiles.k_tile.value) + " vs " + kref->tiles.k_extent + ", " +
                           std::to_string(kref->tiles.k_tile.value), c.tiles.k_loc)
          .notes.push_back(kref->name + " declares its k range at " + kref->tiles.k_loc.str());
  }
  for (const Instance& in : ctx.instances) {
    const Contract& c = *in.contract;
    if (!c.tiles.has_partials) continue;
    if (!ctx.partials_owner) {
      ctx.partials_owner = &c;
      ctx.partial_bytes = c.tiles.partial_bytes.value;
    }
    if (ctx.partials_owner == &c) { ++ctx.partial_instances; continue; }
    if (seen.insert(&c).second)
      d.error("tiles", "components '" + c.name + "' and '" + ctx.partials_owner->name + "' both sum a split tile's partials "
                           "([tiles] partial_bytes); one component owns the reduction", c.tiles.partial_loc)
          .notes.push_back(ctx.partials_owner->name + " declares it at " + ctx.partials_owner->tiles.partial_loc.str());
  }
  if (kref) {
    bool declared = false;
    for (const auto& c : ctx.contracts)
      for (const ParamDecl& p : c->params)
        if (p.name == kref->tiles.k_extent) {
          declared = true;
          if (p.type != ParamType::U32)
            d.error("tiles", "k extent '" + p.name + "' must be a u32 param, but '" + c->name + "' declares it " + param_type_name(p.type), p.loc);
        }
    if (!declared)
      d.error("tiles", "component '" + kref->name + "' walks k ranges over '" + kref->tiles.k_extent + "', which no component declares "
                       "as a [[param]] (u32)", kref->tiles.k_loc);
    ctx.k_walk = true;
    ctx.k_extent = kref->tiles.k_extent;
    ctx.k_tile = kref->tiles.k_tile.value;
    if (ctx.k_tile < 1 || ctx.k_tile > INT32_MAX) {
      d.error("tiles", "component '" + kref->name + "': k_tile must be in " + range(1, INT32_MAX) + ", not " + std::to_string(ctx.k_tile),
              kref->tiles.k_loc);
      ctx.sizes_ok = false;
    }
  }
  if (ctx.partials_owner && (ctx.partial_bytes < 16 || ctx.partial_bytes > (int64_t(1) << 30) || ctx.partial_bytes % 16 != 0)) {
    d.error("tiles", "component '" + ctx.partials_owner->name + "': partial_bytes = " + std::to_string(ctx.partial_bytes) +
                         " must be a multiple of 16 in 16.." + std::to_string(int64_t(1) << 30), ctx.partials_owner->tiles.partial_loc);
    ctx.sizes_ok = false;
  }
  if (!sk) return;
  ctx.stream_k = true;
  if (!ctx.tiles) {
    d.error("tiles", "--tile-schedule stream-k: no component declares [tiles]", SourceLoc{});
    return;
  }
  if (!kref)
    d.error("tiles", "--tile-schedule stream-k splits tiles along k, but no component walks k ranges: declare [tiles] k_extent and "
                     "k_tile in the components whose code runs a tile's k slices (they call pl::unit_at)", ctx.tiles->loc);
  else if (!ctx.partials_owner)
    d.error("tiles", "--tile-schedule " + sched + " splits tiles along k, but no component sums the pieces: the component that holds the "
                     "accumulators declares [tiles] partial_bytes (the bytes of one piece's partial result)", kref->tiles.k_loc);
  if (ctx.cluster_size() > 1)
    d.error("tiles", "--tile-schedule " + sched + " in a cluster link: the blocks of a cluster walk tiles in step, the pieces "
                     "of a split tile do not; link without the cluster or data-parallel", ctx.cluster->loc);
  // Under --pdl the entry waits for the previous grid before any role; a partials owner that
  // waits itself (pdl_wait = "own") could publish into a slot the previous launch still reads.
  if (ctx.opt.pdl && ctx.partials_owner && ctx.partials_owner->pdl_own_wait)
    d.error("tiles", "component '" + ctx.partials_owner->name + "' sums split tiles' partials ([tiles] partial_bytes) and waits for "
                     "earlier kernels itself (pdl_wait = \"own\"): under --pdl it could write the workspace while the previous "
                     "launch still reads it; leave the wait to the entry", ctx.partials_owner->pdl_wait_loc.line
                         ? ctx.partials_owner->pdl_wait_loc : ctx.partials_owner->loc);
  // The first end of a pipe whose per_tile names the k extent (stages per k slice), if any.
  auto per_k_end = [&](const Pipe& pipe) -> const PipeEnd* {
    for (const std::vector<PipeEnd>* side : {&pipe.producers, &pipe.consumers})
      for (const PipeEnd& e : *side) {
        const PortDecl& p = ctx.instances[e.instance].contract->ports[e.port];
        const std::vector<std::string> names = p.per_tile_declared ? p.per_tile.names() : std::vector<std::string>{};
        if (std::find(names.begin(), names.end(), ctx.k_extent) != names.end()) return &e;
      }
    return nullptr;
  };
  // A pipe between a component that walks units and one that walks whole tiles: only the
  // partials owner may hand whole tiles on (it emits once per tile, after summing the pieces).
  for (const Pipe& pipe : ctx.pipes) {
    if (!ctx.partials_owner) break;  // reported above: nobody sums the pieces
    if (per_k_end(pipe)) continue;   // left to the per-k-slice rule below
    const PipeEnd* unit_end = nullptr;  // a unit-walking end other than the partials owner as producer
    const PipeEnd* tile_end = nullptr;  // an end that walks whole tiles
    for (const std::vector<PipeEnd>* side : {&pipe.producers, &pipe.consumers})
      for (const PipeEnd& e : *side) {
        const Contract& c = *ctx.instances[e.instance].contract;
        if (c.tiles.k_extent.empty()) {
          if (!tile_end) tile_end = &e;
        } else if (!unit_end && (side == &pipe.consumers || &c != ctx.partials_owner)) {
          unit_end = &e;
        }
      }
    if (!unit_end || !tile_end) continue;
    const Contract& uc = *ctx.instances[unit_end->instance].contract;
    const Contract& tc = *ctx.instances[tile_end->instance].contract;
    d.error("tiles", "pipe '" + pipe.name + "' joins '" + uc.name + "', which walks k ranges (pl::unit_at), and '" + tc.name +
                         "', which walks whole tiles: under --tile-schedule " + sched + " a unit may be a piece of a tile, so "
                         "their stage counts differ; only the component that sums the pieces ([tiles] partial_bytes) may hand "
                         "tiles to components that walk whole tiles, as the pipe's producer",
            uc.ports[unit_end->port].loc)
        .notes.push_back(tc.name + " declares its end at " + tc.ports[tile_end->port].loc.str());
  }
  // Pipes that move stages per k slice.
  for (const Pipe& pipe : ctx.pipes) {
    const PipeEnd* per_k = per_k_end(pipe);
    if (!per_k) continue;
    std::vector<PipeEnd> ends = pipe.producers;
    ends.insert(ends.end(), pipe.consumers.begin(), pipe.consumers.end());
    const Contract& pc = *ctx.instances[per_k->instance].contract;
    const PortDecl& pp = pc.ports[per_k->port];
    if (pipe.transfer_to >= 0 || pipe.transfer_from >= 0)
      d.error("tiles", "pipe '" + pipe.name + "' moves stages per k slice (" + pc.name + "'s per_tile = \"" + pp.per_tile.text() +
                           "\") through a generated transfer, which walks whole tiles: under --tile-schedule " + sched + " its ends "
                           "must share the stage layout", pp.per_tile_loc);
    std::set<const Contract*> told;
    for (const PipeEnd& e : ends) {
      const Contract& c = *ctx.instances[e.instance].contract;
      if (!c.tiles.k_extent.empty() || !told.insert(&c).second) continue;
      d.error("tiles", "pipe '" + pipe.name + "' moves stages per k slice (" + pc.name + "'s per_tile = \"" + pp.per_tile.text() +
                           "\"), which --tile-schedule " + sched + " splits across blocks, but '" + c.name +
                           "' walks whole tiles: its [tiles] declares no k_extent",
              c.tiles.present ? c.tiles.loc : c.ports[e.port].loc)
          .notes.push_back(pc.name + " declares per_tile at " + pp.per_tile_loc.str());
    }
  }
}

// The element type a tensor map is encoded with: the 1-byte types share TMA's UINT8, so one map
// serves a u8, i8 or fp8 view of the same bytes.
static std::string map_element(const std::string& dtype) {
  return dtype == "i8" || dtype == "f8e4m3" || dtype == "f8e5m2" ? "u8" : dtype;
}

// Tensormap params that name the tensor their copies move ([[param]] tensor = "<port>.<tensor>",
// box): the tensor as the component sees it in the linked pipe (a consumer's view, its shape
// resolved when it takes "*"). A copy is a band of whole rows: its columns are the tensor's, so
// copies k rows apart land where the tensor's rows are (a narrower box would write each copy as a
// dense block). A producer copies its share of the tensor: the tensor divided among the TMA
// producer instances that write it, and, for a multicast tensor, among the blocks of the group
// (each copies rows / N into every block); the box (default: the whole share) must tile it. How
// several arrive-completing producer instances, or several consumer instances, split a tensor is
// their code's, so they declare the box. TMA's
// rules for a tiled map: each side 1..256, rows a multiple of 16 bytes and, under a swizzle, at
// most its span; the second and later copies start at a multiple of the box's bytes, which must
// then be 128-byte aligned. A producer must write the tensor (its port's `writes`). Every
// contract that uses a map names its tensor, or none does, and they agree (the 1-byte element
// types as one: TMA encodes them all as UINT8). The result is
// ctx.tmap_boxes (the manifest's `box` words). Runs after check_cluster (the pipes' multicast).
// It does not read the code: the copies' byte counts are checked as the pipe's transaction bytes.
void check_tensormaps(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  struct First { const Contract* c; const ParamDecl* p; };
  std::map<std::string, First> first;            // the first contract that names the map's tensor
  std::map<std::string, First> unnamed;          // the first that uses the map without naming one
  std::set<const ParamDecl*> done;  // one check per declaration (instances of a contract share it)
  for (size_t ii = 0; ii < ctx.instances.size(); ++ii) {
    const Contract& c = *ctx.instances[ii].contract;
    for (const ParamDecl& p : c.params) {
      if (p.type != ParamType::TensorMap) continue;
      if (p.tensor_port.empty()) {
        if (!p.tensor_loc.known()) unnamed.emplace(p.name, First{&c, &p});  // (a malformed tensor was reported)
        continue;
      }
      if (!done.insert(&p).second) continue;
      size_t port = 0;
      while (port < c.ports.size() && c.ports[port].name != p.tensor_port) ++port;
      if (port == c.ports.size()) continue;  // parse reported it
      const PortDecl& pd = c.ports[port];
      const bool out = pd.dir == PortDir::Out;
      const PipeTensor* t = nullptr;
      const Pipe* pipe = nullptr;
      for (const Pipe& pp : ctx.pipes)
        for (const PipeEnd& e : out ? pp.producers : pp.consumers)
          if (e.instance == int(ii) && e.port == int(port))
            for (const PipeTensor& v : out ? pp.tensors : pp.consumer_view)
              if (v.name == p.tensor_name) { t = &v; pipe = &pp; }
      if (!t || t->rows < 1 || t->cols < 1 || t->elem_bytes < 1) continue;  // unconnected, or a shape reported already
      const std::string who_p = "component '" + c.name + "': param '" + p.name + "' (tensor \"" + printable(p.tensor_port) + "." + printable(p.tensor_name) + "\")";
      const SourceLoc& loc = p.box_declared ? p.box_loc : p.tensor_loc;
      if (t->layout != "row") {
        d.error("tensormap", who_p + " is column-major in shared memory; a map's box is declared only for a row-major tensor "
                                     "(build this map on the host and leave tensor out)", p.tensor_loc);
        continue;
      }
      // A producer's share: the tensor among its writers in one block, then among a multicast group.
      const bool multicast = out && pipe->multicast > 1 &&
                             std::find(pipe->multicast_tensors.begin(), pipe->multicast_tensors.end(), t->name) != pipe->multicast_tensors.end();
      int64_t share = 1;
      // The instances of this port (connect lets one port's instances, and no other producer, write
      // a tensor): tx producers announce equal shares of the stage, so their copies split it; how
      // arrive producers or several consumer instances split it is their code's.
      int64_t copiers = 0;
      for (const PipeEnd& e : out ? pipe->producers : pipe->consumers)
        if (&ctx.instances[e.instance].contract->ports[e.port] == &pd) ++copiers;
      if (out && !pd.writes.empty() && std::find(pd.writes.begin(), pd.writes.end(), p.tensor_name) == pd.writes.end()) {
        d.error("tensormap", who_p + ": the port's writes = [...] leaves the tensor to another producer; a map names a tensor "
                                     "its component copies", p.tensor_loc);
        continue;
      }
      if (copiers > 1 && !p.box_declared && !(out && pd.completion == Completion::Tx)) {
        d.error("tensormap", who_p + ": " + std::to_string(copiers) + " instances " +
                                     (out ? "complete the tensor by arrive" : "consume the tensor") +
                                     ", and the link cannot know which rows each copies (only tx producers split a stage into "
                                     "equal shares); the default box would be the whole tensor", p.tensor_loc)
            .notes.push_back("declare the copy its code makes: box = [rows, cols] beside tensor");
        continue;
      }
      if (out) {
        if (pd.completion == Completion::Tx) share = std::max<int64_t>(copiers, 1);
        if (multicast) share *= pipe->multicast;
      }
      const std::string tensor_shape = "[" + std::to_string(t->rows) + " x " + std::to_string(t->cols) + "]";
      const std::string shares = std::to_string(share) + " shares its copies are made in (the TMA producer instances writing it" +
                                 (multicast ? ", times the multicast group" : "") + ")";
      if (t->rows % share != 0) {
        d.error("tensormap", who_p + ": the tensor's " + tensor_shape + " rows do not split into the " + shares, loc);
        continue;
      }
      const int64_t share_rows = t->rows / share;
      if (share > 1 && (share_rows * t->cols * t->elem_bytes) % 128 != 0) {  // (a multicast slice alone: check_cluster)
        d.error("tensormap", who_p + ": the tensor's " + tensor_shape + " in " + shares + " leaves " + std::to_string(share_rows) +
                                     " rows of " + std::to_string(share_rows * t->cols * t->elem_bytes) +
                                     " bytes each, so the next share's copies would start at a shared-memory address that is not "
                                     "128-byte aligned (cp.async.bulk.tensor needs it): fewer producers, or a larger tensor", loc);
        continue;
      }
      TensorMapBox b{p.box_declared ? p.box_rows.value : share_rows, p.box_declared ? p.box_cols.value : t->cols, map_element(t->dtype),
                     t->swizzle};  // (the map's element type: u8 for every 1-byte type, so the map does not depend on input order)
      const std::string shape = " [" + std::to_string(b.rows) + " x " + std::to_string(b.cols) + "]";
      const int64_t inner = b.cols * t->elem_bytes, span = swizzle_span(t->swizzle);
      bool ok = true;
      // fixable: by declaring the box the code copies; else no box fits the tensor's rows
      auto bad = [&](const std::string& m, bool fixable = true) {
        Diagnostic& x = d.error("tensormap", who_p + ": " + (p.box_declared ? "box" : "the default box (the rows it copies)") + shape +
                                                 " " + m, loc);
        if (!p.box_declared && fixable) x.notes.push_back("declare the copy its code makes: box = [rows, cols] beside tensor");
        if (!fixable) x.notes.push_back("no box fits a copy of this tensor's rows: build this map on the host and leave tensor out");
        ok = false;
      };
      if (b.rows < 1 || b.rows > 256 || b.cols < 1 || b.cols > 256)
        bad("has a side outside 1..256 (a TMA box)", b.cols >= 1 && b.cols <= 256 && t->cols <= 256);
      else if (b.cols != t->cols)
        bad("is " + std::to_string(b.cols) + " columns wide, the tensor " + tensor_shape + " " + std::to_string(t->cols) +
            ": a copy is a band of the tensor's whole rows (a box of another width writes each copy as one dense block, not "
            "into the tensor's rows)", t->cols <= 256);
      else if (inner % 16 != 0) bad("has rows of " + std::to_string(inner) + " bytes; TMA copies rows of a multiple of 16 bytes", false);
      else if (span && inner > span)
        bad("has rows of " + std::to_string(inner) + " bytes, wider than the tensor's " + t->swizzle + " swizzle (a swizzled box row is at most its span)",
            false);
      else if (share_rows % b.rows != 0)
        bad(share == 1 ? "does not tile the tensor's " + tensor_shape
                       : "does not tile the " + std::to_string(share_rows) + " rows this component copies (the tensor's " + tensor_shape +
                             " in " + std::to_string(share) + " shares)");
      else if (b.rows < t->rows && (b.rows * inner) % 128 != 0)
        bad("moves " + std::to_string(b.rows * inner) + " bytes per copy, so the next copy would start at a shared-memory address "
            "that is not 128-byte aligned (cp.async.bulk.tensor needs it)");
      else if (b.rows < t->rows && span && (b.rows * inner) % (8 * span) != 0)
        bad("moves " + std::to_string(b.rows * inner) + " bytes per copy, so the next copy would start inside a " + t->swizzle +
            " swizzle atom (8 rows, " + std::to_string(8 * span) + " bytes): swizzled copies start on an atom");
      if (!ok) continue;
      {
        // What the copies into the tensor must add up to (conform's PL_COPIES check): a tx producer's
        // share; where several consumer ends of the pipe, or several arrive producers writing the
        // tensor, may each take a part, anything from an equal part to all of it (the link does not
        // know their split).
        int64_t ends = 0;
        for (const PipeEnd& e : out ? pipe->producers : pipe->consumers) {
          const PortDecl& q = ctx.instances[e.instance].contract->ports[e.port];
          ends += !out || q.writes.empty() || std::find(q.writes.begin(), q.writes.end(), p.tensor_name) != q.writes.end();
        }
        const bool split_unknown = ends > 1 && !(out && pd.completion == Completion::Tx);
        ctx.tmap_copies[{c.name, p.name}] = {p.tensor_port + "." + p.tensor_name, b.rows,
                                             split_unknown ? (t->rows + ends - 1) / ends : share_rows, share_rows};
      }
      auto [it, fresh] = first.emplace(p.name, First{&c, &p});
      if (fresh) { ctx.tmap_boxes[p.name] = b; continue; }
      const TensorMapBox& a = ctx.tmap_boxes[p.name];
      if (a.rows != b.rows || a.cols != b.cols || a.dtype != b.dtype || a.swizzle != b.swizzle) {
        // Name what differs, in the map's terms: the 1-byte element types are one map type (u8), so
        // two contracts' u8 and i8 are not a difference; their boxes may be.
        std::vector<std::string> diffs;
        if (a.rows != b.rows || a.cols != b.cols)
          diffs.push_back("box [" + std::to_string(b.rows) + " x " + std::to_string(b.cols) + "] against [" + std::to_string(a.rows) +
                          " x " + std::to_string(a.cols) + "]");
        if (a.dtype != b.dtype) diffs.push_back("element type " + b.dtype + " against " + a.dtype);
        if (a.swizzle != b.swizzle) diffs.push_back("swizzle " + b.swizzle + " against " + a.swizzle);
        std::string what;
        for (size_t i = 0; i < diffs.size(); ++i) what += (i == 0 ? "" : i + 1 == diffs.size() ? " and " : ", ") + diffs[i];
        const ParamDecl& q = *it->second.p;
        d.error("tensormap", who_p + " copies " + t->dtype + shape + " (swizzle " + b.swizzle + "), but '" + it->second.c->name +
                                 "' declares another copy for the same map: " + what + "; the host builds one map", loc)
            .notes.push_back(it->second.c->name + " declares it at " + (q.box_declared ? q.box_loc : q.tensor_loc).str());
      }
    }
  }
  // One map, one box: a contract that uses a named map without naming its tensor would get the
  // other's box from the host without having said it copies that.
  for (const auto& [name, u] : unnamed)
    if (auto f = first.find(name); f != first.end())
      d.error("tensormap", "component '" + u.c->name + "': param '" + name + "' names no tensor, but '" + f->second.c->name +
                               "' names the tensor its copies move; the host builds one map with that box: name the tensor (and box) "
                               "in every contract that uses the map, or in none", u.p->loc)
          .notes.push_back(f->second.c->name + " names it at " + f->second.p->tensor_loc.str());
}

void check_link(LinkContext& ctx) {
  check_params(ctx);
  check_tiles(ctx);
  check_per_tile(ctx);
  check_asserts(ctx);
  check_cluster(ctx);
  check_tensormaps(ctx);  // after check_cluster: a multicast tensor's share
  check_schedule(ctx);
}

}  // namespace pipelink
