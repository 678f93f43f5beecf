// src/ir/dim.cc — one tensor dimension (flopwise/dim.h): polynomial arithmetic in named symbols,
// overflow-checked, with floor, ceil, mod, min and max as derived symbols, substitution and text; Count's
// arithmetic.
#include "flopwise/dim.h"

#include <algorithm>
#include <array>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

#include "flopwise/limits.h"

namespace flopwise {

namespace {
// The canonical order of a normalised polynomial's terms: higher degree first ("batch*seq*seq" before
// "batch*seq"), then the monomials' symbol lists in lexicographic order; the constant term last.
bool term_before(const Dim::Monomial& a, const Dim::Monomial& b) {
  return a.size() != b.size() ? a.size() > b.size() : a < b;
}
}  // namespace

Dim Dim::symbol(const std::string& name) { return from_sorted(Terms{{{name}, 1}}); }

namespace {
// Derived symbols by name. Entries live as long as the process (a model has few distinct ones: one per
// distinct strided size or clamp), and are never changed once made.
struct AtomTable {
  std::mutex mu;
  std::unordered_map<std::string, std::unique_ptr<DimAtom>> by_name;
};
AtomTable& atom_table() {
  static AtomTable* t = new AtomTable;  // never destroyed: dims may outlive static destruction order
  return *t;
}
// Names longer than this stand for expressions nobody can read, and would grow without bound on a hostile
// graph (a min of mins of mins...): the dim is unknown instead.
constexpr size_t kMaxAtomName = 1024;

Dim make_atom(const std::string& name, DimAtom def) {
  if (name.size() > kMaxAtomName) return Dim();
  AtomTable& t = atom_table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto& slot = t.by_name[name];
  if (!slot) slot = std::make_unique<DimAtom>(std::move(def));
  return Dim::symbol(name);
}
std::string paren(const Dim& d) {
  std::string s = d.str();
  return d.is_symbolic() && (d.terms().size() > 1 || d.terms()[0].second != 1) ? "(" + s + ")" : s;
}
}  // namespace

const DimAtom* Dim::atom(const std::string& name) {
  // Atom names start with "floor(", "min(" or "max(": a plain symbol's lookup stops at the first byte.
  if (name.size() < 5 || (name[0] != 'f' && name[0] != 'm')) return nullptr;
  AtomTable& t = atom_table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.by_name.find(name);
  return it == t.by_name.end() ? nullptr : it->second.get();
}

int64_t Dim::value() const {
  if (!is_known()) throw std::logic_error("Dim::value() on a dim that is not known: " + str());
  return constant_;
}

const std::vector<Dim::Term>& Dim::terms() const {
  static const Terms kNone;
  return poly_ ? *poly_ : kNone;
}

Dim::Terms Dim::as_terms() const {
  if (poly_) return *poly_;
  if (poly_.unknown() || constant_ == 0) return {};
  return Terms{{{}, constant_}};
}

std::vector<std::string> Dim::symbols() const {
  std::vector<std::string> out;
  auto add = [&out](const std::string& s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  for (const auto& t : terms())
    for (const auto& s : t.first) {
      if (const DimAtom* a = atom(s)) {
        for (const auto& x : a->a.symbols()) add(x);
        for (const auto& x : a->b.symbols()) add(x);
      } else {
        add(s);
      }
    }
  return out;
}

// Shapes, constants and per-node costs hold dims by the hundred thousand (dim.h, PolyRef).
static_assert(sizeof(Dim) == 16 && sizeof(Count) == 32, "a Dim is a value and a tagged pointer");

// Symbols in one monomial (its degree): a product of sizes has a handful; squaring a dim 24 times in a
// hostile graph would make one of 2^24.
constexpr size_t kMaxDegree = 64;

Dim Dim::from_sorted(Terms terms) {
  Dim d;
  d.poly_.set_unknown(false);
  if (terms.empty()) return d;
  bool too_big = terms.size() > static_cast<size_t>(limits().max_poly_terms);
  for (size_t i = 0; i < terms.size() && !too_big; ++i) too_big = terms[i].first.size() > kMaxDegree;
  if (too_big) {  // README: Limits. Unknown, and counted so that the analysis warns once.
    note_poly_limit_hit();
    return Dim();
  }
  if (terms.size() == 1 && terms[0].first.empty()) {
    d.constant_ = terms[0].second;
    return d;
  }
  d.poly_ = PolyRef::make(std::move(terms));
  return d;
}

Dim Dim::from_terms(Terms terms) {
  for (auto& t : terms) std::sort(t.first.begin(), t.first.end());
  std::sort(terms.begin(), terms.end(),
            [](const Term& a, const Term& b) { return term_before(a.first, b.first); });
  // Sum the coefficients of equal monomials (now adjacent); drop zeros.
  size_t out = 0;
  for (size_t i = 0; i < terms.size();) {
    int64_t sum = terms[i].second;
    size_t j = i + 1;
    for (; j < terms.size() && terms[j].first == terms[i].first; ++j)
      if (!checked_add(sum, terms[j].second, &sum)) return Dim();
    if (sum != 0) {
      if (out != i) terms[out].first = std::move(terms[i].first);
      terms[out++].second = sum;
    }
    i = j;
  }
  terms.resize(out);
  return from_sorted(std::move(terms));
}

// a + sign*b: one merge of the two canonical term lists (linear; the result is what from_terms gives
// for their concatenation). Reads the operands in place: a known operand is one constant term.
Dim Dim::merge(const Dim& a, const Dim& b, int sign) {
  if (a.poly_.unknown() || b.poly_.unknown()) return Dim();
  if (!a.poly_ && !b.poly_) {
    int64_t v;
    bool ok =
        sign > 0 ? checked_add(a.constant_, b.constant_, &v) : checked_sub(a.constant_, b.constant_, &v);
    return ok ? Dim(v) : Dim();
  }
  if (!b.poly_ && b.constant_ == 0) return a;
  if (!a.poly_ && a.constant_ == 0 && sign > 0) return b;
  Terms ka, kb;  // a known operand's single term
  const Terms& ta = a.poly_ ? *a.poly_ : (ka = a.as_terms());
  const Terms& tb = b.poly_ ? *b.poly_ : (kb = b.as_terms());
  Terms r;
  r.reserve(ta.size() + tb.size());
  size_t i = 0, j = 0;
  while (i < ta.size() || j < tb.size()) {
    if (j == tb.size() || (i < ta.size() && term_before(ta[i].first, tb[j].first))) {
      r.push_back(ta[i++]);
    } else if (i == ta.size() || term_before(tb[j].first, ta[i].first)) {
      if (sign < 0 && tb[j].second == INT64_MIN) return Dim();
      r.push_back({tb[j].first, sign > 0 ? tb[j].second : -tb[j].second});
      ++j;
    } else {  // equal monomials
      int64_t c;
      bool ok = sign > 0 ? checked_add(ta[i].second, tb[j].second, &c)
                         : checked_sub(ta[i].second, tb[j].second, &c);
      if (!ok) return Dim();
      if (c != 0) r.push_back({ta[i].first, c});
      ++i, ++j;
    }
  }
  return from_sorted(std::move(r));
}

Dim& Dim::operator+=(const Dim& b) {
  // Accumulating (scope and op-type totals) into a polynomial nobody else holds: in place, with no
  // allocation, when b is known (only the constant term, last in canonical order, changes: the symbolic
  // terms stay) or when every monomial of b is already one of its terms. Otherwise (a new monomial, a
  // coefficient reaching zero, an overflow, a shared polynomial) the general merge decides.
  if (poly_ && !poly_.unknown() && !b.poly_.unknown() && poly_.use_count() == 1) {
    Terms& ta = *poly_;
    auto add_constant = [&ta](int64_t k) {
      if (k == 0) return true;
      if (!ta.back().first.empty()) {  // no constant term yet
        if (ta.size() >= static_cast<size_t>(limits().max_poly_terms)) return false;
        ta.push_back({Monomial{}, k});
        return true;
      }
      int64_t c;
      if (!checked_add(ta.back().second, k, &c)) return false;
      if (c == 0)
        ta.pop_back();
      else
        ta.back().second = c;
      return true;
    };
    // One walk of the sorted lists; the sums are kept aside until every term of b has found its own in a
    // (a polynomial of more terms than kAside goes to the merge).
    auto add_terms = [&ta](const Terms& tb) {
      constexpr size_t kAside = 16;
      if (tb.size() > ta.size() || tb.size() > kAside) return false;
      std::array<std::pair<size_t, int64_t>, kAside> sums;
      size_t i = 0;
      for (size_t j = 0; j < tb.size(); ++j) {
        const Monomial& m = tb[j].first;
        // Totals gather like-shaped counts, so the terms mostly line up: equality is tested first, and a
        // term of a that is neither equal nor before ends the walk (b's monomial is not among a's).
        for (; i < ta.size() && ta[i].first != m; ++i)
          if (!term_before(ta[i].first, m)) return false;
        int64_t c;
        if (i == ta.size() || !checked_add(ta[i].second, tb[j].second, &c) || c == 0) return false;
        sums[j] = {i++, c};
      }
      for (size_t j = 0; j < tb.size(); ++j) ta[sums[j].first].second = sums[j].second;
      return true;
    };
    if (b.poly_ ? add_terms(*b.poly_) : add_constant(b.constant_)) return *this;
  }
  return *this = merge(*this, b, +1);
}

Dim operator+(const Dim& a, const Dim& b) { return Dim::merge(a, b, +1); }

Dim operator-(const Dim& a, const Dim& b) { return Dim::merge(a, b, -1); }

// A polynomial times a known non-zero factor: its terms in the same order, coefficients scaled.
Dim Dim::scaled(const Terms& terms, int64_t k) {
  Terms r;
  r.reserve(terms.size());
  for (const auto& t : terms) {
    int64_t c;
    if (!checked_mul(t.second, k, &c)) return Dim();
    r.push_back({t.first, c});
  }
  return from_sorted(std::move(r));
}

Dim operator*(const Dim& a, const Dim& b) {
  if (a.poly_.unknown() || b.poly_.unknown()) return Dim();
  if (!a.poly_ && !b.poly_) {
    int64_t v;
    return checked_mul(a.constant_, b.constant_, &v) ? Dim(v) : Dim();
  }
  if (!a.poly_ && a.constant_ == 1) return b;
  if (!b.poly_ && b.constant_ == 1) return a;
  if (!a.poly_ && a.constant_ == 0) return Dim(0);
  if (!b.poly_ && b.constant_ == 0) return Dim(0);
  if (!a.poly_) return Dim::scaled(*b.poly_, a.constant_);
  if (!b.poly_) return Dim::scaled(*a.poly_, b.constant_);
  if (a.poly_->size() == 1 && b.poly_->size() == 1) {  // monomial times monomial: one term, no sort of terms
    const Dim::Term &x = a.poly_->front(), &y = b.poly_->front();
    int64_t c;
    if (!checked_mul(x.second, y.second, &c)) return Dim();
    Dim::Monomial m;
    m.reserve(x.first.size() + y.first.size());
    std::merge(x.first.begin(), x.first.end(), y.first.begin(), y.first.end(), std::back_inserter(m));
    return Dim::from_sorted(Dim::Terms{{std::move(m), c}});
  }
  if (a.poly_->size() * b.poly_->size() > static_cast<size_t>(limits().max_poly_terms)) {  // before any work
    note_poly_limit_hit();
    return Dim();
  }
  Dim::Terms r;
  r.reserve(a.poly_->size() * b.poly_->size());
  for (const auto& x : *a.poly_)
    for (const auto& y : *b.poly_) {
      int64_t c;
      if (!checked_mul(x.second, y.second, &c)) return Dim();
      Dim::Monomial m = x.first;
      m.insert(m.end(), y.first.begin(), y.first.end());
      r.push_back({std::move(m), c});
    }
  return Dim::from_terms(std::move(r));
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
  if (a.poly_.unknown() || b.poly_.unknown()) return Dim();
  Dim::Terms tb = b.as_terms();
  if (tb.size() != 1) {
    if (a.same_as(b) && !tb.empty()) return Dim(1);
    return Dim();  // division by zero or by a sum: not provably exact
  }
  const auto& [dm, dc] = tb[0];
  Dim::Terms r;
  for (const auto& t : a.as_terms()) {
    if (dc == -1 && t.second == INT64_MIN) return Dim();
    if (t.second % dc != 0) return Dim();
    Dim::Monomial m;
    if (!divide_monomial(t.first, dm, &m)) return Dim();
    r.push_back({m, t.second / dc});
  }
  return Dim::from_terms(std::move(r));
}

Dim Dim::floor_div(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    int64_t x = a.value(), y = b.value();
    if (y == 0 || (x == INT64_MIN && y == -1)) return Dim();
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return Dim(q);
  }
  if (a.poly_.unknown() || !b.is_known()) return a / b;  // by a symbolic divisor: exact quotients only
  const int64_t d = b.value();
  if (d == 0 || d == INT64_MIN) return Dim();
  if (d < 0) return floor_div(Dim(0) - a, Dim(-d));  // floor(a/-d) = floor(-a/d)
  return floor_poly(a, d);
}

// floor(a/d) for a polynomial a and d > 0, in canonical form: a = d*q + r with every coefficient of r
// in [0, d), so floor(a/d) = q + floor(r/d) for all integer values of the symbols; r's coefficients and
// d reduced by their gcd; floor((floor(x/e) + c)/d) = floor((x + c*e)/(e*d)).
Dim Dim::floor_poly(const Dim& a, int64_t d) {
  if (d == 1) return a;
  Terms q, r;
  for (const auto& [m, c] : a.as_terms()) {
    int64_t rem = c % d;
    if (rem < 0) rem += d;
    int64_t num;
    if (!checked_sub(c, rem, &num)) return Dim();
    if (num / d != 0) q.push_back({m, num / d});
    if (rem != 0) r.push_back({m, rem});
  }
  Dim qd = from_terms(std::move(q)), rd = from_terms(std::move(r));
  if (qd.poly_.unknown() || rd.poly_.unknown()) return Dim();
  if (!rd.is_symbolic()) return qd;  // r is a constant in [0, d): floor(r/d) = 0
  int64_t g = d;
  for (const auto& [m, c] : rd.terms()) g = std::gcd(g, c);
  if (g > 1) {
    rd = rd / Dim(g);
    d /= g;
    if (d == 1) return qd + rd;
  }
  // A floor of a floor: x/e then /d.
  const Terms& rt = rd.terms();
  int64_t c0 = rt.back().first.empty() ? rt.back().second : 0;
  size_t n_sym = rt.size() - (c0 != 0 ? 1 : 0);
  if (n_sym == 1 && rt[0].first.size() == 1 && rt[0].second == 1) {
    if (const DimAtom* in = atom(rt[0].first[0]); in && in->kind == DimAtom::Kind::Floor) {
      int64_t shift, e;
      if (checked_mul(c0, in->d, &shift) && checked_mul(in->d, d, &e))
        return qd + floor_poly(in->a + Dim(shift), e);
    }
  }
  return qd + make_atom("floor(" + paren(rd) + "/" + std::to_string(d) + ")",
                        DimAtom{DimAtom::Kind::Floor, rd, Dim(), d});
}

Dim Dim::ceil_div(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    int64_t x = a.value(), y = b.value();
    if (y == 0 || (x == INT64_MIN && y == -1)) return Dim();
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) == (y < 0))) ++q;
    return Dim(q);
  }
  if (a.poly_.unknown() || !b.is_known()) return a / b;
  const int64_t d = b.value();
  if (d == 0 || d == INT64_MIN) return Dim();
  if (d < 0) return ceil_div(Dim(0) - a, Dim(-d));
  return floor_div(a + Dim(d - 1), Dim(d));  // ceil(a/d) = floor((a + d - 1)/d)
}

