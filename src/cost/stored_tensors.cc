// src/cost/stored_tensors.cc — params and buffers among stored tensors (stored_tensors.h), by the weight
// facts on each op's record (flopwise/ops.h, WeightFacts): quantised ops' weight inputs, packed low-bit
// weights, the inputs where layers keep weights, weights reached through layout-only ops, and a decided If's
// branch.
#include "flopwise/stored_tensors.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "flopwise/cost.h"
#include "flopwise/ops.h"

namespace flopwise::cost_detail {

const WeightFacts& weight_facts(const Node& n) {
  static const WeightFacts none;
  const WeightFacts* w = OpRegistry::instance().weights(n.domain, n.op);
  return w ? *w : none;
}

SlotMask learned_slots(const Node& n) {
  static constexpr std::string_view kMicrosoft = "com.microsoft";
  const OpRegistry& r = OpRegistry::instance();
  const WeightFacts* w = r.weights(n.domain, n.op);
  if (!w && (n.domain.empty() || n.domain == kMicrosoft))
    w = r.weights(n.domain.empty() ? kMicrosoft : "", n.op);
  return w ? w->learned : 0;
}

size_t quant_operand_slot(SlotMask quant) {
  const SlotMask rest = quant & (quant - 1);  // without its first slot
  return static_cast<size_t>(__builtin_ctzll(rest ? rest : quant));
}

std::optional<Count> packed_weight_elements(const Node& user, size_t slot, const Value& packed) {
  const WeightFacts& w = weight_facts(user);
  if (!w.packed_weights || w.packed_slot != static_cast<int>(slot)) return std::nullopt;
  return w.packed_weights(user, packed);
}

namespace {

bool is_constant_node_output(const Graph& g, const Value& v) {
  if (v.is_initializer || v.producer < 0 || static_cast<size_t>(v.producer) >= g.nodes.size()) return false;
  const Node& p = g.nodes[static_cast<size_t>(v.producer)];
  return p.op == "Constant" && (p.domain.empty() || p.domain == "ai.onnx") && p.inputs.empty();
}

}  // namespace

bool is_stored(const Graph& g, const Value& v) { return v.is_initializer || is_constant_node_output(g, v); }

WeightSources::Marks& WeightSources::marks_of(const Graph& g) {
  Marks& m = marks_[&g];
  if (m.state.size() != g.values.size()) {
    m.state.assign(g.values.size(), kUnseen);
    m.marked.assign(g.values.size(), 0);
  }
  return m;
}

namespace {
// What a layout-only op passes on (WeightSources::passed), by op name: one look-up per node.
enum class Passes : uint8_t { None, Every, IndexedRow, Data };
Passes passes_of(std::string_view op) {
  static const std::unordered_map<std::string_view, Passes> kTable = {
      {"Concat", Passes::Every}, {"Gather", Passes::IndexedRow}, {"Slice", Passes::Data},
      {"Split", Passes::Data},   {"Transpose", Passes::Data},    {"Reshape", Passes::Data},
      {"Flatten", Passes::Data}, {"Squeeze", Passes::Data},      {"Unsqueeze", Passes::Data},
      {"Cast", Passes::Data},    {"CastLike", Passes::Data},     {"Identity", Passes::Data}};
  const auto it = kTable.find(op);
  return it == kTable.end() ? Passes::None : it->second;
}
}  // namespace

WeightSources::Inputs WeightSources::passed(const Graph& g, const Node& n) {
  if ((!n.domain.empty() && n.domain != "ai.onnx") || n.inputs.empty()) return {};
  const int* in = n.inputs.data();
  switch (passes_of(n.op)) {
    case Passes::Every:
      return {in, in + n.inputs.size()};
    case Passes::IndexedRow: {  // a row of a table: the index must be a constant
      if (n.inputs.size() < 2 || in[1] < 0) return {};
      const Value& idx = g.values[static_cast<size_t>(in[1])];
      return is_stored(g, idx) || idx.data ? Inputs{in, in + 1} : Inputs{};
    }
    case Passes::Data:
      return {in, in + 1};
    case Passes::None:
      break;
  }
  return {};
}

bool WeightSources::rooted(const Graph& g, int vi, int depth) {
  Marks& m = marks_of(g);
  if (vi < 0 || static_cast<size_t>(vi) >= g.values.size()) return false;
  const uint8_t st = m.state[static_cast<size_t>(vi)];
  if (st != kUnseen) return st == kYes;
  const Value& v = g.values[static_cast<size_t>(vi)];
  bool ok = false;
  m.state[static_cast<size_t>(vi)] = kBusy;
  if (is_stored(g, v)) {
    ok = true;
  } else if (depth <= 64 && v.is_outer && g.parent) {
    ok = rooted(*g.parent, g.parent->find(v.name), depth + 1);
  } else if (depth <= 64 && v.producer >= 0 && static_cast<size_t>(v.producer) < g.nodes.size()) {
    const Inputs in = passed(g, g.nodes[static_cast<size_t>(v.producer)]);
    ok = !in.empty();
    for (int i : in)
      if (ok && !rooted(g, i, depth + 1)) ok = false;
  }
  marks_of(g).state[static_cast<size_t>(vi)] = ok ? kYes : kNo;  // marks_ may have grown: look it up again
  return ok;
}

void WeightSources::mark(const Graph& g0, int root) {
  std::vector<std::pair<const Graph*, int>> stack{{&g0, root}};
  while (!stack.empty()) {
    auto [g, vi] = stack.back();
    stack.pop_back();
    if (vi < 0 || static_cast<size_t>(vi) >= g->values.size()) continue;
    Marks& m = marks_of(*g);
    if (m.marked[static_cast<size_t>(vi)]) continue;
    m.marked[static_cast<size_t>(vi)] = 1;
    const Value& v = g->values[static_cast<size_t>(vi)];
    if (is_stored(*g, v)) {
      sources_.insert(&v);
    } else if (v.is_outer && g->parent) {
      stack.emplace_back(g->parent, g->parent->find(v.name));
    } else if (v.producer >= 0 && static_cast<size_t>(v.producer) < g->nodes.size()) {
      for (int i : passed(*g, g->nodes[static_cast<size_t>(v.producer)])) stack.emplace_back(g, i);
    }
  }
}

void WeightSources::scan(const Graph& g) {
  for (const Node& n : g.nodes) {
    const SlotMask learned =
        passed(g, n).empty() ? learned_slots(n) : 0;  // a layout op is a link, not an end
    if (learned) {
      for (size_t s = 0; s < n.inputs.size(); ++s) {
        const int vi = n.inputs[s];
        if (vi < 0 || !has_slot(learned, s) || is_stored(g, g.values[static_cast<size_t>(vi)])) continue;
        if (rooted(g, vi, 0)) mark(g, vi);
      }
    }
    for (const auto& sg : n.subgraphs) scan(*sg);
  }
}

const char* decided_branch(const Graph& g, const Node& n) {
  if (n.op != "If" || !(n.domain.empty() || n.domain == "ai.onnx") || n.inputs.empty() || n.inputs[0] < 0)
    return nullptr;
  const Value& c = g.values[static_cast<size_t>(n.inputs[0])];
  if (!c.data || c.data->size() != 1) return nullptr;
  std::optional<int64_t> v;
  if (c.data->is_float)
    v = c.data->floats[0] != 0;
  else
    v = c.data->ints[0].maybe_value();
  if (!v) return nullptr;
  return *v ? "then_branch" : "else_branch";
}

std::optional<Value> typed_from_attribute(const Graph& g, const Value& v) {
  if (v.dtype != DType::Undefined || !is_constant_node_output(g, v)) return std::nullopt;
  const Node& p = g.nodes[static_cast<size_t>(v.producer)];
  auto it = p.attrs.find("value");
  if (it == p.attrs.end() || it->second.kind != Attribute::Kind::Tensor) return std::nullopt;
  Value t;
  t.producer = v.producer;
  t.dtype = it->second.tensor.dtype;
  std::vector<Dim> dims;
  for (int64_t d : it->second.tensor.dims) {
    if (d < 0) return std::nullopt;
    dims.emplace_back(d);
  }
  t.shape = Shape(std::move(dims));
  return t;
}

Role stored_role(const Graph& g, const Value& v, const Node& user, size_t slot, const WeightSources& sources,
                 const Value& t) {
  if (!is_stored(g, v)) return Role::None;
  if (v.is_buffer) return Role::Buffer;
  if (v.is_parameter) return Role::Param;
  const WeightFacts& w = weight_facts(user);
  if (w.packed_slot >= 0) {
    if (slot == static_cast<size_t>(w.packed_slot)) return Role::Param;
    if (has_slot(w.packed_encoding, slot)) return Role::None;
  }
  if (w.quantised) return has_slot(w.quant, slot) ? Role::Param : Role::None;
  if (!is_float(t.dtype)) return Role::None;
  if (has_slot(w.buffers, slot)) return Role::Buffer;
  // A scalar (an epsilon, a quantizer's scale, tf2onnx's folded constants) is a param only where a layer
  // keeps a weight.
  const bool scalar = t.shape.rank_known && t.shape.rank() == 0;
  if (scalar && !has_slot(learned_slots(user), slot)) return Role::None;
  if (v.is_initializer) return Role::Param;
  // A Constant: a weight where a layer keeps one, directly or through layout-only ops (WeightSources), or a
  // tensor (not a scalar) applied elementwise to activations (a decomposed norm's scale and shift, a Linear's
  // bias add).
  if (!t.shape.rank_known || scalar) return Role::None;
  if (has_slot(learned_slots(user), slot) || sources.is_source(v)) return Role::Param;
  if (w.elementwise_params && user.inputs.size() == 2) {
    const Count n = t.shape.numel_count();
    const int other = user.inputs[1 - std::min<size_t>(slot, 1)];
    if (!n.known || n.v < 2 || other < 0) return Role::None;
    const Value& o = g.values[static_cast<size_t>(other)];
    if (!is_stored(g, o)) return Role::Param;
  }
  return Role::None;
}

}  // namespace flopwise::cost_detail
