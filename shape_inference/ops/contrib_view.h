// shape_inference/ops/contrib_view.h — what the com.microsoft families (contrib.cc, sparse_attention.cc)
// share: a read-only view of a node's inputs that shape and cost functions both decode through. Internal.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include "../helpers.h"

namespace flopwise::contrib {

inline constexpr const char* kMS = "com.microsoft";

// ---- a read-only view of a node's inputs, shared by shape and cost functions ---------------------
// Shape functions pass their InferContext so contradictions fail; cost functions pass none and the
// same decoding runs without checks (shapes were checked during inference).
struct OpView {
  const Node& node;
  const Graph& graph;
  InferContext* ictx = nullptr;

  bool has(size_t i) const { return i < node.inputs.size() && node.inputs[i] >= 0; }
  const Shape& shape(size_t i) const {
    static const Shape unknown;
    return has(i) ? graph.values[node.inputs[i]].shape : unknown;
  }
  bool ranked(size_t i) const { return shape(i).rank_known; }
  size_t rank(size_t i) const { return shape(i).rank(); }
  // Dim `axis` of input i (negative counts from the back); unknown when not available.
  Dim dim(size_t i, int64_t axis) const {
    const Shape& s = shape(i);
    if (!s.rank_known) return Dim::unknown();
    int64_t r = static_cast<int64_t>(s.rank());
    if (axis < 0) axis += r;
    return axis >= 0 && axis < r ? s.dims[static_cast<size_t>(axis)] : Dim::unknown();
  }
  std::optional<int64_t> scalar_int(size_t i) const {
    if (!has(i)) return std::nullopt;
    const auto& d = graph.values[node.inputs[i]].data;
    if (!d || d->is_float || d->ints.size() != 1 || !d->ints[0].is_known()) return std::nullopt;
    return d->ints[0].value();
  }
  Dim unify(const Dim& a, const Dim& b, const char* what) const {
    if (ictx) return merge_dim(*ictx, a, b, what);
    if (a.is_unknown()) return b;
    if (b.is_unknown() || a.is_known()) return a;
    return b;
  }
  void check(bool ok, const std::string& msg) const {
    if (!ok && ictx) ictx->fail(msg);
  }
  void check_rank(size_t i, std::initializer_list<size_t> ranks, const char* what) const {
    if (!ranked(i)) return;
    for (size_t r : ranks)
      if (rank(i) == r) return;
    std::string allowed;
    for (size_t r : ranks) allowed += (allowed.empty() ? "" : " or ") + std::to_string(r);
    check(false, std::string(what) + " must have rank " + allowed + ", got " + shape(i).str());
  }
  void check_dim(size_t i, int64_t axis, int64_t v, const char* what) const {
    Dim d = dim(i, axis);
    check(!d.is_known() || d.value() == v,
          std::string(what) + " must be " + std::to_string(v) + ", got " + d.str());
  }
  // a / b, failing when both are known and b does not divide a.
  Dim divide(const Dim& a, const Dim& b, const char* what) const {
    if (a.is_known() && b.is_known()) {
      check(b.value() > 0 && a.value() % b.value() == 0,
            std::string(what) + ": " + a.str() + " is not divisible by " + b.str());
      if (b.value() <= 0) return Dim::unknown();
    }
    return a / b;
  }
};

inline OpView view(InferContext& c) { return OpView{c.node(), c.graph(), &c}; }
inline OpView view(const CostContext& c) { return OpView{c.node, c.graph, nullptr}; }

inline Count count_of(std::initializer_list<Dim> ds) {
  Count r{1};
  for (const auto& d : ds) r = r * Count::of(d);
  return r;
}

}  // namespace flopwise::contrib