Dim Dim::mod(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) {
    int64_t x = a.value(), y = b.value();
    if (y == 0 || (x == INT64_MIN && y == -1)) return Dim();
    return Dim(x % y);
  }
  return Dim();
}

bool Dim::provably_nonneg() const {
  if (poly_.unknown()) return false;
  if (!poly_) return constant_ >= 0;
  for (const auto& [mono, coef] : *poly_) {
    if (coef < 0) return false;
    for (const auto& name : mono) {
      const DimAtom* at = atom(name);
      if (!at) continue;  // a model symbol: a size
      const bool ok = at->kind == DimAtom::Kind::Floor ? at->a.provably_nonneg()
                      : at->kind == DimAtom::Kind::Min ? at->a.provably_nonneg() && at->b.provably_nonneg()
                                                       : at->a.provably_nonneg() || at->b.provably_nonneg();
      if (!ok) return false;
    }
  }
  return true;
}

std::optional<int> Dim::compare(const Dim& a, const Dim& b) {
  if (a.poly_.unknown() || b.poly_.unknown()) return std::nullopt;
  Dim diff = a - b;
  if (diff.is_known()) return diff.value() < 0 ? -1 : (diff.value() > 0 ? 1 : 0);
  if ((diff - Dim(1)).provably_nonneg()) return 1;
  if ((Dim(-1) - diff).provably_nonneg()) return -1;
  return std::nullopt;
}

