// src/analysis/parallel_plan.cc — the tensor-parallel plan found from the graph's structure (Megatron's:
// column-parallel products where the activation is whole, row-parallel where it is split, heads split between
// them, the token embedding vocab-parallel, the rest replicated), overridden by a plan file's rules.
#include <algorithm>
#include <deque>

#include "flopwise/moe.h"
#include "flopwise/ops.h"
#include "flopwise/parallel.h"

namespace flopwise {

namespace {

bool onnx_op(const Node& n, const char* op) {
  return n.op == op && (n.domain.empty() || n.domain == "ai.onnx");
}

// Layout-only ops a weight reaches its product through (a tied LM head's Transpose, a Cast).
bool layout_only(const Node& n) {
  static const char* ops[] = {"Transpose", "Cast", "Reshape", "Identity", "Unsqueeze", "Squeeze", "Flatten"};
  return std::any_of(std::begin(ops), std::end(ops), [&](const char* op) { return onnx_op(n, op); });
}

// A stored tensor (an initializer or a Constant), directly or through layout-only ops of stored tensors.
bool is_weight(const Graph& g, int vi, int depth = 0) {
  if (vi < 0 || depth > 16) return false;
  const Value& v = g.values[static_cast<size_t>(vi)];
  if (v.is_input || !is_float(v.dtype)) return false;
  if (v.is_initializer) return !v.is_buffer;
  if (v.producer < 0) return false;
  const Node& p = g.nodes[static_cast<size_t>(v.producer)];
  if (onnx_op(p, "Constant")) return true;
  return layout_only(p) && !p.inputs.empty() && is_weight(g, p.inputs[0], depth + 1);
}

// Whether a value comes from a graph input through layout-only ops (token ids, maybe cast).
bool from_graph_input(const Graph& g, int vi, int depth = 0) {
  if (vi < 0 || depth > 8) return false;
  const Value& v = g.values[static_cast<size_t>(vi)];
  if (v.is_input) return true;
  if (v.producer < 0) return false;
  const Node& p = g.nodes[static_cast<size_t>(v.producer)];
  return layout_only(p) && !p.inputs.empty() && from_graph_input(g, p.inputs[0], depth + 1);
}

// The weight slot of a weighted product (WeightFacts::linear: MatMul, Gemm): its one weight operand; -1 for
// another node.
int weight_slot(const Graph& g, const Node& n) {
  const WeightFacts* w = OpRegistry::instance().weights(n.domain, n.op);
  if (!w || !w->linear || n.inputs.size() < 2) return -1;
  const bool w0 = is_weight(g, n.inputs[0]), w1 = is_weight(g, n.inputs[1]);
  return w1 && !w0 ? 1 : w0 && !w1 ? 0 : -1;
}

// Ops that need the whole of a split tensor's features (WeightFacts::needs_whole: a norm over the hidden
// dim): a split input is gathered. An op with no facts in its domain takes its name's in another (the rule
// these facts replaced matched the names in any domain).
bool needs_whole(const Node& n) {
  const OpRegistry& r = OpRegistry::instance();
  const WeightFacts* w = r.weights(n.domain, n.op);
  if (!w) w = r.weights_in_any_domain(n.op);
  return w && w->needs_whole;
}

struct Graphs {
  const Graph& g;
  std::vector<std::vector<size_t>> consumers;  // per value
  explicit Graphs(const Graph& graph) : g(graph), consumers(graph.values.size()) {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int vi : g.nodes[i].inputs)
        if (vi >= 0) consumers[static_cast<size_t>(vi)].push_back(i);
  }
};

// The heads of a product's output: the second-to-last dim of the first 4-d Reshape it reaches through
// elementwise and split ops (breadth first, a few steps); -1 when none is found or it is not a number.
int64_t heads_after(const Graphs& gs, const Node& product) {
  std::deque<std::pair<int, int>> q;
  for (int o : product.outputs) q.emplace_back(o, 0);
  while (!q.empty()) {
    auto [vi, d] = q.front();
    q.pop_front();
    if (vi < 0 || d > 4) continue;
    for (size_t c : gs.consumers[static_cast<size_t>(vi)]) {
      const Node& n = gs.g.nodes[c];
      if (onnx_op(n, "Reshape") && !n.outputs.empty() && n.outputs[0] >= 0) {
        const Shape& s = gs.g.values[static_cast<size_t>(n.outputs[0])].shape;
        if (s.rank_known && s.rank() == 4) return s.dims[2].is_known() ? s.dims[2].value() : -1;
      }
      if (weight_slot(gs.g, n) >= 0 || needs_whole(n)) continue;
      for (int o : n.outputs) q.emplace_back(o, d + 1);
    }
  }
  return -1;
}

// A product's output features: its output's last dim (x @ W), or the second-to-last where the weight is the
// first operand (W @ xᵀ, a tied LM head); -1 when not a number.
int64_t out_features(const Graph& g, const Node& n, int wslot) {
  if (n.outputs.empty() || n.outputs[0] < 0) return -1;
  const Shape& s = g.values[static_cast<size_t>(n.outputs[0])].shape;
  const size_t back = wslot == 0 ? 2 : 1;
  if (!s.rank_known || s.rank() < back) return -1;
  const Dim& d = s.dims[s.rank() - back];
  return d.is_known() ? d.value() : -1;
}

// The vocab-parallel embedding: of the Gathers of a weight table by indices from a graph input, the one whose
// table has the most rows; -1 when none.
int vocab_embedding(const Graph& g) {
  int best = -1;
  int64_t rows = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!onnx_op(n, "Gather") || n.inputs.size() < 2 || !is_weight(g, n.inputs[0])) continue;
    if (!from_graph_input(g, n.inputs[1])) continue;
    const Shape& s = g.values[static_cast<size_t>(n.inputs[0])].shape;
    if (s.rank_known && s.rank() == 2 && s.dims[0].is_known() && s.dims[0].value() > rows) {
      rows = s.dims[0].value();
      best = static_cast<int>(i);
    }
  }
  return best;
}

