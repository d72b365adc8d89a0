// expr.cpp — a small recursive-descent parser and evaluator for contract expressions.
// Grammar: sum := term (('+'|'-') term)* ; term := unary (('*'|'/'|'%') unary)* ;
//          unary := '-' unary | primary ; primary := INT | NAME | NAME '(' sum (',' sum)* ')' | '(' sum ')'
// Conditions (contract asserts only, Expr::parse_condition) add, loosest first:
//          or := and ('||' and)* ; and := cmp ('&&' cmp)* ; cmp := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)?
//          and a parenthesised primary holds an `or`. A comparison or a logical operator gives 0 or 1;
//          && and || evaluate their right side only when needed (as in C).
// Functions: min, max, ceil_div, align_up (rounding up; the divisor or alignment must be positive).
// Overflow, division by zero and nesting deeper than kMaxDepth are errors, never traps.
#include "pipelink/expr.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace pipelink {

struct ExprNode {
  enum Kind { Int, Name, Neg, Bin, Call } kind;
  int64_t value = 0;
  std::string name;  // Name / Call
  char op = 0;       // Bin: + - * / %, and in conditions = (==) ! (!=) < l (<=) > g (>=) & (&&) | (||)
  std::vector<std::shared_ptr<const ExprNode>> args;
};

