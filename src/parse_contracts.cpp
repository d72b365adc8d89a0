// parse_contracts — reads each input contract (TOML) into a Contract and creates one Instance
// per input occurrence (a contract listed twice is instantiated twice).
//
// Does: syntax, exact field types (no int/float/bool conversions), unknown keys, identifiers
// (entries, facts, params: they become C++ symbols or map words), expression syntax, enum values;
// records the file and line of everything for later diagnostics. A contract listed twice is read
// (and reported) once. Does not: evaluate expressions (resolve_facts), or compare contracts with
// each other (check).
#define TOML_HEADER_ONLY 1
#define TOML_ENABLE_FORMATTERS 0
// toml++ 3.3 states some expectations as assumptions (__builtin_assume with clang, an assert in
// debug builds) that hostile text breaks: `[` or `[[` followed by a character that cannot start a
// key (a newline, '=', ...) reaches parse_key(), which assumes a key character, and then reports
// a parse error through its ordinary path. A false assumption is undefined behaviour, so they
// are made plain no-ops here; the error paths behind them stay (found by tests/fuzz).
#include <toml++/impl/preprocessor.h>
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT_ASSUME(expr) static_assert(true)
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <set>

#include "context.h"
#include "objects.h"

namespace pipelink {

namespace {

// A define as the control writes it: `#define NAME VALUE`, so NAME is an identifier and VALUE one
// line (no control characters, no trailing backslash that would continue it).
bool valid_define(const std::string& d) {
  size_t eq = d.find('=');
  if (!is_identifier(d.substr(0, eq)) || d.back() == '\\') return false;
  for (char ch : d) if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) return false;
  return true;
}

// Bounds on one contract, so that no pass downstream can be made slow by its size (the file is
// at most kMaxContractBytes; toml++ bounds nesting at 256).
constexpr size_t kMaxEntries = 1024;   // elements of one array, keys of one table
constexpr size_t kMaxLive = 32;        // phases in one [[smem]] live list
constexpr size_t kMaxInstances = 256;  // contracts on one command line (a block holds 32 warps)

}  // namespace

// Names that cannot be the entry (an extern "C" symbol in the generated unit, beside the CUDA
// headers NVRTC includes): C++ keywords and alternative tokens, CUDA built-in variables and
// functions every kernel sees, and `pl`, the device header's namespace. Names starting with `__`
// or `_` and an upper-case letter are reserved to the implementation; pl_ to PipeLink.
bool reserved_identifier(const std::string& s) {
  static const std::set<std::string> words{
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
      "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short", "signed",
      "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw",
      "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq", "NULL", "main",
      // CUDA built-in variables, and functions and types device code sees without an include
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "printf", "malloc", "free", "memcpy", "memset", "assert",
      "clock", "clock64", "min", "max", "abs", "dim3", "uint3", "pl"};
  if (words.count(s)) return true;
  if (s.rfind("__", 0) == 0 || s.rfind("pl_", 0) == 0) return true;
  return s.size() > 1 && s[0] == '_' && std::isupper(static_cast<unsigned char>(s[1]));
}

