// src/analysis/rational_poly.cc — polynomials with rational coefficients (flopwise/rational_poly.h).
#include "flopwise/rational_poly.h"

#include <algorithm>

namespace flopwise {

namespace {

using I128 = __int128;
constexpr I128 kCoefLimit = static_cast<I128>(1) << 100;  // beyond it a product could overflow: give up

I128 gcd128(I128 a, I128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    I128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

bool make_coef(I128 num, I128 den, RationalPoly::Coef* c) {
  if (den < 0) num = -num, den = -den;
  I128 g = gcd128(num, den);
  if (g > 1) num /= g, den /= g;
  if (num > kCoefLimit || num < -kCoefLimit || den > kCoefLimit) return false;
  *c = {num, den};
  return true;
}

std::string i128_str(I128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  if (neg) v = -v;
  std::string s;
  while (v > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  return neg ? "-" + s : s;
}

}  // namespace

RationalPoly RationalPoly::of(const Dim& d) {
  RationalPoly p;
  if (d.is_unknown()) return p;
  if (d.is_known()) {
    if (d.value() != 0) p.terms[{}] = {d.value(), 1};
    p.valid = true;
    return p;
  }
  for (const auto& [m, c] : d.terms()) {
    for (const auto& sym : m)
      if (Dim::atom(sym)) return p;
    p.terms[m] = {c, 1};
  }
  p.valid = true;
  return p;
}

RationalPoly RationalPoly::symbol(const std::string& s) {
  RationalPoly p;
  p.valid = true;
  p.terms[{s}] = {1, 1};
  return p;
}

RationalPoly RationalPoly::constant(int64_t num, int64_t den) {
  RationalPoly p;
  p.valid = make_coef(num, den, &p.terms[{}]);
  if (p.terms[{}].num == 0) p.terms.clear();
  return p;
}

RationalPoly RationalPoly::operator+(const RationalPoly& o) const {
  RationalPoly r = *this;
  r.valid = valid && o.valid;
  if (!r.valid) return r;
  for (const auto& [m, c] : o.terms) {
    auto it = r.terms.find(m);
    if (it == r.terms.end()) {
      r.terms[m] = c;
      continue;
    }
    Coef sum;
    if (!make_coef(it->second.num * c.den + c.num * it->second.den, it->second.den * c.den, &sum))
      return RationalPoly{};
    if (sum.num == 0)
      r.terms.erase(it);
    else
      it->second = sum;
  }
  return r;
}

RationalPoly RationalPoly::operator*(const RationalPoly& o) const {
  RationalPoly r;
  if (!valid || !o.valid) return r;
  r.valid = true;
  for (const auto& [ma, ca] : terms)
    for (const auto& [mb, cb] : o.terms) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      RationalPoly t;
      t.valid = make_coef(ca.num * cb.num, ca.den * cb.den, &t.terms[m]);
      r = r + t;
      if (!r.valid) return r;
    }
  return r;
}

RationalPoly RationalPoly::renamed(const std::string& from, const std::string& to) const {
  RationalPoly r;
  r.valid = valid;
  for (const auto& [m, c] : terms) {
    Monomial x = m;
    std::replace(x.begin(), x.end(), from, to);
    std::sort(x.begin(), x.end());
    RationalPoly t;
    t.valid = true;
    t.terms[x] = c;
    r = r + t;
  }
  return r;
}

RationalPoly RationalPoly::sum_shifted(const std::string& var, const RationalPoly& start,
                                       const RationalPoly& n) const {
  // sum_{j<n} (start + j)^k = sum_i C(k, i) start^(k-i) P_i(n), with P_i(n) = sum_{j<n} j^i (Faulhaber).
  const RationalPoly one = constant(1);
  const RationalPoly nm1 = n + constant(-1);
  const RationalPoly p1 = n * nm1 * constant(1, 2);
  const std::vector<RationalPoly> power_sums{
      n, p1, n * nm1 * (n * constant(2) + constant(-1)) * constant(1, 6), p1 * p1};
  RationalPoly r = constant(0);
  if (!valid) return RationalPoly{};
  for (const auto& [m, c] : terms) {
    const size_t k = static_cast<size_t>(std::count(m.begin(), m.end(), var));
    if (k >= power_sums.size()) return RationalPoly{};
    Monomial rest;
    for (const auto& x : m)
      if (x != var) rest.push_back(x);
    RationalPoly coef;
    coef.valid = true;
    coef.terms[rest] = c;
    RationalPoly sum = constant(0);
    int64_t binom = 1;  // C(k, i)
    for (size_t i = 0; i <= k; ++i) {
      RationalPoly sp = one;
      for (size_t e = 0; e < k - i; ++e) sp = sp * start;
      sum = sum + sp * power_sums[i] * constant(binom);
      binom = binom * static_cast<int64_t>(k - i) / static_cast<int64_t>(i + 1);
    }
    r = r + coef * sum;
  }
  return r;
}

std::optional<int64_t> RationalPoly::eval(const std::vector<std::pair<std::string, int64_t>>& at) const {
  if (!valid) return std::nullopt;
  Coef total{0, 1};
  for (const auto& [m, c] : terms) {
    I128 v = c.num;
    for (const auto& sym : m) {
      auto it = std::find_if(at.begin(), at.end(), [&](const auto& b) { return b.first == sym; });
      if (it == at.end()) return std::nullopt;
      v *= it->second;
      if (v > kCoefLimit || v < -kCoefLimit) return std::nullopt;
    }
    if (!make_coef(total.num * c.den + v * total.den, total.den * c.den, &total)) return std::nullopt;
  }
  if (total.den != 1 || total.num > INT64_MAX || total.num < INT64_MIN) return std::nullopt;
  return static_cast<int64_t>(total.num);
}

std::string RationalPoly::str() const {
  if (!valid) return "?";
  if (terms.empty()) return "0";
  // Highest degree first, as the report prints polynomials.
  std::vector<std::pair<Monomial, Coef>> ts(terms.begin(), terms.end());
  std::stable_sort(ts.begin(), ts.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  std::string out;
  for (const auto& [m, c] : ts) {
    const bool neg = c.num < 0;
    std::string coef = i128_str(neg ? -c.num : c.num) + (c.den != 1 ? "/" + i128_str(c.den) : "");
    std::string mono;
    for (size_t i = 0; i < m.size();) {
      size_t j = i;
      while (j < m.size() && m[j] == m[i]) ++j;
      mono += (mono.empty() ? "" : "*") + m[i] + (j - i > 1 ? "^" + std::to_string(j - i) : "");
      i = j;
    }
    std::string term = mono.empty() ? coef : coef == "1" ? mono : coef + "*" + mono;
    out += out.empty() ? (neg ? "-" : "") + term : (neg ? " - " : " + ") + term;
  }
  return out;
}

}  // namespace flopwise