namespace {

using NodeP = std::shared_ptr<const ExprNode>;
constexpr int kMaxDepth = 200;  // parentheses, unary minus and calls, nested

struct Parser {
  const std::string& s;
  size_t i = 0;
  std::string err;
  int depth = 0;
  bool conditions = false;  // comparisons and && || allowed (asserts)
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
  static NodeP bin(char op, NodeP l, NodeP r) {
    auto n = std::make_shared<ExprNode>();
    n->kind = ExprNode::Bin; n->op = op; n->args = {l, r};
    return n;
  }
  NodeP unary() {
    Nest nest(depth);
    if (depth > kMaxDepth) return fail("expression nests too deeply");
    if (eat('-')) {
      NodeP x = unary();
      if (!x) return nullptr;
      auto n = std::make_shared<ExprNode>();
      n->kind = ExprNode::Neg; n->args = {x};
      return n;
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
      auto n = std::make_shared<ExprNode>();
      n->kind = ExprNode::Int; n->value = v;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_') {
      size_t b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.')) ++i;
      std::string name = s.substr(b, i - b);
      auto n = std::make_shared<ExprNode>();
      if (eat('(')) {
        static const char* fns[] = {"min", "max", "ceil_div", "align_up"};
        bool known = false;
        for (const char* f : fns) known |= name == f;
        if (!known) return fail("unknown function '" + name + "'");
        n->kind = ExprNode::Call; n->name = name;
        do {
          NodeP a = sum();
          if (!a) return nullptr;
          n->args.push_back(a);
        } while (eat(','));
        if (!eat(')')) return fail("expected ')'");
        if (n->args.size() != 2) return fail(name + "() takes two arguments");
        return n;
      }
      n->kind = ExprNode::Name; n->name = name;
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

std::optional<int64_t> evaluate(const ExprNode& n,
                                const std::function<std::optional<int64_t>(const std::string&)>& lookup,
                                std::string& err) {
  switch (n.kind) {
    case ExprNode::Int: return n.value;
    case ExprNode::Name: {
      auto v = lookup(n.name);
      if (!v && err.empty()) err = "unknown fact '" + n.name + "'";
      return v;
    }
    case ExprNode::Neg: {
      auto v = evaluate(*n.args[0], lookup, err);
      if (!v) return std::nullopt;
      if (*v == INT64_MIN) { err = "integer overflow"; return std::nullopt; }
      return -*v;
    }
    default: break;
  }
  auto a = evaluate(*n.args[0], lookup, err);
  if (!a) return std::nullopt;
  // && and || short-circuit: "d != 0 && n / d > 2" never divides by zero.
  if (n.kind == ExprNode::Bin && n.op == '&' && *a == 0) return 0;
  if (n.kind == ExprNode::Bin && n.op == '|' && *a != 0) return 1;
  auto b = evaluate(*n.args[1], lookup, err);
  if (!b) return std::nullopt;
  int64_t r = 0;
  auto fail = [&](const char* m) -> std::optional<int64_t> { err = m; return std::nullopt; };
  if (n.kind == ExprNode::Bin) {
    switch (n.op) {
      case '+': if (__builtin_add_overflow(*a, *b, &r)) return fail("integer overflow"); return r;
      case '-': if (__builtin_sub_overflow(*a, *b, &r)) return fail("integer overflow"); return r;
      case '*': if (__builtin_mul_overflow(*a, *b, &r)) return fail("integer overflow"); return r;
      case '/':
        if (*b == 0) return fail("division by zero");
        if (*a == INT64_MIN && *b == -1) return fail("integer overflow");
        return *a / *b;
      case '%':
        if (*b == 0) return fail("division by zero");
        if (*b == -1) return 0;  // INT64_MIN % -1 traps in hardware; the remainder is 0
        return *a % *b;
      case '=': return *a == *b;
      case '!': return *a != *b;
      case '<': return *a < *b;
      case 'l': return *a <= *b;
      case '>': return *a > *b;
      case 'g': return *a >= *b;
      case '&': case '|': return *b != 0;  // the left side decided nothing (see above)
    }
  }
  if (n.name == "min") return std::min(*a, *b);
  if (n.name == "max") return std::max(*a, *b);
  // ceil_div and align_up round up: a / b truncates toward zero, so add one only for a positive
  // remainder. No intermediate a + b - 1 that could overflow.
  if (*b <= 0) return fail(n.name == "ceil_div" ? "ceil_div needs a positive divisor" : "align_up needs a positive alignment");
  const int64_t q = *a / *b + (*a % *b > 0 ? 1 : 0);
  if (n.name == "ceil_div") return q;
  if (__builtin_mul_overflow(q, *b, &r)) return fail("integer overflow");  // align_up
  return r;
}

std::string render(const ExprNode& n, const std::function<std::string(const std::string&)>& map) {
  switch (n.kind) {
    case ExprNode::Int: return std::to_string(n.value) + "ll";
    case ExprNode::Name: return "(long long)(" + map(n.name) + ")";
    case ExprNode::Neg: return "(-" + render(*n.args[0], map) + ")";
    case ExprNode::Bin: {
      std::string op(1, n.op);
      switch (n.op) {
        case '=': op = "=="; break;
        case '!': op = "!="; break;
        case 'l': op = "<="; break;
        case 'g': op = ">="; break;
        case '&': op = "&&"; break;
        case '|': op = "||"; break;
        default: break;
      }
      if (n.op == '&' || n.op == '|' || op.size() == 2 || n.op == '<' || n.op == '>')
        return "(long long)(" + render(*n.args[0], map) + " " + op + " " + render(*n.args[1], map) + ")";
      return "(" + render(*n.args[0], map) + " " + op + " " + render(*n.args[1], map) + ")";
    }
    case ExprNode::Call: {
      std::string a = render(*n.args[0], map), b = render(*n.args[1], map);
      if (n.name == "min") return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
      if (n.name == "max") return "(" + a + " > " + b + " ? " + a + " : " + b + ")";
      // Same rounding as evaluate(): up, without an intermediate a + b - 1.
      std::string q = "(" + a + " / " + b + " + (" + a + " % " + b + " > 0 ? 1 : 0))";
      if (n.name == "ceil_div") return q;
      return "(" + q + " * " + b + ")";
    }
  }
  return "0";
}

}  // namespace

std::string Expr::to_cpp(const std::function<std::string(const std::string&)>& map) const {
  return root_ ? render(*root_, map) : "0";
}

Expr Expr::constant(int64_t v) {
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprNode::Int; n->value = v;
  Expr e;
  e.root_ = n;
  e.text_ = std::to_string(v);
  return e;
}

bool Expr::parse(const std::string& text, Expr& out, std::string& error) { return parse_impl(text, out, error, false); }
bool Expr::parse_condition(const std::string& text, Expr& out, std::string& error) { return parse_impl(text, out, error, true); }

bool Expr::parse_impl(const std::string& text, Expr& out, std::string& error, bool conditions) {
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
  return evaluate(*root_, lookup, error);
}

}  // namespace pipelink
