// header — `pipelink header`: the C++ header a component includes instead of restating its
// contract by hand (see docs/components.md, "The generated contract header").
//
// From one contract, or several contracts of one entry (variants of one source, e.g. wgmma_gu.cu
// built with other -D switches), it writes namespace pl_contract::<entry> with
//   * a named struct per [[param]], [[smem]], [[named_barrier]] and [[mbarrier]] (index in
//     contract order, typed accessor);
//   * a port type per [[port]] (In_<port> / Out_<port>) over pl::PipeReader / pl::PipeWriter whose
//     release(ctx) / commit(ctx) arrive as the port's `arrive` mode says, and a struct per tensor
//     (index, element type, declared shape where the contract's own facts fix it);
//   * constexpr warps / registers / instances and the provided facts;
// and the records those constants imply (PL_WARPS, PL_REGISTERS, PL_INSTANCES, PL_ARRIVE per port;
// PL_PROVIDE only on request), so a stale header or object is refused by the link's record check.
//
// Several contracts give their common part: names and order must agree (else the code's indices
// could not serve them all: an error); a value that differs between them (registers, instances,
// a provided fact) gets no constant and no record, and the source declares it from the constant
// it compiles in. Errors are reported as a link reports them (parse_contracts) plus rule "header";
// on any error nothing is returned.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>

#include "context.h"

