// src/cost/count_interner.h — hash-consing of symbolic counts, for a report's nodes, scopes and op types,
// and a memo of their sums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "flopwise/cost.h"

namespace flopwise::cost_detail {

// Hash-consing of symbolic counts: equal polynomials share one representation. A model's repeated
// layers give their nodes (and scopes) the same symbolic costs, so a report of an 80-layer decoder with
// dynamic dims keeps a few hundred polynomials rather than one per count of every node and scope.
class CountInterner {
 public:
  void operator()(Count& c) {
    if (!c.symbolic()) return;
    if (ids_.count(c.sym.poly_id())) return;  // already the shared representation (no hashing of terms)
    auto [it, fresh] = seen_.insert(c.sym);
    if (!fresh) c.sym = *it;
    ids_.insert(it->poly_id());
  }
  void operator()(Totals& t) {
    for (Count* c :
         {&t.params, &t.buffers, &t.macs, &t.flops, &t.memory_bytes, &t.backward_flops, &t.backward_macs})
      (*this)(*c);
  }

 private:
  struct Hash {
    size_t operator()(const Dim& d) const {
      size_t h = 0;
      auto mix = [&h](size_t x) { h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
      for (const auto& [mono, coef] : d.terms()) {
        mix(std::hash<int64_t>()(coef));
        for (const auto& s : mono) mix(std::hash<std::string>()(s));
        mix(mono.size());
      }
      return h;
    }
  };
  std::unordered_set<Dim, Hash> seen_;
  // Identities of the polynomials in seen_ (which keeps them alive: an address is never reused here).
  std::unordered_set<const void*> ids_;
};

// Sums of counts by their operands' identities (a known count's value, a symbolic one's polynomial) and
// flags: a model's repeated layers add the same node counts into their scopes in the same order, so each
// distinct sum is made once and the scopes share it. Each entry keeps its operands alive (a key's address is
// not reused by another polynomial while the entry lives); past kMaxEntries the memo starts again.
class SumMemo {
 public:
  // a += b, by the memo where one is symbolic and neither unknown.
  void add(Count& a, const Count& b) {
    if (!a.exact() || !b.exact() || (a.known && b.known)) {
      a += b;
      return;
    }
    const Key k{word(a), word(b), flags(a) | flags(b) << 2};
    auto it = sums_.find(k);
    if (it == sums_.end()) {
      if (sums_.size() >= kMaxEntries) sums_.clear();
      Entry e{a, b, a};
      e.sum += b;
      it = sums_.emplace(k, std::move(e)).first;
    }
    a = it->second.sum;
  }
  // Totals::add_subtotal by the memo.
  void add_subtotal(Totals& into, const Totals& c) {
    into.add_subtotal(c, [this](Count& to, const Count& from) { add(to, from); });
  }

 private:
  static constexpr size_t kMaxEntries = size_t{1} << 15;
  static uint64_t word(const Count& c) {
    return c.known ? static_cast<uint64_t>(c.v) : reinterpret_cast<uintptr_t>(c.sym.poly_id());
  }
  static uint64_t flags(const Count& c) { return (c.known ? 1 : 0) | (c.overflowed ? 2 : 0); }
  struct Key {
    uint64_t a, b, flags;
    bool operator==(const Key& o) const { return a == o.a && b == o.b && flags == o.flags; }
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      return static_cast<size_t>((k.a * 0x9e3779b97f4a7c15ULL ^ k.b) * 0x100000001b3ULL + k.flags);
    }
  };
  struct Entry {
    Count a, b, sum;
  };
  std::unordered_map<Key, Entry, Hash> sums_;
};

}  // namespace flopwise::cost_detail
