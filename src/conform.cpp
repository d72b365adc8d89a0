// conform — checks every component's compiled code against its contract.
//
// A contract must not be able to lie. This pass reads the code PipeLink otherwise treats as opaque,
// through one probe link: the generated bindings (facts, as in the real link) and one probe kernel
// per component whose slot table is a *mutable* __device__ variable, linked with every component
// object by nvJitLink -lto -ptx. Facts fold as in the real link; nothing the linker allocated
// (barrier ids, offsets) can, so a constant left where a slot belongs was written by the component.
// From the probe's PTX it checks:
//   1. records: the values the code declares it compiled in (PL_PROVIDE, PL_WARPS, PL_REGISTERS,
//      PL_ARRIVE, PL_INSTANCES, PL_ROWS/PL_COLS, PL_PER_TILE, PL_SWIZZLE in pipelink/device.cuh) against the
//      contract: a disagreement, a record the contract has no counterpart for, or a missing required
//      record (provided facts, warps, registers, arrive modes) refuses the link [records];
//   2. conformance of each component's code (its probe kernel and every function it calls)
//      [conformance]: barrier 0 (__syncthreads: the other warp roles never reach it) or a named
//      barrier id that is a constant; setmaxnreg (register budgets belong to the generated entry);
//      static __shared__ memory (the allocator cannot place it: use an [[smem]] region); cluster or
//      distributed-shared-memory instructions in a link without a cluster ([cluster]); exit or trap
//      outside a PL_CHECKED build;
//   3. that every object was built as the link is, with or without PL_CHECKED (pl::BuildRecord), and
//      against the same binding-table capacities (pl::AbiRecord);
//   4. instructions the link's target lacks (pipelink/targets.h: wgmma is sm_90a only, tcgen05
//      sm_100a/sm_103a only) [target]: the component is refused for that target, by name.
// PTX component inputs are read as they are. A cubin input has no readable records and is refused.
//
// Does not: run for the monolithic control (it compiles the same sources); see what the code does
// with a value at run time (a barrier id computed from a slot plus a constant passes); write files.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "context.h"
#include "toolchain.h"
#include "pipelink/targets.h"

namespace pipelink {

namespace {

struct Record {
  std::string kind, scope, key;
  int64_t value = 0;
};

// The byte initialiser of a PTX `.b8 name[N] = {...}` global, zero-padded to N.
std::vector<unsigned char> ptx_bytes(const std::string& list, size_t n) {
  std::vector<unsigned char> b;
  b.reserve(n);
  std::istringstream is(list);
  for (std::string tok; std::getline(is, tok, ',');) {
    size_t i = tok.find_first_not_of(" \t\n");
    if (i == std::string::npos) continue;
    unsigned long v = std::strtoul(tok.c_str() + i, nullptr, 0);
    b.push_back(static_cast<unsigned char>(v & 0xff));
    if (b.size() == n) break;
  }
  b.resize(n, 0);
  return b;
}

std::string cstr(const unsigned char* p, size_t n) {
  size_t len = 0;
  while (len < n && p[len]) ++len;
  return std::string(reinterpret_cast<const char*>(p), len);
}

// Layout of pl::Record (device.cuh): magic[8] kind[16] scope[64] key[64] value(int64), 160 bytes.
constexpr size_t kRecordBytes = 160;

std::string strip_comments(const std::string& ptx);

std::vector<Record> read_records(const std::string& text) {
  const std::string ptx = strip_comments(text);  // a record in a comment is not a record
  static const std::regex glob(R"(\.global\s+\.align\s+\d+\s+\.b8\s+([A-Za-z_$][\w$]*)\[(\d+)\]\s*=\s*\{([^}]*)\})");
  std::vector<Record> out;
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), glob), end; it != end; ++it) {
    size_t n = std::stoul((*it)[2].str());
    if (n != kRecordBytes) continue;
    std::vector<unsigned char> b = ptx_bytes((*it)[3].str(), n);
    if (std::memcmp(b.data(), "PLREC1\0", 7) != 0) continue;
    Record r;
    r.kind = cstr(&b[8], 16);
    r.scope = cstr(&b[24], 64);
    r.key = cstr(&b[88], 64);
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | b[152 + i];
    r.value = static_cast<int64_t>(v);
    out.push_back(r);
  }
  return out;
}

// The PTX functions (.entry and .func) by name, each with its body's lines.
std::map<std::string, std::vector<std::string>> ptx_functions(const std::string& ptx) {
  static const std::regex head(R"(^\s*(?:\.visible\s+|\.weak\s+)?(\.entry|\.func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*))");
  std::map<std::string, std::vector<std::string>> fns;
  std::istringstream ls(ptx);
  std::string cur;
  int depth = 0;
  bool in_body = false;
  for (std::string line; std::getline(ls, line);) {
    std::smatch m;
    if (!in_body && std::regex_search(line, m, head)) {
      cur = m[2].str();
      fns[cur];
      depth = 0;
    }
    if (cur.empty()) continue;
    for (char ch : line) {
      if (ch == '{') { ++depth; in_body = true; }
      if (ch == '}') --depth;
    }
    if (in_body) fns[cur].push_back(line);
    if (in_body && depth == 0) { in_body = false; cur.clear(); }
    // A declaration without a body (`.func foo(...);`) ends at its semicolon.
    if (!in_body && !cur.empty() && line.find(';') != std::string::npos) cur.clear();
  }
  return fns;
}

// PTX without its comments (// to the end of the line, /* ... */), so nothing in a comment is
// read as a record or an instruction.
std::string strip_comments(const std::string& ptx) {
  std::string out;
  out.reserve(ptx.size());
  for (size_t i = 0; i < ptx.size();) {
    if (ptx.compare(i, 2, "//") == 0) {
      while (i < ptx.size() && ptx[i] != '\n') ++i;
    } else if (ptx.compare(i, 2, "/*") == 0) {
      size_t e = ptx.find("*/", i + 2);
      i = e == std::string::npos ? ptx.size() : e + 2;
      out += ' ';
    } else {
      out += ptx[i++];
    }
  }
  return out;
}

// A function body as PTX statements: comments gone, split at ';', labels and braces dropped,
// blanks collapsed, so an operand on the next line or a call target after a line break is
// one statement like any other.
std::vector<std::string> statements(const std::vector<std::string>& body) {
  std::string text;
  for (const std::string& line : body) text += line + "\n";
  text = strip_comments(text);
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    std::string t;
    for (char ch : cur) {
      const bool blank = ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
      if (blank && (t.empty() || t.back() == ' ')) continue;
      t += blank ? ' ' : ch;
    }
    while (!t.empty() && t.back() == ' ') t.pop_back();
    static const std::regex label(R"(^(?:\$?[A-Za-z_][\w$]*:\s*)+)");
    t = std::regex_replace(t, label, "");
    if (!t.empty()) out.push_back(t);
    cur.clear();
  };
  for (char ch : text) {
    if (ch == ';') flush();
    else if (ch == '{' || ch == '}') { flush(); }
    else cur += ch;
  }
  flush();
  return out;
}

// `name` and everything it calls, transitively; indirect calls (through a register) are counted.
std::vector<std::string> closure(const std::map<std::string, std::vector<std::string>>& fns, const std::string& root,
                                 int& indirect) {
  static const std::regex call(R"(^(?:@!?%?\w+ )?call(?:\.uni)? (?:\([^)]*\) ?, ?)?([%A-Za-z_$][\w$]*))");
  std::vector<std::string> order{root};
  std::set<std::string> seen{root};
  indirect = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    auto it = fns.find(order[i]);
    if (it == fns.end()) continue;
    for (const std::string& st : statements(it->second)) {
      std::smatch m;
      if (!std::regex_search(st, m, call)) continue;
      const std::string target = m[1].str();
      if (target[0] == '%') ++indirect;
      else if (fns.count(target) && seen.insert(target).second) order.push_back(target);
    }
  }
  return order;
}