const PlanRule* rule_for(const std::vector<PlanRule>& rules, const Node& n) {
  for (const PlanRule& r : rules)
    for (const std::string& level : n.scope)
      if (scope_glob_match(r.glob, level)) return &r;
  return nullptr;
}

// A mixture-of-experts router: a node in an MoE layer's scope outside its experts (Megatron replicates it).
bool is_router(const AnalysedReport& r, const Node& n) {
  if (!r.moe) return false;
  for (const MoeLayer& l : r.moe->layers) {
    const bool in_layer = std::find(n.scope.begin(), n.scope.end(), l.scope) != n.scope.end();
    const bool in_expert = std::any_of(l.experts.begin(), l.experts.end(), [&](const std::string& e) {
      return std::find(n.scope.begin(), n.scope.end(), e) != n.scope.end();
    });
    if (in_layer && !in_expert) return true;
  }
  return false;
}

struct Planner {
  const Graphs& gs;
  const AnalysedReport& report;
  int64_t tp;
  const std::vector<PlanRule>& rules;
  TpPlan& plan;
  std::vector<uint8_t> split;  // per value: its features split over the tp ranks

  bool input_split(const Node& n, int skip = -1) const {
    for (size_t s = 0; s < n.inputs.size(); ++s)
      if (static_cast<int>(s) != skip && n.inputs[s] >= 0 && split[static_cast<size_t>(n.inputs[s])])
        return true;
    return false;
  }
  void mark_outputs(const Node& n) {
    for (int o : n.outputs)
      if (o >= 0 && is_float(gs.g.values[static_cast<size_t>(o)].dtype)) split[static_cast<size_t>(o)] = 1;
  }

