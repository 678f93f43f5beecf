// include/flopwise/stored_tensors.h — which stored tensors (initializers, Constant nodes' outputs) are
// weights (params), running statistics (buffers) or neither, and the ones control-flow bodies read. The cost
// layer's (src/cost/stored_tensors.cc); the training step (src/analysis/training.cc) reads them too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "flopwise/dim.h"
#include "flopwise/ir.h"
#include "flopwise/ops.h"

namespace flopwise::cost_detail {

// The weight facts of n's op (flopwise/ops.h, WeightFacts: its record's, or an op without a record's row);
// none for an op with neither.
const WeightFacts& weight_facts(const Node& n);
// The inputs where n's layer keeps learned tensors (WeightFacts::learned). The default domain and
// com.microsoft lend each other theirs: an op of one with no facts there takes the same name's in the other
// (the rule these facts replaced matched the names in both domains).
SlotMask learned_slots(const Node& n);
// The input whose dtype a quantised op's products run in: its second weight slot, or its first where it has
// one alone (`quant` not empty).
size_t quant_operand_slot(SlotMask quant);

// The logical weights of input `slot` of `user` (the tensor `packed`) when it is a packed tensor
// (WeightFacts::packed_slot: params count the logical weights, weight bytes the packed tensor); nullopt
// otherwise.
std::optional<Count> packed_weight_elements(const Node& user, size_t slot, const Value& packed);

// An initializer, or a Constant node's output.
bool is_stored(const Graph& g, const Value& v);

// Weights that reach their layer through layout-only ops (spox exports, silero-vad's LSTM: weight_ih sliced
// per gate, the slices concatenated and unsqueezed into W). A stored tensor is a weight source when a chain
// of Slice, Split, Gather of a constant index, Transpose, Reshape, Flatten, Squeeze/Unsqueeze, Concat, Cast
// or Identity, fed by stored tensors only, ends in a layer's weight input (learned_slots). Chains cross into
// control-flow bodies through outer references (silero-vad v5 slices in a nested If's body the Constants of
// the enclosing branch). Every graph of the model is scanned once, in time linear in its nodes.
class WeightSources {
 public:
  explicit WeightSources(const Graph& top) { scan(top); }
  bool is_source(const Value& v) const { return sources_.count(&v) != 0; }

 private:
  enum : uint8_t { kUnseen, kNo, kYes, kBusy };
  struct Marks {
    std::vector<uint8_t> state, marked;  // per value: rooted (kYes/kNo); its sources marked
  };
  std::unordered_map<const Graph*, Marks> marks_;
  std::unordered_set<const Value*> sources_;

  Marks& marks_of(const Graph& g);

  // The inputs a layout-only op passes through (its data; every input of a Concat), as a range of n.inputs;
  // empty for other ops.
  struct Inputs {
    const int* first = nullptr;
    const int* last = nullptr;
    bool empty() const { return first == last; }
    const int* begin() const { return first; }
    const int* end() const { return last; }
  };
  static Inputs passed(const Graph& g, const Node& n);

  // Whether value vi of g is stored tensors through layout-only ops, an outer reference followed out to the
  // graph that holds it (memoised per graph; a cycle or a chain past 64 links is not).
  bool rooted(const Graph& g, int vi, int depth);

  // Records the stored tensors under a rooted value as sources.
  void mark(const Graph& g0, int root);

  void scan(const Graph& g);
};

// The body an If runs when its condition is known in the inference that typed `g` ("then_branch" or
// "else_branch"), else nullptr: any other node, an unknown condition.
const char* decided_branch(const Graph& g, const Node& n);

// Calls f(attribute name, body) for each body of `n`; with `only_run`, an If whose condition is decided gives
// only the body that runs.
template <class F>
void for_each_body(const Graph& g, const Node& n, bool only_run, const F& f) {
  const char* taken = only_run ? decided_branch(g, n) : nullptr;
  for (const auto& [attr, a] : n.attrs) {
    if (taken && attr != taken) continue;
    for (int gi : a.graphs)
      if (gi >= 0 && static_cast<size_t>(gi) < n.subgraphs.size())
        f(attr, *n.subgraphs[static_cast<size_t>(gi)]);
  }
}

// A Constant node's output in a body the shape pass did not enter (the branch of a decided If that does not
// run): typed from its `value` attribute, so the branch's weights can still be listed. nullopt for anything
// else, or a value already typed.
std::optional<Value> typed_from_attribute(const Graph& g, const Value& v);

enum class Role { None, Param, Buffer };
// The role of a stored tensor (an initializer, or a Constant node's output) as input `slot` of `user`.
// `t`: the tensor's type where it is not on `v` itself (typed_from_attribute); `v` otherwise.
Role stored_role(const Graph& g, const Value& v, const Node& user, size_t slot, const WeightSources& sources,
                 const Value& t);

// The stored tensors a control-flow body reads (its own initializers and Constants, and the enclosing
// graphs' through outer references), nested bodies too; with `only_run`, a nested If whose condition is
// decided contributes the body that runs. `claim(graph, value)` says whether a tensor is counted here (not
// seen before; it records it); `add(value, role)` counts it, the value typed where the shape pass did not
// reach it.
template <class Claim, class Add>
void walk_branch_weights(const Graph& body, bool only_run, const WeightSources& sources, const Claim& claim,
                         const Add& add) {
  for (const Node& bn : body.nodes) {
    for (size_t s = 0; s < bn.inputs.size(); ++s) {
      if (bn.inputs[s] < 0) continue;
      const Graph* where = &body;
      const Value* v = &body.values[static_cast<size_t>(bn.inputs[s])];
      int idx = bn.inputs[s];
      while (v->is_outer && where->parent) {  // follow the reference out to the graph that holds it
        where = where->parent;
        idx = where->find(v->name);
        if (idx < 0) break;
        v = &where->values[static_cast<size_t>(idx)];
      }
      if (idx < 0 || v->is_outer || !is_stored(*where, *v)) continue;
      const std::optional<Value> typed = typed_from_attribute(*where, *v);
      const Value& tv = typed ? *typed : *v;
      const Role role = stored_role(*where, *v, bn, s, sources, tv);
      if (role == Role::None || !claim(*where, *v)) continue;
      add(tv, role);
    }
    for_each_body(body, bn, only_run, [&](const std::string&, const Graph& sg) {
      walk_branch_weights(sg, only_run, sources, claim, add);
    });
  }
}

}  // namespace flopwise::cost_detail
