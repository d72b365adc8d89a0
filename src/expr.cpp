// expr.cpp — a small recursive-descent parser and evaluator for contract expressions.
// Grammar: sum := term (('+'|'-') term)* ; term := unary (('*'|'/'|'%') unary)* ;
//          unary := '-' unary | primary ; primary := INT | NAME | NAME '(' sum (',' sum)* ')' | '(' sum ')'
// Conditions (contract asserts only, Expr::parse_condition) add, loosest first:
//          or := and ('||' and)* ; and := cmp ('&&' cmp)* ; cmp := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)?
//          and a parenthesised primary holds an `or`. A comparison or a logical operator gives 0 or 1;
//          && and || evaluate their right side only when needed (as in C).
// Functions: min, max, ceil_div, align_up (rounding up; the divisor or alignment must be positive).
// Overflow, division by zero, nesting deeper than kMaxDepth and more than kMaxNodes nodes or
// kMaxLength characters are errors, never traps. A tree is at most kMaxDepth high (a flat
// `1+1+...+1` is a left-deep chain too), so evaluation, rendering and collection recurse at most
// kMaxDepth levels; the node destructor does not recurse at all.
#include "pipelink/expr.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>

namespace pipelink {

struct ExprNode {
  enum Kind { Int, Name, Neg, Bin, Call } kind;
  int64_t value = 0;
  std::string name;  // Name / Call
  char op = 0;       // Bin: + - * / %, and in conditions = (==) ! (!=) < l (<=) > g (>=) & (&&) | (||)
  int height = 1;    // 1 + the highest child
  std::vector<std::shared_ptr<const ExprNode>> args;
  ExprNode() = default;
  ExprNode(const ExprNode&) = delete;
  ExprNode& operator=(const ExprNode&) = delete;
  // Iterative: children whose last owner is this tree are emptied before they are released, so
  // no destructor call ever nests inside another one.
  ~ExprNode() {
    std::vector<std::shared_ptr<const ExprNode>> stack;
    stack.swap(args);
    while (!stack.empty()) {
      std::shared_ptr<const ExprNode> n = std::move(stack.back());
      stack.pop_back();
      if (n.use_count() == 1) {
        auto& a = const_cast<ExprNode&>(*n).args;
        for (auto& c : a) stack.push_back(std::move(c));
        a.clear();
      }
    }
  }
};

namespace {

using NodeP = std::shared_ptr<const ExprNode>;
constexpr int kMaxDepth = 200;      // parentheses, unary minus and calls, nested; and tree height
constexpr int kMaxNodes = 1000;     // values, names and operations
constexpr size_t kMaxLength = 4096; // characters

struct Parser {
  const std::string& s;
  size_t i = 0;
  std::string err;
  int depth = 0;
  bool conditions = false;  // comparisons and && || allowed (asserts)
  int nodes = 0;
  struct Nest {  // counts one level of recursion while alive
    int& d;
    explicit Nest(int& x) : d(++x) {}
    ~Nest() { --d; }
  };

