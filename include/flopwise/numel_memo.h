// include/flopwise/numel_memo.h — elements of shapes (Shape::numel_count), memoised by their dims for the
// cost rules of one report's nodes (CostContext::numel_memo).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "flopwise/dim.h"
#include "flopwise/ir.h"
#include "flopwise/shape_key.h"

namespace flopwise {

// Shape::numel_count by dims: a known dim by its value, a symbolic one by its identity (Dim::poly_id). A
// model's values share a few dozen shapes, whose symbolic numels are polynomial products: made once each.
// The identities are those of dims held by the graph's values, which outlive the memo (an address is not
// reused by another polynomial meanwhile). Shapes of unknown rank, or that ShapeKey has no key for (rank
// above 7, an unknown or negative dim), are computed each time.
class NumelMemo {
 public:
  Count of(const Shape& s) {
    const Entry* e = find(s);
    return e ? e->count : s.numel_count();
  }
  // Shape::numel by the memo.
  Dim numel(const Shape& s) {
    const Entry* e = find(s);
    return e ? e->numel : s.numel();
  }

 private:
  struct Entry {
    Dim numel;    // Shape::numel
    Count count;  // Shape::numel_count
  };
  const Entry* find(const Shape& s) {
    ShapeKey k;
    if (!s.rank_known || !ShapeKey::of(s.dims, 0, k)) return nullptr;
    auto [it, fresh] = memo_.try_emplace(k);
    if (fresh) it->second = Entry{s.numel(), s.numel_count()};
    return &it->second;
  }
  std::unordered_map<ShapeKey, Entry, ShapeKey::Hash> memo_;
};

}  // namespace flopwise