// Work units: a component's code walks them iff its contract says so. pl::unit_at (device.cuh)
// names pl_units_marker in an empty asm statement (no instruction survives ptxas), so the call is
// visible in the component's PTX wherever it was inlined. A contract that declares [tiles]
// k_extent without the code calling pl::unit_at would run whole tiles where a split schedule
// hands it pieces; code that calls it under a contract without k_extent is invisible to the
// schedule checks (check_schedule) that keep its pipes consistent.
void check_units(LinkContext& ctx, const Contract& c, const std::string& object,
                 const std::map<std::string, std::vector<std::string>>& fns, const std::string& root) {
  int indirect = 0;
  bool marks = false;
  for (const std::string& f : closure(fns, root, indirect)) {
    auto it = fns.find(f);
    if (it == fns.end()) continue;
    for (const std::string& st : statements(it->second))
      if (st.find("pl_units_marker") != std::string::npos || st.find("pl_unit_at") != std::string::npos) marks = true;
  }
  const bool declares = c.tiles.present && !c.tiles.k_extent.empty();
  if (marks && !declares)
    ctx.diags.error("conformance", "component '" + c.name + "': its code (object '" + object + "') walks work units (it calls "
                                   "pl::unit_at), but its contract declares no [tiles] k_extent / k_tile",
                    c.tiles.present ? c.tiles.loc : c.loc)
        .notes.push_back("a component that runs a tile's k slices itself declares k_extent = \"K\" and k_tile in [tiles] "
                         "(docs/contracts.md); one that handles whole tiles calls pl::tile_at");
  else if (!marks && declares)
    ctx.diags.error("conformance", "component '" + c.name + "' declares [tiles] k_extent = \"" + c.tiles.k_extent +
                                       "\" (it walks k ranges), but its code (object '" + object +
                                       "') never calls pl::unit_at: under a split-k or stream-k schedule it would run whole "
                                       "tiles where its peers run pieces",
                    c.tiles.k_loc);
}

// Split tiles' partials: the one component whose contract declares [tiles] partial_bytes sums
// them. pl::partials, partials_publish and the link's pl_partials / pl_partials_flag / pl_partials_sum name
// pl_partials_marker, pl::partials_wait pl_partials_wait_marker, pl::partials_consumed
// pl_partials_consumed_marker, in empty asm statements (no instruction survives ptxas), so every
// path to the workspace is visible in the component's code wherever it was inlined.
//   - Code that uses the workspace under a contract without partial_bytes writes where the link
//     allotted it nothing (the workspace is sized from the contracts' partial_bytes); under
//     data-parallel the link's functions return null. Checked in every link with work units:
//     whatever survives the probe's link-time optimisation is live.
//   - Under a split schedule the owner must wait for its peers' partials (pl::partials_wait: a split
//     tile would otherwise be emitted with only its own k slices) and clear their flags
//     (pl::partials_consumed: the next launch would otherwise sum stale partials). Under
//     data-parallel no unit has peers and that code is dead, so it is not asked for there. An owner
//     that waits with its own loop, or through a function pointer, is refused: use the helpers.
void check_partials(LinkContext& ctx, const Contract& c, const std::string& object,
                    const std::map<std::string, std::vector<std::string>>& fns, const std::string& root, bool split) {
  int indirect = 0;
  bool uses = false, waits = false, consumes = false;
  static const std::regex direct(R"(\bpl_partials(_flag|_sum)?\b)");  // an unresolved call of the link's functions
  for (const std::string& f : closure(fns, root, indirect)) {
    auto it = fns.find(f);
    if (it == fns.end()) continue;
    for (const std::string& st : statements(it->second)) {
      if (st.find("pl_partials_wait_marker") != std::string::npos) waits = uses = true;
      else if (st.find("pl_partials_consumed_marker") != std::string::npos) consumes = uses = true;
      else if (st.find("pl_partials_marker") != std::string::npos || std::regex_search(st, direct)) uses = true;
    }
  }
  const bool declares = c.tiles.present && c.tiles.has_partials;
  if (uses && !declares)
    ctx.diags.error("conformance", "component '" + c.name + "': its code (object '" + object + "') uses the split tiles' partials "
                                   "workspace (pl::partials, partials_publish, partials_wait, partials_consumed or the link's "
                                   "pl_partials functions), but its "
                                   "contract declares no [tiles] partial_bytes: the workspace holds no slot for it",
                    c.tiles.present ? c.tiles.loc : c.loc)
        .notes.push_back("only the component that holds a tile's accumulators and sums a split tile uses the workspace; it "
                         "declares partial_bytes (docs/contracts.md, \"Tile schedules\")");
  else if (split && declares && !(waits && consumes)) {
    std::string missing = !waits ? "never waits for its peers' partials (pl::partials_wait)" : "";
    if (!consumes) missing += std::string(missing.empty() ? "" : " and ") + "never clears their flags (pl::partials_consumed)";
    ctx.diags.error("conformance", "component '" + c.name + "' declares [tiles] partial_bytes (it sums a split tile's partials), "
                                   "but its code (object '" + object + "') " + missing + ": under split-k or stream-k a split "
                                   "tile would be emitted " + (!waits ? "with only its own k slices" : "once, then summed from stale partials on the next launch"),
                    c.tiles.partial_loc);
  }
}