  void skip() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool eat(char c) {
    skip();
    if (i < s.size() && s[i] == c) { ++i; return true; }
    return false;
  }
  NodeP fail(const std::string& m) {
    const std::string shown = s.size() > 80 ? s.substr(0, 77) + "..." : s;
    if (err.empty()) err = m + " at column " + std::to_string(i + 1) + " of '" + shown + "'";
    return nullptr;
  }
  // Conditions: or := and ('||' and)* ; and := cmp ('&&' cmp)* ; cmp := sum (relop sum)?
  bool eat2(const char* two) {
    skip();
    if (i + 1 < s.size() && s[i] == two[0] && s[i + 1] == two[1]) { i += 2; return true; }
    return false;
  }
  NodeP any() { return conditions ? lor() : sum(); }
  NodeP lor() {
    NodeP l = land();
    while (l && eat2("||")) {
      NodeP r = land();
      if (!r) return nullptr;
      l = bin('|', l, r);
    }
    return l;
  }
  NodeP land() {
    NodeP l = cmp();
    while (l && eat2("&&")) {
      NodeP r = cmp();
      if (!r) return nullptr;
      l = bin('&', l, r);
    }
    return l;
  }
  NodeP cmp() {
    NodeP l = sum();
    if (!l) return nullptr;
    char op = 0;
    if (eat2("==")) op = '=';
    else if (eat2("!=")) op = '!';
    else if (eat2("<=")) op = 'l';
    else if (eat2(">=")) op = 'g';
    else if (eat('<')) op = '<';
    else if (eat('>')) op = '>';
    if (!op) return l;
    NodeP r = sum();
    if (!r) return nullptr;
    skip();
    if (i < s.size() && (s[i] == '<' || s[i] == '>' || s[i] == '=' || (s[i] == '!' && i + 1 < s.size() && s[i + 1] == '=')))
      return fail("comparisons do not chain; join them with && or parentheses");
    return bin(op, l, r);
  }
  NodeP sum() {
    NodeP l = term();
    while (l) {
      skip();
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
        char op = s[i++];
        NodeP r = term();
        if (!r) return nullptr;
        l = bin(op, l, r);
      } else break;
    }
    return l;
  }
  NodeP term() {
    NodeP l = unary();
    while (l) {
      skip();
      if (i < s.size() && (s[i] == '*' || s[i] == '/' || s[i] == '%')) {
        char op = s[i++];
        NodeP r = unary();
        if (!r) return nullptr;
        l = bin(op, l, r);
      } else break;
    }
    return l;
  }
  // Every node is made here: counts it and bounds the tree's height.
  std::shared_ptr<ExprNode> node(ExprNode::Kind k, std::vector<NodeP> args = {}) {
    if (++nodes > kMaxNodes) {
      fail("expression has more than " + std::to_string(kMaxNodes) + " terms");
      return nullptr;
    }
    int h = 0;
    for (const NodeP& a : args) h = std::max(h, a->height);
    if (h + 1 > kMaxDepth) {
      fail("expression nests too deeply (more than " + std::to_string(kMaxDepth) + " levels)");
      return nullptr;
    }
    auto n = std::make_shared<ExprNode>();
    n->kind = k;
    n->height = h + 1;
    n->args = std::move(args);
    return n;
  }
  NodeP bin(char op, NodeP l, NodeP r) {
    auto n = node(ExprNode::Bin, {l, r});
    if (n) n->op = op;
    return n;
  }
  NodeP unary() {
    Nest nest(depth);
    if (depth > kMaxDepth) return fail("expression nests too deeply (more than " + std::to_string(kMaxDepth) + " levels)");
    if (eat('-')) {
      NodeP x = unary();
      if (!x) return nullptr;
      return node(ExprNode::Neg, {x});
    }
    return primary();
  }
  NodeP primary() {
    skip();
    if (i >= s.size()) return fail("expected a value");
    if (eat('(')) {
      NodeP x = any();
      if (!x) return nullptr;
      if (!eat(')')) return fail("expected ')'");
      return x;
    }
    if (std::isdigit(static_cast<unsigned char>(s[i]))) {
      int64_t v = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        int digit = s[i] - '0';
        if (v > (INT64_MAX - digit) / 10) return fail("integer too large");
        v = v * 10 + digit;
        ++i;
      }
      auto n = node(ExprNode::Int);
      if (n) n->value = v;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_') {
      size_t b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.')) ++i;
      std::string name = s.substr(b, i - b);
      if (eat('(')) {
        static const char* fns[] = {"min", "max", "ceil_div", "align_up"};
        bool known = false;
        for (const char* f : fns) known |= name == f;
        if (!known) return fail("unknown function '" + name + "'");
        std::vector<NodeP> args;
        do {
          NodeP a = sum();
          if (!a) return nullptr;
          args.push_back(a);
          if (args.size() > 2) return fail(name + "() takes two arguments");
        } while (eat(','));
        if (!eat(')')) return fail("expected ')'");
        if (args.size() != 2) return fail(name + "() takes two arguments");
        auto n = node(ExprNode::Call, std::move(args));
        if (n) n->name = name;
        return n;
      }
      auto n = node(ExprNode::Name);
      if (n) n->name = name;
      return n;
    }
    return fail(std::string("unexpected '") + s[i] + "'");
  }
};

void collect(const ExprNode& n, std::vector<std::string>& out) {
  if (n.kind == ExprNode::Name) {
    for (const auto& x : out) if (x == n.name) return;
    out.push_back(n.name);
  }
  for (const auto& a : n.args) collect(*a, out);
}

// A value known now, or one known only at run time (a u32 param in per_tile).
struct Val { bool known = true; int64_t v = 0; };
using Lookup = std::function<std::optional<int64_t>(const std::string&)>;
using Runtime = std::function<bool(const std::string&)>;

