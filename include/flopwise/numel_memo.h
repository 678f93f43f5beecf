// include/flopwise/numel_memo.h — elements of shapes (Shape::numel_count), memoised by their dims for the
// cost rules of one report's nodes (CostContext::numel_memo).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "flopwise/dim.h"
#include "flopwise/ir.h"

namespace flopwise {

// Shape::numel_count by dims: a known dim by its value, a symbolic one by its identity (Dim::poly_id). A
// model's values share a few dozen shapes, whose symbolic numels are polynomial products: made once each.
// The identities are those of dims held by the graph's values, which outlive the memo (an address is not
// reused by another polynomial meanwhile). Shapes of unknown rank, rank above kMaxRank, or with an unknown or
// negative dim are computed each time.
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
  static constexpr size_t kMaxRank = 7;
  struct Key {
    std::array<uint64_t, kMaxRank + 1> words{};
    bool operator==(const Key& o) const { return words == o.words; }
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      uint64_t h = 0;
      for (uint64_t w : k.words) h = (h ^ w) * 0x100000001b3ULL + (h >> 29);
      return static_cast<size_t>(h);
    }
  };
  struct Entry {
    Dim numel;    // Shape::numel
    Count count;  // Shape::numel_count
  };
  const Entry* find(const Shape& s) {
    if (!s.rank_known || s.rank() > kMaxRank) return nullptr;
    Key k;
    k.words[0] = s.rank();
    for (size_t i = 0; i < s.rank(); ++i) {
      const Dim& d = s.dims[i];
      if (const auto v = d.maybe_value(); v && *v >= 0 && *v < (int64_t{1} << 62))  // odd: never a pointer
        k.words[i + 1] = static_cast<uint64_t>(*v) << 1 | 1;
      else if (d.is_symbolic())
        k.words[i + 1] = reinterpret_cast<uintptr_t>(d.poly_id());
      else
        return nullptr;
    }
    auto [it, fresh] = memo_.try_emplace(k);
    if (fresh) it->second = Entry{s.numel(), s.numel_count()};
    return &it->second;
  }
  std::unordered_map<Key, Entry, Hash> memo_;
};

}  // namespace flopwise
