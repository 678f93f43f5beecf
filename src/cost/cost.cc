#include "flopwise/cost.h"

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "flopwise/convention.h"
#include "flopwise/attention.h"
#include "flopwise/ops.h"

namespace flopwise {

void Totals::add_rollup(const Totals& n) {
  bool any_unknown = false;
  auto add = [&](Count& into, const Count& c) {
    if (!c.exact()) {
      any_unknown = true;
      into.overflowed = into.overflowed || c.overflowed;
      return;
    }
    into += c;
  };
  add(params, n.params);
  add(buffers, n.buffers);
  add(macs, n.macs);
  add(flops, n.flops);
  add(memory_bytes, n.memory_bytes);
  add(backward_flops, n.backward_flops);
  uncounted += n.uncounted + (any_unknown ? 1 : 0);
}

void Totals::add_subtotal(const Totals& c) {
  // Counts are non-negative, so a child's overflowed (unknown) sum makes the parent's unknown too, as
  // adding the child's nodes one by one would.
  params += c.params;
  buffers += c.buffers;
  macs += c.macs;
  flops += c.flops;
  memory_bytes += c.memory_bytes;
  backward_flops += c.backward_flops;
  uncounted += c.uncounted;
}

namespace {
std::string op_key(std::string_view domain, std::string_view op) {
  std::string key(domain);
  if (!key.empty()) key += "::";
  key += op;
  return key;
}
}  // namespace

std::string op_key(const Node& n) { return op_key(n.domain, n.op); }
std::string op_key(const NodeReport& n) { return op_key(n.domain, n.op); }

int64_t rank_value(const Count& c) {
  if (c.known) return c.v;
  if (!c.symbolic()) return -1;
  // The polynomial at every symbol = 1000, evaluated term by term; INT64_MAX when it overflows.
  int64_t total = 0;
  for (const auto& [mono, coef] : c.sym.terms()) {
    int64_t t = coef;
    for (size_t i = 0; i < mono.size(); ++i)
      if (!checked_mul(t, 1000, &t)) return INT64_MAX;
    if (!checked_add(total, t, &total)) return INT64_MAX;
  }
  return total;
}

bool Report::has_unknown_cost() const { return totals.uncounted > 0 || !unsupported.empty(); }

namespace {

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
    for (Count* c : {&t.params, &t.buffers, &t.macs, &t.flops, &t.memory_bytes, &t.backward_flops}) (*this)(*c);
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

Count bytes_of(const Value& v) {
  int64_t sz = dtype_size(v.dtype);
  if (sz == 0 && v.dtype != DType::String) return Count::unknown();
  return v.shape.numel_count() * Count{sz};
}

// Memo of bytes_of by dtype and dims (identity of symbolic dims, value of known ones). Shapes of rank
// above kMaxRank, or with an unknown dim, are computed each time. The identities are those of dims held by
// the graph's values, which outlive the memo: an address cannot be reused by another polynomial meanwhile.
class ShapeBytesMemo {
 public:
  Count operator()(const Value& v) {
    const auto& dims = v.shape.dims;
    if (!v.shape.rank_known || dims.size() > kMaxRank) return bytes_of(v);
    Key k;
    k.words[0] = static_cast<uint64_t>(v.dtype) << 8 | dims.size();
    for (size_t i = 0; i < dims.size(); ++i) {
      const Dim& d = dims[i];
      if (d.is_known() && d.value() >= 0 && d.value() < (int64_t{1} << 62))  // odd: never a pointer
        k.words[i + 1] = static_cast<uint64_t>(d.value()) << 1 | 1;
      else if (d.is_symbolic())
        k.words[i + 1] = reinterpret_cast<uintptr_t>(d.poly_id());
      else
        return bytes_of(v);
    }
    auto [it, fresh] = memo_.try_emplace(k);
    if (fresh) it->second = bytes_of(v);
    return it->second;
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
  std::unordered_map<Key, Count, Hash> memo_;
};

// Cost of one run of a graph's nodes (for control-flow bodies): MACs, and FLOPs under `conv`.
OpCost graph_cost(const Graph& g, const Convention& conv);

const OpRecord* record_of(const Node& n) { return OpRegistry::instance().find(n.domain, n.op, n.opset); }

// MACs and default FLOPs of one node by its record; unknown without one (an unsupported op). A
// control-flow node's bodies are costed under `conv`, so its FLOPs are that convention's already.
OpCost node_op_cost(const Graph& g, const Node& n, const OpRecord* rec, const Convention& conv) {
  if (!rec) return OpCost{Count::unknown(), Count::unknown()};
  CostContext ctx{g, n, [&conv](const Graph& sub) { return graph_cost(sub, conv); }};
  return rec->cost(ctx);
}

// A value that is a parameter, directly or through layout-only ops (Linear's weight behind a Transpose).
bool param_rooted(const Graph& g, int vi) {
  for (int hops = 0; vi >= 0 && hops < 4; ++hops) {
    const Value& v = g.values[vi];
    if (v.is_initializer) return is_float(v.dtype) && !v.is_buffer;
    if (v.producer < 0 || static_cast<size_t>(v.producer) >= g.nodes.size()) return false;
    const Node& p = g.nodes[v.producer];
    const OpRecord* rec = record_of(p);
    if (!rec || rec->kind != WorkKind::layout || p.inputs.empty()) return false;
    vi = p.inputs[0];
  }
  return false;
}

// A node's kind of work: its op's, except an Add of a 1-d parameter (or a slice of one) onto a contraction's output,
// which is a bias add (Linear on 3-d input is MatMul + Add, in torch.onnx exports and our lowering).
WorkKind node_kind(const Graph& g, const Node& n, const OpRecord& rec) {
  if (n.op != "Add" || !n.domain.empty() || n.inputs.size() != 2) return rec.kind;
  for (int s = 0; s < 2; ++s) {
    int p = n.inputs[s], o = n.inputs[1 - s];
    if (p < 0 || o < 0) continue;
    const Value& pv = g.values[p];
    // A 1-d parameter, or a piece of one (MultiheadAttention's q/k/v biases are a split of in_proj_bias).
    if (!pv.shape.rank_known || pv.shape.rank() != 1 || !param_rooted(g, p)) continue;
    int prod = g.values[o].producer;
    if (prod < 0 || static_cast<size_t>(prod) >= g.nodes.size()) continue;
    const OpRecord* pr = record_of(g.nodes[prod]);
    if (pr && pr->kind == WorkKind::contraction) return WorkKind::bias;
  }
  return rec.kind;
}

// A node's FLOPs under `conv`, from its op's work (`oc`); `skipped` (when given) is set when the
// convention's tool skips the op as unsupported.
Count node_flops(const Graph& g, const Node& n, const OpRecord& rec, const OpCost& oc, const Convention& conv,
                 bool* skipped = nullptr) {
  if (is_default(conv)) return oc.flops;
  CostContext ctx{g, n, nullptr};
  const Graph* root = &g;
  while (root->parent) root = root->parent;
  NodeWork w{ctx, root, node_kind(g, n, rec), oc.macs, oc.bias, Count{}, oc.flops, Count{}, Count{}, {}, false};
  w.rest = oc.flops - oc.macs * Count{2} - oc.bias;
  if (w.kind == WorkKind::bias) w.bias = oc.flops, w.rest = 0;
  w.in = ctx.in_numel(0);
  w.out = ctx.out_numel(0);
  if (!n.scope.empty()) {
    if (n.scope_classes.size() == n.scope.size()) w.module = n.scope_classes.back();
  } else {  // at the root: the root module's own class (a bare nn.Linear, a model's functional calls)
    w.module = root->module_class;
  }
  w.weight_operand = rec.kind == WorkKind::contraction &&
                     ((n.inputs.size() > 1 && param_rooted(g, n.inputs[1])) || (!n.inputs.empty() && param_rooted(g, n.inputs[0])));
  w.affine = n.inputs.size() > 1 && param_rooted(g, n.inputs[1]);
  auto call = n.attrs.find("torch_op");
  const ConventionRule& rule =
      convention_rule(conv, rec, w.kind, call == n.attrs.end() ? std::string_view() : std::string_view(call->second.s));
  if (skipped) *skipped = rule.skipped;
  return rule.flops(w);
}

// A node's MACs and FLOPs under `conv`: flopwise's MACs and the convention's FLOPs, or, for a convention with its
// own MACs (Convention::own_macs), its rule's figure as MACs and twice that as FLOPs.
OpCost convention_cost(const Graph& g, const Node& n, const OpRecord* rec, const OpCost& oc, const Convention& conv,
                       bool* skipped = nullptr) {
  OpCost c = oc;
  if (!rec) return c;
  c.flops = node_flops(g, n, *rec, oc, conv, skipped);
  if (conv.own_macs) {
    c.macs = c.flops;
    c.flops = c.macs * Count{2};
  }
  return c;
}

DType mac_dtype_of(const Graph& g, const Node& n, const Count& macs);

// Whether input slot s of n repeats an earlier slot's value (each distinct input is read once; a node has a
// handful: a scan beats a set's allocations).
bool repeated_input(const Node& n, size_t s) {
  return std::find(n.inputs.begin(), n.inputs.begin() + s, n.inputs[s]) != n.inputs.begin() + s;
}

// Bytes a node reads and writes: each distinct input once (a body's outer references too; an importer's
// synthetic value has none), every output. `bytes(value index)`: bytes_of, or a report's memo of it.
template <class Bytes>
Count node_bytes(const Graph& g, const Node& n, const Bytes& bytes) {
  Count mem;
  for (size_t s = 0; s < n.inputs.size(); ++s) {
    const int vi = n.inputs[s];
    if (vi >= 0 && !repeated_input(n, s) && !g.values[static_cast<size_t>(vi)].synthetic) mem += bytes(vi);
  }
  for (int o : n.outputs)
    if (o >= 0) mem += bytes(o);
  return mem;
}

// One run of a body: its nodes' counts summed, and each node's work at its own precision (a nested
// control-flow node contributes its bodies' entries).
OpCost graph_cost(const Graph& g, const Convention& conv) {
  OpCost total;
  auto body = std::make_shared<std::vector<BodyWork>>();
  bool complete = true;  // every nested control-flow node knows its bodies' work
  for (const auto& n : g.nodes) {
    const OpRecord* rec = record_of(n);
    OpCost c = convention_cost(g, n, rec, node_op_cost(g, n, rec, conv), conv);
    total.macs += c.macs;
    const Count flops = c.flops;
    total.flops += flops;
    if (!n.subgraphs.empty()) {
      if (c.body)
        body->insert(body->end(), c.body->begin(), c.body->end());
      else if (!(c.macs.known && c.macs.v == 0 && flops.known && flops.v == 0))
        complete = false;
      continue;
    }
    body->push_back(BodyWork{mac_dtype_of(g, n, c.macs), c.macs, flops,
                             node_bytes(g, n, [&g](int vi) { return bytes_of(g.values[static_cast<size_t>(vi)]); })});
  }
  if (complete) total.body = std::move(body);
  return total;
}

// ---- stored tensors: which are weights (params), running statistics (buffers), or neither ----------

// The inputs of quantised ops that hold weights: the quantised values and int32 biases. Their other stored
// inputs (scales, zero points) describe the encoding: not params. nullptr for an op that is not quantised.
const std::vector<size_t>* quant_weight_slots(const Node& n) {
  static const std::map<std::string, std::vector<size_t>, std::less<>> table = {
      {"DequantizeLinear", {0}},
      {"QuantizeLinear", {}},
      {"DynamicQuantizeLinear", {}},
      {"ConvInteger", {0, 1}},
      {"MatMulInteger", {0, 1}},
      {"QLinearConv", {0, 3, 8}},
      {"QLinearMatMul", {0, 3}},
      {"com.microsoft::DequantizeLinear", {0}},
      {"com.microsoft::QuantizeLinear", {}},
      {"com.microsoft::QGemm", {0, 3, 6}},
      {"com.microsoft::MatMulIntegerToFloat", {0, 1, 6}},
      {"com.microsoft::DynamicQuantizeMatMul", {0, 1, 4}},
      {"com.microsoft::QLinearAdd", {0, 3}},
      {"com.microsoft::QLinearMul", {0, 3}},
      {"com.microsoft::QLinearConcat", {}},
      {"com.microsoft::QLinearSigmoid", {}},
      {"com.microsoft::QLinearLeakyRelu", {}},
      {"com.microsoft::QLinearAveragePool", {}},
      {"com.microsoft::QLinearGlobalAveragePool", {}},
  };
  const std::string& op = n.op;  // most nodes are not quantised: no key built for them
  if (op.find("uant") == std::string::npos && op.find("Integer") == std::string::npos && op.rfind("QLinear", 0) != 0 &&
      op != "QGemm")
    return nullptr;
  auto it = table.find(op_key(n));
  return it == table.end() ? nullptr : &it->second;
}

// Where a layer keeps its learned tensors: a float Constant node's output there is a weight (Paddle2ONNX
// stores every weight as a Constant node, no initializers).
bool weight_slot(const Node& n, size_t slot) {
  if (!n.domain.empty() && n.domain != "com.microsoft") return false;
  const std::string& op = n.op;
  if (op == "Conv" || op == "ConvTranspose" || op == "PRelu") return slot >= 1;
  if (op == "Gemm" || op == "MatMul" || op == "Einsum" || op == "FusedMatMul") return true;
  if (op == "BatchNormalization") return slot == 1 || slot == 2;
  if (op == "LayerNormalization" || op == "InstanceNormalization" || op == "GroupNormalization" ||
      op == "SimplifiedLayerNormalization" || op == "SkipLayerNormalization" ||
      op == "SkipSimplifiedLayerNormalization" || op == "RMSNormalization")
    return slot >= 1;
  if (op == "Gather") return slot == 0;  // an embedding table
  if (op == "LSTM" || op == "GRU" || op == "RNN") return slot == 1 || slot == 2 || slot == 3 || slot == 7;
  return false;
}

bool is_constant_node_output(const Graph& g, const Value& v) {
  if (v.is_initializer || v.producer < 0 || static_cast<size_t>(v.producer) >= g.nodes.size()) return false;
  const Node& p = g.nodes[static_cast<size_t>(v.producer)];
  return p.op == "Constant" && (p.domain.empty() || p.domain == "ai.onnx") && p.inputs.empty();
}

bool is_stored(const Graph& g, const Value& v) { return v.is_initializer || is_constant_node_output(g, v); }

// Weights that reach their layer through layout-only ops (spox exports, silero-vad's LSTM: weight_ih sliced
// per gate, the slices concatenated and unsqueezed into W). A stored tensor is a weight source when a chain of
// Slice, Split, Gather of a constant index, Transpose, Reshape, Flatten, Squeeze/Unsqueeze, Concat, Cast or
// Identity, fed by stored tensors only, ends in a layer's weight input (weight_slot). Chains cross into
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