namespace {

// The offset of the first byte that is not part of well-formed UTF-8 (overlong forms, surrogates
// and code points above U+10FFFF are not), or of the first control character other than tab, LF
// and CR (TOML allows none anywhere, and toml++ assumes as much: a control character in a table
// header breaks an assumption inside it, undefined behaviour in a release build), or npos.
size_t invalid_text(const std::vector<char>& b, bool& control) {
  size_t i = 0;
  const size_t n = b.size();
  auto byte = [&](size_t k) { return static_cast<unsigned char>(b[k]); };
  control = false;
  while (i < n) {
    const unsigned char c = byte(i);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) { control = true; return i; }
    if (c < 0x80) { ++i; continue; }
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; min = 0x10000; }
    else return i;
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((byte(i + k) & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (byte(i + k) & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return std::string::npos;
}

// The offset of the first non-ASCII byte outside a string or a comment, or npos. TOML allows
// none there (bare keys and values are ASCII), and toml++ 3.3's whitespace test reaches a point
// it assumes unreachable for some such characters (found by the fuzz target): refused first.
size_t stray_non_ascii(const std::vector<char>& b) {
  enum { Normal, Comment, Basic, Literal, MlBasic, MlLiteral } st = Normal;
  const size_t n = b.size();
  auto at = [&](size_t k, const char* s) {
    for (size_t j = 0; s[j]; ++j)
      if (k + j >= n || b[k + j] != s[j]) return false;
    return true;
  };
  for (size_t i = 0; i < n; ++i) {
    const char ch = b[i];
    switch (st) {
      case Normal:
        if (static_cast<unsigned char>(ch) >= 0x80) return i;
        if (ch == '#') st = Comment;
        else if (at(i, "\"\"\"")) { st = MlBasic; i += 2; }
        else if (at(i, "'''")) { st = MlLiteral; i += 2; }
        else if (ch == '"') st = Basic;
        else if (ch == '\'') st = Literal;
        break;
      case Comment: if (ch == '\n') st = Normal; break;
      case Basic:
        if (ch == '\\') ++i;
        else if (ch == '"' || ch == '\n') st = Normal;
        break;
      case Literal: if (ch == '\'' || ch == '\n') st = Normal; break;
      case MlBasic:
        if (ch == '\\') ++i;
        else if (at(i, "\"\"\"")) { st = Normal; i += 2; }
        break;
      case MlLiteral: if (at(i, "'''")) { st = Normal; i += 2; } break;
    }
  }
  return std::string::npos;
}

struct Reader {
  LinkContext& ctx;
  Contract& c;

  SourceLoc at(const toml::node* n) const {
    SourceLoc l{c.path, 0};
    if (n) l.line = static_cast<int>(n->source().begin.line);
    return l;
  }
  void err(const toml::node* n, const std::string& msg, const char* rule = "contract-syntax") {
    ctx.diags.error(rule, "component '" + (c.name.empty() ? c.path : c.name) + "': " + msg, at(n));
  }
  void err_at(const SourceLoc& loc, const std::string& msg) {
    ctx.diags.error("contract-syntax", "component '" + (c.name.empty() ? c.path : c.name) + "': " + msg, loc);
  }
  void known_keys(const toml::table& t, const std::string& where, std::initializer_list<const char*> keys) {
    for (auto&& [k, v] : t) {
      bool ok = false;
      for (const char* key : keys) ok |= k.str() == key;
      if (!ok) err(&v, "unknown key '" + std::string(k.str()) + "' in " + where);
    }
  }
  std::string str(const toml::table& t, const char* key, const std::string& where, bool required,
                  const std::string& dflt = {}) {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) err(&t, where + " needs '" + key + "'");
      return dflt;
    }
    if (auto s = n->as_string()) {
      if (s->get().empty()) err(n, where + "." + key + " must not be empty");
      return s->get();
    }
    err(n, where + "." + key + " must be a string");
    return dflt;
  }
  bool boolean(const toml::table& t, const char* key, bool dflt) {
    const toml::node* n = t.get(key);
    if (!n) return dflt;
    if (auto b = n->as_boolean()) return b->get();
    err(n, std::string(key) + " must be true or false");
    return dflt;
  }
  // Integer or expression string.
  bool quantity(const toml::node* n, Quantity& q, const std::string& what) {
    q.loc = at(n);
    if (!n) return false;
    if (auto i = n->as_integer()) { q.expr = Expr::constant(i->get()); return true; }
    if (auto s = n->as_string()) {
      std::string e;
      if (!Expr::parse(s->get(), q.expr, e)) { err(n, what + ": " + e, "expr"); return false; }
      return true;
    }
    err(n, what + " must be an integer or an expression string");
    return false;
  }
  bool quantity(const toml::table& t, const char* key, Quantity& q, const std::string& where, bool required,
                std::optional<int64_t> dflt = std::nullopt) {
    const toml::node* n = t.get(key);
    if (!n) {
      q.loc = at(&t);
      if (dflt) { q.expr = Expr::constant(*dflt); return true; }
      if (required) err(&t, where + " needs '" + key + "'");
      return false;
    }
    return quantity(n, q, where + "." + key);
  }
  std::optional<int64_t> integer(const toml::table& t, const char* key) {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (auto i = n->as_integer()) return i->get();
    err(n, std::string(key) + " must be an integer");
    return std::nullopt;
  }
  std::vector<std::string> strings(const toml::table& t, const char* key) {
    std::vector<std::string> out;
    const toml::node* n = t.get(key);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a) { err(n, std::string(key) + " must be an array of strings"); return out; }
    for (auto&& e : *a) {
      if (auto s = e.as_string()) {
        if (s->get().empty()) err(&e, std::string(key) + " must not hold an empty string");
        else out.push_back(s->get());
      } else {
        err(&e, std::string(key) + " must hold strings");
      }
    }
    return out;
  }
  template <class F> void each_table(const toml::table& root, const char* key, F f) {
    const toml::node* n = root.get(key);
    if (!n) return;
    const toml::array* a = n->as_array();
    if (!a) { err(n, std::string("[[") + key + "]] must be an array of tables"); return; }
    for (auto&& e : *a) {
      if (const toml::table* t = e.as_table()) f(*t);
      else err(&e, std::string("[[") + key + "]] entries must be tables");
    }
  }
  std::optional<FactType> fact_type(const toml::node* n) {
    if (auto s = n->as_string()) {
      if (s->get() == "i32") return FactType::I32;
      if (s->get() == "u32") return FactType::U32;
      if (s->get() == "i64") return FactType::I64;
      if (s->get() == "u64") return FactType::U64;
    }
    err(n, "fact type must be one of i32, u32, i64, u64");
    return std::nullopt;
  }

