// src/cost/node_cost.h — one node's cost: its MACs and FLOPs by its op's record and under a counting
// convention, the bytes it reads and writes, and the element type its MACs run in.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "flopwise/convention.h"
#include "flopwise/ir.h"
#include "flopwise/ops.h"
#include "flopwise/shape_key.h"

namespace flopwise::cost_detail {

// The op registry's record of a node's op at its opset; nullptr for an unsupported op.
const OpRecord* record_of(const Node& n);

// MACs and default FLOPs of one node by its record; unknown without one (an unsupported op). A
// control-flow node's bodies are costed under `conv`, so its FLOPs are that convention's already.
// `numel`: the report's memo of shapes' elements, where there is one.
OpCost node_op_cost(const Graph& g, const Node& n, const OpRecord* rec, const Convention& conv,
                    NumelMemo* numel = nullptr);

// A node's MACs and FLOPs under `conv`: flopwise's MACs and the convention's FLOPs, or, for a convention with
// its own MACs (Convention::own_macs), its rule's figure as MACs and twice that as FLOPs. `skipped` (when
// given) is set when the convention's tool skips the op as unsupported.
OpCost convention_cost(const Graph& g, const Node& n, const OpRecord* rec, const OpCost& oc,
                       const Convention& conv, bool* skipped = nullptr);

// Bytes of a value of known dtype and shape; unknown otherwise.
Count bytes_of(const Value& v);

// Memo of bytes_of by dtype and dims (identity of symbolic dims, value of known ones: ShapeKey). Shapes
// ShapeKey has no key for (rank above 7, an unknown dim) are computed each time. The identities are those of
// dims held by the graph's values, which outlive the memo: an address cannot be reused by another polynomial
// meanwhile.
class ShapeBytesMemo {
 public:
  Count operator()(const Value& v) {
    const Count* c = find(v);
    return c ? *c : bytes_of(v);
  }
  // The memo's entry for v's dtype and dims, made on first use (its address stays valid while the memo
  // lives); nullptr where they are not memoised.
  const Count* find(const Value& v) {
    ShapeKey k;
    if (!v.shape.rank_known || !ShapeKey::of(v.shape.dims, static_cast<uint64_t>(v.dtype), k)) return nullptr;
    auto [it, fresh] = memo_.try_emplace(k);
    if (fresh) it->second = bytes_of(v);
    return &it->second;
  }

 private:
  std::unordered_map<ShapeKey, Count, ShapeKey::Hash> memo_;
};

// Whether input slot s of n repeats an earlier slot's value (each distinct input is read once; a node has a
// handful: a scan beats a set's allocations).
inline bool repeated_input(const Node& n, size_t s) {
  return std::find(n.inputs.begin(), n.inputs.begin() + s, n.inputs[s]) != n.inputs.begin() + s;
}

// The values a node reads and writes, in order: each distinct input once (a body's outer references too; an
// importer's synthetic value has none), every output. `f(value index)`.
template <class F>
void for_each_moved_value(const Graph& g, const Node& n, const F& f) {
  for (size_t s = 0; s < n.inputs.size(); ++s) {
    const int vi = n.inputs[s];
    if (vi >= 0 && !repeated_input(n, s) && !g.values[static_cast<size_t>(vi)].synthetic) f(vi);
  }
  for (int o : n.outputs)
    if (o >= 0) f(o);
}

// Bytes a node reads and writes (for_each_moved_value). `bytes(value index)`: bytes_of, or a report's memo
// of it.
template <class Bytes>
Count node_bytes(const Graph& g, const Node& n, const Bytes& bytes) {
  Count mem;
  for_each_moved_value(g, n, [&](int vi) { mem += bytes(vi); });
  return mem;
}

// node_bytes by the shape memo, memoised by the shape memo's entries it adds (in order) where one is
// symbolic: a model's repeated layers read and write the same shapes, so each distinct sum of polynomials is
// made once. Sums of known counts, and nodes with a value the shape memo does not keep, are added each time.
class NodeBytesMemo {
 public:
  Count operator()(const Graph& g, const Node& n) {
    Key k;
    size_t used = 0;
    bool memoised = true, symbolic = false;
    for_each_moved_value(g, n, [&](int vi) {
      const Count* c = memoised && used < kMaxParts ? value_bytes(g, vi) : nullptr;
      memoised = c != nullptr;
      if (!memoised) return;
      symbolic = symbolic || !c->known;
      k.parts[used++] = c;
    });
    if (!memoised)
      return node_bytes(g, n, [&](int vi) { return shapes_(g.values[static_cast<size_t>(vi)]); });
    auto add_up = [&k, used] {
      Count mem;
      for (size_t i = 0; i < used; ++i) mem += *k.parts[i];
      return mem;
    };
    if (!symbolic) return add_up();
    auto [it, fresh] = sums_.try_emplace(k);
    if (fresh) it->second = add_up();
    return it->second;
  }

 private:
  static constexpr size_t kMaxParts = 8;
  struct Key {
    std::array<const Count*, kMaxParts> parts{};  // the shape memo's entries; nullptr past the last
    bool operator==(const Key& o) const { return parts == o.parts; }
  };
  struct Hash {
    size_t operator()(const Key& k) const {
      uint64_t h = 0;
      for (const Count* p : k.parts) h = (h ^ reinterpret_cast<uintptr_t>(p)) * 0x100000001b3ULL + (h >> 29);
      return static_cast<size_t>(h);
    }
  };
  // The shape memo's entry of a value of g, looked up once per value (a value is read and written).
  const Count* value_bytes(const Graph& g, int vi) {
    if (&g != graph_) {
      graph_ = &g;
      by_value_.assign(g.values.size(), &kNotLooked);
    }
    const Count*& c = by_value_[static_cast<size_t>(vi)];
    if (c == &kNotLooked) c = shapes_.find(g.values[static_cast<size_t>(vi)]);
    return c;
  }
  inline static const Count kNotLooked{};
  ShapeBytesMemo shapes_;
  const Graph* graph_ = nullptr;
  std::vector<const Count*> by_value_;  // per value of graph_: its entry, nullptr, or &kNotLooked
  std::unordered_map<Key, Count, Hash> sums_;
};

// The element type a node's MACs run in (NodeReport::mac_dtype).
DType mac_dtype_of(const Graph& g, const Node& n, const Count& macs);

// A control-flow node's one precision (NodeReport::mac_dtype): its bodies' when they all run their products
// in one type; Undefined when they have none, are mixed (Report::body_work holds the mix) or are not known.
DType body_mac_dtype(const std::vector<BodyWork>* body, const Count& macs);

}  // namespace flopwise::cost_detail