// nullopt on an error (in `err`). With `runtime`, a name it accepts evaluates to an unknown value
// and only the parts known now are checked (a divisor known to be zero is still an error).
std::optional<Val> evaluate(const ExprNode& n, const Lookup& lookup, const Runtime* runtime, std::string& err) {
  auto fail = [&](const std::string& m) -> std::optional<Val> { if (err.empty()) err = m; return std::nullopt; };
  switch (n.kind) {
    case ExprNode::Int: return Val{true, n.value};
    case ExprNode::Name: {
      if (auto v = lookup(n.name)) return Val{true, *v};
      if (runtime && (*runtime)(n.name)) return Val{false, 0};
      return fail(runtime ? "'" + n.name + "' is neither a fact nor a u32 param" : "unknown fact '" + n.name + "'");
    }
    case ExprNode::Neg: {
      auto v = evaluate(*n.args[0], lookup, runtime, err);
      if (!v) return std::nullopt;
      if (!v->known) return v;
      if (v->v == INT64_MIN) return fail("integer overflow");
      return Val{true, -v->v};
    }
    default: break;
  }
  auto a = evaluate(*n.args[0], lookup, runtime, err);
  if (!a) return std::nullopt;
  // && and || short-circuit: "d != 0 && n / d > 2" never divides by zero.
  if (n.kind == ExprNode::Bin && n.op == '&' && a->known && a->v == 0) return Val{true, 0};
  if (n.kind == ExprNode::Bin && n.op == '|' && a->known && a->v != 0) return Val{true, 1};
  auto b = evaluate(*n.args[1], lookup, runtime, err);
  if (!b) return std::nullopt;
  const bool divides = n.kind == ExprNode::Bin ? n.op == '/' || n.op == '%' : n.name == "ceil_div" || n.name == "align_up";
  if (divides && b->known) {
    if (n.kind == ExprNode::Bin && b->v == 0) return fail("division by zero");
    if (n.kind == ExprNode::Call && b->v <= 0)
      return fail(n.name == "ceil_div" ? "ceil_div needs a positive divisor" : "align_up needs a positive alignment");
  }
  if (!a->known || !b->known) return Val{false, 0};
  int64_t r = 0;
  const int64_t x = a->v, y = b->v;
  if (n.kind == ExprNode::Bin) {
    switch (n.op) {
      case '+': if (__builtin_add_overflow(x, y, &r)) return fail("integer overflow"); return Val{true, r};
      case '-': if (__builtin_sub_overflow(x, y, &r)) return fail("integer overflow"); return Val{true, r};
      case '*': if (__builtin_mul_overflow(x, y, &r)) return fail("integer overflow"); return Val{true, r};
      case '/':
        if (x == INT64_MIN && y == -1) return fail("integer overflow");
        return Val{true, x / y};
      case '%':
        if (y == -1) return Val{true, 0};  // INT64_MIN % -1 traps in hardware; the remainder is 0
        return Val{true, x % y};
      case '=': return Val{true, x == y};
      case '!': return Val{true, x != y};
      case '<': return Val{true, x < y};
      case 'l': return Val{true, x <= y};
      case '>': return Val{true, x > y};
      case 'g': return Val{true, x >= y};
      case '&': case '|': return Val{true, y != 0};  // the left side decided nothing (see above)
    }
  }
  if (n.name == "min") return Val{true, std::min(x, y)};
  if (n.name == "max") return Val{true, std::max(x, y)};
  // ceil_div and align_up round up: x / y truncates toward zero, so add one only for a positive
  // remainder. No intermediate x + y - 1 that could overflow.
  const int64_t q = x / y + (x % y > 0 ? 1 : 0);
  if (n.name == "ceil_div") return Val{true, q};
  if (__builtin_mul_overflow(q, y, &r)) return fail("integer overflow");  // align_up
  return Val{true, r};
}