  // A name that becomes part of a C++ symbol or a word of the map must be an identifier.
  // Empty strings are reported by str() / strings() where they are read; an empty table key here.
  void identifier(const toml::node* n, const std::string& what, const std::string& name, bool key = false) {
    if (name.empty()) {
      if (key) err(n, what + " must not be empty");
    } else if (!is_identifier(name)) {
      err(n, what + " '" + printable(name) + "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
    }
  }
  // Every array and table of the contract holds at most kMaxEntries entries.
  bool bounded(const toml::node& n) {
    if (const toml::table* t = n.as_table()) {
      if (t->size() > kMaxEntries) {
        err(&n, "a table holds " + std::to_string(t->size()) + " keys; a contract's tables hold at most " + std::to_string(kMaxEntries));
        return false;
      }
      for (auto&& [k, v] : *t)
        if (!bounded(v)) return false;
    } else if (const toml::array* a = n.as_array()) {
      if (a->size() > kMaxEntries) {
        err(&n, "an array holds " + std::to_string(a->size()) + " elements; a contract's arrays hold at most " +
                    std::to_string(kMaxEntries));
        return false;
      }
      for (auto&& v : *a)
        if (!bounded(v)) return false;
    }
    return true;
  }
  // A root key that must hold a table: present with another type is a type error, not "missing".
  const toml::table* table(const toml::table& root, const char* key) {
    const toml::node* n = root.get(key);
    if (n && !n->is_table()) err(n, std::string("[") + key + "] must be a table");
    return n ? n->as_table() : nullptr;
  }

  void read(const toml::table& root) {
    // The component's name first, so every later error (unknown keys too) names it.
    if (const toml::table* comp = root["component"].as_table())
      if (auto name = comp->get_as<std::string>("name")) c.name = name->get();
    if (!bounded(root)) return;
    known_keys(root, "the contract", {"component", "provide", "use", "warps", "smem", "named_barrier", "mbarrier",
                                      "port", "param", "tiles", "assert", "cluster"});
    const toml::table* comp = table(root, "component");
    if (!comp) {
      if (!root.get("component")) ctx.diags.error("contract-syntax", "missing [component] table", SourceLoc{c.path, 1});
      return;
    }
    c.loc = at(comp);
    known_keys(*comp, "[component]", {"name", "owner", "entry", "object", "source", "instances", "defines", "pdl_wait"});
    c.name = str(*comp, "name", "[component]", true);
    c.owner = str(*comp, "owner", "[component]", false, "unknown");
    c.entry = str(*comp, "entry", "[component]", true);
    identifier(comp->get("entry"), "entry", c.entry);
    if (c.entry.rfind("pl_", 0) == 0) err(comp->get("entry"), "entry '" + c.entry + "' uses the prefix pl_, which is reserved for generated symbols");
    else if (is_identifier(c.entry) && reserved_identifier(c.entry))
      err(comp->get("entry"), "entry '" + c.entry + "' is a C++ keyword, a CUDA built-in or a reserved name; it cannot name a function");
    c.object = str(*comp, "object", "[component]", true);
    c.object_loc = at(comp->get("object"));
    c.source = str(*comp, "source", "[component]", false);
    for (char ch : c.source)
      if (ch == '"' || static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
        err(comp->get("source"), "source path holds a quote or a control character");  // it is #included by the control
        break;
      }
    c.defines = strings(*comp, "defines");
    for (const std::string& d : c.defines)
      if (!valid_define(d))
        err(comp->get("defines"), "define '" + printable(d) + "' is not NAME or NAME=VALUE (NAME an identifier, VALUE one line)");
    if (comp->get("instances")) {
      Quantity q;
      if (quantity(*comp, "instances", q, "[component]", true)) c.instances = q;
    }
    if (const toml::node* pw = comp->get("pdl_wait")) {
      c.pdl_wait_loc = at(pw);
      const std::string v = str(*comp, "pdl_wait", "[component]", false, "entry");
      if (v == "own") c.pdl_own_wait = true;
      else if (v != "entry") err(pw, "pdl_wait must be \"entry\" (the generated entry waits before the role) or \"own\" "
                                     "(the component calls pl::pdl_wait() itself), not '" + printable(v) + "'");
    }

    if (const toml::node* pn = root.get("provide")) {
      if (const toml::table* pt = pn->as_table()) {
        for (auto&& [k, v] : *pt) {
          FactProvide f;
          f.name = std::string(k.str());
          identifier(&v, "fact name", f.name, true);
          if (const toml::table* vt = v.as_table()) {
            known_keys(*vt, "[provide]." + f.name, {"value", "type"});
            quantity(*vt, "value", f.value, "[provide]." + f.name, true);
            if (const toml::node* tn = vt->get("type")) {
              if (auto t = fact_type(tn)) f.type = *t;
            }
          } else {
            quantity(&v, f.value, "[provide]." + f.name);
          }
          f.value.loc = at(&v);
          c.provides.push_back(std::move(f));
        }
      } else err(pn, "[provide] must be a table");
    }
    if (const toml::node* un = root.get("use")) {
      if (const toml::table* ut = un->as_table()) {
        for (auto&& [k, v] : *ut) {
          FactUse u;
          u.name = std::string(k.str());
          u.loc = at(&v);
          identifier(&v, "fact name", u.name, true);
          const toml::table* vt = v.as_table();
          if (!vt) { err(&v, "[use]." + u.name + " must be a table of constraints, e.g. {} or { max = 256 }"); continue; }
          known_keys(*vt, "[use]." + u.name, {"min", "max", "multiple_of", "one_of", "type"});
          u.min = integer(*vt, "min");
          u.max = integer(*vt, "max");
          u.multiple_of = integer(*vt, "multiple_of");
          if (u.multiple_of && *u.multiple_of <= 0) err(vt->get("multiple_of"), "multiple_of must be positive");
          if (const toml::node* on = vt->get("one_of")) {
            if (const toml::array* a = on->as_array()) {
              for (auto&& e : *a) {
                if (auto i = e.as_integer()) u.one_of.push_back(i->get());
                else err(&e, "one_of must hold integers");
              }
            } else err(on, "one_of must be an array of integers");
          }
          if (const toml::node* tn = vt->get("type")) u.type = fact_type(tn);
          c.uses.push_back(std::move(u));
        }
      } else err(un, "[use] must be a table");
    }

    if (const toml::table* w = table(root, "warps")) {
      c.warps_loc = at(w);
      known_keys(*w, "[warps]", {"count", "warpgroup", "registers"});
      quantity(*w, "count", c.warps, "[warps]", true);
      c.warpgroup = boolean(*w, "warpgroup", false);
      if (w->get("registers")) {
        Quantity q;
        if (quantity(*w, "registers", q, "[warps]", true)) c.registers = q;
      }
    } else if (!root.get("warps")) {
      ctx.diags.error("contract-syntax", "component '" + c.name + "': missing [warps] table (a component runs as at least one warp)", c.loc);
    }

    each_table(root, "smem", [&](const toml::table& t) {
      SmemRegion r;
      r.loc = at(&t);
      known_keys(t, "[[smem]]", {"name", "bytes", "align", "live"});
      r.name = str(t, "name", "[[smem]]", true);
      quantity(t, "bytes", r.bytes, "[[smem]]", true);
      r.align = integer(t, "align").value_or(16);
      // The dynamic smem base is 1024-byte aligned: a larger alignment could not be honoured.
      if (r.align <= 0 || r.align > 1024 || (r.align & (r.align - 1)))
        err(t.get("align"), "[[smem]] '" + r.name + "': align must be a power of two up to 1024");
      r.live = strings(t, "live");
      if (r.live.size() > kMaxLive)
        err(t.get("live"), "[[smem]] '" + r.name + "': live lists " + std::to_string(r.live.size()) + " phases; at most " +
                               std::to_string(kMaxLive));
      c.smem.push_back(std::move(r));
    });
    each_table(root, "named_barrier", [&](const toml::table& t) {
      NamedBarrier b;
      b.loc = at(&t);
      known_keys(t, "[[named_barrier]]", {"name", "threads"});
      b.name = str(t, "name", "[[named_barrier]]", true);
      quantity(t, "threads", b.threads, "[[named_barrier]]", true);
      c.barriers.push_back(std::move(b));
    });
    each_table(root, "mbarrier", [&](const toml::table& t) {
      MbarrierGroup m;
      m.loc = at(&t);
      known_keys(t, "[[mbarrier]]", {"name", "count", "arrivals"});
      m.name = str(t, "name", "[[mbarrier]]", true);
      quantity(t, "count", m.count, "[[mbarrier]]", false, 1);
      quantity(t, "arrivals", m.arrivals, "[[mbarrier]]", false, 1);
      c.mbarriers.push_back(std::move(m));
    });
    each_table(root, "port", [&](const toml::table& t) {
      PortDecl p;
      p.loc = at(&t);
      known_keys(t, "[[port]]", {"name", "direction", "stages", "completion", "arrive", "guarantees", "requires", "tensor", "per_tile", "writes",
                          "multicast", "multicast_tensors"});
      p.name = str(t, "name", "[[port]]", true);
      std::string dir = str(t, "direction", "[[port]]", true);
      if (dir == "out") p.dir = PortDir::Out;
      else if (dir == "in") p.dir = PortDir::In;
      else if (!dir.empty()) err(t.get("direction"), "port '" + p.name + "': direction must be 'out' or 'in'");
      quantity(t, "stages", p.stages, "[[port]]", false, 1);
      std::string comp = str(t, "completion", "[[port]]", false, "arrive");
      if (comp == "tx") p.completion = Completion::Tx;
      else if (comp != "arrive") err(t.get("completion"), "port '" + p.name + "': completion must be 'tx' or 'arrive'");
      std::string arr = str(t, "arrive", "[[port]]", false, "one");
      if (arr == "one") p.arrive = Arrive::One;
      else if (arr == "warp") p.arrive = Arrive::Warp;
      else if (arr == "thread") p.arrive = Arrive::Thread;
      else err(t.get("arrive"), "port '" + p.name + "': arrive must be 'one', 'warp' or 'thread'");
      // With tx completion one thread per instance announces the stage's bytes (arrive.expect_tx):
      // the full barrier counts one arrival per producer instance.
      if (p.completion == Completion::Tx && p.arrive != Arrive::One && p.dir == PortDir::Out)
        err(t.get("arrive"), "port '" + p.name + "': completion = \"tx\" needs arrive = \"one\" (one thread per instance announces the transaction bytes)");
      {
        Quantity q;
        if (quantity(t, "per_tile", q, "[[port]]", false, 1)) p.per_tile = q.expr;
        p.per_tile_loc = q.loc;
        p.per_tile_declared = t.get("per_tile") != nullptr;
      }
      p.writes = strings(t, "writes");
      p.writes_loc = at(t.get("writes") ? t.get("writes") : &t);
      if (!p.writes.empty() && p.dir == PortDir::In)
        err(t.get("writes"), "port '" + p.name + "': only a producer (direction = \"out\") declares the tensors it writes");
      if (const toml::node* mn = t.get("multicast")) {
        p.multicast_loc = at(mn);
        if (auto v = integer(t, "multicast")) p.multicast = *v;
        if (p.dir == PortDir::In)
          err(mn, "port '" + p.name + "': only a producer (direction = \"out\") multicasts; consumers release in every block of the group");
        else if (p.multicast < 1 || p.multicast > 16)
          err(mn, "port '" + p.name + "': multicast must be 1..16 blocks, not " + std::to_string(p.multicast));
        else if (p.multicast > 1 && p.completion != Completion::Tx)
          err(mn, "port '" + p.name + "': multicast needs completion = \"tx\" (the copies of the other blocks complete on this block's full barrier)");
      }
      p.multicast_tensors = strings(t, "multicast_tensors");
      if (!p.multicast_tensors.empty() && p.multicast <= 1)
        err(t.get("multicast_tensors"), "port '" + p.name + "': multicast_tensors without multicast = N (N > 1)");
      if (p.multicast > 1 && p.multicast_tensors.empty() && p.dir == PortDir::Out)
        err(t.get("multicast"), "port '" + p.name + "': multicast = " + std::to_string(p.multicast) +
                                    " needs multicast_tensors = [...], the tensors the blocks of the group share");
      p.guarantees = strings(t, "guarantees");
      p.requires_ = strings(t, "requires");
      each_table(t, "tensor", [&](const toml::table& tt) {
        TensorDecl d;
        d.loc = at(&tt);
        known_keys(tt, "[[port.tensor]]", {"name", "dtype", "shape", "layout", "swizzle", "space", "tile_coords"});
        d.name = str(tt, "name", "[[port.tensor]]", true);
        d.dtype = str(tt, "dtype", "[[port.tensor]]", true);
        if (!d.dtype.empty() && dtype_bytes(d.dtype) == 0) err(tt.get("dtype"), "tensor '" + d.name + "': unknown dtype '" + d.dtype + "'");
        const toml::array* shape = tt["shape"].as_array();
        if (auto star = tt["shape"].value<std::string>(); star && *star == "*") {
          d.any_shape = true;
          if (p.dir == PortDir::Out)
            err(tt.get("shape"), "tensor '" + d.name + "': only a consumer (direction = \"in\") can take any shape (\"*\")");
        } else if (!shape || shape->size() != 2) {
          err(tt.get("shape") ? tt.get("shape") : &tt, "tensor '" + d.name + "': shape must be [rows, cols] or \"*\"");
        } else {
          quantity(shape->get(0), d.rows, "tensor '" + d.name + "' rows");
          quantity(shape->get(1), d.cols, "tensor '" + d.name + "' cols");
        }
        d.layout = str(tt, "layout", "[[port.tensor]]", false, "row");
        if (d.layout != "row" && d.layout != "col") err(tt.get("layout"), "tensor '" + d.name + "': layout must be 'row' or 'col'");
        d.swizzle = str(tt, "swizzle", "[[port.tensor]]", false, "none");
        if (d.swizzle != "none" && !swizzle_span(d.swizzle))  // context.h: the swizzles the linker knows
          err(tt.get("swizzle"), "tensor '" + d.name + "': swizzle must be 'none', '32B', '64B' or '128B'");
        d.space = str(tt, "space", "[[port.tensor]]", false, "smem");
        if (d.space != "smem")
          ctx.diags.error("port-mismatch", "component '" + c.name + "': tensor '" + d.name + "' of port '" + p.name +
                              "' lives in " + d.space + "; only shared-memory tensors can cross warp roles", at(tt.get("space")));
        if (const toml::node* tc = tt.get("tile_coords")) {
          d.tile_coords_declared = true;
          d.tile_coords_loc = at(tc);
          const toml::array* a = tc->as_array();
          if (!a) err(tc, "tensor '" + d.name + "': tile_coords must be an array of \"m\" and \"n\", the tile coordinates its content depends on");
          else
            for (auto&& e : *a) {
              const auto s = e.as_string();
              const std::string v = s ? s->get() : std::string();
              bool& f = v == "m" ? d.follows_m : d.follows_n;
              if (v != "m" && v != "n")
                err(&e, "tensor '" + d.name + "': tile_coords holds " + (s ? "'" + printable(v) + "'" : std::string("a value that is not a string")) +
                            "; a tile coordinate is \"m\" or \"n\"");
              else if (f) err(&e, "tensor '" + d.name + "': tile_coords names '" + v + "' twice");
              else f = true;
            }
        }
        p.tensors.push_back(std::move(d));
      });
      if (p.tensors.empty()) err(&t, "port '" + p.name + "' declares no [[port.tensor]]");
      std::set<std::string> tensor_names, written;
      for (const TensorDecl& td : p.tensors) tensor_names.insert(td.name);
      std::set<std::string> multicast_seen;
      for (const std::string& m : p.multicast_tensors) {
        if (!multicast_seen.insert(m).second)
          err(t.get("multicast_tensors"), "port '" + p.name + "': multicast_tensors names tensor '" + m + "' twice");
        else if (!tensor_names.count(m))
          err(t.get("multicast_tensors"), "port '" + p.name + "': multicast_tensors names tensor '" + m + "', which the port does not declare");
        else if (!p.writes.empty() && std::find(p.writes.begin(), p.writes.end(), m) == p.writes.end())
          err(t.get("multicast_tensors"), "port '" + p.name + "': multicast_tensors names tensor '" + m +
                                              "', which this producer does not write (writes = [...]); only what it copies can be multicast");
      }
      // A multicast tensor is one copy for every block of the group: the contract must say which
      // tile coordinates its content depends on, so that the link can give the group tiles that
      // agree on them (check_cluster).
      if (p.multicast > 1 && p.dir == PortDir::Out)
        for (const TensorDecl& td : p.tensors)
          if (multicast_seen.count(td.name) && !td.tile_coords_declared)
            err_at(td.loc, "port '" + p.name + "': tensor '" + td.name + "' is multicast but does not say which tile coordinates its "
                    "content depends on; add tile_coords = [\"n\"] to its [[port.tensor]] (selected by the tile's n, like a "
                    "weight slice), [\"m\"], or [] (the same for every tile): the link gives the blocks of a multicast group "
                    "tiles that agree on them");
      for (const std::string& w : p.writes) {
        if (!written.insert(w).second) err(t.get("writes"), "port '" + p.name + "': writes names tensor '" + w + "' twice");
        else if (!tensor_names.count(w))
          err(t.get("writes"), "port '" + p.name + "': writes names tensor '" + w + "', which the port does not declare");
      }
      c.ports.push_back(std::move(p));
    });
    each_table(root, "param", [&](const toml::table& t) {
      ParamDecl p;
      p.loc = at(&t);
      known_keys(t, "[[param]]", {"name", "type", "tensor", "box"});
      p.name = str(t, "name", "[[param]]", true);
      identifier(t.get("name"), "param name", p.name);  // the map's `param <name> <type> <slot>` line
      std::string ty = str(t, "type", "[[param]]", true);
      static const std::pair<const char*, ParamType> types[] = {{"tensormap", ParamType::TensorMap}, {"ptr", ParamType::Ptr},
                                                                {"u32", ParamType::U32}, {"i32", ParamType::I32},
                                                                {"u64", ParamType::U64}, {"f32", ParamType::F32}};
      bool ok = false;
      for (auto& [n, v] : types) if (ty == n) { p.type = v; ok = true; }
      if (!ok && !ty.empty()) err(t.get("type"), "param '" + p.name + "': type must be tensormap, ptr, u32, i32, u64 or f32");
      // tensor = "<port>.<tensor>" and box = [rows, cols]: what one TMA copy of a tensormap moves
      if (const toml::node* tn = t.get("tensor")) {
        p.tensor_loc = at(tn);
        const std::string v = str(t, "tensor", "[[param]]", true);
        // "<port>.<tensor>", split where the text before the dot is a declared port (names may hold dots)
        std::vector<std::pair<const PortDecl*, std::string>> split;
        for (const PortDecl& q : c.ports)
          if (v.size() > q.name.size() + 1 && v.compare(0, q.name.size(), q.name) == 0 && v[q.name.size()] == '.')
            split.push_back({&q, v.substr(q.name.size() + 1)});
        std::vector<std::pair<const PortDecl*, std::string>> found;
        for (const auto& [q, tn_name] : split)
          for (const TensorDecl& td : q->tensors)
            if (td.name == tn_name) found.push_back({q, tn_name});
        if (!tn->is_string()) {
          // str() reported it
        } else if (ok && p.type != ParamType::TensorMap)
          err(tn, "param '" + p.name + "': tensor names what a TMA copy moves; only a tensormap param has one");
        else if (found.size() == 1) {
          p.tensor_port = found[0].first->name;
          p.tensor_name = found[0].second;
        } else if (found.size() > 1)
          err(tn, "param '" + p.name + "': tensor \"" + printable(v) + "\" is ambiguous: port '" + printable(found[0].first->name) +
                      "' tensor '" + printable(found[0].second) + "' and port '" + printable(found[1].first->name) + "' tensor '" +
                      printable(found[1].second) + "'");
        else if (v.find('.') == std::string::npos || v.front() == '.' || v.back() == '.')
          err(tn, "param '" + p.name + "': tensor must be \"<port>.<tensor>\" (e.g. \"ab.a\"), not \"" + printable(v) + "\"");
        else if (split.empty())
          err(tn, "param '" + p.name + "': tensor \"" + printable(v) + "\" names no port of the component (ports: " + [&] {
                std::string l;
                for (const PortDecl& q : c.ports) l += (l.empty() ? "" : ", ") + printable(q.name);
                return l.empty() ? std::string("none") : l;
              }() + ")");
        else {
          std::string why;  // each reading of the dots: a declared port, and the tensor it lacks
          for (const auto& [q, rest] : split)
            why += (why.empty() ? "" : "; ") + std::string("port '") + printable(q->name) + "' declares no tensor '" + printable(rest) + "'";
          err(tn, "param '" + p.name + "': tensor \"" + printable(v) + "\": " + why);
        }
      }
      if (const toml::node* bn = t.get("box")) {
        p.box_loc = at(bn);
        const toml::array* a = bn->as_array();
        if (!t.get("tensor"))
          err(bn, "param '" + p.name + "': box needs tensor = \"<port>.<tensor>\" (the copies' dtype and swizzle are that tensor's)");
        else if (!a || a->size() != 2)
          err(bn, "param '" + p.name + "': box must be [rows, cols] (integers or expressions over facts)");
        else if (quantity(a->get(0), p.box_rows, "param '" + p.name + "' box rows") &&
                 quantity(a->get(1), p.box_cols, "param '" + p.name + "' box cols"))
          p.box_declared = true;
      }
      c.params.push_back(std::move(p));
    });
    each_table(root, "assert", [&](const toml::table& t) {
      AssertDecl a;
      known_keys(t, "[[assert]]", {"expr", "message"});
      a.message = str(t, "message", "[[assert]]", false);
      const toml::node* n = t.get("expr");
      a.loc = at(n ? n : &t);
      if (!n) { err(&t, "[[assert]] needs 'expr'"); return; }
      auto s = n->as_string();
      if (!s) { err(n, "[[assert]].expr must be a string holding a condition"); return; }
      std::string e;
      if (!Expr::parse_condition(s->get(), a.expr, e)) { err(n, "assert: " + e, "expr"); return; }
      c.asserts.push_back(std::move(a));
    });
    if (const toml::table* t = table(root, "cluster")) {
      ClusterDecl& k = c.cluster;
      k.present = true;
      k.loc = at(t);
      known_keys(*t, "[cluster]", {"dims", "allow_nonportable"});
      k.nonportable = boolean(*t, "allow_nonportable", false);
      const toml::array* a = (*t)["dims"].as_array();
      if (!a || a->size() != 3) {
        err(t->get("dims") ? t->get("dims") : t, "[cluster] needs dims = [x, y, z] (three integers)");
      } else {
        for (size_t i = 0; i < 3; ++i) {
          if (auto v = a->get(i)->as_integer()) k.dims[i] = v->get();
          else err(a->get(i), "[cluster] dims must hold integers");
          if (k.dims[i] < 1 || k.dims[i] > 16) {
            err(a->get(i), "[cluster] dims[" + std::to_string(i) + "] = " + std::to_string(k.dims[i]) + "; a cluster dimension is 1..16");
            k.dims[i] = 1;
          }
        }
        if (k.dims[1] != 1 || k.dims[2] != 1)
          err(t->get("dims"), "[cluster] dims = [" + std::to_string(k.dims[0]) + ", " + std::to_string(k.dims[1]) + ", " +
                                  std::to_string(k.dims[2]) + "]: PipeLink's grid is one-dimensional, so a cluster is [x, 1, 1]");
        k.dims[1] = k.dims[2] = 1;
      }
    }
    if (const toml::table* t = table(root, "tiles")) {
      TilesDecl& d = c.tiles;
      d.present = true;
      d.loc = at(t);
      known_keys(*t, "[tiles]", {"order", "tile", "extent", "group", "device_extent", "k_extent", "k_tile", "partial_bytes"});
      d.order = str(*t, "order", "[tiles]", false, "row_major");
      if (d.order != "row_major" && d.order != "col_major" && d.order != "grouped" && d.order != "any")
        err(t->get("order"), "[tiles] order must be 'row_major', 'col_major', 'grouped' or 'any' (the link chooses: --tile-order)");
      if (d.order == "grouped") {
        d.group = integer(*t, "group").value_or(0);
        if (d.group < 1 || d.group > 4096)
          err(t->get("group") ? t->get("group") : t, "[tiles] order = \"grouped\" needs group = G, the tiles along m of a band (1..4096)");
      } else if (t->get("group")) {
        err(t->get("group"), "[tiles] group is for order = \"grouped\"");
      }
      const toml::array* tile = (*t)["tile"].as_array();
      if (!tile || tile->size() != 2) err(t, "[tiles] needs tile = [tile_m, tile_n]");
      else {
        quantity(tile->get(0), d.tile_m, "[tiles] tile[0]");
        quantity(tile->get(1), d.tile_n, "[tiles] tile[1]");
      }
      auto ext = strings(*t, "extent");  // drops (and reports) empty names
      const toml::array* ea = (*t)["extent"].as_array();
      if (!ea || ea->size() != 2) err(t, "[tiles] needs extent = [\"M\", \"N\"] (names of u32 params)");
      else if (ext.size() == 2) {
        d.extent_m = ext[0];
        d.extent_n = ext[1];
        for (const std::string& e : ext) identifier(t->get("extent"), "[tiles] extent", e);
      }
      if (t->get("device_extent")) {
        d.device_extent_loc = at(t->get("device_extent"));
        d.device_extent = strings(*t, "device_extent");
        for (const std::string& e : d.device_extent)
          if (e != d.extent_m && e != d.extent_n)
            err(t->get("device_extent"), "[tiles] device_extent names '" + printable(e) + "', which is not one of the extents [" +
                                             d.extent_m + ", " + d.extent_n + "]");
      }
      if (t->get("k_extent") || t->get("k_tile")) {
        d.k_loc = at(t->get("k_extent") ? t->get("k_extent") : t->get("k_tile"));
        d.k_extent = str(*t, "k_extent", "[tiles]", false, "");
        if (d.k_extent.empty() || !t->get("k_tile"))
          err(t, "[tiles] k_extent and k_tile come together: k_extent = \"K\" (a u32 param), k_tile = the k slice (a fact or number)");
        else {
          identifier(t->get("k_extent"), "[tiles] k_extent", d.k_extent);
          quantity(t->get("k_tile"), d.k_tile, "[tiles] k_tile");
        }
      }
      if (t->get("partial_bytes")) {
        d.partial_loc = at(t->get("partial_bytes"));
        if (d.k_extent.empty())
          err(t->get("partial_bytes"), "[tiles] partial_bytes is for a component that walks k ranges: declare k_extent and k_tile");
        else {
          d.has_partials = true;
          quantity(t->get("partial_bytes"), d.partial_bytes, "[tiles] partial_bytes");
        }
      }
    }
  }
};

}  // namespace