// One instruction as a note shows it: trimmed, runs of blanks as one space.
std::string trim(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const bool blank = ch == ' ' || ch == '\t' || ch == '\r';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : ch;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

const char* arrive_name(int64_t v) { return v == 0 ? "one" : v == 1 ? "warp" : v == 2 ? "thread" : "?"; }

// ---- 1. records against the contract ----
struct Expected {
  std::string what;      // how the contract states it
  SourceLoc loc;
  std::optional<int64_t> value;  // nullopt: the contract's value depends on a run-time parameter
  bool required;
  std::string suggest;   // the declaration to add when missing
};

// A record's value as the contract would write it: an arrive mode's name, a swizzle's ("none", "64B").
std::string record_value(const std::string& kind, int64_t v) {
  if (kind == "arrive") return std::string("\"") + arrive_name(v) + "\"";
  if (kind == "swizzle") return v == 0 ? std::string("\"none\"") : "\"" + std::to_string(v) + "B\"";
  return std::to_string(v);
}

// PL_COPIES records against the tensors the contract's tensormap params name (check_tensormaps):
// per tensor, the rows the recorded copies move per stage (copies x the param's box rows, summed
// over the params that name it: two maps may fill one tensor's halves) must be the component's
// share of it, or lie between an equal share and the whole tensor where several arrive producers
// or consumers split it in their code. A param with no record leaves its tensor's sum open: only
// an excess is refused then. A record for a param that names no tensor cannot be checked.
void check_copies(LinkContext& ctx, const Contract& c, const std::string& object, const std::map<std::string, const Record*>& copies) {
  Diagnostics& d = ctx.diags;
  for (const auto& [param, r] : copies) {
    if (r->value < 0 || r->value > 65536) {
      d.error("records", "component '" + c.name + "': object '" + object + "' declares " + std::to_string(r->value) +
                             " copies per stage through '" + param + "'; PL_COPIES takes a count from 0 to 65536", c.loc);
      continue;
    }
    const ParamDecl* p = nullptr;
    for (const ParamDecl& q : c.params)
      if (q.name == param) p = &q;
    if (!p || p->type != ParamType::TensorMap) {
      d.error("records", "component '" + c.name + "': object '" + object + "' declares copies through '" + param +
                             "', which contract " + c.path + " does not have as a tensormap param", c.loc);
      continue;
    }
    if (!ctx.tmap_copies.count({c.name, param}))
      d.error("records", "component '" + c.name + "': object '" + object + "' declares " + std::to_string(r->value) +
                             " copies per stage through '" + param + "', but the contract names no tensor for it, so the count "
                             "cannot be checked", p->loc)
          .notes.push_back("name the tensor the copies land in: [[param]] tensor = \"<port>.<tensor>\" (and box, if a copy is part of "
                           "it); a map whose copies fill several tensors names none and declares no PL_COPIES");
  }
  // Per named tensor, in the order of the contract's params.
  std::vector<std::string> tensors;
  for (const ParamDecl& p : c.params)
    if (auto n = ctx.tmap_copies.find({c.name, p.name}); n != ctx.tmap_copies.end() &&
                                                         std::find(tensors.begin(), tensors.end(), n->second.tensor) == tensors.end())
      tensors.push_back(n->second.tensor);
  for (const std::string& tensor : tensors) {
    int64_t rows = 0, lo = 0, hi = 0;
    bool all = true, any = false;
    std::string parts;
    const ParamDecl* first = nullptr;
    for (const ParamDecl& p : c.params) {
      auto n = ctx.tmap_copies.find({c.name, p.name});
      if (n == ctx.tmap_copies.end() || n->second.tensor != tensor) continue;
      lo = n->second.lo_rows, hi = n->second.hi_rows;
      auto r = copies.find(p.name);
      if (r == copies.end() || r->second->value < 0 || r->second->value > 65536) { all = false; continue; }
      any = true;
      if (!first) first = &p;
      rows += r->second->value * n->second.box_rows;
      parts += std::string(parts.empty() ? "" : ", ") + "'" + p.name + "' " + std::to_string(r->second->value) + " x " +
               std::to_string(n->second.box_rows) + " rows";
    }
    if (!any) continue;
    const std::string share = lo == hi ? std::to_string(hi) + " rows" : "between " + std::to_string(lo) + " and " + std::to_string(hi) +
                                                                              " rows (the ends that copy it split it in their code)";
    if (rows > hi || (all && rows < lo)) {
      Diagnostic& x = d.error("records", "component '" + c.name + "': the copies object '" + object + "' records per stage (" + parts +
                                             ") move " + std::to_string(rows) + " rows of tensor \"" + printable(tensor) +
                                             "\", but the component's share of it is " + share,
                              first->box_declared ? first->box_loc : first->tensor_loc);
      x.notes.push_back("the code copies another slice than the contract's tensor and box describe: rebuild the object, or correct "
                        "the box (a map whose copies also fill another tensor names one tensor only: declare no PL_COPIES for it)");
    }
  }
}

void check_records(LinkContext& ctx, const Contract& c, const std::string& object, const std::vector<Record>& all) {
  std::map<std::pair<std::string, std::string>, Expected> want;  // (kind, key)
  const std::string& e = c.entry;
  for (const FactProvide& p : c.provides) {
    const int64_t v = ctx.fact_value(p.name).value_or(p.value.value);
    want[{"provide", p.name}] = {"[provide] " + p.name, p.value.loc, v, true,
                                 "PL_PROVIDE(" + e + ", " + p.name + ", " + std::to_string(v) + ")"};
  }
  want[{"warps", ""}] = {"[warps] count", c.warps.loc.known() ? c.warps.loc : c.warps_loc, c.warps.value, true,
                         "PL_WARPS(" + e + ", " + std::to_string(c.warps.value) + ")"};
  if (c.registers)
    want[{"registers", ""}] = {"[warps] registers", c.registers->loc, c.registers->value, true,
                               "PL_REGISTERS(" + e + ", " + std::to_string(c.registers->value) + ")"};
  want[{"instances", ""}] = {"[component] instances", c.instances ? c.instances->loc : c.loc,
                             c.instances ? c.instances->value : 1, false, ""};
  auto fact = [&](const std::string& n) { return ctx.fact_value(n); };
  for (const PortDecl& p : c.ports) {
    const char* mode = p.arrive == Arrive::One ? "one" : p.arrive == Arrive::Warp ? "warp" : "thread";
    want[{"arrive", p.name}] = {"port '" + p.name + "' arrive", p.loc,
                                static_cast<int64_t>(p.arrive == Arrive::One ? 0 : p.arrive == Arrive::Warp ? 1 : 2), true,
                                "PL_ARRIVE(" + e + ", " + p.name + ", " + mode + ")"};
    for (const TensorDecl& t : p.tensors) {
      // The swizzle is the port's own even where the shape is the producer's ("*").
      want[{"swizzle", p.name + "." + t.name}] = {"port '" + p.name + "' tensor '" + t.name + "' swizzle", t.loc,
                                                  swizzle_span(t.swizzle), false, ""};
      if (t.any_shape) continue;
      want[{"rows", p.name + "." + t.name}] = {"port '" + p.name + "' tensor '" + t.name + "' rows", t.rows.loc, t.rows.value, false, ""};
      want[{"cols", p.name + "." + t.name}] = {"port '" + p.name + "' tensor '" + t.name + "' cols", t.cols.loc, t.cols.value, false, ""};
    }
    if (p.per_tile_declared) {
      std::string err;
      std::optional<int64_t> v = p.per_tile.eval(fact, err);
      want[{"per_tile", p.name}] = {"port '" + p.name + "' per_tile = \"" + p.per_tile.text() + "\"", p.per_tile_loc, v, false, ""};
    }
  }

  for (const FactUse& u : c.uses)
    want[{"use", u.name}] = {"[use] " + u.name, u.loc, ctx.fact_value(u.name), false, ""};
  if (c.tiles.has_partials)
    want[{"partial_bytes", ""}] = {"[tiles] partial_bytes", c.tiles.partial_loc, c.tiles.partial_bytes.value, true,
                                   "PL_PARTIAL_BYTES(" + e + ", " + std::to_string(c.tiles.partial_bytes.value) + ")"};

  std::map<std::pair<std::string, std::string>, const Record*> seen;
  std::map<std::string, const Record*> copies;  // PL_COPIES records by param, checked per tensor below
  for (const Record& r : all) {
    if (r.scope != e) continue;
    if (r.kind == "copies") {
      if (auto [it, fresh] = copies.emplace(r.key, &r); !fresh && it->second->value != r.value)
        ctx.diags.error("records", "component '" + c.name + "': object '" + object + "' declares copies '" + r.key + "' twice, as " +
                                       std::to_string(it->second->value) + " and " + std::to_string(r.value), c.loc);
      continue;
    }
    // A provided fact the code reads at link time: any value the contract states is right.
    std::pair<std::string, std::string> k{r.kind == "provide_linked" ? "provide" : r.kind, r.key};
    if (r.kind == "provide_linked") {
      if (want.count(k)) seen[k] = &r;
      else
        ctx.diags.error("records", "component '" + c.name + "': object '" + object + "' declares that it provides fact '" +
                                       r.key + "', which contract " + c.path + " does not provide", c.loc);
      continue;
    }
    if (auto s = seen.find(k); s != seen.end()) {
      if (s->second->value != r.value)
        ctx.diags.error("records", "component '" + c.name + "': object '" + object + "' declares " + r.kind +
                                       (r.key.empty() ? "" : " '" + r.key + "'") + " twice, as " +
                                       record_value(r.kind, s->second->value) + " and " + record_value(r.kind, r.value), c.loc);
      continue;
    }
    if (r.kind == "swizzle" && r.value != 0 && r.value != 32 && r.value != 64 && r.value != 128) {
      ctx.diags.error("records", "component '" + c.name + "': object '" + object + "' declares swizzle '" + r.key + "' = " +
                                     std::to_string(r.value) + " bytes; PL_SWIZZLE takes 0 (none), 32, 64 or 128", c.loc);
      seen[k] = &r;
      continue;
    }
    seen[k] = &r;
    auto w = want.find(k);
    if (w == want.end()) {
      const std::string v = record_value(r.kind, r.value);
      Diagnostic& d = ctx.diags.error("records", "component '" + c.name + "': object '" + object + "' declares " + r.kind +
                                                     (r.key.empty() ? "" : " '" + r.key + "'") + " = " + v +
                                                     ", which contract " + c.path + " does not state", c.loc);
      d.notes.push_back("the code and the contract disagree: add it to the contract, or remove the declaration and the code that depends on it");
      continue;
    }
    const Expected& x = w->second;
    if (!x.value) {
      ctx.diags.error("records", "component '" + c.name + "': object '" + object + "' compiles in " + x.what + " as " +
                                     std::to_string(r.value) + ", but the contract's value depends on a run-time parameter",
                      x.loc);
      continue;
    }
    if (r.kind == "registers") {  // a floor: the code needs at least this many registers per thread
      if (*x.value < r.value) {
        Diagnostic& d = ctx.diags.error("records", "component '" + c.name + "': [warps] registers = " + std::to_string(*x.value) +
                                                       " in the contract, but object '" + object + "' was built for at least " +
                                                       std::to_string(r.value) + " registers per thread", x.loc);
        d.notes.push_back("with fewer, ptxas spills or setmaxnreg takes registers the code holds: raise the budget");
      }
      continue;
    }
    if (*x.value != r.value) {
      std::string got = record_value(r.kind, r.value);
      std::string exp = record_value(r.kind, *x.value);
      Diagnostic& d = ctx.diags.error("records", "component '" + c.name + "': " + x.what + " is " + exp +
                                                     " in the contract but " + got + " in object '" + object + "'", x.loc);
      d.notes.push_back("the object was compiled for " + got + ": rebuild it, or correct the contract");
    }
  }
  check_copies(ctx, c, object, copies);
  std::vector<const Expected*> missing;
  for (const auto& [k, x] : want)
    if (x.required && !seen.count(k)) missing.push_back(&x);
  std::stable_sort(missing.begin(), missing.end(), [](const Expected* a, const Expected* b) { return a->loc.line < b->loc.line; });
  for (const Expected* xp : missing) {
    const Expected& x = *xp;
    Diagnostic& d = ctx.diags.error("records", "component '" + c.name + "': object '" + object + "' does not declare " + x.what +
                                                   " (a value its code depends on)", x.loc);
    d.notes.push_back("declare it in the component's source, from the constant the code uses: " + x.suggest + ";");
  }
}

// ---- 2. conformance of the code ----
struct Finding { std::string rule, what, first; int count = 0; };

// An integer literal of PTX (decimal or 0x hex), nothing else.
std::optional<long long> ptx_int(const std::string& t) {
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(t.c_str(), &end, 0);
  if (errno != 0 || end == t.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// Where a register's value comes from, followed backwards through its definitions in one
// function body (PTX from NVVM: a register is defined once, or once per path).
struct Origin {
  std::set<long long> constants;  // immediates that reach it through moves and selects only
  std::set<std::string> symbols;  // variables it is loaded from (ld [sym], ld [%rd] with %rd = sym + ...)
  bool local = false;             // loaded from local memory (a stack or volatile variable)
  bool other = false;             // anything else: a parameter, a special register, arithmetic on them
};

std::vector<std::string> operands_of(const std::string& st) {
  std::vector<std::string> ops;
  const size_t sp = st.find(' ');
  if (sp == std::string::npos) return ops;
  std::string cur;
  int depth = 0;
  for (char ch : st.substr(sp + 1)) {
    if (ch == '(' || ch == '[' || ch == '{') ++depth;
    if (ch == ')' || ch == ']' || ch == '}') --depth;
    if (ch == ',' && depth == 0) { ops.push_back(trim(cur)); cur.clear(); } else cur += ch;
  }
  ops.push_back(trim(cur));
  return ops;
}

class Slicer {
 public:
  explicit Slicer(const std::vector<std::string>& body) {
    static const std::regex guard(R"(^@!?%?\w+ )");
    static const std::regex def(R"(^(?!st\.|bar\.|barrier\.|red\.|cp\.|prefetch|mbarrier\.|tensormap\.)[a-z][\w.:]* (%\w+) ?,)");
    for (const std::string& raw : body) {
      const std::string st = std::regex_replace(raw, guard, "");
      std::smatch m;
      if (std::regex_search(st, m, def)) defs_[m[1].str()].push_back(st);
    }
  }
  Origin of(const std::string& reg) {
    Origin o;
    std::set<std::pair<std::string, bool>> seen;
    walk(reg, false, o, seen);
    return o;
  }

 private:
  std::map<std::string, std::vector<std::string>> defs_;

  void address(const std::string& a, Origin& o, std::set<std::string>& seen) {
    // [sym], [sym+8], [%rd], [%rd+8]
    std::string base = a;
    if (!base.empty() && base.front() == '[') base = base.substr(1, base.find(']') - 1);
    base = trim(base.substr(0, base.find('+')));
    if (base.empty()) { o.other = true; return; }
    if (base[0] != '%') { o.symbols.insert(base); return; }
    if (!seen.insert(base).second) return;
    auto it = defs_.find(base);
    if (it == defs_.end()) { o.other = true; return; }
    for (const std::string& st : it->second) {
      const std::string op = st.substr(0, st.find(' '));
      const std::vector<std::string> ops = operands_of(st);
      if (op.rfind("ld.", 0) == 0) { o.other = true; continue; }  // a pointer loaded from memory: not followed
      bool any = false;
      for (size_t k = 1; k < ops.size(); ++k) {
        if (ops[k].empty() || ptx_int(ops[k])) continue;
        if (op.rfind("mul", 0) == 0 || op.rfind("shl", 0) == 0) continue;  // an index, not a base
        address(ops[k], o, seen);
        any = true;
      }
      if (!any) o.other = true;
    }
  }

  void walk(const std::string& reg, bool arith, Origin& o, std::set<std::pair<std::string, bool>>& seen) {
    if (!seen.insert({reg, arith}).second) return;
    auto it = defs_.find(reg);
    if (it == defs_.end()) { o.other = true; return; }  // a special register or parameter
    for (const std::string& st : it->second) {
      const std::string op = st.substr(0, st.find(' '));
      const std::vector<std::string> ops = operands_of(st);
      if (op.rfind("ld.", 0) == 0) {
        if (op.find(".local") != std::string::npos) o.local = true;
        else if (op.find(".param") != std::string::npos) o.other = true;
        else if (ops.size() > 1) {
          std::set<std::string> aseen;
          address(ops[1], o, aseen);
        }
        continue;
      }
      const bool move = op.rfind("mov.", 0) == 0 || op.rfind("cvt.", 0) == 0;
      const bool select = op.rfind("selp.", 0) == 0;
      const size_t last = select ? 3 : ops.size();  // selp's predicate is not a value
      for (size_t k = 1; k < ops.size() && k < last; ++k) {
        const std::string& v = ops[k];
        if (v.empty()) continue;
        if (v[0] == '%') {
          if (defs_.count(v)) walk(v, arith || !(move || select), o, seen);
          else o.other = true;
        } else if (auto n = ptx_int(v)) {
          if (!arith && (move || select)) o.constants.insert(*n);
        } else {
          o.other = true;
        }
      }
    }
  }
};

void scan_code(LinkContext& ctx, const Contract& c, const std::string& object,
               const std::map<std::string, std::vector<std::string>>& fns, const std::string& root,
               const std::map<std::string, int64_t>& static_shared) {
  static const std::regex guard(R"(^@!?%?\w+ )");
  static const std::regex barrier(R"(^(?:bar|barrier)\.(sync|arrive|red)[\w.]* (.*)$)");
  static const std::regex movimm(R"(^mov\.[usb](?:16|32|64) (%\w+) ?, ?(-?\w+)$)");
  static const std::regex def(R"(^(?!st\.|bar\.|barrier\.|red\.|cp\.|prefetch|mbarrier\.|tensormap\.)[a-z][\w.:]* (%\w+) ?,)");
  static const std::regex cluster(
      R"(\bmapa\b|^barrier\.cluster|%cluster_|%n?clusterid|%is_explicit_cluster|multicast::cluster|\bgetctarank\b|)"
      R"(^(?:ld|st|atom|red)\.(?:[\w]+\.)*shared::cluster|^(?:st|red)\.async|^cp\.async\.bulk\.shared::cluster|)"
      R"(^mbarrier\.[\w.]*shared::cluster)");
  static const std::regex name(R"([A-Za-z_$][\w$]*)");
  const bool checked = checked_build(ctx.opt);

  std::map<std::string, Finding> found;  // by kind, first occurrence kept
  std::string where;  // "" in the component's own body, else the called function holding it
  auto add = [&](const std::string& key, const std::string& what, const std::string& st) {
    Finding& f = found[key];
    if (f.count++ == 0) {
      f.what = what;
      f.first = st.empty() ? st : st + ";`" + where + "`";
      f.rule = key.rfind("target:", 0) == 0 ? "target" : key == "pdl-trigger" ? "pdl" : "conformance";
    }
  };
  // Instructions that exist only on some targets, and which of them this target lacks.
  std::vector<const TargetInstruction*> lacking;
  for (const TargetInstruction& ti : target_instructions())
    if (!target_has(ctx.target.arch, ti)) lacking.push_back(&ti);
  auto listed = [](const char* targets) {
    std::string s;
    for (const char* p = targets; *p; ++p) s += *p == ',' ? std::string(", ") : std::string(1, *p);
    return s;
  };
  std::set<std::string> shared_used;
  bool waits = false;  // executes griddepcontrol.wait (pdl_wait = "own" needs it)
  std::string prev;    // the statement before, in the same body
  int indirect = 0;
  for (const std::string& fn : closure(fns, root, indirect)) {
    where = fn == root ? "" : " (in function " + fn + ", which it calls)";
    prev.clear();
    const std::vector<std::string> body = statements(fns.at(fn));
    Slicer slicer(body);
    std::map<std::string, long long> consts;  // registers set once, from an immediate
    std::map<std::string, int> defs;
    for (const std::string& raw : body) {
      const std::string st = std::regex_replace(raw, guard, "");
      std::smatch m;
      if (std::regex_search(st, m, def)) ++defs[m[1].str()];
      if (std::regex_search(st, m, movimm))
        if (auto v = ptx_int(m[2].str())) consts[m[1].str()] = *v;
    }
    for (const std::string& raw : body) {
      const std::string st = std::regex_replace(raw, guard, "");  // a guarded instruction counts too
      std::smatch m;
      if (std::regex_search(st, m, barrier)) {
        // Operands: bar.red's barrier is its second (the first is the result).
        std::vector<std::string> ops;
        std::string cur;
        int depth = 0;
        for (char ch : m[2].str()) {
          if (ch == '(') ++depth;
          if (ch == ')') --depth;
          if (ch == ',' && depth == 0) { ops.push_back(trim(cur)); cur.clear(); } else cur += ch;
        }
        ops.push_back(trim(cur));
        std::string op = m[1].str() == "red" ? (ops.size() > 1 ? ops[1] : "") : ops[0];
        while (op.size() > 1 && op.front() == '(' && op.back() == ')') op = trim(op.substr(1, op.size() - 2));
        std::optional<long long> id;
        bool computed = false;
        if (!op.empty() && op[0] == '%') {
          if (consts.count(op) && defs[op] == 1) id = consts[op];
          else {
            // Followed back: an id must come from the slots (pl_probe_slots in the probe), not
            // from a variable of the component's own, local memory, or a constant on some path.
            const Origin o = slicer.of(op);
            std::set<std::string> own;
            for (const std::string& sym : o.symbols)
              if (sym != "pl_probe_slots" && sym.rfind("pl_fact_", 0) != 0) own.insert(sym);
            if (o.constants.size() == 1 && o.symbols.empty() && !o.local && !o.other) id = *o.constants.begin();
            else if (!own.empty())
              add("barown", "loads a named barrier id from '" + *own.begin() + "', a variable of its own, instead of the id "
                            "the linker allocated (ctx.slots->bar[i])", raw);
            else if (o.local)
              add("barlocal", "passes a named barrier id through local memory (a volatile or stack variable), where the "
                              "scan cannot see that it is the id the linker allocated (use ctx.slots->bar[i] directly)", raw);
            else if (!o.constants.empty()) {
              std::string list;
              for (long long v : o.constants) list += (list.empty() ? "" : ", ") + std::to_string(v);
              add(o.constants.count(0) ? "bar0" : "barid",
                  "uses a named barrier id that is the constant " + list + " on some path" +
                      (o.constants.count(0) ? " (barrier 0 is __syncthreads, which the block's other warp roles never reach)" : "") +
                      " instead of the id the linker allocated (ctx.slots->bar[i])", raw);
            }
          }
        } else if (auto v = ptx_int(op)) {
          id = v;
        } else {
          computed = true;  // a constant expression in inline asm ("1-1", "2+1")
        }
        if (id && *id == 0)
          add("bar0", "waits on barrier 0 (__syncthreads), which the block's other warp roles never reach", raw);
        else if (id)
          add("barid", "uses the hard-coded named barrier id " + std::to_string(*id) +
                           " instead of an id the linker allocated (declare a [[named_barrier]], use ctx.slots->bar[i])", raw);
        else if (computed)
          add("barid", "uses a named barrier id computed from constants ('" + op +
                           "') instead of an id the linker allocated (declare a [[named_barrier]], use ctx.slots->bar[i])", raw);
      }
      for (const TargetInstruction* ti : lacking)
        if (st.rfind(ti->prefix, 0) == 0)
          add(std::string("target:") + ti->prefix,
              std::string("uses ") + ti->name + ", which target " + ctx.target.arch + " does not have (only " + listed(ti->targets) +
                  "): it cannot be linked for " + ctx.target.arch,
              raw);
      if (st.rfind("griddepcontrol.wait", 0) == 0) waits = true;
      // pdl_wait = "own": the trigger lets the next grid be scheduled; pl::pdl_wait() issues it
      // right after the wait, which keeps a PDL chain to two resident grids. One anywhere else
      // (before the wait, or on its own) breaks that.
      if (c.pdl_own_wait && st.rfind("griddepcontrol.launch_dependents", 0) == 0 && prev.rfind("griddepcontrol.wait", 0) != 0)
        add("pdl-trigger", "says pdl_wait = \"own\" and issues griddepcontrol.launch_dependents other than right after its "
                           "griddepcontrol.wait (use pl::pdl_wait(), which issues both)", raw);
      prev = st;
      if (st.rfind("setmaxnreg.", 0) == 0)
        add("setmaxnreg", "issues setmaxnreg; register budgets belong to the generated entry (declare [warps] registers)", raw);
      // In a cluster link (some contract declares [cluster]) the cluster instructions are the
      // link's: device.cuh's multicast loads and remote releases, a component's own protocol.
      if (ctx.cluster_size() == 1 && std::regex_search(st, cluster))
        add("cluster", "uses cluster or distributed-shared-memory instructions, but its contract declares no cluster "
                       "(PipeLink links one-block kernels)", raw);
      if (!checked) {
        const std::string op = st.substr(0, st.find(' '));
        if (op == "exit" || op == "trap" || op == "brkpt")
          add("exit", "executes '" + op + "' outside a PL_CHECKED build, ending its warps while the others wait on them", raw);
        if (st.rfind("call", 0) == 0 && st.find("__assertfail") != std::string::npos)
          add("exit", "calls __assertfail (a failed assert traps) outside a PL_CHECKED build, ending its warps while the "
                      "others wait on them", raw);
      }
      for (std::sregex_iterator it(raw.begin(), raw.end(), name), end; it != end; ++it)
        if (static_shared.count(it->str())) shared_used.insert(it->str());
    }
  }
  for (const std::string& s : shared_used)
    add("static-shared:" + s, "declares " + std::to_string(static_shared.at(s)) + " bytes of static __shared__ memory ('" + s +
                                  "') that its contract cannot account for (use an [[smem]] region)", "");
  if (c.pdl_own_wait && !waits) {
    Diagnostic& d = ctx.diags.error("pdl", "component '" + c.name + "' says pdl_wait = \"own\" but its code never executes "
                                           "griddepcontrol.wait (pl::pdl_wait()): under --pdl it would read what the previous "
                                           "kernel is still writing",
                                    c.pdl_wait_loc.line ? c.pdl_wait_loc : c.loc);
    d.notes.push_back("in object '" + object + "'");
    d.notes.push_back("call pl::pdl_wait() before the first read of another kernel's output, or remove pdl_wait");
  }
  for (const auto& [key, f] : found) {
    Diagnostic& d = ctx.diags.error(f.rule, "component '" + c.name + "' " + f.what, c.loc);
    if (!f.first.empty())
      d.notes.push_back("in object '" + object + "': `" + f.first.substr(0, f.first.size() - 1) +
                        (f.count > 1 ? " and " + std::to_string(f.count - 1) + " more" : ""));
    else
      d.notes.push_back("in object '" + object + "'");
  }
  if (indirect > 0)
    ctx.diags.warning("conformance", "component '" + c.name + "' makes " + std::to_string(indirect) +
                                         " indirect call(s), which the scan cannot follow: what they reach is not checked", c.loc);
}

std::map<std::string, int64_t> static_shared_vars(const std::string& ptx) {
  static const std::regex sh(R"(^\s*(?:\.visible\s+|\.weak\s+)?\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([A-Za-z_$][\w$]*)(?:\[(\d+)\])?)");
  std::map<std::string, int64_t> out;
  std::istringstream ls(ptx);
  for (std::string line; std::getline(ls, line);) {
    std::smatch m;
    if (line.find(".extern") != std::string::npos || !std::regex_search(line, m, sh)) continue;
    std::string ty = m[2].str();
    int64_t elem = ty == "b8" || ty == "u8" || ty == "s8" ? 1 : ty.find("16") != std::string::npos ? 2
                 : ty.find("64") != std::string::npos ? 8 : 4;
    out[m[3].str()] = elem * (m[4].matched ? std::stoll(m[4].str()) : 1);
  }
  return out;
}

}  // namespace

namespace {

// Names of `.extern .global` / `.extern .const` variables in PTX: what an object reads from the link.
std::set<std::string> extern_variables_of(const std::string& ptx) {
  static const std::regex ext(R"(\.extern\s+\.(?:global|const)\s+[^;]*?([A-Za-z_$][\w$]*)\s*(?:\[[^\]]*\])?\s*;)");
  std::set<std::string> out;
  const std::string text = strip_comments(ptx);
  for (std::sregex_iterator it(text.begin(), text.end(), ext), end; it != end; ++it) out.insert((*it)[1].str());
  return out;
}

// Whether a contract puts fact `f` into a value the link hands its code at run time or folds
// into it: its slots (warps, instances, stages, tensor shapes, barrier threads) or the tile
// sequence.
bool carries_fact(const LinkContext& ctx, const Contract& c, const std::string& f) {
  auto in = [&](const Expr& e) {
    for (const std::string& n : e.names())
      if (n == f) return true;
    return false;
  };
  if (in(c.warps.expr) || (c.instances && in(c.instances->expr))) return true;
  for (const PortDecl& p : c.ports) {
    if (in(p.stages.expr) || (p.per_tile_declared && in(p.per_tile))) return true;
    for (const TensorDecl& t : p.tensors)
      if (in(t.rows.expr) || in(t.cols.expr)) return true;
  }
  for (const NamedBarrier& b : c.barriers)
    if (in(b.threads.expr)) return true;
  for (const SmemRegion& r : c.smem)
    if (in(r.bytes.expr)) return true;
  for (const MbarrierGroup& m : c.mbarriers)
    if (in(m.count.expr) || in(m.arrivals.expr)) return true;
  for (const TilesDecl* t : {&c.tiles, ctx.tiles})
    if (t && t->present && (in(t->tile_m.expr) || in(t->tile_n.expr))) return true;
  return false;
}

}  // namespace

// Each object linked alone behind a kernel per entry (nvJitLink -lto -ptx, the facts left
// undefined), so what it declares and what it reads from the link are its own:
//   - a record for an entry belongs in the object that its contract names: records for another
//     component's entry, placed in a different object, are refused;
//   - PL_PROVIDE_LINKED says the code reads a fact from the link, so any value the contract picks
//     works; the object must then read pl_fact_<name>, or its contract must put the fact into a
//     value the slots or the tile sequence carry.
void check_objects_alone(LinkContext& ctx, const std::vector<Input>& inputs) {
  std::vector<const Contract*> entries;
  for (const auto& c : ctx.contracts)
    if (!c->entry.empty()) entries.push_back(c.get());
  auto named_by = [](const Input& in, const Contract* c) {
    return std::find(in.contracts.begin(), in.contracts.end(), c) != in.contracts.end();
  };
  auto contract_of = [&](const std::string& entry) -> const Contract* {
    for (const Contract* c : entries)
      if (c->entry == entry) return c;
    return nullptr;
  };
  std::vector<char> kernels_ir;  // compiled once: one kernel per entry, nothing else defined
  bool compiled = false;
  for (const Input& in : inputs) {
    if (in.contracts.empty() || in.kind == InputKind::Cubin) continue;
    std::string ptx;
    if (in.kind == InputKind::Ptx) {
      ptx.assign(in.bytes.begin(), in.bytes.end());
      while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
    } else {
      Diagnostics quiet;  // what cannot be linked alone is reported by the real link
      LinkContext pc(ctx.opt, quiet);
      pc.target = ctx.target;
      if (!compiled) {
        compiled = true;
        std::ostringstream k;
        k << "#include \"pipelink/device.cuh\"\n__device__ pl::Slots pl_alone_slots;\n";
        for (size_t i = 0; i < entries.size(); ++i)
          k << "extern \"C\" __device__ void " << entries[i]->entry << "(const pl::Ctx&);\n"
            << "extern \"C\" __global__ void pl_alone_" << i << "(const __grid_constant__ pl::Args args) {\n"
            << "  extern __shared__ __align__(1024) unsigned char pl_smem[];\n"
            << "  pl::Ctx ctx;\n  ctx.args = &args;\n  ctx.smem = pl_smem;\n  ctx.slots = &pl_alone_slots;\n  "
            << entries[i]->entry << "(ctx);\n}\n";
        kernels_ir = compile_to_ltoir(pc, k.str(), "pipelink_alone.cu", true);
      }
      if (kernels_ir.empty()) return;
      std::vector<Input> pin{{"alone", "", kernels_ir, InputKind::LtoIr, {}}, in};
      std::vector<char> out;
      std::string info;
      if (!jit(pc, {"-arch=" + ctx.target.arch, "-lto", "-ptx"}, pin, true, out, info)) continue;
      ptx.assign(out.begin(), out.end());
    }
    const std::vector<Record> recs = read_records(ptx);
    const std::set<std::string> reads = extern_variables_of(ptx);
    std::set<std::string> reported;
    for (const Record& r : recs) {
      if (r.scope == "*") continue;
      const Contract* c = contract_of(r.scope);
      if (!c) continue;  // records for an entry no contract declares: the merged check reports nothing for them either
      if (!named_by(in, c)) {
        if (!reported.insert(r.scope).second) continue;
        std::string owners;
        for (const Contract* o : in.contracts) owners += (owners.empty() ? "" : ", ") + std::string("'") + o->name + "'";
        Diagnostic& d = ctx.diags.error("records", "component '" + c->name + "': object '" + in.path + "' (of component " +
                                                       owners + ") declares records for its entry '" + c->entry +
                                                       "'; a component's records must be in the object its contract names",
                                        c->object_loc.known() ? c->object_loc : c->loc);
        d.notes.push_back("records describe the code they are compiled with: declare them in " + c->name + "'s own source");
        continue;
      }
      if (r.kind != "provide_linked" || reads.count("pl_fact_" + r.key) || carries_fact(ctx, *c, r.key)) continue;
      SourceLoc loc = c->loc;
      for (const FactProvide& p : c->provides)
        if (p.name == r.key) loc = p.value.loc;
      Diagnostic& d = ctx.diags.error("records", "component '" + c->name + "': object '" + in.path +
                                                     "' declares PL_PROVIDE_LINKED for fact '" + r.key +
                                                     "' (its code reads the value from the link), but it never reads pl_fact_" +
                                                     r.key + " and its contract puts '" + r.key +
                                                     "' into nothing the slots or the tile sequence carry",
                                      loc);
      d.notes.push_back("the value is compiled into the code: declare it with PL_PROVIDE(" + c->entry + ", " + r.key +
                        ", <the constant the code uses>)");
    }
  }
}

// Register budgets per role. ptxas reports registers per kernel only, and the linked kernel is one
// kernel: its "Used N registers" is the launch allocation, not what each warpgroup's code needs
// after setmaxnreg. So each component's probe kernel (its code alone, slots not folded) is
// assembled by ptxas with its warpgroup's budget as the kernel's .maxnreg: ptxas then reports the
// registers that code uses within the budget, and the spills it needs to fit. Runs only when
// register budgets are in play (some warpgroup's setmaxnreg). A spill is a warning, not an error:
// the probe keeps the slots in registers that the real link folds into immediates, so it may
// need a little more than the linked code does.
void check_role_registers(LinkContext& ctx, const std::string& probe_ptx) {
  bool budgets = false;
  for (const WarpGroup& wg : ctx.warpgroups) budgets |= wg.registers > 0;
  if (!budgets || ctx.probe_kernels.empty()) return;
  std::map<const Contract*, int> budget;  // the smallest budget any instance of the contract runs with
  std::map<const Contract*, std::set<unsigned>> groups;
  for (const Instance& in : ctx.instances) {
    const int b = in.registers ? in.registers : ctx.entry_registers;
    auto [it, fresh] = budget.emplace(in.contract, b);
    if (!fresh) it->second = std::min(it->second, b);
    for (unsigned w = in.warp_base; w < in.warp_base + in.warps; w += 4) groups[in.contract].insert(w / 4);
  }
  // .maxnreg goes between a kernel's parameter list and its body.
  std::string ptx = strip_comments(probe_ptx);
  for (const auto& [kernel, c] : ctx.probe_kernels) {
    const size_t at = ptx.find(".entry " + kernel + "(");
    if (at == std::string::npos || !budget.count(c)) continue;
    const size_t body = ptx.find('{', ptx.find(')', at));
    if (body == std::string::npos) continue;
    ptx.insert(body, ".maxnreg " + std::to_string(budget[c]) + "\n");
  }
  ptx.push_back('\0');
  Diagnostics quiet;
  LinkContext pc(ctx.opt, quiet);
  pc.target = ctx.target;
  std::vector<Input> pin{{"probe", "", std::vector<char>(ptx.begin(), ptx.end()), InputKind::Ptx, {}}};
  std::vector<char> cubin;
  std::string info;
  if (!jit(pc, {"-arch=" + ctx.target.arch, "-verbose"}, pin, false, cubin, info)) {
    ctx.role_registers.push_back("not measured: ptxas could not assemble the probe");
    return;
  }
  struct Use { long regs = -1, stores = 0, loads = 0; };
  std::map<std::string, Use> use;
  static const std::regex fn(R"((?:Compiling entry function|Function properties for) '?([A-Za-z_$][\w$]*))");
  static const std::regex spill(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  std::string cur;
  std::istringstream ls(info);
  for (std::string line; std::getline(ls, line);) {
    std::smatch m;
    if (std::regex_search(line, m, fn)) cur = m[1].str();
    else if (!cur.empty() && std::regex_search(line, m, spill)) { use[cur].stores = std::stol(m[1].str()); use[cur].loads = std::stol(m[2].str()); }
    else if (!cur.empty() && std::regex_search(line, m, used)) use[cur].regs = std::stol(m[1].str());
  }
  for (const auto& [kernel, c] : ctx.probe_kernels) {
    const Use& u = use[kernel];
    std::string wgs;
    for (unsigned g : groups[c]) wgs += (wgs.empty() ? "" : ",") + std::to_string(g);
    std::string line = printable(c->name) + ": budget " + std::to_string(budget[c]) + " (warpgroup " + wgs + "), ";
    if (u.regs < 0) {
      ctx.role_registers.push_back(line + "not reported by ptxas");
      continue;
    }
    line += "ptxas uses " + std::to_string(u.regs) + " registers";
    line += u.stores || u.loads ? ", spills " + std::to_string(u.stores) + " B stored, " + std::to_string(u.loads) + " B loaded"
                                : ", no spills";
    ctx.role_registers.push_back(line);
    if (u.stores || u.loads) {
      Diagnostic& d = ctx.diags.warning(
          "registers", "component '" + c->name + "' spills when its code is assembled within its warpgroup's budget of " +
                           std::to_string(budget[c]) + " registers (" + std::to_string(u.stores) + " bytes stored, " +
                           std::to_string(u.loads) + " loaded; ptxas on its probe kernel)",
          c->registers ? c->registers->loc : c->loc);
      d.notes.push_back("ptxas reports registers per kernel only, so each component is assembled alone with its warpgroup's "
                        "budget as .maxnreg; raise [warps] registers, or lower the code's register use");
    }
  }
}

void conform(LinkContext& ctx, const std::vector<Input>& inputs) {
  const std::string& prelude = ctx.unit.prelude;
  if (prelude.empty()) return;

  // Which contracts come as PTX text (read directly), which need the probe link, which are cubins.
  std::vector<Input> probe_inputs;
  std::vector<std::pair<const Contract*, const Input*>> ptx_components, probe_components;
  for (const Input& in : inputs) {
    if (in.contracts.empty()) continue;
    for (const Contract* c : in.contracts) {
      if (in.kind == InputKind::Ptx) ptx_components.push_back({c, &in});
      else if (in.kind == InputKind::Cubin)
        ctx.diags.error("records", "component '" + c->name + "' is a cubin ('" + in.path + "'): PipeLink cannot read the "
                                   "declarations its code depends on; give it as LTO-IR, an nvcc -dc object or PTX", c->object_loc);
      else probe_components.push_back({c, &in});
    }
    if (in.kind != InputKind::Ptx && in.kind != InputKind::Cubin) probe_inputs.push_back(in);
  }

  // Functions the PTX calls but nothing defines: a contract's entry among them is misspelled
  // or missing from the object, and nothing else about that component can be checked.
  auto undefined_functions = [](const std::string& ptx) {
    static const std::regex ext(R"(\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*))");
    std::set<std::string> out;
    for (std::sregex_iterator it(ptx.begin(), ptx.end(), ext), end; it != end; ++it) out.insert((*it)[1].str());
    return out;
  };
  auto check_component = [&](const Contract& c, const std::string& object, const std::string& ptx, const std::string& root) {
    const int errors_before = ctx.diags.error_count();
    std::vector<Record> recs = read_records(ptx);
    if (undefined_functions(ptx).count(c.entry)) {
      Diagnostic& d = ctx.diags.error("entry", "component '" + c.name + "': entry '" + c.entry + "' is not defined by object '" +
                                                   object + "' (nor by any other input)", c.loc);
      std::set<std::string> scopes;
      for (const Record& r : recs)
        if (r.scope != "*" && r.scope != c.entry) scopes.insert(r.scope);
      for (const std::string& sc : scopes) d.notes.push_back("the objects declare records for entry '" + sc + "'");
      ctx.conformance.push_back(printable(c.name) + ": entry not defined");
      return;
    }
    check_records(ctx, c, object, recs);
    std::map<std::string, int> kinds;
    for (const Record& r : recs)
      if (r.scope == c.entry) ++kinds[r.kind];
    auto fns = ptx_functions(ptx);
    const bool scanned = fns.count(root) > 0;
    if (scanned) scan_code(ctx, c, object, fns, root, static_shared_vars(ptx));
    if (scanned) check_units(ctx, c, object, fns, root);
    if (scanned) check_partials(ctx, c, object, fns, root, ctx.stream_k);
    std::string line = printable(c.name) + ": ";
    int n = 0;
    std::string list;
    for (const auto& [k, cnt] : kinds) {
      n += cnt;
      list += (list.empty() ? "" : " ") + k + (cnt > 1 ? "x" + std::to_string(cnt) : "");
    }
    line += std::to_string(n) + " records agree (" + list + "); code " +
            (!scanned ? "not scanned" : ctx.diags.error_count() == errors_before ? "clean" : "REFUSED");
    ctx.conformance.push_back(line);
  };

  // Checked and unchecked objects do not mix (pl::BuildRecord in device.cuh).
  auto check_builds = [&](const std::vector<Record>& recs) {
    const bool checked = checked_build(ctx.opt);
    std::set<std::string> reported;
    for (const Record& r : recs) {
      if (r.kind != "build" || (r.value != 0) == checked || !reported.insert(r.key).second) continue;
      const Contract* owner = nullptr;
      for (const auto& c : ctx.contracts) {
        const std::string base = std::filesystem::path(c->source).filename().string();
        if (!base.empty() && r.key.size() >= base.size() && r.key.compare(r.key.size() - base.size(), base.size(), base) == 0)
          owner = c.get();
      }
      Diagnostic& d = ctx.diags.error(
          "records", std::string("an object built from '") + r.key + "'" + (owner ? " (component '" + owner->name + "')" : "") +
                         " was compiled " + (r.value ? "with" : "without") + " -D PL_CHECKED, but the link is " +
                         (checked ? "checked" : "not checked"),
          owner ? owner->loc : SourceLoc{});
      d.notes.push_back("nvJitLink keeps one copy of the helpers every object shares (pl::mbar_wait), so a mixed link would "
                        "check every pipe wait or none, depending on input order: build all objects and the link alike");
    }
  };
  // Every object was compiled against this linker's binding-table capacities (pl::AbiRecord):
  // otherwise its components read pl::Slots and pl::Args at other offsets than the generated
  // tables have. An object with a build record but no abi record predates the abi record.
  const int64_t abi = static_cast<int64_t>(pl::kMaxSmem) | static_cast<long long>(pl::kMaxBarriers) << 8 |
                        static_cast<long long>(pl::kMaxMbarriers) << 16 | static_cast<long long>(pl::kMaxPorts) << 24 |
                        static_cast<long long>(pl::kMaxTensors) << 32 | static_cast<long long>(pl::kMaxParams) << 40 |
                        static_cast<long long>(pl::kArgTensorMaps) << 48 | static_cast<long long>(pl::kArgWords) << 56;
  auto limits_text = [](int64_t v) {
    const char* names[] = {"smem", "named_barriers", "mbarriers", "ports", "tensors", "params", "tensormap args", "arg words"};
    std::string s;
    for (int i = 0; i < 8; ++i) s += (i ? ", " : "") + std::string(names[i]) + " " + std::to_string((v >> (8 * i)) & 0xff);
    return s;
  };
  std::set<std::string> abi_reported;
  // recs: the records of one object (PTX input) or of the probe link (every LTO-IR / -dc object);
  // records are attributed to a source by their key (the main source file's name), as for builds.
  auto check_abi = [&](const std::vector<Record>& recs) {
    std::map<std::string, int64_t> abi_of;
    std::set<std::string> built;
    for (const Record& r : recs) {
      if (r.kind == "build") built.insert(r.key);
      if (r.kind == "abi") abi_of[r.key] = r.value;
    }
    auto owner_of = [&](const std::string& key) -> const Contract* {
      for (const auto& c : ctx.contracts) {
        const std::string base = std::filesystem::path(c->source).filename().string();
        if (!base.empty() && key.size() >= base.size() && key.compare(key.size() - base.size(), base.size(), base) == 0) return c.get();
      }
      return nullptr;
    };
    auto report = [&](const std::string& key, const std::string& msg, const int64_t* value) {
      if (!abi_reported.insert(key + (value ? "|" + std::to_string(*value) : "")).second) return;
      const Contract* owner = owner_of(key);
      const std::string what = std::string("an object built from '") + key + "'" + (owner ? " (component '" + owner->name + "')" : "");
      Diagnostic& d = ctx.diags.error("records", what + msg, owner ? owner->loc : SourceLoc{});
      if (value) d.notes.push_back("the object's pipelink/limits.h: " + limits_text(*value));
      d.notes.push_back("this linker's: " + limits_text(abi) + "; the component would read pl::Slots and pl::Args at other offsets: "
                        "rebuild it with this PipeLink's headers");
    };
    for (const Record& r : recs)
      if (r.kind == "abi" && r.value != abi) report(r.key, " was compiled against other binding-table capacities than this linker's", &r.value);
    for (const std::string& key : built)
      if (!abi_of.count(key)) report(key, " was compiled against an older pipelink/device.cuh (it has no abi record)", nullptr);
  };
  for (const auto& [c, in] : ptx_components) {
    std::string text(in->bytes.begin(), in->bytes.end());
    while (!text.empty() && text.back() == '\0') text.pop_back();
    const std::vector<Record> recs = read_records(text);
    check_builds(recs);
    check_abi(recs);
  }
  for (const auto& [c, in] : ptx_components) {
    std::string text(in->bytes.begin(), in->bytes.end());
    while (!text.empty() && text.back() == '\0') text.pop_back();
    check_component(*c, in->path, text, c->entry);
  }
  check_objects_alone(ctx, inputs);
  if (probe_components.empty()) return;

  std::ostringstream probe;
  probe << prelude
        << "// ---- conformance probe: slots the components cannot see as constants ----\n"
        << "__device__ pl::Slots pl_probe_slots[" << probe_components.size() << "];\n";
  for (size_t i = 0; i < probe_components.size(); ++i)
    probe << "extern \"C\" __global__ void pl_probe_" << i << "(const __grid_constant__ pl::Args args) {\n"
          << "  extern __shared__ __align__(1024) unsigned char pl_smem[];\n"
          << "  pl::Ctx ctx;\n  ctx.args = &args;\n  ctx.smem = pl_smem;\n  ctx.slots = &pl_probe_slots[" << i << "];\n  "
          << probe_components[i].first->entry << "(ctx);\n}\n";
  Diagnostics quiet;  // a probe that fails to link fails the real link too, which reports it
  LinkContext pc(ctx.opt, quiet);
  pc.target = ctx.target;
  std::vector<char> ir = compile_to_ltoir(pc, probe.str(), "pipelink_probe.cu", true);
  if (ir.empty()) return;
  std::vector<Input> pin{{"probe", "", std::move(ir), InputKind::LtoIr, {}}};
  for (const Input& in : probe_inputs) pin.push_back(in);
  std::vector<char> out;
  std::string info;
  if (!jit(pc, {"-arch=" + ctx.target.arch, "-lto", "-ptx"}, pin, true, out, info)) return;
  const std::string ptx(out.begin(), out.end());
  ctx.result.probe_ptx = ptx;
  for (size_t i = 0; i < probe_components.size(); ++i) ctx.probe_kernels.push_back({"pl_probe_" + std::to_string(i), probe_components[i].first});
  const std::vector<Record> probe_records = read_records(ptx);
  check_builds(probe_records);
  check_abi(probe_records);
  for (size_t i = 0; i < probe_components.size(); ++i)
    check_component(*probe_components[i].first, probe_components[i].second->path, ptx, "pl_probe_" + std::to_string(i));
  if (!ctx.diags.has_errors()) check_role_registers(ctx, ptx);
}

// The linked kernel, after link-time optimisation has folded every slot: each named barrier id
// the code waits on is a constant there. Barrier 0 may appear only as often as the generated
// entry's own __syncthreads, and any other constant id must be one the linker allocated. This
// catches an id that is a slot in the probe but folds to 0 (or to an id nobody owns) in the link,
// such as `bar[0] * (ctx.slots->warps != 2)`.
void conform_linked(LinkContext& ctx, const std::string& linked_ptx) {
  const auto fns = ptx_functions(linked_ptx);
  auto k = fns.find(ctx.opt.kernel_name);
  if (k == fns.end()) return;
  size_t allowed_zero = 0;
  const std::string unit = ctx.unit.text();
  for (size_t at = unit.find("__syncthreads()"); at != std::string::npos; at = unit.find("__syncthreads()", at + 1)) ++allowed_zero;
  std::set<long long> allocated;
  for (const BarrierSlot& b : ctx.barriers) allocated.insert(b.id);
  static const std::regex guard(R"(^@!?%?\w+ )");
  static const std::regex barrier(R"(^(?:bar|barrier)\.(sync|arrive|red)[\w.]* (.*)$)");
  int indirect = 0;
  size_t zeros = 0;
  std::map<long long, std::string> stray;  // constant id nobody owns -> first statement
  std::string first_zero;
  for (const std::string& fn : closure(fns, ctx.opt.kernel_name, indirect)) {
    const std::vector<std::string> body = statements(fns.at(fn));
    Slicer slicer(body);
    for (const std::string& raw : body) {
      const std::string st = std::regex_replace(raw, guard, "");
      std::smatch m;
      if (!std::regex_search(st, m, barrier)) continue;
      const std::vector<std::string> ops = operands_of(st);
      std::string op = m[1].str() == "red" ? (ops.size() > 1 ? ops[1] : "") : (ops.empty() ? "" : ops[0]);
      std::optional<long long> id;
      if (!op.empty() && op[0] == '%') {
        const Origin o = slicer.of(op);
        if (o.constants.size() == 1 && o.symbols.empty() && !o.local && !o.other) id = *o.constants.begin();
      } else {
        id = ptx_int(op);
      }
      if (!id) continue;
      if (*id == 0) {
        if (zeros++ == allowed_zero) first_zero = raw;
      } else if (!allocated.count(*id) && !stray.count(*id)) {
        stray[*id] = raw;
      }
    }
  }
  auto note_owners = [&](Diagnostic& d) {
    for (const auto& c : ctx.contracts)
      if (!c->barriers.empty()) d.notes.push_back("component '" + c->name + "' declares named barriers (" + c->loc.str() + ")");
  };
  if (zeros > allowed_zero) {
    Diagnostic& d = ctx.diags.error("conformance", "the linked kernel waits on barrier 0 " + std::to_string(zeros - allowed_zero) +
                                                       " more time(s) than the generated entry's __syncthreads: a component's "
                                                       "named barrier id folds to 0 once the link's slots are constants");
    d.notes.push_back("in the linked PTX: `" + first_zero + ";`");
    note_owners(d);
  }
  for (const auto& [id, st] : stray) {
    Diagnostic& d = ctx.diags.error("conformance", "the linked kernel waits on named barrier " + std::to_string(id) +
                                                       ", which the linker allocated to no component: a component's barrier id "
                                                       "is computed from its slots into another instance's id or past them");
    d.notes.push_back("in the linked PTX: `" + st + ";`");
    note_owners(d);
  }
}

// The components whose code (their probe kernel and what it calls) holds `ptx_line` as a
// statement: where a ptxas error in the linked kernel comes from.
std::vector<const Contract*> components_holding(const LinkContext& ctx, const std::string& ptx_line) {
  std::vector<const Contract*> out;
  // Registers are numbered per kernel: compare statements with every register as %R.
  static const std::regex reg(R"(%[A-Za-z_]+[0-9]+)");
  auto norm = [](const std::string& st) { return std::regex_replace(st, reg, "%R"); };
  std::vector<std::string> want = statements({ptx_line});
  if (want.empty() || ctx.result.probe_ptx.empty()) return out;
  want.front() = norm(want.front());
  const auto fns = ptx_functions(ctx.result.probe_ptx);
  for (const auto& [kernel, c] : ctx.probe_kernels) {
    if (!fns.count(kernel) || std::find(out.begin(), out.end(), c) != out.end()) continue;
    int indirect = 0;
    bool found = false;
    for (const std::string& fn : closure(fns, kernel, indirect)) {
      for (const std::string& st : statements(fns.at(fn)))
        if (norm(st) == want.front()) { found = true; break; }
      if (found) break;
    }
    if (found) out.push_back(c);
  }
  return out;
}

}  // namespace pipelink