// min/max: decided when the order is provable (a known difference, or one side plus sizes); otherwise an atom
// of the two, ordered by their text (min is commutative), exact for every value.
Dim Dim::min_max(const Dim& a, const Dim& b, bool is_max) {
  if (a.poly_.unknown() || b.poly_.unknown()) return Dim();
  Dim diff = a - b;
  if (diff.is_known()) return (diff.value() >= 0) == is_max ? a : b;
  if (diff.is_unknown()) return Dim();
  if (diff.provably_nonneg()) return is_max ? a : b;
  if ((Dim(0) - diff).provably_nonneg()) return is_max ? b : a;
  // Symbolic argument first, then by text: min(seq, 512).
  std::string sa = a.str(), sb = b.str();
  const bool a_first = a.is_known() != b.is_known() ? !a.is_known() : sa <= sb;
  const Dim &x = a_first ? a : b, &y = a_first ? b : a;
  std::string name =
      std::string(is_max ? "max(" : "min(") + (a_first ? sa : sb) + ", " + (a_first ? sb : sa) + ")";
  return make_atom(name, DimAtom{is_max ? DimAtom::Kind::Max : DimAtom::Kind::Min, x, y, 1});
}

Dim Dim::min(const Dim& a, const Dim& b) { return min_max(a, b, false); }

