// include/flopwise/dim.h — one tensor dimension: a known int64, a symbolic expression, or unknown.
// Owns: dim arithmetic (overflow-checked) and checked 64-bit counts. Knows nothing of ONNX or torch.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace flopwise {

struct DimAtom;

// A dimension is a polynomial with int64 coefficients over named symbols (`batch`, `2*seq`,
// `batch*seq`), or Unknown. A known value is the constant polynomial. Arithmetic is exact or gives
// Unknown (overflow, or a quotient that is not exact): never a guess.
//
// Besides the model's own symbols, a monomial may hold derived symbols ("atoms"): floor(P/d) of a
// polynomial P and an integer d >= 2, min(A, B) and max(A, B), each named by its canonical text
// (`floor((H + 1)/2)`, `min(seq, 512)`) and exact for every integer value of the symbols. A strided
// conv's output size is `floor((H + 1)/2)`; a ceil division is a floor one; floor(floor(x/a)/b) is
// floor(x/(a*b)). Binding the symbols (substitute) evaluates the atoms.
class Dim {
 public:
  using Monomial = std::vector<std::string>;  // sorted symbol names, with repetition for powers
  using Term = std::pair<Monomial, int64_t>;  // monomial and its non-zero coefficient

  Dim() = default;                                // unknown
  Dim(int64_t v) : constant_(v), poly_(false) {}  // NOLINT: implicit from int is the natural spelling
  static Dim unknown() { return Dim(); }
  static Dim symbol(const std::string& name);

  bool is_unknown() const { return poly_.unknown(); }
  bool is_known() const { return !poly_.unknown() && !poly_; }
  bool is_symbolic() const { return static_cast<bool>(poly_); }
  int64_t value() const;  // requires is_known()
  std::optional<int64_t> maybe_value() const {
    return is_known() ? std::optional<int64_t>(constant_) : std::nullopt;
  }
  // A symbolic dim's terms in canonical order (higher degree first, the constant last); empty otherwise.
  const std::vector<Term>& terms() const;
  std::vector<std::string> symbols() const;  // the model's symbols it depends on (atoms looked into)
  // The definition of a derived symbol (floor/min/max) by its name; nullptr for a plain symbol.
  static const DimAtom* atom(const std::string& name);

  // Identity of a symbolic dim's shared representation (nullptr for known and unknown dims): copies of
  // one dim have the same id, and equal ids mean equal dims (different ids may still be equal dims).
  const void* poly_id() const { return poly_.get(); }
  // Structural equality: two unknowns are never the same; use same_as for "provably equal".
  bool same_as(const Dim& o) const { return !poly_.unknown() && !o.poly_.unknown() && same_value(o); }
  // Identical representation (two unknowns compare equal): for containers and tests.
  bool operator==(const Dim& o) const {
    return poly_.unknown() == o.poly_.unknown() && (poly_.unknown() || same_value(o));
  }
  bool operator!=(const Dim& o) const { return !(*this == o); }

  friend Dim operator+(const Dim& a, const Dim& b);
  Dim& operator+=(const Dim& b);  // a + b, in place when this polynomial is not shared
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  // Exact quotient, or Unknown when it is not provably exact (division by a single term only).
  friend Dim operator/(const Dim& a, const Dim& b);
  // floor(a / b) for known values; exact quotient for symbolic ones when exact; else Unknown.
  static Dim floor_div(const Dim& a, const Dim& b);
  static Dim ceil_div(const Dim& a, const Dim& b);
  static Dim mod(const Dim& a, const Dim& b);
  static Dim min(const Dim& a, const Dim& b);
  static Dim max(const Dim& a, const Dim& b);
  // Sign facts, for every non-negative value of the symbols (they are sizes): provably >= 0, and the
  // order of two dims (-1: a < b, 0: equal, 1: a > b) where it is provable, nullopt where it is not.
  bool provably_nonneg() const;
  static std::optional<int> compare(const Dim& a, const Dim& b);

  // Substitutes known values for symbols (e.g. --dim batch=8).
  Dim substitute(const std::vector<std::pair<std::string, int64_t>>& bindings) const;

  std::string str() const;  // "?" for unknown, "2*batch*seq + 1" otherwise

