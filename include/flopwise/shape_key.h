// include/flopwise/shape_key.h — a shape's dims as a hashable key, for the memos that share work between the
// many values of a model with the same shape (the cost rules' numels, a node's bytes, a shape's JSON text).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flopwise/dim.h"

namespace flopwise {

// Word 0 is the memo's tag (a dtype, a JSON depth, or 0) shifted past the rank; then one word a dim: a known
// dim by its value (odd: never an address), a symbolic one by its polynomial's identity (Dim::poly_id, valid
// while the dims that hold it live: the graph's values outlive the memos). An unknown dim is 2 where the memo
// accepts it (even, and no polynomial's address); any other dim, and a rank over kMaxRank, has no key.
struct ShapeKey {
  static constexpr size_t kMaxRank = 7;
  std::array<uint64_t, kMaxRank + 1> words{};

  bool operator==(const ShapeKey& o) const { return words == o.words; }
  struct Hash {
    size_t operator()(const ShapeKey& k) const {
      uint64_t h = 0;
      for (uint64_t w : k.words) h = (h ^ w) * 0x100000001b3ULL + (h >> 29);
      return static_cast<size_t>(h);
    }
  };

  // Fills k; false where the dims have no key.
  static bool of(const std::vector<Dim>& dims, uint64_t tag, ShapeKey& k, bool unknown_ok = false) {
    if (dims.size() > kMaxRank) return false;
    k.words[0] = tag << 8 | dims.size();
    for (size_t i = 0; i < dims.size(); ++i) {
      const Dim& d = dims[i];
      if (const auto v = d.maybe_value(); v && *v >= 0 && *v < (int64_t{1} << 62))
        k.words[i + 1] = static_cast<uint64_t>(*v) << 1 | 1;
      else if (d.is_symbolic())
        k.words[i + 1] = reinterpret_cast<uintptr_t>(d.poly_id());
      else if (unknown_ok && d.is_unknown())
        k.words[i + 1] = 2;
      else
        return false;
    }
    return true;
  }
};

}  // namespace flopwise