  // A weighted product: colwise where its activation is whole, rowwise where it is split.
  void product(size_t i, const Node& n, int wslot) {
    TpRole role = input_split(n, wslot) ? TpRole::Rowwise : TpRole::Colwise;
    std::string why = role == TpRole::Rowwise ? "its input is split: partial sums all-reduced"
                                              : "its input is whole: output features split";
    if (const PlanRule* r = rule_for(rules, n)) {
      role = r->role;
      why = "plan file: " + r->glob + " " + tp_role_name(r->role);
    } else if (role == TpRole::Colwise && is_router(report, n)) {
      role = TpRole::Replicated;
      why = "mixture-of-experts router: replicated";
    } else if (role == TpRole::Colwise) {
      const int64_t heads = heads_after(gs, n), feat = out_features(gs.g, n, wslot);
      if (heads > 0 && heads % tp != 0) {
        role = TpRole::Replicated;
        why = std::to_string(heads) + " heads, not divisible by tp=" + std::to_string(tp) + ": replicated";
      } else if (feat > 0 && feat % tp != 0) {
        role = TpRole::Replicated;
        why = std::to_string(feat) + " output features, not divisible by tp=" + std::to_string(tp) +
              ": replicated";
        plan.warnings.push_back(n.name + ": " + why);
      }
    }
    plan.roles[i] = role;
    plan.reasons[i] = why;
    if (role == TpRole::Colwise || role == TpRole::Rowwise)
      split_weight(n.inputs[static_cast<size_t>(wslot)]);
    if (role == TpRole::Colwise) mark_outputs(n);
    if (role == TpRole::Replicated && input_split(n)) mark_outputs(n);
  }

  // The layout-only ops a split weight reaches its product through (a .pt2's Transpose of a Linear's weight,
  // where its params are counted) hold their share of it.
  void split_weight(int vi) {
    for (int d = 0; vi >= 0 && d < 16; ++d) {
      const int p = gs.g.values[static_cast<size_t>(vi)].producer;
      if (p < 0 || !layout_only(gs.g.nodes[static_cast<size_t>(p)])) return;
      plan.roles[static_cast<size_t>(p)] = TpRole::Sharded;
      plan.reasons[static_cast<size_t>(p)] = "a split weight's layout";
      vi = gs.g.nodes[static_cast<size_t>(p)].inputs.empty() ? -1
                                                             : gs.g.nodes[static_cast<size_t>(p)].inputs[0];
    }
  }

  void other(size_t i, const Node& n) {
    if (!input_split(n)) return;
    if (needs_whole(n)) {
      plan.reasons[i] = "needs whole features: its split input is all-gathered";
      plan.warnings.push_back(n.name + " (" + n.op + ") reads a split tensor: counted as gathered first");
      return;
    }
    plan.roles[i] = TpRole::Sharded;
    mark_outputs(n);
  }

  void run() {
    const Graph& g = gs.g;
    const int vocab = tp > 1 ? vocab_embedding(g) : -1;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (static_cast<int>(i) == vocab) {
        plan.roles[i] = TpRole::Vocab;
        plan.vocab_rows = g.values[static_cast<size_t>(n.inputs[0])].shape.dims[0].value();
        plan.reasons[i] = "token embedding: rows (vocab) split, output all-reduced";
        continue;
      }
      const int w = weight_slot(g, n);
      if (w >= 0)
        product(i, n, w);
      else
        other(i, n);
    }
  }
};

}  // namespace

TpPlan plan_tensor_parallel(const Model& model, const AnalysedReport& report, int64_t tp,
                            const std::vector<PlanRule>& rules) {
  const Graph& g = model.graph;
  TpPlan plan;
  plan.roles.assign(g.nodes.size(), TpRole::Replicated);
  plan.reasons.assign(g.nodes.size(), std::string());
  if (tp <= 1) return plan;
  Graphs gs(g);
  Planner p{gs, report, tp, rules, plan, std::vector<uint8_t>(g.values.size(), 0)};
  p.run();
  for (size_t i = 0; i < g.nodes.size() && i < report.nodes.size(); ++i) {
    const TpRole r = plan.roles[i];
    if (r == TpRole::Colwise || r == TpRole::Rowwise || r == TpRole::Vocab ||
        (r == TpRole::Replicated && weight_slot(g, g.nodes[i]) >= 0)) {
      plan.modules.emplace_back(std::string(report.nodes[i].scope), r);
      plan.module_reasons.push_back(plan.reasons[i]);
    }
  }
  for (const PlanRule& r : rules) {
    bool used = false;
    for (const Node& n : g.nodes) used = used || rule_for({r}, n) != nullptr;
    if (!used) plan.warnings.push_back("--parallel-plan '" + r.glob + "' matches no scope of the model");
  }
  return plan;
}

}  // namespace flopwise
