// Unit tests for contract expressions.
#include <gtest/gtest.h>

#include <map>

#include "pipelink/expr.h"

using pipelink::Expr;

namespace {
std::optional<int64_t> eval(const std::string& text, std::string* err = nullptr) {
  static const std::map<std::string, int64_t> facts{{"tile_m", 128}, {"tile_k", 64}, {"stages", 4}, {"zero", 0}};
  Expr e;
  std::string perr;
  if (!Expr::parse(text, e, perr)) {
    if (err) *err = perr;
    return std::nullopt;
  }
  std::string eerr;
  auto v = e.eval([](const std::string& n) -> std::optional<int64_t> {
    auto it = facts.find(n);
    if (it == facts.end()) return std::nullopt;
    return it->second;
  }, eerr);
  if (err) *err = eerr;
  return v;
}
}  // namespace

TEST(Expr, Arithmetic) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("-4 + 10"), 6);
  EXPECT_EQ(eval("17 / 5"), 3);
  EXPECT_EQ(eval("17 % 5"), 2);
}

TEST(Expr, FactsAndFunctions) {
  EXPECT_EQ(eval("tile_m * tile_k * 2"), 16384);
  EXPECT_EQ(eval("stages * (tile_m * tile_k * 2)"), 65536);
  EXPECT_EQ(eval("ceil_div(100, tile_k)"), 2);
  EXPECT_EQ(eval("align_up(100, 64)"), 128);
  EXPECT_EQ(eval("min(tile_m, tile_k) + max(1, stages)"), 68);
}

TEST(Expr, Errors) {
  std::string err;
  EXPECT_FALSE(eval("tile_m *", &err));
  EXPECT_NE(err.find("expected a value"), std::string::npos) << err;
  EXPECT_FALSE(eval("nope(1, 2)", &err));
  EXPECT_NE(err.find("unknown function"), std::string::npos) << err;
  EXPECT_FALSE(eval("tile_n + 1", &err));
  EXPECT_NE(err.find("unknown fact 'tile_n'"), std::string::npos) << err;
  EXPECT_FALSE(eval("tile_m / zero", &err));
  EXPECT_EQ(err, "division by zero");
  EXPECT_FALSE(eval("9223372036854775807 * 2", &err));
  EXPECT_EQ(err, "integer overflow");
  EXPECT_FALSE(eval("1 2", &err));
}

// INT64_MIN / -1 and INT64_MIN % -1 trap on x86 (SIGFPE); they must come back as values or errors.
TEST(Expr, DivisionEdgeCases) {
  const std::string min = "(-9223372036854775807 - 1)";
  std::string err;
  EXPECT_FALSE(eval(min + " / -1", &err));
  EXPECT_EQ(err, "integer overflow");
  EXPECT_EQ(eval(min + " % -1", &err), 0);
  EXPECT_EQ(eval("7 % -1"), 0);
  EXPECT_EQ(eval(min + " / 1"), INT64_MIN);
  EXPECT_EQ(eval("-7 / 2"), -3);
  EXPECT_EQ(eval("-7 % 2"), -1);
  EXPECT_FALSE(eval("5 % zero", &err));
  EXPECT_EQ(err, "division by zero");
}

TEST(Expr, NegationOverflow) {
  std::string err;
  EXPECT_EQ(eval("-9223372036854775807"), -INT64_MAX);
  EXPECT_FALSE(eval("-(-9223372036854775807 - 1)", &err));
  EXPECT_EQ(err, "integer overflow");
  EXPECT_FALSE(eval("9223372036854775808", &err));
  EXPECT_NE(err.find("integer too large"), std::string::npos) << err;
}

TEST(Expr, CeilDivAndAlignUp) {
  std::string err;
  EXPECT_EQ(eval("ceil_div(0, 64)"), 0);
  EXPECT_EQ(eval("ceil_div(64, 64)"), 1);
  EXPECT_EQ(eval("ceil_div(65, 64)"), 2);
  EXPECT_EQ(eval("ceil_div(-5, 4)"), -1);  // rounds up: -1.25 -> -1
  EXPECT_EQ(eval("align_up(-5, 4)"), -4);
  EXPECT_EQ(eval("align_up(128, 128)"), 128);
  // No intermediate a + b - 1: the largest values round without overflowing.
  EXPECT_EQ(eval("ceil_div(9223372036854775807, 2)"), 4611686018427387904);
  EXPECT_EQ(eval("ceil_div(9223372036854775807, 9223372036854775807)"), 1);
  EXPECT_FALSE(eval("align_up(9223372036854775807, 2)", &err));
  EXPECT_EQ(err, "integer overflow");
  EXPECT_FALSE(eval("ceil_div(100, -7)", &err));
  EXPECT_EQ(err, "ceil_div needs a positive divisor");
  EXPECT_FALSE(eval("ceil_div(100, zero)", &err));
  EXPECT_EQ(err, "ceil_div needs a positive divisor");
  EXPECT_FALSE(eval("align_up(100, -64)", &err));
  EXPECT_EQ(err, "align_up needs a positive alignment");
  EXPECT_FALSE(eval("align_up(100, 0)", &err));
  EXPECT_EQ(err, "align_up needs a positive alignment");
}

