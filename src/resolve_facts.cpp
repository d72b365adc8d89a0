// resolve_facts — gives every fact one value and evaluates every expression in every contract.
//
// Does: collects provided facts (which may themselves be expressions over other facts; cycles are
// errors), checks that each used fact is provided, provided consistently, of one type, and meets
// every user's constraints; then evaluates each contract's quantities. Does not: look at
// resources or ports (check, allocate).
#include <functional>
#include <set>
#include <sstream>

#include "context.h"

namespace pipelink {

const char* fact_type_name(FactType t) {
  switch (t) {
    case FactType::I32: return "i32";
    case FactType::U32: return "u32";
    case FactType::I64: return "i64";
    case FactType::U64: return "u64";
  }
  return "?";
}

const char* fact_c_type(FactType t) {
  switch (t) {
    case FactType::I32: return "int";
    case FactType::U32: return "unsigned";
    case FactType::I64: return "long long";
    case FactType::U64: return "unsigned long long";
  }
  return "unsigned";
}

namespace {

struct Provider { const Contract* c; const FactProvide* p; };

bool fits(FactType t, int64_t v) {
  switch (t) {
    case FactType::I32: return v >= INT32_MIN && v <= INT32_MAX;
    case FactType::U32: return v >= 0 && v <= UINT32_MAX;
    case FactType::I64: return true;
    case FactType::U64: return v >= 0;
  }
  return false;
}

}  // namespace

void resolve_facts(LinkContext& ctx) {
  Diagnostics& d = ctx.diags;
  std::map<std::string, std::vector<Provider>> providers;
  for (const auto& c : ctx.contracts)
    for (const FactProvide& p : c->provides) providers[p.name].push_back({c.get(), &p});

  // Evaluate provided facts on demand, depth-first, detecting cycles. A chain of facts defined
  // through each other recurses once per link: longer than kMaxFactDepth is an error, not a
  // stack overflow.
  constexpr int kMaxFactDepth = 100;
  int depth = 0;
  bool too_deep = false;
  std::map<std::string, int> state;  // 0 = new, 1 = in progress, 2 = done (value in ctx.facts or failed)
  std::function<std::optional<int64_t>(const std::string&)> value_of = [&](const std::string& name) -> std::optional<int64_t> {
    auto it = providers.find(name);
    if (it == providers.end()) return std::nullopt;
    int& st = state[name];
    if (st == 2) return ctx.fact_value(name);
    if (st == 1) {
      const Provider& p = it->second.front();
      d.error("expr", "fact '" + name + "' is defined in terms of itself", p.p->value.loc);
      return std::nullopt;
    }
    if (depth >= kMaxFactDepth) {
      if (!too_deep)
        d.error("expr", "fact '" + name + "' is reached through a chain of more than " + std::to_string(kMaxFactDepth) +
                            " facts defined by each other", it->second.front().p->value.loc);
      too_deep = true;
      return std::nullopt;  // left new: its own evaluation, from the top, reports nothing further
    }
    struct Deeper { int& d; explicit Deeper(int& x) : d(++x) {} ~Deeper() { --d; } } deeper(depth);
    st = 1;
    std::vector<std::pair<Provider, int64_t>> values;
    for (const Provider& p : it->second) {
      std::string e;
      bool dependency_failed = false;  // already reported where it failed: no cascade
      auto v = p.p->value.expr.eval([&](const std::string& n) {
        auto r = value_of(n);
        if (!r && providers.count(n)) dependency_failed = true;
        return r;
      }, e);
      if (!v) {
        if (!dependency_failed)
          d.error("expr", "component '" + p.c->name + "': cannot evaluate fact '" + name + "': " + e, p.p->value.loc);
        continue;
      }
      if (auto ov = ctx.opt.fact_overrides.find(name); ov != ctx.opt.fact_overrides.end()) v = ov->second;  // --set
      if (!fits(p.p->type, *v))
        d.error("fact-type", "component '" + p.c->name + "': fact '" + name + "' = " + std::to_string(*v) +
                                 " does not fit its type " + fact_type_name(p.p->type), p.p->value.loc);
      values.push_back({p, *v});
    }
    st = 2;
    if (values.empty()) return std::nullopt;
    const auto& [first, v0] = values.front();
    for (size_t i = 1; i < values.size(); ++i) {
      const auto& [p, v] = values[i];
      if (v != v0) {
        Diagnostic& x = d.error("fact-multiply-provided", "fact '" + name + "' is provided with different values: " +
                                    std::to_string(v0) + " by '" + first.c->name + "' and " + std::to_string(v) + " by '" +
                                    p.c->name + "'", p.p->value.loc);
        x.notes.push_back("also provided by " + first.c->name + " (" + first.c->owner + ") at " + first.p->value.loc.str());
      } else if (p.p->type != first.p->type) {
        d.error("fact-type", "fact '" + name + "' is provided as " + fact_type_name(first.p->type) + " by '" + first.c->name +
                                 "' and as " + fact_type_name(p.p->type) + " by '" + p.c->name + "'", p.p->value.loc);
      } else {
        d.warning("fact-multiply-provided", "fact '" + name + "' = " + std::to_string(v) + " is provided by both '" +
                                                first.c->name + "' and '" + p.c->name + "' (same value)", p.p->value.loc);
      }
    }
    ResolvedFact f;
    f.name = name;
    f.value = v0;
    f.type = first.p->type;
    f.provider = first.c;
    f.provided_at = first.p->value.loc;
    ctx.facts[name] = f;
    return v0;
  };
  for (const auto& [name, list] : providers) value_of(name);

  // Uses: provided, typed, constrained.
  for (const auto& c : ctx.contracts) {
    for (const FactUse& u : c->uses) {
      auto it = ctx.facts.find(u.name);
      if (it == ctx.facts.end()) {
        if (providers.count(u.name)) continue;  // provided but failed to evaluate: already reported
        d.error("fact-unprovided", "component '" + c->name + "' uses fact '" + u.name + "', which no component provides", u.loc)
            .notes.push_back("required by " + c->name + " (" + c->owner + ") at " + u.loc.str());
        continue;
      }
      ResolvedFact& f = it->second;
      f.users.push_back(c->name);
      if (u.type && *u.type != f.type)
        d.error("fact-type", "component '" + c->name + "' uses fact '" + u.name + "' as " + fact_type_name(*u.type) +
                                 " but '" + f.provider->name + "' provides it as " + fact_type_name(f.type), u.loc)
            .notes.push_back("provided by " + f.provider->name + " (" + f.provider->owner + ") at " + f.provided_at.str());
      std::vector<std::string> broken;
      int64_t v = f.value;
      if (u.min && v < *u.min) broken.push_back("min = " + std::to_string(*u.min));
      if (u.max && v > *u.max) broken.push_back("max = " + std::to_string(*u.max));
      if (u.multiple_of && v % *u.multiple_of != 0) broken.push_back("multiple_of = " + std::to_string(*u.multiple_of));
      if (!u.one_of.empty()) {
        bool in = false;
        std::ostringstream s;
        for (size_t i = 0; i < u.one_of.size(); ++i) { in |= u.one_of[i] == v; s << (i ? ", " : "") << u.one_of[i]; }
        if (!in) broken.push_back("one_of = [" + s.str() + "]");
      }
      for (const std::string& b : broken) {
        Diagnostic& x = d.error("fact-constraint", "fact '" + u.name + "' = " + std::to_string(v) + " breaks constraint " + b +
                                    " of component '" + c->name + "'", u.loc);
        x.notes.push_back("required by " + c->name + " (" + c->owner + ") at " + u.loc.str());
        x.notes.push_back("provided by " + f.provider->name + " (" + f.provider->owner + ") at " + f.provided_at.str());
      }
    }
  }

  // u32 params (and tile extents, implicitly u32 params): what per_tile may read at run time.
  std::set<std::string> u32_params;
  for (const auto& c : ctx.contracts) {
    for (const ParamDecl& p : c->params)
      if (p.type == ParamType::U32) u32_params.insert(p.name);
    if (c->tiles.present) u32_params.insert({c->tiles.extent_m, c->tiles.extent_n});
    if (c->tiles.present && !c->tiles.k_extent.empty()) u32_params.insert(c->tiles.k_extent);
  }

  // Evaluate every quantity of every contract. A fact named only in an expression counts as used.
  for (const auto& cp : ctx.contracts) {
    Contract& c = *cp;
    std::set<std::string> used_names;
    for (const FactUse& u : c.uses) used_names.insert(u.name);
    for (const FactProvide& p : c.provides) used_names.insert(p.name);
    auto eval = [&](Quantity& q, const std::string& what) {
      if (q.expr.empty()) return;
      std::string e;
      auto v = q.expr.eval([&](const std::string& n) { return ctx.fact_value(n); }, e);
      if (v) { q.value = *v; return; }
      for (const std::string& n : q.expr.names()) {
        if (!ctx.facts.count(n) && !providers.count(n) && !used_names.count(n)) {
          d.error("expr", "component '" + c.name + "': " + what + " '" + q.expr.text() + "' names fact '" + n +
                              "', which no component provides", q.loc);
          return;
        }
      }
      // Unprovided-but-declared uses were reported above; report only genuine evaluation errors.
      bool all_known = true;
      for (const std::string& n : q.expr.names()) all_known &= ctx.facts.count(n) > 0;
      if (all_known) d.error("expr", "component '" + c.name + "': " + what + " '" + q.expr.text() + "': " + e, q.loc);
    };
    if (c.instances) eval(*c.instances, "instances");
    eval(c.warps, "warp count");
    if (c.registers) eval(*c.registers, "register budget");
    for (SmemRegion& r : c.smem) eval(r.bytes, "smem '" + r.name + "' bytes");
    for (NamedBarrier& b : c.barriers) eval(b.threads, "named barrier '" + b.name + "' threads");
    for (MbarrierGroup& m : c.mbarriers) { eval(m.count, "mbarrier '" + m.name + "' count"); eval(m.arrivals, "mbarrier '" + m.name + "' arrivals"); }
    for (PortDecl& p : c.ports) {
      eval(p.stages, "port '" + p.name + "' stages");
      for (TensorDecl& t : p.tensors) { eval(t.rows, "tensor '" + t.name + "' rows"); eval(t.cols, "tensor '" + t.name + "' cols"); }
    }
    if (c.tiles.present) { eval(c.tiles.tile_m, "tile_m"); eval(c.tiles.tile_n, "tile_n"); }
    if (c.tiles.present && !c.tiles.k_extent.empty()) eval(c.tiles.k_tile, "k_tile");
    if (c.tiles.has_partials) eval(c.tiles.partial_bytes, "partial_bytes");
    for (ParamDecl& p : c.params)
      if (p.box_declared) { eval(p.box_rows, "param '" + p.name + "' box rows"); eval(p.box_cols, "param '" + p.name + "' box cols"); }
    // per_tile reads facts and u32 params (known at run time). It is checked whether or not the
    // pipe gets a transfer: an unknown name or a divisor that is zero is an error either way.
    for (const PortDecl& p : c.ports) {
      if (!p.per_tile_declared || p.per_tile.empty()) continue;
      std::optional<int64_t> v;
      std::string e;
      if (!p.per_tile.check([&](const std::string& n) { return ctx.fact_value(n); },
                            [&](const std::string& n) {  // failed or unprovided facts: reported already
                              return u32_params.count(n) > 0 || providers.count(n) > 0 || used_names.count(n) > 0;
                            }, v, e))
        d.error("expr", "component '" + c.name + "': port '" + p.name + "' per_tile '" + printable(p.per_tile.text()) + "': " + e,
                p.per_tile_loc);
    }
  }
}

}  // namespace pipelink
