// src/pt2/sym_expr.h — torch's symbolic sizes as flopwise Dims, and the names their symbols take.
// Owns: parse_sym_expr (sympy's srepr text, "Mul(Integer(2), Symbol('s0', integer=True, positive=True))",
// as torch >= 2.6 writes it, and its str text, "2*s0", "(s0//2)", "Max(1, s0)", as older torch did),
// SymbolNames (torch symbol -> input-dim name, "s0" -> "input_ids.0", torch's names kept as aliases) and
// SymDims (a program's SymInts as Dims, each distinct expression parsed once).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flopwise/dim.h"
#include "pt2/program.h"

namespace flopwise::pt2 {

// The Dim an expression denotes, with each symbol named by `rename` (identity when null). An expression
// that does not parse, overflows, divides by zero, is not integral (s0/3 where that is not exact) or is
// infinite (int_oo) gives Dim::unknown() and, in `*error`, why (one line).
Dim parse_sym_expr(std::string_view text, const std::unordered_map<std::string, std::string>* rename,
                   std::string* error);

class SymbolNames {
 public:
  // Each torch symbol that is exactly the size of a user input's dim is named after the first such
  // (graph input order, then dim order): "<placeholder>.<dim>". Other symbols keep torch's name.
  static SymbolNames from_program(const Program& p);
  void rename(const std::string& torch_name, const std::string& name);
  std::string name_of(std::string_view torch_symbol) const;  // the flopwise name (torch's when unnamed)
  // A name a user gave (--dim): the flopwise name of it, whether it is one or a torch alias; "" if neither.
  std::string resolve(std::string_view user_name) const;
  const std::unordered_map<std::string, std::string>& map() const { return names_; }
  // (torch name, flopwise name) pairs in the order they were named.
  const std::vector<std::pair<std::string, std::string>>& aliases() const { return order_; }

 private:
  std::unordered_map<std::string, std::string> names_;  // torch -> flopwise
  std::vector<std::pair<std::string, std::string>> order_;
};

class SymDims {
 public:
  explicit SymDims(SymbolNames names) : names_(std::move(names)) {}
  Dim dim(const SymInt& s);  // a literal, or the expression's Dim (parsed once per distinct text)
  Dim expr(std::string_view text);
  const SymbolNames& names() const { return names_; }
  std::vector<std::string> warnings;  // one per distinct expression that became unknown

 private:
  SymbolNames names_;
  // By text: the texts are views of the Program (SymInt::expr, range_constraints), which outlives this.
  std::unordered_map<std::string_view, Dim> cache_;
};

}  // namespace flopwise::pt2