TEST(Expr, NestingLimit) {
  std::string err;
  EXPECT_EQ(eval(std::string(150, '(') + "1" + std::string(150, ')')), 1);
  EXPECT_FALSE(eval(std::string(1000, '(') + "1" + std::string(1000, ')'), &err));
  EXPECT_NE(err.find("nests too deeply"), std::string::npos) << err.substr(0, 80);
  EXPECT_FALSE(eval(std::string(1000, '-') + "1", &err));
  EXPECT_NE(err.find("nests too deeply"), std::string::npos) << err.substr(0, 80);
  EXPECT_FALSE(eval(std::string(100000, '(') + "1" + std::string(100000, ')'), &err));
  EXPECT_NE(err.find("longer than 4096 characters"), std::string::npos) << err.substr(0, 80);
}

TEST(Expr, Names) {
  Expr e;
  std::string err;
  ASSERT_TRUE(Expr::parse("tile_m * tile_k + tile_m + ceil_div(K, tile_k)", e, err));
  EXPECT_EQ(e.names(), (std::vector<std::string>{"tile_m", "tile_k", "K"}));
}

TEST(Expr, ToCpp) {
  Expr e;
  std::string err;
  ASSERT_TRUE(Expr::parse("ceil_div(K, tile_k)", e, err));
  EXPECT_EQ(e.to_cpp([](const std::string& n) { return "x_" + n; }), "pl_expr_ceil_div((long long)(x_K), (long long)(x_tile_k))");
  ASSERT_TRUE(Expr::parse("-(a / b % 2) + min(a, 3)", e, err));
  EXPECT_EQ(e.to_cpp([](const std::string& n) { return n; }),
            "((-pl_expr_mod(pl_expr_div((long long)(a), (long long)(b)), 2ll)) + pl_expr_min((long long)(a), 3ll))");
}

// Each operand is rendered once: nested functions grow the C++ linearly, not exponentially.
TEST(Expr, ToCppIsLinear) {
  std::string text = "1";
  for (int i = 0; i < 150; ++i) text = "max(" + text + ", min(2, 3))";  // once rendered with max's operands twice: 2^150
  Expr e;
  std::string err;
  ASSERT_TRUE(Expr::parse(text, e, err)) << err;
  EXPECT_LT(e.to_cpp([](const std::string& n) { return n; }).size(), 20u * text.size());
}

// Hostile sizes end in an error, never a stack overflow (in parsing, evaluation or destruction).
TEST(Expr, SizeLimits) {
  std::string err;
  std::string flat = "1";
  for (int i = 0; i < 100; ++i) flat += "+1";
  EXPECT_EQ(eval(flat), 101);
  flat = "1";
  for (int i = 0; i < 100000; ++i) flat += "+1";
  EXPECT_FALSE(eval(flat, &err));
  EXPECT_NE(err.find("longer than 4096 characters"), std::string::npos) << err.substr(0, 80);
  std::string chain = "1";
  for (int i = 0; i < 1500; ++i) chain += "+1";  // 3001 characters, more than 200 levels
  EXPECT_FALSE(eval(chain, &err));
  EXPECT_NE(err.find("nests too deeply"), std::string::npos) << err.substr(0, 80);
  std::string calls;
  for (int i = 0; i < 300; ++i) calls += "min(1,";
  calls += "1" + std::string(300, ')');
  EXPECT_FALSE(eval(calls, &err));
  EXPECT_NE(err.find("nests too deeply"), std::string::npos) << err.substr(0, 80);
  // Wide and shallow: many terms, little height.
  std::string wide = "(1+1)";
  for (int i = 0; i < 10; ++i) wide = "(" + wide + "*" + wide + ")";
  EXPECT_FALSE(eval(wide, &err));
  EXPECT_NE(err.find("longer than 4096 characters"), std::string::npos) << err.substr(0, 80);
  wide = "(a+a)";
  for (int i = 0; i < 9; ++i) wide = "(" + wide + "*" + wide + ")";  // 2047 nodes in 3583 characters
  EXPECT_FALSE(eval(wide, &err));
  EXPECT_NE(err.find("more than 1000 terms"), std::string::npos) << err.substr(0, 80);
  EXPECT_FALSE(eval("min(1, 2, 3, 4)", &err));
  EXPECT_NE(err.find("takes two arguments"), std::string::npos) << err;
}