 private:
  // Representation: unknown; a known value in `constant_` (no allocation: most dims are known); or a
  // polynomial with at least one non-constant term, shared immutably between copies (`poly_`), so
  // copying a symbolic dim or count (shapes, per-scope totals) is a reference-count increment.
  using Terms = std::vector<Term>;
  static Dim from_terms(Terms terms);   // normalises; a constant-only polynomial becomes a known value
  static Dim from_sorted(Terms terms);  // terms already canonical
  static Dim scaled(const Terms& terms, int64_t k);  // terms times a known non-zero k (order kept)
  Terms as_terms() const;                            // this dim's terms (a known value as one constant term)
  static Dim floor_poly(const Dim& a, int64_t d);    // floor(a/d) of a symbolic a, d > 0
  static Dim min_max(const Dim& a, const Dim& b, bool is_max);
  static Dim merge(const Dim& a, const Dim& b, int sign);
  bool same_value(const Dim& o) const {
    if (poly_ || o.poly_) return poly_ && o.poly_ && (poly_ == o.poly_ || *poly_ == *o.poly_);
    return constant_ == o.constant_;
  }
  // The shared polynomial and its reference count, with the "unknown" flag kept in the low bit of its
  // address: a Dim is 16 bytes and a Count 32 (a std::shared_ptr and a bool took 32 and 48), which a
  // model's shapes, constants and per-node costs hold by the hundred thousand.
  class PolyRef {
   public:
    explicit PolyRef(bool unknown) : bits_(unknown ? 1 : 0) {}
    PolyRef(const PolyRef& o) : bits_(o.bits_) {
      if (Rep* r = rep()) r->refs.fetch_add(1, std::memory_order_relaxed);
    }
    PolyRef(PolyRef&& o) noexcept : bits_(o.bits_) { o.bits_ &= 1; }
    PolyRef& operator=(const PolyRef& o) {
      PolyRef copy(o);
      std::swap(bits_, copy.bits_);
      return *this;
    }
    PolyRef& operator=(PolyRef&& o) noexcept {
      PolyRef moved(std::move(o));
      std::swap(bits_, moved.bits_);
      return *this;
    }
    ~PolyRef() {
      if (Rep* r = rep(); r && r->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete r;
    }
    // A new polynomial (flag clear).
    static PolyRef make(Terms terms) {
      PolyRef p(false);
      p.bits_ = reinterpret_cast<uintptr_t>(new Rep{std::move(terms)});
      return p;
    }
    bool unknown() const { return bits_ & 1; }
    void set_unknown(bool u) { bits_ = (bits_ & ~uintptr_t{1}) | (u ? 1 : 0); }
    const void* get() const { return rep(); }
    explicit operator bool() const { return rep() != nullptr; }
    bool operator==(const PolyRef& o) const { return rep() == o.rep(); }
    Terms& operator*() const { return rep()->terms; }
    Terms* operator->() const { return &rep()->terms; }
    long use_count() const { return rep() ? rep()->refs.load(std::memory_order_acquire) : 0; }

   private:
    struct Rep {
      explicit Rep(Terms t) : terms(std::move(t)) {}
      Terms terms;
      std::atomic<long> refs{1};
    };
    Rep* rep() const { return reinterpret_cast<Rep*>(bits_ & ~uintptr_t{1}); }
    uintptr_t bits_;
  };
  int64_t constant_ = 0;
  PolyRef poly_{true};  // never changed while shared (operator+= checks use_count)
};

// Checked signed 64-bit arithmetic. Returns false on overflow.
inline bool checked_add(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
// A derived symbol's definition: floor(a/d), min(a, b) or max(a, b).
struct DimAtom {
  enum class Kind { Floor, Min, Max };
  Kind kind = Kind::Floor;
  Dim a, b;
  int64_t d = 1;
};

// A double as an int64 only when it is one: finite, integral and within int64's range (NaN, infinities,
// 1e300 and 2.5 give nullopt). A model's float contents become sizes or indices only through these.
inline std::optional<int64_t> exact_int64(double f) {
  if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0) || std::trunc(f) != f) return std::nullopt;
  return static_cast<int64_t>(f);
}
// Truncated toward zero (ONNX Cast's rule for float to integer), when finite and the result is in range.
inline std::optional<int64_t> trunc_int64(double f) { return exact_int64(std::trunc(f)); }

inline bool checked_sub(int64_t a, int64_t b, int64_t* out) { return !__builtin_sub_overflow(a, b, out); }
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// A count (params, MACs, FLOPs, bytes): known (`v`), symbolic (a polynomial in the model's dynamic
// dims, e.g. 1769472*batch*seq, in `sym`), or unknown. Unknown is sticky through arithmetic; overflow
// makes a count unknown and sets `overflowed` so the report can say why.
struct Count {
  int64_t v = 0;
  bool known = true;
  bool overflowed = false;
  Dim sym;  // when !known: the symbolic value, or Unknown

  Count() = default;
  Count(int64_t value, bool is_known = true, bool did_overflow = false, Dim symbolic = Dim())  // NOLINT
      : v(value), known(is_known), overflowed(did_overflow), sym(std::move(symbolic)) {}

  static Count unknown() { return Count{0, false, false}; }
  static Count of(const Dim& d) {
    if (d.is_known()) return Count{d.value(), true, false};
    return Count{0, false, false, d};
  }
  bool symbolic() const { return !known && sym.is_symbolic(); }
  // Known or symbolic: a value, exact up to the binding of its symbols.
  bool exact() const { return known || symbolic(); }
  Dim as_dim() const { return known ? Dim(v) : sym; }
  Count& operator+=(const Count& o);
  friend Count operator+(Count a, const Count& b) { return a += b; }
  friend Count operator-(const Count& a, const Count& b);
  friend Count operator*(const Count& a, const Count& b);
  bool operator==(const Count& o) const { return known == o.known && (known ? v == o.v : sym == o.sym); }
  bool operator!=(const Count& o) const { return !(*this == o); }
};

}  // namespace flopwise
