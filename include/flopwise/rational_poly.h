// include/flopwise/rational_poly.h — exact polynomials with rational coefficients in named symbols: a
// generation's totals, which sum decode steps (S(S-1)/2 and the like). Implemented in
// src/analysis/rational_poly.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flopwise/dim.h"

namespace flopwise {

// A polynomial with rational coefficients (a generation's totals sum decode steps: S(S-1)/2 and the like),
// in the model's dims and the generation's S (prompt) and G (generated tokens). Exact; empty when a sum could
// not be formed (a coefficient past 64 bits, a floor or min/max in the step's formula).
class RationalPoly {
 public:
  struct Coef {
    __int128 num = 0, den = 1;  // den > 0, gcd 1
  };
  using Monomial = std::vector<std::string>;  // sorted symbols, repeated for powers
  bool valid = false;
  std::map<Monomial, Coef> terms;
  static RationalPoly of(const Dim& d);  // invalid for unknown dims and derived atoms
  static RationalPoly symbol(const std::string& s);
  static RationalPoly constant(int64_t num, int64_t den = 1);
  RationalPoly operator+(const RationalPoly& o) const;
  RationalPoly operator*(const RationalPoly& o) const;
  // Sum over j = 0 .. n-1 of this polynomial with `var` replaced by `start + j` (`n`, `start` polynomials).
  RationalPoly sum_shifted(const std::string& var, const RationalPoly& start, const RationalPoly& n) const;
  RationalPoly renamed(const std::string& from, const std::string& to) const;
  // The value at the bindings; nullopt when a symbol is unbound or the value is not an integer in range.
  std::optional<int64_t> eval(const std::vector<std::pair<std::string, int64_t>>& at) const;
  std::string str() const;  // "128*G^2*batch + 1/2*S*batch + ...", "?" when invalid
};

}  // namespace flopwise