// check(): names known only at run time leave the value unknown; what is known is still checked.
TEST(Expr, CheckWithRuntimeNames) {
  auto check = [](const std::string& text, std::optional<int64_t>& v, std::string& err) {
    Expr e;
    if (!Expr::parse(text, e, err)) return false;
    return e.check([](const std::string& n) -> std::optional<int64_t> { if (n == "tile_k") return 64; if (n == "zero") return 0; return std::nullopt; },
                   [](const std::string& n) { return n == "K"; }, v, err);
  };
  std::optional<int64_t> v;
  std::string err;
  EXPECT_TRUE(check("ceil_div(K, tile_k)", v, err)) << err;
  EXPECT_FALSE(v);
  EXPECT_TRUE(check("tile_k / 2", v, err)) << err;
  EXPECT_EQ(v, 32);
  EXPECT_FALSE(check("K / zero", v, err));
  EXPECT_EQ(err, "division by zero");
  err.clear();
  EXPECT_FALSE(check("K / (tile_k - 64)", v, err));
  EXPECT_EQ(err, "division by zero");
  err.clear();
  EXPECT_FALSE(check("ceil_div(K, zero)", v, err));
  EXPECT_EQ(err, "ceil_div needs a positive divisor");
  err.clear();
  EXPECT_FALSE(check("K / nope", v, err));
  EXPECT_EQ(err, "'nope' is neither a fact nor a u32 param");
  err.clear();
  EXPECT_TRUE(check("tile_k / K", v, err)) << err;  // a zero K is caught at run time (0 stages: PL_CHECKED traps)
}

// Conditions: only Expr::parse_condition (contract asserts) accepts comparisons and && ||.
namespace {
std::optional<int64_t> cond(const std::string& text, std::string* err = nullptr) {
  static const std::map<std::string, int64_t> facts{{"tile_m", 128}, {"out_rows", 48}, {"zero", 0}};
  Expr e;
  std::string perr;
  if (!Expr::parse_condition(text, e, perr)) {
    if (err) *err = perr;
    return std::nullopt;
  }
  std::string eerr;
  auto v = e.eval([](const std::string& n) -> std::optional<int64_t> {
    auto it = facts.find(n);
    if (it == facts.end()) return std::nullopt;
    return it->second;
  }, eerr);
  if (err) *err = eerr;
  return v;
}
}  // namespace

TEST(ExprCondition, Comparisons) {
  EXPECT_EQ(cond("tile_m % out_rows == 0"), 0);
  EXPECT_EQ(cond("tile_m % 64 == 0"), 1);
  EXPECT_EQ(cond("tile_m != 128"), 0);
  EXPECT_EQ(cond("out_rows < tile_m"), 1);
  EXPECT_EQ(cond("out_rows <= 48"), 1);
  EXPECT_EQ(cond("out_rows > 48"), 0);
  EXPECT_EQ(cond("out_rows >= -1"), 1);
  EXPECT_EQ(cond("tile_m / 2 + 1 > 64"), 1);  // arithmetic binds tighter
}

TEST(ExprCondition, LogicShortCircuits) {
  EXPECT_EQ(cond("1 == 1 && 2 == 2 || 0"), 1);
  EXPECT_EQ(cond("0 || 1 && 0"), 0);  // && binds tighter than ||
  EXPECT_EQ(cond("(0 || 1) && 1"), 1);
  EXPECT_EQ(cond("zero != 0 && tile_m / zero > 1"), 0);  // no division by zero
  EXPECT_EQ(cond("zero == 0 || tile_m / zero > 1"), 1);
  std::string err;
  EXPECT_FALSE(cond("zero == 0 && tile_m / zero > 1", &err));
  EXPECT_EQ(err, "division by zero");
}

TEST(ExprCondition, Errors) {
  std::string err;
  EXPECT_FALSE(cond("1 < 2 < 3", &err));
  EXPECT_NE(err.find("comparisons do not chain"), std::string::npos) << err;
  EXPECT_FALSE(cond("tile_m ==", &err));
  EXPECT_FALSE(cond("tile_m = 1", &err));
  // Outside asserts, comparisons are not expressions.
  EXPECT_FALSE(eval("tile_m == 128", &err));
  EXPECT_NE(err.find("unexpected '='"), std::string::npos) << err;
  EXPECT_FALSE(eval("1 && 1", &err));
}