namespace pipelink {

namespace {

const char* arrive_word(Arrive a) { return a == Arrive::One ? "one" : a == Arrive::Warp ? "warp" : "thread"; }

std::string cpp_dtype(const std::string& d) {
  if (d == "bf16") return "pl::bf16";
  if (d == "f16") return "pl::f16";
  if (d == "f32") return "float";
  if (d == "i32") return "int";
  if (d == "u8") return "unsigned char";
  if (d == "i8") return "signed char";
  if (d == "f8e4m3") return "pl::f8e4m3";
  if (d == "f8e5m2") return "pl::f8e5m2";
  return "unsigned char";
}

std::string literal(int64_t v, FactType t = FactType::U32) {
  std::string s = std::to_string(v);
  if (t == FactType::U32 && v >= 0) return s + "u";
  if (t == FactType::U64) return s + "ull";
  if (t == FactType::I64) return s + "ll";
  return s;
}

// One contract, parsed on its own (variants share a component name, which one link refuses).
struct Parsed {
  std::unique_ptr<LinkContext> ctx;
  LinkOptions opt;
  const Contract* c = nullptr;
  std::string file;  // base name, for comments
};

// A quantity's value from the contract's own [provide] facts; nullopt if it reads anything else.
std::optional<int64_t> own_value(const Contract& c, const Expr& e) {
  std::function<std::optional<int64_t>(const std::string&, int)> fact = [&](const std::string& n, int depth) -> std::optional<int64_t> {
    if (depth > 100) return std::nullopt;
    for (const FactProvide& p : c.provides)
      if (p.name == n) {
        std::string err;
        return p.value.expr.eval([&](const std::string& m) { return fact(m, depth + 1); }, err);
      }
    return std::nullopt;
  };
  std::string err;
  if (e.empty()) return std::nullopt;
  return e.eval([&](const std::string& n) { return fact(n, 0); }, err);
}

}  // namespace

std::string contract_header(const std::vector<std::string>& contracts, Diagnostics& diags) {
  if (contracts.empty()) {
    diags.error("input", "no input contracts");
    return "";
  }
  std::vector<Parsed> ps;
  for (const std::string& path : contracts) {
    Parsed p;
    p.opt.inputs = {path};
    ps.push_back(std::move(p));
  }
  // LinkContext keeps a reference to its options: parse after the vector stops moving.
  for (Parsed& p : ps) {
    p.ctx = std::make_unique<LinkContext>(p.opt, diags);
    parse_contracts(*p.ctx);
    if (!p.ctx->contracts.empty()) {
      p.c = p.ctx->contracts.front().get();
      p.file = std::filesystem::path(p.c->path).filename().string();
    }
  }
  if (diags.has_errors()) return "";
  const Contract& c0 = *ps.front().c;
  const std::string& E = c0.entry;

  // ---- agreement between variants: everything the code indexes by position ----
  bool ok = true;
  auto disagree = [&](const Parsed& p, const std::string& what, const std::string& mine, const std::string& first, SourceLoc loc) {
    Diagnostic& d = diags.error("header", "contract " + p.c->path + " " + what + " is " + mine + ", but contract " + c0.path +
                                              "'s is " + first + ": one header cannot serve both",
                                loc.known() ? loc : p.c->loc);
    d.notes.push_back("the code addresses them by position: give every variant the same tables in the same order, or a header of its own");
    ok = false;
  };
  for (size_t k = 1; k < ps.size(); ++k) {
    const Parsed& p = ps[k];
    const Contract& c = *p.c;
    if (c.entry != E) {
      disagree(p, "entry", "'" + c.entry + "'", "'" + E + "'", c.loc);
      continue;
    }
    auto list = [&](const char* table, size_t n, size_t n0, const std::function<std::string(const Contract&, size_t)>& name, SourceLoc loc) {
      if (n != n0) {
        disagree(p, std::string("number of ") + table + " entries", std::to_string(n), std::to_string(n0), loc);
        return;
      }
      for (size_t i = 0; i < n; ++i)
        if (name(c, i) != name(c0, i)) disagree(p, std::string(table) + " " + std::to_string(i), name(c, i), name(c0, i), loc);
    };
    list("[[param]]", c.params.size(), c0.params.size(),
         [](const Contract& x, size_t i) { return "'" + x.params[i].name + "' (" + param_type_name(x.params[i].type) + ")"; }, c.loc);
    list("[[smem]]", c.smem.size(), c0.smem.size(), [](const Contract& x, size_t i) { return "'" + x.smem[i].name + "'"; }, c.loc);
    list("[[named_barrier]]", c.barriers.size(), c0.barriers.size(),
         [](const Contract& x, size_t i) { return "'" + x.barriers[i].name + "'"; }, c.loc);
    list("[[mbarrier]]", c.mbarriers.size(), c0.mbarriers.size(),
         [](const Contract& x, size_t i) { return "'" + x.mbarriers[i].name + "'"; }, c.loc);
    list("[[port]]", c.ports.size(), c0.ports.size(), [](const Contract& x, size_t i) {
      const PortDecl& q = x.ports[i];
      std::string s = "'" + q.name + "' (" + (q.dir == PortDir::Out ? "out" : "in") + ", arrive = \"" + arrive_word(q.arrive) + "\"" +
                      (q.dir == PortDir::Out ? std::string(", completion = \"") + (q.completion == Completion::Tx ? "tx" : "arrive") + "\"" : "") +
                      ", tensors";
      for (const TensorDecl& t : q.tensors) s += " " + t.name + ":" + t.dtype;
      return s + ")";
    }, c.loc);
  }
  if (!ok) return "";

  // ---- names: every name becomes a C++ identifier ----
  auto check_name = [&](const std::string& kind, const std::string& n, const SourceLoc& loc, const std::set<std::string>& members) {
    if (!is_identifier(n) || reserved_identifier(n) || n.rfind("pl_", 0) == 0 || members.count(n)) {
      Diagnostic& d = diags.error("header", kind + " '" + printable(n) + "' cannot name a C++ symbol in the generated header", loc);
      d.notes.push_back(members.count(n) ? "it is a member name of the generated type; rename it in the contract"
                                         : "the header needs an identifier ([A-Za-z_][A-Za-z0-9_]*) that is not a C++ keyword, a "
                                           "CUDA built-in or a reserved name; rename it in the contract");
      ok = false;
    }
  };
  auto check_unique = [&](const std::string& kind, const std::vector<std::pair<std::string, SourceLoc>>& names) {
    std::set<std::string> seen;
    for (const auto& [n, loc] : names)
      if (!seen.insert(n).second) {
        diags.error("header", "two " + kind + " entries are named '" + printable(n) + "'; the header names each one", loc);
        ok = false;
      }
  };
  const std::set<std::string> port_members{"index", "arrive", "stages", "tensor", "pipe", "acquire", "wait", "commit", "commit_elected",
                                           "release", "release_elected", "expect_tx", "advance", "full_bar", "empty_bar", "rows", "cols",
                                           "multicast_mask", "multicast_part", "multicast_blocks"};
  {
    std::vector<std::pair<std::string, SourceLoc>> v;
    for (const ParamDecl& p : c0.params) { check_name("[[param]]", p.name, p.loc, {"index", "get"}); v.push_back({p.name, p.loc}); }
    check_unique("[[param]]", v);
    v.clear();
    for (const SmemRegion& s : c0.smem) { check_name("[[smem]]", s.name, s.loc, {"index", "at", "align"}); v.push_back({s.name, s.loc}); }
    check_unique("[[smem]]", v);
    v.clear();
    for (const NamedBarrier& b : c0.barriers) { check_name("[[named_barrier]]", b.name, b.loc, {"index", "threads", "id", "sync"}); v.push_back({b.name, b.loc}); }
    check_unique("[[named_barrier]]", v);
    v.clear();
    for (const MbarrierGroup& m : c0.mbarriers) { check_name("[[mbarrier]]", m.name, m.loc, {"index", "count", "arrivals", "addr"}); v.push_back({m.name, m.loc}); }
    check_unique("[[mbarrier]]", v);
    v.clear();
    for (const PortDecl& p : c0.ports) {
      check_name("[[port]]", p.name, p.loc, {});
      v.push_back({p.name, p.loc});
      std::vector<std::pair<std::string, SourceLoc>> tv;
      std::set<std::string> members = port_members;
      members.insert({"index", "type"});
      for (const TensorDecl& t : p.tensors) { check_name("port '" + p.name + "' tensor", t.name, t.loc, members); tv.push_back({t.name, t.loc}); }
      check_unique("port '" + p.name + "' tensor", tv);
    }
    check_unique("[[port]]", v);
  }
  if (!ok) return "";

  // ---- values: a constant only where every contract fixes the same one ----
  struct Value { std::optional<int64_t> v; std::string why; };  // why: a comment when there is no constant
  auto agree = [&](const std::function<const Expr*(const Contract&)>& get) -> Value {
    std::optional<int64_t> first;
    std::string seen;
    bool varies = false, unknown = false;
    for (const Parsed& p : ps) {
      const Expr* e = get(*p.c);
      std::optional<int64_t> v = e ? own_value(*p.c, *e) : std::nullopt;
      if (!v) { unknown = true; continue; }
      if (!seen.empty()) seen += ", ";
      seen += p.file + " " + std::to_string(*v);
      if (!first) first = v;
      else if (*first != *v) varies = true;
    }
    if (unknown) {
      const Expr* e = get(c0);
      return {std::nullopt, e ? "\"" + printable(e->text()) + "\": not fixed by the contract's own facts" : "not declared"};
    }
    if (varies) return {std::nullopt, "differs between the contracts (" + seen + ")"};
    return {first, ""};
  };
  auto declared_everywhere = [&](const std::function<bool(const Contract&)>& has) {
    for (const Parsed& p : ps) if (!has(*p.c)) return false;
    return true;
  };

  std::ostringstream o;
  o << "// Generated by `pipelink header` from the contract" << (ps.size() > 1 ? "s" : "") << " of entry " << E
    << "; do not edit. Regenerate:\n";
  o << "//   pipelink header";
  for (const std::string& c : contracts) o << " " << printable(c);
  o << " -o <this file>\n";
  o << "// Names, typed accessors and pipe operations of the contract, and the records its constants\n"
       "// imply (see docs/components.md, \"The generated contract header\"). A source that compiles in a\n"
       "// value of its own instead defines PL_OWN_WARPS, PL_OWN_REGISTERS, PL_OWN_INSTANCES or\n"
       "// PL_OWN_ARRIVE_<port> before including this header and declares that record itself; one that\n"
       "// compiles in exactly the provided:: constants defines PL_PROVIDE_FROM_CONTRACT.\n";
  if (ps.size() > 1) {
    o << "// Common to the contracts";
    for (const Parsed& p : ps) o << " " << printable(p.c->path);
    o << ":\n// a value that differs between them has no constant here; the source declares it.\n";
  }
  o << "#pragma once\n\n#include \"pipelink/device.cuh\"\n\n";
  o << "namespace pl_contract {\nnamespace " << E << " {\n\n";

  // [warps], [component]
  const Value warps = agree([](const Contract& c) { return &c.warps.expr; });
  const bool warpgroup_agrees = declared_everywhere([&](const Contract& c) { return c.warpgroup == c0.warpgroup; });
  Value regs{std::nullopt, "not declared"}, inst{std::nullopt, "not declared"};
  const bool regs_declared = declared_everywhere([](const Contract& c) { return c.registers.has_value(); });
  const bool inst_declared = declared_everywhere([](const Contract& c) { return c.instances.has_value(); });
  if (regs_declared) regs = agree([](const Contract& c) { return &c.registers->expr; });
  if (inst_declared) inst = agree([](const Contract& c) { return &c.instances->expr; });
  auto constant = [&](const char* type, const char* name, const Value& v, const char* what) {
    if (v.v) o << "enum : " << type << " { " << name << " = " << literal(*v.v) << " };  // " << what << "\n";
    else o << "// " << name << ": " << what << " " << v.why << "\n";
  };
  constant("unsigned", "warps", warps, "[warps] count");
  if (warpgroup_agrees) o << "enum : bool { warpgroup = " << (c0.warpgroup ? "true" : "false") << " };  // [warps] warpgroup\n";
  else o << "// warpgroup: [warps] warpgroup differs between the contracts\n";
  constant("unsigned", "registers", regs, "[warps] registers");
  constant("unsigned", "instances", inst, "[component] instances");

  // [provide]
  std::vector<std::pair<std::string, FactType>> provided;
  o << "\n// [provide]: the facts this component's owner fixes. Compile-time values; the records come from\n"
       "// them only with PL_PROVIDE_FROM_CONTRACT (see the top of this file).\nnamespace provided {\n";
  for (const FactProvide& f : c0.provides) {
    bool everywhere = true, same_type = true;
    for (const Parsed& p : ps) {
      auto it = std::find_if(p.c->provides.begin(), p.c->provides.end(), [&](const FactProvide& g) { return g.name == f.name; });
      if (it == p.c->provides.end()) everywhere = false;
      else if (it->type != f.type) same_type = false;
    }
    if (!everywhere || !same_type) {
      o << "// " << f.name << ": not provided alike by every contract\n";
      continue;
    }
    Value v = agree([&](const Contract& c) -> const Expr* {
      for (const FactProvide& g : c.provides) if (g.name == f.name) return &g.value.expr;
      return nullptr;
    });
    if (v.v) {
      o << "enum : " << fact_c_type(f.type) << " { " << f.name << " = " << literal(*v.v, f.type) << " };\n";
      provided.push_back({f.name, f.type});
    } else {
      o << "// " << f.name << ": " << v.why << "\n";
    }
  }
  o << "}  // namespace provided\n";

  // [[param]]
  if (!c0.params.empty()) {
    o << "\n// [[param]]: kernel parameters, index = contract order.\nnamespace param {\n";
    for (size_t i = 0; i < c0.params.size(); ++i) {
      const ParamDecl& p = c0.params[i];
      o << "struct " << p.name << " {  // " << param_type_name(p.type) << "\n  enum : unsigned { index = " << i << " };\n";
      switch (p.type) {
        case ParamType::TensorMap:
          o << "  static __device__ __forceinline__ const pl::TensorMap* get(const pl::Ctx& ctx) { return ctx.tmap(index); }\n";
          break;
        case ParamType::Ptr:
          o << "  template <class T = void> static __device__ __forceinline__ T* get(const pl::Ctx& ctx) { return ctx.ptr<T>(index); }\n";
          break;
        case ParamType::U32:
          o << "  static __device__ __forceinline__ unsigned get(const pl::Ctx& ctx) { return ctx.u32(index); }\n";
          break;
        case ParamType::I32:
          o << "  static __device__ __forceinline__ int get(const pl::Ctx& ctx) { return ctx.i32(index); }\n";
          break;
        case ParamType::U64:
          o << "  static __device__ __forceinline__ unsigned long long get(const pl::Ctx& ctx) { return ctx.u64(index); }\n";
          break;
        case ParamType::F32:
          o << "  static __device__ __forceinline__ float get(const pl::Ctx& ctx) { return ctx.f32(index); }\n";
          break;
      }
      o << "};\n";
    }
    o << "}  // namespace param\n";
  }

  // [[smem]]
  if (!c0.smem.empty()) {
    o << "\n// [[smem]]: shared-memory regions, index = contract order.\nnamespace smem {\n";
    for (size_t i = 0; i < c0.smem.size(); ++i) {
      const SmemRegion& s = c0.smem[i];
      o << "struct " << s.name << " {  // bytes = \"" << printable(s.bytes.expr.text()) << "\"\n  enum : unsigned { index = " << i
        << " };\n  enum : unsigned { align = " << s.align << " };\n"
        << "  template <class T> static __device__ __forceinline__ T* at(const pl::Ctx& ctx) { return ctx.smem_at<T>(index); }\n};\n";
    }
    o << "}  // namespace smem\n";
  }

  // [[named_barrier]]: also which one syncs a whole instance (for arrive = "one")
  int instance_barrier = -1;
  if (!c0.barriers.empty()) {
    o << "\n// [[named_barrier]]: hardware barriers, index = contract order.\nnamespace barrier {\n";
    for (size_t i = 0; i < c0.barriers.size(); ++i) {
      const NamedBarrier& b = c0.barriers[i];
      const size_t k = i;
      Value t = agree([&](const Contract& c) { return &c.barriers[k].threads.expr; });
      if (instance_barrier < 0 && t.v && warps.v && *t.v == *warps.v * 32) instance_barrier = static_cast<int>(i);
      o << "struct " << b.name << " {\n  enum : unsigned { index = " << i << " };\n";
      if (t.v) o << "  enum : unsigned { threads = " << *t.v << " };\n";
      else o << "  // threads: " << t.why << "\n";
      o << "  static __device__ __forceinline__ unsigned id(const pl::Ctx& ctx) { return ctx.slots->bar[index]; }\n"
        << "  static __device__ __forceinline__ void sync(const pl::Ctx& ctx) {\n"
        << "    pl::named_barrier_sync(ctx.slots->bar[index], ctx.slots->bar_threads[index]);\n  }\n};\n";
    }
    o << "}  // namespace barrier\n";
  }

  // [[mbarrier]]
  if (!c0.mbarriers.empty()) {
    o << "\n// [[mbarrier]]: mbarrier groups, index = contract order.\nnamespace mbarrier {\n";
    for (size_t i = 0; i < c0.mbarriers.size(); ++i) {
      const MbarrierGroup& m = c0.mbarriers[i];
      const size_t k = i;
      Value n = agree([&](const Contract& c) { return &c.mbarriers[k].count.expr; });
      Value a = agree([&](const Contract& c) { return &c.mbarriers[k].arrivals.expr; });
      o << "struct " << m.name << " {\n  enum : unsigned { index = " << i << " };\n";
      if (n.v) o << "  enum : unsigned { count = " << *n.v << " };\n";
      else o << "  // count: " << n.why << "\n";
      if (a.v) o << "  enum : unsigned { arrivals = " << *a.v << " };\n";
      else o << "  // arrivals: " << a.why << "\n";
      o << "  // Shared-window address of mbarrier j of the group.\n"
        << "  static __device__ __forceinline__ unsigned addr(const pl::Ctx& ctx, unsigned j = 0) { return ctx.mbar(index, j); }\n};\n";
    }
    o << "}  // namespace mbarrier\n";
  }

  // [[port]]
  std::string one_sync, one_elect, one_how;
  if (warps.v && *warps.v == 1) {
    one_sync = "__syncwarp();";
    one_elect = "(threadIdx.x & 31u) == 0";
    one_how = "one warp: __syncwarp(), then lane 0";
  } else if (instance_barrier >= 0) {
    one_sync = "pl::named_barrier_sync(ctx.slots->bar[" + std::to_string(instance_barrier) + "], ctx.slots->bar_threads[" +
               std::to_string(instance_barrier) + "]);";
    one_elect = "ctx.thread() == 0";
    one_how = "named barrier '" + c0.barriers[static_cast<size_t>(instance_barrier)].name + "' (the instance's " +
              std::to_string(*warps.v * 32) + " threads), then thread 0";
  }
  const std::string no_sync =
      "a [[named_barrier]] of warps x 32 threads (or a one-warp component) lets every thread call it; "
      "otherwise the one thread that did the work calls the _elected() form";
  for (size_t i = 0; i < c0.ports.size(); ++i) {
    const PortDecl& p = c0.ports[i];
    const bool out = p.dir == PortDir::Out;
    const std::string type = (out ? "Out_" : "In_") + p.name;
    o << "\n// [[port]] " << p.name << " (" << ps[0].file << ":" << p.loc.line << "): " << (out ? "out" : "in");
    if (out) o << ", completion = \"" << (p.completion == Completion::Tx ? "tx" : "arrive") << "\"";
    o << ", arrive = \"" << arrive_word(p.arrive) << "\", stages = \"" << printable(p.stages.expr.text()) << "\".\n";
    o << "struct " << type << " {\n  enum : unsigned { index = " << i << " };\n  enum : long long { arrive = pl::arrive_"
      << arrive_word(p.arrive) << " };\n";
    const size_t pk = i;
    Value st = agree([&](const Contract& c) { return &c.ports[pk].stages.expr; });
    if (st.v) o << "  enum : unsigned { stages = " << *st.v << " };\n";
    o << "  struct tensor {  // the tensors of a stage, index = contract order\n";
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      const TensorDecl& d = p.tensors[t];
      o << "    struct " << d.name << " {  // " << d.dtype;
      if (d.any_shape) o << " [*: the producer's shape, read with rows() / cols()]";
      else o << " [" << printable(d.rows.expr.text()) << " x " << printable(d.cols.expr.text()) << "]";
      o << ", " << d.layout << ", swizzle " << d.swizzle;
      {
        // tile_coords, where every contract of the entry says the same.
        bool same = true;
        for (const Parsed& pp : ps) {
          const TensorDecl& x = pp.c->ports[i].tensors[t];
          same &= x.tile_coords_declared == d.tile_coords_declared && x.follows_m == d.follows_m && x.follows_n == d.follows_n;
        }
        if (same && d.tile_coords_declared)
          o << "; content follows "
            << (d.follows_m && d.follows_n ? "tile m and n" : d.follows_m ? "tile m" : d.follows_n ? "tile n" : "no tile coordinate")
            << " (tile_coords)";
      }
      o << "\n      enum : unsigned { index = " << t << " };\n      using type = "
        << cpp_dtype(d.dtype) << ";\n";
      if (!d.any_shape) {
        const size_t tk = t;
        Value r = agree([&](const Contract& c) { return &c.ports[pk].tensors[tk].rows.expr; });
        Value cl = agree([&](const Contract& c) { return &c.ports[pk].tensors[tk].cols.expr; });
        if (r.v) o << "      enum : unsigned { rows = " << *r.v << " };\n";
        if (cl.v) o << "      enum : unsigned { cols = " << *cl.v << " };\n";
      }
      o << "    };\n";
    }
    o << "  };\n";
    o << "  pl::" << (out ? "PipeWriter" : "PipeReader") << " pipe;  // underneath; arriving through it directly bypasses the mode\n";
    o << "  __device__ __forceinline__ explicit " << type << "(const pl::Ctx& ctx) : pipe(ctx, index) {}\n";
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      const TensorDecl& d = p.tensors[t];
      o << "  template <class T = tensor::" << d.name << "::type> __device__ __forceinline__ T* " << d.name
        << "(const pl::Ctx& ctx) const {\n    return pipe.tensor<T>(ctx, tensor::" << d.name << "::index);\n  }\n";
    }
    o << "  // Each tensor's shape as bound by the link (this end's declaration, or the producer's for \"*\").\n"
      << "  __device__ __forceinline__ unsigned rows(unsigned tensor_index) const { return pipe.p->rows[tensor_index]; }\n"
      << "  __device__ __forceinline__ unsigned cols(unsigned tensor_index) const { return pipe.p->cols[tensor_index]; }\n"
      << "  __device__ __forceinline__ unsigned full_bar() const { return pipe.full_bar(); }\n"
      << "  __device__ __forceinline__ unsigned empty_bar() const { return pipe.empty_bar(); }\n";
    if (out) {
      o << "  __device__ __forceinline__ void acquire() const { pipe.acquire(); }\n";
      if (p.completion == Completion::Tx) {
        o << "  // completion = \"tx\", arrive = \"one\": the one thread that issues this stage's copies announces\n"
             "  // the instance's bytes and arrives, before the copies complete on full_bar().\n"
             "  __device__ __forceinline__ void expect_tx() const { pipe.expect_tx(); }\n";
        bool multicast = false;
        for (const Parsed& pp : ps) multicast |= pp.c->ports[pk].multicast > 1;
        if (multicast)
          o << "  // multicast: the blocks of this block's group (bit r = rank r, from the link), this block's\n"
               "  // share among them (0..N-1) and N; the stage's multicast tensors are copied jointly.\n"
               "  __device__ __forceinline__ unsigned multicast_mask() const { return pipe.multicast_mask(); }\n"
               "  __device__ __forceinline__ unsigned multicast_part() const { return pipe.multicast_part(); }\n"
               "  __device__ __forceinline__ unsigned multicast_blocks() const { return pipe.multicast_blocks(); }\n";
      } else if (p.arrive == Arrive::One) {
        if (!one_sync.empty())
          o << "  // arrive = \"one\", called by every thread of the instance after its stores: each fences its\n"
               "  // stores for async-proxy consumers; " << one_how << " arrives.\n"
            << "  __device__ __forceinline__ void commit(const pl::Ctx& ctx) const {\n    pl::fence_async_shared();\n    " << one_sync
            << "\n    if (" << one_elect << ") pipe.commit();\n  }\n";
        else
          o << "  // arrive = \"one\" over " << (warps.v ? std::to_string(*warps.v) : std::string("several")) << " warps: " << no_sync << ".\n"
            << "  template <int kNever = 0> __device__ __forceinline__ void commit(const pl::Ctx&) const {\n"
            << "    static_assert(kNever != 0, \"port '" << p.name << "': arrive = one needs an instance-wide sync: " << no_sync << "\");\n  }\n";
        o << "  // arrive = \"one\", called by the one thread that filled the stage (no other thread stored).\n"
             "  __device__ __forceinline__ void commit_elected() const { pipe.commit(); }\n";
      } else if (p.arrive == Arrive::Warp) {
        o << "  // arrive = \"warp\", called by every thread: each fences its stores for async-proxy consumers;\n"
             "  // after __syncwarp() lane 0 arrives.\n"
             "  __device__ __forceinline__ void commit(const pl::Ctx&) const {\n    pl::fence_async_shared();\n    __syncwarp();\n"
             "    if ((threadIdx.x & 31u) == 0) pipe.commit();\n  }\n";
      } else {
        o << "  // arrive = \"thread\", called by every thread: each fences its stores and arrives.\n"
             "  __device__ __forceinline__ void commit(const pl::Ctx&) const { pipe.commit(); }\n";
      }
    } else {
      o << "  __device__ __forceinline__ void wait() const { pipe.wait(); }\n";
      if (p.arrive == Arrive::One) {
        if (!one_sync.empty())
          o << "  // arrive = \"one\", called by every thread of the instance after its reads: " << one_how << " releases.\n"
            << "  __device__ __forceinline__ void release(const pl::Ctx& ctx) const {\n    " << one_sync << "\n    if (" << one_elect
            << ") pipe.release();\n  }\n";
        else
          o << "  // arrive = \"one\" over " << (warps.v ? std::to_string(*warps.v) : std::string("several")) << " warps: " << no_sync << ".\n"
            << "  template <int kNever = 0> __device__ __forceinline__ void release(const pl::Ctx&) const {\n"
            << "    static_assert(kNever != 0, \"port '" << p.name << "': arrive = one needs an instance-wide sync: " << no_sync << "\");\n  }\n";
        o << "  // arrive = \"one\", called by the one thread that read the stage (no other thread read it).\n"
             "  __device__ __forceinline__ void release_elected() const { pipe.release(); }\n";
      } else if (p.arrive == Arrive::Warp) {
        o << "  // arrive = \"warp\", called by every thread after its reads: after __syncwarp() lane 0 releases.\n"
             "  __device__ __forceinline__ void release(const pl::Ctx&) const {\n    __syncwarp();\n"
             "    if ((threadIdx.x & 31u) == 0) pipe.release();\n  }\n";
      } else {
        o << "  // arrive = \"thread\", called by every thread after its reads.\n"
             "  __device__ __forceinline__ void release(const pl::Ctx&) const { pipe.release(); }\n";
      }
    }
    o << "  __device__ __forceinline__ void advance() { pipe.advance(); }\n};\n";
  }
  o << "\n}  // namespace " << E << "\n}  // namespace pl_contract\n";

  // ---- records ----
  const std::string ns = "::pl_contract::" + E + "::";
  o << "\n// Records (pipelink/device.cuh): checked against the contract at every link, so an object built\n"
       "// with a stale header, or a header not regenerated after a contract edit, is refused.\n";
  auto record = [&](const std::string& guard, const std::string& decl) {
    o << "#ifndef " << guard << "\n" << decl << ";\n#endif\n#undef " << guard << "\n";
  };
  if (warps.v) record("PL_OWN_WARPS", "PL_WARPS(" + E + ", " + ns + "warps)");
  else o << "// PL_WARPS: " << warps.why << ": the source declares it\n#undef PL_OWN_WARPS\n";
  if (regs.v) record("PL_OWN_REGISTERS", "PL_REGISTERS(" + E + ", " + ns + "registers)");
  else o << "// PL_REGISTERS: [warps] registers " << regs.why << ": the source declares the fewest it needs\n#undef PL_OWN_REGISTERS\n";
  if (inst.v) record("PL_OWN_INSTANCES", "PL_INSTANCES(" + E + ", " + ns + "instances)");
  else o << "// PL_INSTANCES: [component] instances " << inst.why << ": the source may declare it\n#undef PL_OWN_INSTANCES\n";
  for (const PortDecl& p : c0.ports)
    record("PL_OWN_ARRIVE_" + p.name, "PL_ARRIVE(" + E + ", " + p.name + ", " + arrive_word(p.arrive) + ")");
  o << "#ifdef PL_PROVIDE_FROM_CONTRACT\n";
  for (const auto& [f, t] : provided) o << "PL_PROVIDE(" << E << ", " << f << ", " << ns << "provided::" << f << ");\n";
  o << "#undef PL_PROVIDE_FROM_CONTRACT\n#endif\n";
  return o.str();
}

// Writes a header to `path`, refusing a path that is one of options.inputs.
bool write_header(const std::string& path, const std::string& text, const LinkOptions& options, Diagnostics& diags) {
  for (const std::string& in : options.inputs)
    if (same_file(path, in)) {
      diags.error("output", "-o '" + path + "' is the input contract '" + in + "'; refusing to overwrite an input");
      return false;
    }
  return write_files({{path, text.data(), text.size()}}, diags);
}

}  // namespace pipelink