  Marks& marks_of(const Graph& g) {
    Marks& m = marks_[&g];
    if (m.state.size() != g.values.size()) {
      m.state.assign(g.values.size(), kUnseen);
      m.marked.assign(g.values.size(), 0);
    }
    return m;
  }

  // The inputs a layout-only op passes through (its data; every input of a Concat), as a range of n.inputs;
  // empty for other ops.
  struct Inputs {
    const int* first = nullptr;
    const int* last = nullptr;
    bool empty() const { return first == last; }
    const int* begin() const { return first; }
    const int* end() const { return last; }
  };
  static Inputs passed(const Graph& g, const Node& n) {
    if ((!n.domain.empty() && n.domain != "ai.onnx") || n.inputs.empty()) return {};
    const std::string& op = n.op;
    const int* in = n.inputs.data();
    if (op == "Concat") return {in, in + n.inputs.size()};
    if (op == "Gather") {  // a row of a table: the index must be a constant
      if (n.inputs.size() < 2 || in[1] < 0) return {};
      const Value& idx = g.values[static_cast<size_t>(in[1])];
      return is_stored(g, idx) || idx.data ? Inputs{in, in + 1} : Inputs{};
    }
    if (op == "Slice" || op == "Split" || op == "Transpose" || op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
        op == "Unsqueeze" || op == "Cast" || op == "CastLike" || op == "Identity")
      return {in, in + 1};
    return {};
  }

