// src/cost/count_interner.h — hash-consing of symbolic counts, for a report's nodes, scopes and op types.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_set>

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

}  // namespace flopwise::cost_detail
