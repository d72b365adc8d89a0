// pipelink/expr.h — integer expressions over facts ("tile_m * tile_k * 2", "ceil_div(K, tile_k)").
//
// Parsed once from a contract string; evaluated after facts are resolved. Does not know where
// facts come from: evaluation takes a lookup callback.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pipelink {

struct ExprNode;

// Device definitions of the functions to_cpp() calls (pl_expr_div, pl_expr_min, ...): generated
// code that renders an expression includes them once.
extern const char* const kExprHelpers;

class Expr {
 public:
  Expr() = default;
  static Expr constant(int64_t v);
  // Parses `text`; on failure returns false and sets `error`.
  static bool parse(const std::string& text, Expr& out, std::string& error);
  // A condition (contract asserts): also == != < <= > >= (one per comparison, 0 or 1) and
  // && || (short-circuit), loosest last; parentheses group conditions too.
  static bool parse_condition(const std::string& text, Expr& out, std::string& error);

  bool empty() const { return !root_; }
  const std::string& text() const { return text_; }
  // Names this expression reads, in first-use order, without duplicates.
  std::vector<std::string> names() const;
  // Evaluates; unknown names and arithmetic errors are reported through `error`.
  // Renders as a C++ expression, each name replaced by map(name) (for generated code).
  std::string to_cpp(const std::function<std::string(const std::string&)>& map) const;
  std::optional<int64_t> eval(const std::function<std::optional<int64_t>(const std::string&)>& lookup,
                              std::string& error) const;
  // Checks an expression that may also read values known only at run time: a name `lookup` has
  // no value for but `runtime` accepts is unknown until then. Unknown names and errors in the
  // parts known now (a divisor that is zero or, for ceil_div / align_up, not positive; an
  // overflow) are reported through `error` and return false. `value` is set when every name is known.
  bool check(const std::function<std::optional<int64_t>(const std::string&)>& lookup,
             const std::function<bool(const std::string&)>& runtime, std::optional<int64_t>& value,
             std::string& error) const;

 private:
  static bool parse_impl(const std::string& text, Expr& out, std::string& error, bool conditions);
  std::shared_ptr<const ExprNode> root_;
  std::string text_;
};

}  // namespace pipelink