// Each operand is rendered once (the helpers are functions, see kExprHelpers), so the C++ grows
// linearly with the expression.
std::string render(const ExprNode& n, const std::function<std::string(const std::string&)>& map) {
  switch (n.kind) {
    case ExprNode::Int: return std::to_string(n.value) + "ll";
    case ExprNode::Name: return "(long long)(" + map(n.name) + ")";
    case ExprNode::Neg: return "(-" + render(*n.args[0], map) + ")";
    case ExprNode::Bin: {
      std::string a = render(*n.args[0], map), b = render(*n.args[1], map);
      if (n.op == '/') return "pl_expr_div(" + a + ", " + b + ")";
      if (n.op == '%') return "pl_expr_mod(" + a + ", " + b + ")";
      std::string op(1, n.op);
      switch (n.op) {  // conditions (asserts): comparisons and logic give 0 or 1
        case '=': op = "=="; break;
        case '!': op = "!="; break;
        case 'l': op = "<="; break;
        case 'g': op = ">="; break;
        case '&': op = "&&"; break;
        case '|': op = "||"; break;
        default: break;
      }
      if (op.size() == 2 || n.op == '<' || n.op == '>') return "(long long)(" + a + " " + op + " " + b + ")";
      return "(" + a + " " + op + " " + b + ")";
    }
    case ExprNode::Call: return "pl_expr_" + n.name + "(" + render(*n.args[0], map) + ", " + render(*n.args[1], map) + ")";
  }
  return "0";
}

}  // namespace

std::string Expr::to_cpp(const std::function<std::string(const std::string&)>& map) const {
  return root_ ? render(*root_, map) : "0";
}

Expr Expr::constant(int64_t v) {
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprNode::Int;
  n->value = v;
  Expr e;
  e.root_ = n;
  e.text_ = std::to_string(v);
  return e;
}

bool Expr::parse(const std::string& text, Expr& out, std::string& error) { return parse_impl(text, out, error, false); }
bool Expr::parse_condition(const std::string& text, Expr& out, std::string& error) { return parse_impl(text, out, error, true); }

bool Expr::parse_impl(const std::string& text, Expr& out, std::string& error, bool conditions) {
  if (text.size() > kMaxLength) {
    error = "expression is longer than " + std::to_string(kMaxLength) + " characters";
    return false;
  }
  Parser p{text, 0, {}};
  p.conditions = conditions;
  NodeP n = p.any();
  if (n) {
    p.skip();
    if (p.i != text.size()) n = p.fail(std::string("unexpected '") + text[p.i] + "'");
  }
  if (!n) { error = p.err; return false; }
  out.root_ = n;
  out.text_ = text;
  return true;
}

std::vector<std::string> Expr::names() const {
  std::vector<std::string> out;
  if (root_) collect(*root_, out);
  return out;
}

std::optional<int64_t> Expr::eval(const std::function<std::optional<int64_t>(const std::string&)>& lookup,
                                  std::string& error) const {
  if (!root_) { error = "empty expression"; return std::nullopt; }
  auto v = evaluate(*root_, lookup, nullptr, error);
  if (!v) return std::nullopt;
  return v->v;  // always known without a runtime predicate
}

bool Expr::check(const std::function<std::optional<int64_t>(const std::string&)>& lookup,
                 const std::function<bool(const std::string&)>& runtime, std::optional<int64_t>& value,
                 std::string& error) const {
  value.reset();
  if (!root_) { error = "empty expression"; return false; }
  auto v = evaluate(*root_, lookup, &runtime, error);
  if (!v) return false;
  if (v->known) value = v->v;
  return true;
}

const char* const kExprHelpers =
    "// Contract expressions' division and functions, as evaluated at link time; a zero divisor\n"
    "// (possible only through a run-time param) gives 0 instead of an undefined quotient.\n"
    "static __device__ __forceinline__ long long pl_expr_div(long long a, long long b) {\n"
    "  return b == 0 || (b == -1 && a == (-9223372036854775807ll - 1)) ? 0 : a / b;\n}\n"
    "static __device__ __forceinline__ long long pl_expr_mod(long long a, long long b) { return b == 0 || b == -1 ? 0 : a % b; }\n"
    "static __device__ __forceinline__ long long pl_expr_min(long long a, long long b) { return a < b ? a : b; }\n"
    "static __device__ __forceinline__ long long pl_expr_max(long long a, long long b) { return a > b ? a : b; }\n"
    "static __device__ __forceinline__ long long pl_expr_ceil_div(long long a, long long b) {\n"
    "  return b <= 0 ? 0 : a / b + (a % b > 0 ? 1 : 0);\n}\n"
    "static __device__ __forceinline__ long long pl_expr_align_up(long long a, long long b) { return pl_expr_ceil_div(a, b) * b; }\n";

}  // namespace pipelink