std::string tile_coords_text(const TensorDecl& t) {
  if (t.follows_m && t.follows_n) return "[\"m\", \"n\"]";
  return t.follows_m ? "[\"m\"]" : t.follows_n ? "[\"n\"]" : "[]";
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char ch : s)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) return false;
  return true;
}

void parse_contracts(LinkContext& ctx) {
  if (ctx.opt.inputs.size() > kMaxInstances) {
    ctx.diags.error("capacity", "the link lists " + std::to_string(ctx.opt.inputs.size()) + " contracts; PipeLink links at most " +
                                    std::to_string(kMaxInstances) + " instances (a block runs at most 32 warps)");
    return;
  }
  std::map<std::string, const Contract*> by_path;  // canonical path → contract
  std::set<std::string> failed;                    // canonical paths already reported
  std::map<const Contract*, unsigned> count;
  std::vector<const Contract*> order;
  for (const std::string& input : ctx.opt.inputs) {
    std::error_code ec;
    std::string canon = std::filesystem::weakly_canonical(input, ec).string();
    if (ec) canon = input;
    if (failed.count(canon)) continue;  // listed again: its errors are reported once
    auto it = by_path.find(canon);
    const Contract* c = nullptr;
    if (it != by_path.end()) {
      c = it->second;
    } else {
      auto owned = std::make_unique<Contract>();
      owned->path = input;
      owned->dir = std::filesystem::path(input).parent_path().string();
      // Only a regular file of bounded size is read (a FIFO or /dev/zero would never end).
      std::vector<char> bytes;
      std::string why;
      if (!read_regular_file(input, kMaxContractBytes, bytes, why)) {
        const bool missing = !std::filesystem::exists(input, ec) && !ec;
        if (missing) ctx.diags.error("input", "cannot open contract '" + input + "'");
        else if (why == "it is a directory") ctx.diags.error("input", "contract '" + input + "' is a directory");
        else ctx.diags.error("input", "cannot read contract '" + input + "': " + why);
        failed.insert(canon);
        continue;
      }
      // toml++ assumes well-formed UTF-8 without control characters (an invalid sequence reaches an
      // unreachable point in it).
      bool control = false;
      size_t bad = invalid_text(bytes, control);
      bool stray = false;
      if (bad == std::string::npos && (bad = stray_non_ascii(bytes)) != std::string::npos) stray = true;
      if (bad != std::string::npos) {
        const size_t line_start = [&] {
          size_t k = bad;
          while (k > 0 && bytes[k - 1] != '\n') --k;
          return k;
        }();
        int line = 1 + static_cast<int>(std::count(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bad), '\n'));
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned char>(bytes[bad]));
        ctx.diags.error("contract-syntax", std::string(stray     ? "a non-ASCII character outside a string or comment"
                                                       : control ? "control character"
                                                                 : "invalid UTF-8") + " (byte " +
                                               std::string(hex) + " at column " + std::to_string(bad - line_start + 1) + ")",
                        SourceLoc{input, line});
        failed.insert(canon);
        continue;
      }
      try {
        toml::table root = toml::parse(std::string_view(bytes.data(), bytes.size()), input);
        Reader r{ctx, *owned};
        r.read(root);
      } catch (const toml::parse_error& e) {
        ctx.diags.error("contract-syntax", std::string(e.description()),
                        SourceLoc{input, static_cast<int>(e.source().begin.line)});
        failed.insert(canon);
        continue;
      }
      c = owned.get();
      by_path.emplace(canon, c);
      ctx.contracts.push_back(std::move(owned));
    }
    order.push_back(c);
    ++count[c];
  }
  // Two different files must not claim one component name.
  std::map<std::string, const Contract*> names;
  for (const auto& c : ctx.contracts) {
    auto [it, fresh] = names.emplace(c->name, c.get());
    if (!fresh)
      ctx.diags.error("contract-syntax", "two contracts name their component '" + c->name + "'", c->loc)
          .notes.push_back("first named in " + it->second->loc.str());
  }
  std::map<const Contract*, unsigned> seen;
  for (const Contract* c : order) {
    Instance in;
    in.contract = c;
    in.index = seen[c]++;
    in.count = count[c];
    in.name = in.count > 1 ? c->name + "#" + std::to_string(in.index) : c->name;
    ctx.instances.push_back(std::move(in));
  }
  if (ctx.opt.inputs.empty()) ctx.diags.error("input", "no input contracts");
}

}  // namespace pipelink
