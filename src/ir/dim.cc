#include "flopwise/dim.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace flopwise {

Dim Dim::symbol(const std::string& name) {
  Dim d;
  d.unknown_ = false;
  d.terms_.push_back({{name}, 1});
  return d;
}

int64_t Dim::value() const {
  if (!is_known()) throw std::logic_error("Dim::value() on a dim that is not known: " + str());
  return terms_.empty() ? 0 : terms_[0].second;
}

std::vector<std::string> Dim::symbols() const {
  std::vector<std::string> out;
  for (const auto& t : terms_)
    for (const auto& s : t.first)
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  return out;
}

void Dim::normalize() {
  std::map<Monomial, int64_t> acc;
  for (auto& t : terms_) {
    std::sort(t.first.begin(), t.first.end());
    int64_t sum;
    if (!checked_add(acc[t.first], t.second, &sum)) {
      *this = Dim();
      return;
    }
    acc[t.first] = sum;
  }
  terms_.clear();
  for (auto& [m, c] : acc)
    if (c != 0) terms_.push_back({m, c});
  // Constant term last: "2*batch + 1" reads naturally.
  std::stable_sort(terms_.begin(), terms_.end(),
                   [](const Term& a, const Term& b) { return a.first.size() > b.first.size(); });
}

Dim operator+(const Dim& a, const Dim& b) {
  if (a.unknown_ || b.unknown_) return Dim();
  Dim r = a;
  r.terms_.insert(r.terms_.end(), b.terms_.begin(), b.terms_.end());
  r.normalize();
  return r;
}

Dim operator-(const Dim& a, const Dim& b) {
  if (a.unknown_ || b.unknown_) return Dim();
  Dim r = a;
  for (const auto& t : b.terms_) {
    if (t.second == INT64_MIN) return Dim();
    r.terms_.push_back({t.first, -t.second});
  }
  r.normalize();
  return r;
}

Dim operator*(const Dim& a, const Dim& b) {
  if (a.unknown_ || b.unknown_) return Dim();
  Dim r;
  r.unknown_ = false;
  for (const auto& x : a.terms_)
    for (const auto& y : b.terms_) {
      int64_t c;
      if (!checked_mul(x.second, y.second, &c)) return Dim();
      Dim::Monomial m = x.first;
      m.insert(m.end(), y.first.begin(), y.first.end());
      r.terms_.push_back({m, c});
    }
  r.normalize();
  return r;
}

// Removes one occurrence of each symbol of `d` from `m`; false if `d` does not divide `m`.
static bool divide_monomial(Dim::Monomial m, const Dim::Monomial& d, Dim::Monomial* out) {
  for (const auto& s : d) {
    auto it = std::find(m.begin(), m.end(), s);
    if (it == m.end()) return false;
    m.erase(it);
  }
  *out = std::move(m);
  return true;
}

Dim operator/(const Dim& a, const Dim& b) {
  if (a.unknown_ || b.unknown_) return Dim();
  if (b.terms_.size() != 1) {
    if (a.same_as(b) && !b.terms_.empty()) return Dim(1);
    return Dim();  // division by zero or by a sum: not provably exact
  }
  const auto& [dm, dc] = b.terms_[0];
  Dim r;
  r.unknown_ = false;
  for (const auto& t : a.terms_) {
    if (dc == -1 && t.second == INT64_MIN) return Dim();
    if (t.second % dc != 0) return Dim();
    Dim::Monomial m;
    if (!divide_monomial(t.first, dm, &m)) return Dim();
    r.terms_.push_back({m, t.second / dc});
  }
  r.normalize();
  return r;
}

Dim Dim::floor_div(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    int64_t x = a.value(), y = b.value();
    if (y == 0 || (x == INT64_MIN && y == -1)) return Dim();
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return Dim(q);
  }
  return a / b;
}

Dim Dim::ceil_div(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    int64_t x = a.value(), y = b.value();
    if (y == 0 || (x == INT64_MIN && y == -1)) return Dim();
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) == (y < 0))) ++q;
    return Dim(q);
  }
  return a / b;
}

Dim Dim::mod(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    int64_t x = a.value(), y = b.value();
    if (y == 0 || (x == INT64_MIN && y == -1)) return Dim();
    return Dim(x % y);
  }
  return Dim();
}

Dim Dim::min(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return Dim(std::min(a.value(), b.value()));
  if (a.same_as(b)) return a;
  return Dim();
}

Dim Dim::max(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return Dim(std::max(a.value(), b.value()));
  if (a.same_as(b)) return a;
  return Dim();
}

Dim Dim::substitute(const std::vector<std::pair<std::string, int64_t>>& bindings) const {
  if (unknown_ || is_known()) return *this;
  Dim r(0);
  for (const auto& [m, c] : terms_) {
    Dim term(c);
    for (const auto& s : m) {
      auto it = std::find_if(bindings.begin(), bindings.end(), [&](const auto& b) { return b.first == s; });
      term = term * (it == bindings.end() ? Dim::symbol(s) : Dim(it->second));
    }
    r = r + term;
  }
  return r;
}

std::string Dim::str() const {
  if (unknown_) return "?";
  if (terms_.empty()) return "0";
  std::string out;
  for (size_t i = 0; i < terms_.size(); ++i) {
    const auto& [m, c] = terms_[i];
    int64_t shown = c;
    if (i > 0) {
      out += c < 0 ? " - " : " + ";
      if (c < 0 && c != INT64_MIN) shown = -c;
    }
    std::string mono;
    for (size_t j = 0; j < m.size(); ++j) mono += (j ? "*" : "") + m[j];
    if (m.empty()) {
      out += std::to_string(shown);
    } else if (shown == 1) {
      out += mono;
    } else if (shown == -1) {
      out += "-" + mono;
    } else {
      out += std::to_string(shown) + "*" + mono;
    }
  }
  return out;
}

// Known or symbolic operands combine through Dim's exact polynomial arithmetic.
static Count symbolic_result(const Dim& d, bool overflowed) {
  Count r = Count::of(d);
  r.overflowed = overflowed;
  return r;
}

Count& Count::operator+=(const Count& o) {
  overflowed = overflowed || o.overflowed;
  if (!known || !o.known) {
    *this = exact() && o.exact() ? symbolic_result(as_dim() + o.as_dim(), overflowed)
                                 : Count{0, false, overflowed};
    return *this;
  }
  if (!checked_add(v, o.v, &v)) {
    known = false;
    overflowed = true;
  }
  return *this;
}

Count operator-(const Count& a, const Count& b) {
  bool over = a.overflowed || b.overflowed;
  if (!(a.known && b.known))
    return a.exact() && b.exact() ? symbolic_result(a.as_dim() - b.as_dim(), over) : Count{0, false, over};
  Count r{0, true, over};
  if (!checked_sub(a.v, b.v, &r.v)) {
    r.known = false;
    r.overflowed = true;
  }
  return r;
}

Count operator*(const Count& a, const Count& b) {
  if ((a.known && a.v == 0) || (b.known && b.v == 0)) return Count{0, true, a.overflowed || b.overflowed};
  if (!(a.known && b.known))
    return a.exact() && b.exact() ? symbolic_result(a.as_dim() * b.as_dim(), a.overflowed || b.overflowed)
                                  : Count{0, false, a.overflowed || b.overflowed};
  Count r{0, true, a.overflowed || b.overflowed};
  if (!checked_mul(a.v, b.v, &r.v)) {
    r.known = false;
    r.overflowed = true;
  }
  return r;
}

}  // namespace flopwise