  // Whether value vi of g is stored tensors through layout-only ops, an outer reference followed out to the
  // graph that holds it (memoised per graph; a cycle or a chain past 64 links is not).
  bool rooted(const Graph& g, int vi, int depth) {
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

  // Records the stored tensors under a rooted value as sources.
  void mark(const Graph& g0, int root) {
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

  void scan(const Graph& g) {
    for (const Node& n : g.nodes) {
      if (passed(g, n).empty()) {  // a layout op is a link of a chain, not its end
        for (size_t s = 0; s < n.inputs.size(); ++s) {
          const int vi = n.inputs[s];
          if (vi < 0 || !weight_slot(n, s) || is_stored(g, g.values[static_cast<size_t>(vi)])) continue;
          if (rooted(g, vi, 0)) mark(g, vi);
        }
      }
      for (const auto& sg : n.subgraphs) scan(*sg);
    }
  }
};

// The body an If runs when its condition is known in the inference that typed `g` ("then_branch" or
// "else_branch"), else nullptr: any other node, an unknown condition.
const char* decided_branch(const Graph& g, const Node& n) {
  if (n.op != "If" || !(n.domain.empty() || n.domain == "ai.onnx") || n.inputs.empty() || n.inputs[0] < 0) return nullptr;
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

// Calls f(attribute name, body) for each body of `n`; with `only_run`, an If whose condition is decided gives
// only the body that runs.
template <class F>
void for_each_body(const Graph& g, const Node& n, bool only_run, const F& f) {
  const char* taken = only_run ? decided_branch(g, n) : nullptr;
  for (const auto& [attr, a] : n.attrs) {
    if (taken && attr != taken) continue;
    for (int gi : a.graphs)
      if (gi >= 0 && static_cast<size_t>(gi) < n.subgraphs.size()) f(attr, *n.subgraphs[static_cast<size_t>(gi)]);
  }
}

// A Constant node's output in a body the shape pass did not enter (the branch of a decided If that does not
// run): typed from its `value` attribute, so the branch's weights can still be listed. nullopt for anything
// else, or a value already typed.
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

enum class Role { None, Param, Buffer };
// `t`: the tensor's type where it is not on `v` itself (typed_from_attribute); `v` otherwise.
Role stored_role(const Graph& g, const Value& v, const Node& user, size_t slot, const WeightSources& sources, const Value& t);

// The stored tensors a control-flow body reads (its own initializers and Constants, and the enclosing
// graphs' through outer references), nested bodies too; with `only_run`, a nested If whose condition is
// decided contributes the body that runs. `claim(graph, value)` says whether a tensor is counted here (not
// seen before; it records it); `add(value, role)` counts it, the value typed where the shape pass did not
// reach it.
template <class Claim, class Add>
void walk_branch_weights(const Graph& body, bool only_run, const WeightSources& sources, const Claim& claim, const Add& add) {
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
    for_each_body(body, bn, only_run,
                  [&](const std::string&, const Graph& sg) { walk_branch_weights(sg, only_run, sources, claim, add); });
  }
}
// The role of a stored tensor (an initializer, or a Constant node's output) as input `slot` of `user`.
Role stored_role(const Graph& g, const Value& v, const Node& user, size_t slot, const WeightSources& sources, const Value& t) {
  if (!is_stored(g, v)) return Role::None;
  if (v.is_buffer) return Role::Buffer;
  if (const auto* q = quant_weight_slots(user))
    return std::find(q->begin(), q->end(), slot) != q->end() ? Role::Param : Role::None;
  if (!is_float(t.dtype)) return Role::None;
  if (user.op == "BatchNormalization" && user.domain.empty() && (slot == 3 || slot == 4)) return Role::Buffer;
  // A scalar (an epsilon, a quantizer's scale, tf2onnx's folded constants) is a param only where a layer
  // keeps a weight.
  if (t.shape.rank_known && t.shape.rank() == 0 && !weight_slot(user, slot)) return Role::None;
  if (v.is_initializer) return Role::Param;
  // A Constant: a weight where a layer keeps one, directly or through layout-only ops (WeightSources), or a
  // tensor (not a scalar) applied elementwise to activations (a decomposed norm's scale and shift, a Linear's
  // bias add).
  if (!t.shape.rank_known || t.shape.rank() == 0) return Role::None;
  if (weight_slot(user, slot) || sources.is_source(v)) return Role::Param;
  if ((user.op == "Add" || user.op == "Mul" || user.op == "Sub" || user.op == "Div") && user.domain.empty() &&
      user.inputs.size() == 2) {
    const Count n = t.shape.numel_count();
    const int other = user.inputs[1 - std::min<size_t>(slot, 1)];
    if (!n.known || n.v < 2 || other < 0) return Role::None;
    const Value& o = g.values[static_cast<size_t>(other)];
    if (!is_stored(g, o)) return Role::Param;
  }
  return Role::None;
}

// The element type a node's MACs run in (NodeReport::mac_dtype).
DType eight_bit(DType t) { return t == DType::UInt8 ? DType::Int8 : t; }
// A DequantizeLinear of 8-bit data, directly or through layout-only ops (a Flatten between DQ and MatMul).
bool dequantised_8bit(const Graph& g, int vi) {
  for (int hops = 0; vi >= 0 && hops < 4; ++hops) {
    const Value& v = g.values[static_cast<size_t>(vi)];
    if (v.producer < 0 || static_cast<size_t>(v.producer) >= g.nodes.size()) return false;
    const Node& p = g.nodes[static_cast<size_t>(v.producer)];
    if (p.inputs.empty() || p.inputs[0] < 0) return false;
    if (p.op == "DequantizeLinear") {
      DType t = g.values[static_cast<size_t>(p.inputs[0])].dtype;
      return t == DType::Int8 || t == DType::UInt8;
    }
    const OpRecord* rec = record_of(p);
    if (!rec || rec->kind != WorkKind::layout) return false;
    vi = p.inputs[0];
  }
  return false;
}
DType mac_dtype_of(const Graph& g, const Node& n, const Count& macs) {
  if (macs.known && macs.v == 0) return DType::Undefined;
  auto in_dtype = [&](size_t i) {
    return i < n.inputs.size() && n.inputs[i] >= 0 ? g.values[static_cast<size_t>(n.inputs[i])].dtype : DType::Undefined;
  };
  if (n.op == "DynamicQuantizeMatMul" && n.domain == "com.microsoft") return DType::Int8;  // A quantised on the fly
  if (const auto* q = quant_weight_slots(n); q && !q->empty()) {
    DType t = in_dtype(0);
    return is_integer(t) ? eight_bit(t) : eight_bit(in_dtype((*q)[q->size() > 1 ? 1 : 0]));
  }
  // QDQ: a product whose operands are all dequantised 8-bit tensors runs in int8 on a quantising runtime.
  size_t operands = 0, dq = 0;
  for (size_t i = 0; i < std::min<size_t>(n.inputs.size(), 2); ++i)
    if (n.inputs[i] >= 0) ++operands, dq += dequantised_8bit(g, n.inputs[i]) ? 1 : 0;
  if (operands == 2 && dq == 2) return DType::Int8;
  // The operands' float type: input 0 is not always an operand (an embedding op's token ids come first).
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (is_float(in_dtype(i))) return in_dtype(i);
  // An integer product (MatMul of int32 tensors); never bool, which no product runs in.
  const DType t = in_dtype(0);
  return t == DType::Bool ? DType::Undefined : t;
}

// A control-flow node's one precision (NodeReport::mac_dtype): its bodies' when they all run their products in
// one type; Undefined when they have none, are mixed (Report::body_work holds the mix) or are not known.
DType body_mac_dtype(const std::vector<BodyWork>* body, const Count& macs) {
  if (!body || (macs.known && macs.v == 0)) return DType::Undefined;
  DType one = DType::Undefined;
  for (const BodyWork& w : *body) {
    if (w.mac_dtype == DType::Undefined || (w.macs.known && w.macs.v == 0)) continue;
    if (one != DType::Undefined && one != w.mac_dtype) return DType::Undefined;
    one = w.mac_dtype;
  }
  return one;
}

// The model's module tree (Model::modules) on the scope tree: each scope's children in the order their module
// declared them (scopes no module names keep their first-use order, after the declared ones), and each module
// scope's params as the module holds them (ScopeNode::params_held).
void apply_module_tree(ScopeNode& root, const std::vector<ModuleDecl>& modules) {
  std::unordered_map<std::string_view, size_t> index;  // path -> declaration index
  index.reserve(modules.size());
  for (size_t i = 0; i < modules.size(); ++i) index.emplace(modules[i].path, i);
  auto decl = [&](const ScopeNode& s) {
    auto it = index.find(s.name);
    return it == index.end() ? SIZE_MAX : it->second;
  };
  // A module's subtree is the run of modules after it whose paths extend its own (the list is in pre-order).
  std::vector<size_t> end(modules.size(), modules.size());
  std::vector<size_t> open;
  auto inside = [&](size_t anc, size_t i) {
    const std::string& a = modules[anc].path;
    const std::string& p = modules[i].path;
    return a.empty() || (p.size() > a.size() && p.compare(0, a.size(), a) == 0 && p[a.size()] == '.');
  };
  for (size_t i = 0; i < modules.size(); ++i) {
    while (!open.empty() && !inside(open.back(), i)) end[open.back()] = i, open.pop_back();
    open.push_back(i);
  }
  int64_t max_id = -1;
  for (const auto& m : modules)
    for (const auto& [id, numel] : m.params) max_id = std::max(max_id, id);
  std::vector<size_t> stamp(static_cast<size_t>(max_id + 1), SIZE_MAX);  // tensor id -> last scope counting it
  std::vector<ScopeNode*> all{&root};
  for (size_t k = 0; k < all.size(); ++k) {
    ScopeNode& s = *all[k];
    std::stable_sort(s.children.begin(), s.children.end(),
                     [&](const std::unique_ptr<ScopeNode>& a, const std::unique_ptr<ScopeNode>& b) {
                       return decl(*a) < decl(*b);
                     });
    for (auto& c : s.children) all.push_back(c.get());
    const size_t i = decl(s);
    if (i == SIZE_MAX) continue;
    Count held;
    for (size_t j = i; j < end[i]; ++j)
      for (const auto& [id, numel] : modules[j].params)
        if (id >= 0 && stamp[static_cast<size_t>(id)] != k) {
          stamp[static_cast<size_t>(id)] = k;
          held += Count{numel};
        }
    s.params_held = held;
  }
}

}  // namespace

WorkKind node_work_kind(const Graph& g, const Node& n) {
  const OpRecord* rec = record_of(n);
  return rec ? node_kind(g, n, *rec) : WorkKind::other;
}

Report build_report(const Model& model, InferResult infer) {
  return build_report(model, std::move(infer), default_convention());
}

Report build_report(const Model& model, InferResult infer, const Convention& conv, const CostOptions& opts) {
  Report r;
  r.convention = std::string(conv.name);
  r.path = model.path;
  r.format = model.format;
  r.producer = model.producer;
  r.opsets = model.opsets;
  r.unsupported = std::move(infer.unsupported);
  r.warnings = model.warnings;
  r.warnings.insert(r.warnings.end(), infer.warnings.begin(), infer.warnings.end());
  r.assumptions = std::move(infer.assumptions);
  r.aliases = std::move(infer.aliases);
  r.symbols = std::move(infer.symbols);
  for (const auto& a : r.assumptions)
    r.warnings.push_back("assumed " + a.text() + " (node '" + a.node + "': " + a.why +
                         "): the formulas hold where it does");
  const Graph& g = model.graph;
  for (int i : g.inputs) r.inputs.push_back({g.values[i].name, {g.values[i].dtype, g.values[i].shape}});
  for (int i : g.outputs) r.outputs.push_back({g.values[i].name, {g.values[i].dtype, g.values[i].shape}});

  r.scopes = std::make_unique<ScopeNode>();
  r.scopes->name = "";
  // The root is named after the file ("resnet18"), since exporters name graphs generically.
  std::string stem = model.path.substr(model.path.find_last_of('/') + 1);
  stem = stem.substr(0, stem.find('.'));
  r.scopes->label = !stem.empty() ? stem : (g.name.empty() ? "model" : g.name);
  r.scopes->cls = g.module_class;
  std::vector<bool> seen_value(g.values.size(), false);
  std::set<std::string> symbols, overflowed_nodes;
  std::unordered_map<std::string, size_t> op_index;
  std::map<std::string, int64_t> skipped;  // ops the convention's tool skips with a warning, and how often
  // Scope path -> (its parent, the node): finds a child in O(1), not by scanning the parent's children.
  std::unordered_map<std::string, std::pair<const ScopeNode*, ScopeNode*>> scope_index;

  // Bytes of a value, memoised by (dtype, shape): a model's values share few distinct shapes, and the
  // symbolic dims in them are copies of a few shared ones (Dim::poly_id), so a 1 M-node decoder multiplies
  // out a handful of polynomials instead of one per value and use.
  ShapeBytesMemo shape_bytes;
  auto bytes = [&](int vi) -> Count { return shape_bytes(g.values[vi]); };
  r.nodes.reserve(g.nodes.size());
  CountInterner intern;
  std::unordered_map<const void*, Count> doubled;  // interned FLOPs polynomial -> its backward FLOPs (2x)
  std::pair<const void*, const void*> last_lists{nullptr, nullptr};
  ScopeNode* last_scope = nullptr;
  std::string_view last_scope_path;
  bool scope_cut = false;  // a node's scope was deeper than limits().max_scope_depth
  std::vector<DtypeCounts> by_dtype(static_cast<size_t>(DType::BFloat16) + 1);
  std::set<const Value*> local_seen;  // control-flow bodies' own stored tensors already counted
  WeightSources sources(g);           // Constants that reach a layer through layout-only ops
  std::vector<std::string> unsplit_nodes;  // control-flow nodes whose MACs no one body's precisions account for
  // --causal: 1 at a score product (QKᵀ), 2 at an AV product.
  std::vector<uint8_t> causal_at;
  std::shared_ptr<CausalDiscount> causal;
  if (opts.causal) {
    causal = std::make_shared<CausalDiscount>();
    causal_at.assign(g.nodes.size(), 0);
    for (const auto& p : find_attention_products(g)) {
      causal_at[p.node] = p.scores ? 1 : 2;
      ++causal->products;
      causal->masked += p.scores && p.masked;
    }
    if (causal->products == 0)
      r.warnings.push_back("--causal: no attention products found (a MatMul into a Softmax over the last axis, and "
                           "the MatMul of its output): nothing discounted");
    r.causal = causal;
  }
  for (const auto& n : g.nodes) {
    const size_t node_index = static_cast<size_t>(&n - g.nodes.data());
    NodeReport& nr = r.nodes.emplace_back();
    nr.name = r.strings.add(n.name);
    nr.op = r.strings.intern(n.op);
    nr.domain = r.strings.intern(n.domain);
    nr.outputs.reserve(n.outputs.size());
    for (int o : n.outputs)
      if (o >= 0) nr.outputs.push_back({r.strings.add(g.values[o].name), g.values[o].shape});

    // Params and buffers: each stored tensor once, at its first user; params also by dtype.
    auto count_stored = [&](const Value& v, Role role) -> Count {
      const Count numel = v.shape.numel_count();
      if (role == Role::Buffer) {
        nr.cost.buffers += numel;
        return numel;
      }
      nr.cost.params += numel;
      const auto t = static_cast<size_t>(v.dtype);
      if (t < 32) nr.param_dtypes |= 1u << t;
      if (t < by_dtype.size()) {
        by_dtype[t].params += numel;
        by_dtype[t].weight_bytes += numel * Count{dtype_size(v.dtype)};
      }
      return numel;
    };
    Count mem = node_bytes(g, n, bytes);
    for (size_t s = 0; s < n.inputs.size(); ++s) {
      const int vi = n.inputs[s];
      if (vi < 0 || seen_value[vi]) continue;
      seen_value[vi] = true;
      const Value& v = g.values[vi];
      Role role = stored_role(g, v, n, s, sources, v);
      if (role != Role::None) count_stored(v, role);
    }
    // Weights used only inside control-flow bodies (scripted exports, spox): counted with the node. `params`
    // takes the bodies that run (an If whose condition is decided: its branch, and so inward); branch_params
    // lists every body's, whichever runs.
    if (!n.subgraphs.empty()) {
      auto unseen = [&](const Graph& where, const Value& v) {
        return &where == &g ? !seen_value[static_cast<size_t>(&v - g.values.data())] : local_seen.count(&v) == 0;
      };
      std::set<const Value*> listed;  // each tensor once in this node's branch_params
      for_each_body(g, n, false, [&](const std::string& branch, const Graph& body) {
        auto list = [&](const Graph& where, const Value& v) { return unseen(where, v) && listed.insert(&v).second; };
        walk_branch_weights(body, false, sources, list, [&](const Value& v, Role role) {
          if (role == Role::Buffer) return;
          auto it = std::find_if(r.branch_params.begin(), r.branch_params.end(),
                                 [&](const BranchParams& b) { return b.node == n.name && b.branch == branch; });
          if (it == r.branch_params.end())
            it = r.branch_params.insert(r.branch_params.end(), BranchParams{n.name, branch, Count{}});
          it->params += v.shape.numel_count();
        });
      });
      auto claim = [&](const Graph& where, const Value& v) {
        if (!unseen(where, v)) return false;
        if (&where == &g)
          seen_value[static_cast<size_t>(&v - g.values.data())] = true;
        else
          local_seen.insert(&v);
        return true;
      };
      for_each_body(g, n, true, [&](const std::string&, const Graph& body) {
        walk_branch_weights(body, true, sources, claim, [&](const Value& v, Role role) {
          const Count numel = count_stored(v, role);
          if (role != Role::Buffer) mem += numel * Count{dtype_size(v.dtype)};
        });
      });
    }
    nr.cost.memory_bytes = mem;

    const OpRecord* rec = record_of(n);
    nr.supported = rec != nullptr;
    OpCost oc = node_op_cost(g, n, rec, conv);
    if (!causal_at.empty() && causal_at[node_index] != 0) {  // --causal: the masked triangle is not computed
      const Count skip = causal_skipped_macs(g, n, causal_at[node_index] == 1);
      oc.macs = oc.macs - skip;
      oc.flops = oc.flops - skip * Count{2};
      causal->macs_skipped += skip;
    }
    bool tool_skips = false;
    const Count conv_flops = [&] {
      OpCost cc = convention_cost(g, n, rec, oc, conv, &tool_skips);
      oc.macs = cc.macs;
      return cc.flops;
    }();
    nr.cost.macs = oc.macs;
    if (!n.subgraphs.empty()) {
      // A control-flow node's products run in its bodies, each at its own precision (never the condition's
      // bool or a trip count's int64): by dtype as its counts take the bodies.
      nr.mac_dtype = body_mac_dtype(oc.body.get(), oc.macs);
      r.body_work.emplace(node_index, oc.body);
      if (oc.body) {
        for (const BodyWork& w : *oc.body)
          if (w.mac_dtype != DType::Undefined && w.macs.exact() && static_cast<size_t>(w.mac_dtype) < by_dtype.size())
            by_dtype[static_cast<size_t>(w.mac_dtype)].macs += w.macs;
      } else if (!(oc.macs.known && oc.macs.v == 0)) {
        unsplit_nodes.push_back(n.name);
      }
    } else {
      nr.mac_dtype = mac_dtype_of(g, n, oc.macs);
      if (nr.mac_dtype != DType::Undefined && oc.macs.exact() && static_cast<size_t>(nr.mac_dtype) < by_dtype.size())
        by_dtype[static_cast<size_t>(nr.mac_dtype)].macs += oc.macs;
    }
    nr.cost.flops = conv_flops;
    if (tool_skips) ++skipped[op_key(n)];
    if (nr.cost.flops.symbolic() && !nr.cost.flops.overflowed) {
      // Twice each distinct polynomial once: nodes of repeated layers share their (interned) FLOPs.
      intern(nr.cost.flops);
      auto [twice, fresh] = doubled.try_emplace(nr.cost.flops.sym.poly_id());
      if (fresh) twice->second = nr.cost.flops * Count{2};
      nr.cost.backward_flops = twice->second;
    } else {
      nr.cost.backward_flops = nr.cost.flops * Count{2};
    }
    if (rec && (!oc.flops.exact() || !oc.macs.exact() || !mem.exact())) {
      bool overflow = oc.flops.overflowed || oc.macs.overflowed || mem.overflowed;
      if (overflow) overflowed_nodes.insert(n.name);
      for (int o : n.outputs)
        if (o >= 0)
          for (const auto& d : g.values[o].shape.dims)
            for (const auto& s : d.symbols()) symbols.insert(s);
      for (int i : n.inputs)
        if (i >= 0)
          for (const auto& d : g.values[i].shape.dims)
            for (const auto& s : d.symbols()) symbols.insert(s);
    }

    // Roll up into the scope tree. Nodes of one module share their scope lists (StringList): the node
    // before this one usually had the same, and then the same scope node.
    ScopeNode* cur = r.scopes.get();
    const std::pair<const void*, const void*> lists{n.scope.id(), n.scope_classes.id()};
    const bool same_lists = lists == last_lists && last_scope;
    if (same_lists) cur = last_scope;
    const size_t levels = std::min(n.scope.size(), static_cast<size_t>(limits().max_scope_depth));
    if (levels < n.scope.size() && !scope_cut) {
      scope_cut = true;
      r.warnings.push_back("scope paths deeper than " + std::to_string(levels) +
                           " levels are cut there (node '" + n.name + "'; the bound is FLOPWISE_MAX_SCOPE_DEPTH)");
    }
    for (size_t lvl = 0; !same_lists && lvl < levels; ++lvl) {
      const std::string& path = n.scope[lvl];
      ScopeNode* next = nullptr;
      if (auto it = scope_index.find(path); it != scope_index.end() && it->second.first == cur) {
        next = it->second.second;
      } else if (it != scope_index.end()) {  // the same path under another parent: rare, scan this one
        for (auto& ch : cur->children)
          if (ch->name == path) next = ch.get();
      }
      if (!next) {
        auto ch = std::make_unique<ScopeNode>();
        ch->name = path;
        ch->label = cur->name.empty() || path.rfind(cur->name + ".", 0) != 0
                        ? path
                        : path.substr(cur->name.size() + 1);
        ch->depth = cur->depth + 1;
        next = ch.get();
        scope_index.emplace(path, std::pair{cur, next});
        cur->children.push_back(std::move(ch));
      }
      if (next->cls.empty() && lvl < n.scope_classes.size()) next->cls = n.scope_classes[lvl];
      cur = next;
    }
    // The scope's path, once per run of nodes with the same lists.
    if (!same_lists) last_scope_path = r.strings.intern(n.scope.empty() ? std::string_view() : n.scope.back());
    nr.scope = last_scope_path;
    last_lists = lists;
    last_scope = cur;
    intern(nr.cost);
    cur->cost.add_rollup(nr.cost);  // the node's own scope; its ancestors get it in the pass below
    if (std::find(cur->ops.begin(), cur->ops.end(), n.op) == cur->ops.end()) cur->ops.push_back(n.op);

    std::string key = op_key(n);
    auto [it, inserted] = op_index.try_emplace(key, r.op_types.size());  // no hash node made for a known op
    if (inserted) r.op_types.push_back(OpTypeReport{std::move(key), 0, Count{}, Count{}, Count{}, Count{}});
    auto& ot = r.op_types[it->second];
    ot.count += 1;
    ot.macs += oc.macs;
    ot.flops += nr.cost.flops;
    ot.params += nr.cost.params;
    ot.memory_bytes += nr.cost.memory_bytes;
  }
  // Each scope's own nodes are summed; add every subtree into its parent, children first (one addition
  // per scope rather than one per node and ancestor).
  // Iterative (a hostile file's scope depth must not exhaust the stack): scopes in pre-order, then each
  // added into its parent in reverse, so every child is complete before it is added.
  std::vector<std::pair<ScopeNode*, ScopeNode*>> order;  // (scope, parent)
  order.push_back({r.scopes.get(), nullptr});
  for (size_t i = 0; i < order.size(); ++i)
    for (auto& c : order[i].first->children) order.push_back({c.get(), order[i].first});
  for (size_t i = order.size(); i-- > 1;) order[i].second->cost.add_subtotal(order[i].first->cost);
  for (auto& [scope, parent] : order) intern(scope->cost);
  for (auto& ot : r.op_types)
    for (Count* c : {&ot.macs, &ot.flops, &ot.params, &ot.memory_bytes}) intern(*c);
  r.totals = r.scopes->cost;
  if (!model.modules.empty()) {
    apply_module_tree(*r.scopes, model.modules);
    if (conv.held_params) {  // the convention's tool counts each module's params as the module holds them
      std::vector<ScopeNode*> all{r.scopes.get()};
      for (size_t i = 0; i < all.size(); ++i) {
        if (all[i]->params_held.known) all[i]->cost.params = all[i]->params_held;
        for (auto& c : all[i]->children) all.push_back(c.get());
      }
      r.totals.params = r.scopes->cost.params;
    }
  }
  std::stable_sort(r.op_types.begin(), r.op_types.end(), [](const OpTypeReport& a, const OpTypeReport& b) {
    return rank_value(a.flops) > rank_value(b.flops);
  });

  if (!symbols.empty()) {
    std::string list;
    for (const auto& s : symbols) list += (list.empty() ? "" : ", ") + s;
    r.warnings.push_back("costs of some nodes cannot be expressed in the symbolic dims (" + list +
                         "): bind them with --dim NAME=VALUE");
  }
  std::set<std::string> total_symbols;
  for (const Count* c : {&r.totals.macs, &r.totals.flops, &r.totals.memory_bytes})
    for (const auto& s : c->sym.symbols()) total_symbols.insert(s);
  if (!total_symbols.empty()) {
    std::string list;
    for (const auto& s : total_symbols) list += (list.empty() ? "" : ", ") + s;
    r.warnings.push_back("costs are polynomials in the model's dynamic dims (" + list +
                         "); bind them with --dim NAME=VALUE for numbers");
  }
  if (!overflowed_nodes.empty()) {
    std::string list;
    for (const auto& s : overflowed_nodes) list += (list.empty() ? "" : ", ") + s;
    r.warnings.push_back("count overflows 64 bits in: " + list + " (reported as unknown)");
  }
  // A tool that hooks the PyTorch module sees BatchNorm that an ONNX exporter folds into the conv
  // weights (torch.onnx in eval mode does): its figure cannot be reproduced from the folded graph.
  if (!is_default(conv) && model.format == "onnx") {
    bool conv_bias = false, batch_norm = false;
    for (const auto& n : g.nodes) {
      if (n.op == "Conv" && n.domain.empty() && n.inputs.size() > 2 && n.inputs[2] >= 0) conv_bias = true;
      if (n.op == "BatchNormalization") batch_norm = true;
    }
    if (conv_bias && !batch_norm)
      r.warnings.push_back(
          "convention '" + std::string(conv.name) +
          "': this ONNX graph has biased Convs and no BatchNormalization; if its exporter folded BatchNorm into "
          "the convs (torch.onnx does in eval mode), the tool counting the PyTorch module counts BatchNorm and no "
          "conv bias: analyse the .pt (TorchScript) to reproduce it exactly");
  }
  if (!skipped.empty()) {
    std::string list;
    for (const auto& [op, k] : skipped) list += (list.empty() ? "" : ", ") + op + " x" + std::to_string(k);
    r.warnings.push_back("convention '" + std::string(conv.name) + "' counts 0 for what its tool skips as unsupported: " +
                         list);
  }
  if (!unsplit_nodes.empty()) {
    std::string list;
    for (const auto& s : unsplit_nodes) list += (list.empty() ? "" : ", ") + s;
    r.warnings.push_back("MACs by precision leave out control-flow node(s) " + list +
                         ": which branch is costlier depends on the dims, so their MACs are no one branch's");
  }
  if (r.totals.uncounted > 0)
    r.warnings.push_back(std::to_string(r.totals.uncounted) +
                         " node(s) have an unknown cost; totals count the rest (see unsupported/uncounted)");
  for (size_t t = 0; t < by_dtype.size(); ++t) {
    auto& d = by_dtype[t];
    if (d.params == Count{} && d.macs == Count{}) continue;
    d.dtype = static_cast<DType>(t);
    r.by_dtype.push_back(std::move(d));
  }
  return r;
}

}  // namespace flopwise