Dim Dim::max(const Dim& a, const Dim& b) { return min_max(a, b, true); }

Dim Dim::substitute(const std::vector<std::pair<std::string, int64_t>>& bindings) const {
  if (poly_.unknown() || is_known()) return *this;
  Dim r(0);
  for (const auto& [m, c] : *poly_) {
    Dim term(c);
    for (const auto& s : m) {
      auto it = std::find_if(bindings.begin(), bindings.end(), [&](const auto& b) { return b.first == s; });
      Dim v;
      if (it != bindings.end()) {
        v = Dim(it->second);
      } else if (const DimAtom* a = atom(s)) {  // evaluated (or re-simplified) on its bound arguments
        switch (a->kind) {
          case DimAtom::Kind::Floor:
            v = floor_div(a->a.substitute(bindings), Dim(a->d));
            break;
          case DimAtom::Kind::Min:
            v = min(a->a.substitute(bindings), a->b.substitute(bindings));
            break;
          case DimAtom::Kind::Max:
            v = max(a->a.substitute(bindings), a->b.substitute(bindings));
            break;
        }
      } else {
        v = Dim::symbol(s);
      }
      term = term * v;
    }
    r = r + term;
  }
  return r;
}

std::string Dim::str() const {
  if (poly_.unknown()) return "?";
  if (!poly_) return std::to_string(constant_);
  const Terms& terms = *poly_;
  std::string out;
  for (size_t i = 0; i < terms.size(); ++i) {
    const auto& [m, c] = terms[i];
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
    if (!exact() || !o.exact()) {
      *this = Count{0, false, overflowed};
    } else if (!known) {  // symbolic += exact: accumulate into sym (in place when it can)
      sym += o.as_dim();
      if (sym.is_known())
        *this = Count{sym.value(), true, overflowed};
      else if (sym.is_unknown())
        *this = Count{0, false, overflowed};
    } else {
      *this = symbolic_result(as_dim() + o.as_dim(), overflowed);
    }
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
