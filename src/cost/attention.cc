// src/cost/attention.cc — attention products found by structure, and what a causal mask skips in them
// (flopwise/attention.h); `--causal` discounts them in the cost pass.
#include "flopwise/attention.h"

#include <algorithm>
#include <deque>

namespace flopwise {

namespace {

bool is_op(const Node& n, const char* op) {
  return n.op == op && (n.domain.empty() || n.domain == "ai.onnx");
}

// A Softmax over its input's last axis.
bool softmax_last_axis(const Graph& g, const Node& n) {
  if (!is_op(n, "Softmax") || n.inputs.empty() || n.inputs[0] < 0) return false;
  const Shape& s = g.values[static_cast<size_t>(n.inputs[0])].shape;
  int64_t axis = n.attr_i("axis", n.opset >= 13 ? -1 : 1);
  if (axis == -1) return true;
  return s.rank_known && axis == static_cast<int64_t>(s.rank()) - 1;
}

// A product of two activations (x @ y), not a layer (x @ W): neither operand is stored in the model.
bool activation_product(const Graph& g, const Node& n) {
  if (!is_op(n, "MatMul") || n.inputs.size() != 2) return false;
  for (int v : n.inputs) {
    if (v < 0) return false;
    const Value& x = g.values[static_cast<size_t>(v)];
    if (x.is_initializer || (x.producer >= 0 && g.nodes[static_cast<size_t>(x.producer)].op == "Constant"))
      return false;
  }
  return true;
}

}  // namespace

std::vector<AttentionProduct> find_attention_products(const Graph& g) {
  std::vector<AttentionProduct> out;
  std::vector<uint8_t> taken(g.nodes.size(), 0);
  auto producer = [&](int v) -> const Node* {
    if (v < 0 || g.values[static_cast<size_t>(v)].producer < 0) return nullptr;
    return &g.nodes[static_cast<size_t>(g.values[static_cast<size_t>(v)].producer)];
  };
  // Consumers of each value, for the AV side.
  std::vector<std::vector<int>> users(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs)
      if (v >= 0) users[static_cast<size_t>(v)].push_back(static_cast<int>(i));
  for (const Node& sm : g.nodes) {
    if (!softmax_last_axis(g, sm)) continue;
    // Scores: up from the Softmax through scale (Mul, Div) and mask (Add, Sub, Where) ops and casts, a few
    // steps, to a MatMul; on Where (masked_fill), the scores are its second or third input.
    const Node* qk = nullptr;
    bool masked = false;
    std::vector<std::pair<int, bool>> frontier{{sm.inputs[0], false}};
    for (int step = 0; step < 6 && !qk && !frontier.empty(); ++step) {
      std::vector<std::pair<int, bool>> next;
      for (const auto& [v, m] : frontier) {
        const Node* p = producer(v);
        if (!p) continue;
        if (activation_product(g, *p)) {
          qk = p;
          masked = m;
          break;
        }
        const bool mask_op = is_op(*p, "Add") || is_op(*p, "Sub") || is_op(*p, "Where");
        if (!(mask_op || is_op(*p, "Mul") || is_op(*p, "Div") || is_op(*p, "Cast"))) continue;
        for (size_t i = is_op(*p, "Where") ? 1 : 0; i < p->inputs.size(); ++i)
          next.push_back({p->inputs[i], m || mask_op});
      }
      frontier = std::move(next);
    }
    if (!qk) continue;
    const size_t qi = static_cast<size_t>(qk - g.nodes.data());
    if (!taken[qi]) {
      taken[qi] = 1;
      out.push_back({qi, true, masked});
    }
    // AV: a MatMul taking the Softmax's output (through Cast or Dropout) as its first operand.
    std::deque<int> vals{sm.outputs.empty() ? -1 : sm.outputs[0]};
    for (int step = 0; step < 3 && !vals.empty(); ++step) {
      std::deque<int> next;
      for (int v : vals) {
        if (v < 0) continue;
        for (int u : users[static_cast<size_t>(v)]) {
          const Node& c = g.nodes[static_cast<size_t>(u)];
          if (activation_product(g, c) && c.inputs[0] == v && !taken[static_cast<size_t>(u)]) {
            taken[static_cast<size_t>(u)] = 1;
            out.push_back({static_cast<size_t>(u), false, false});
          } else if ((is_op(c, "Cast") || is_op(c, "Dropout")) && !c.outputs.empty()) {
            next.push_back(c.outputs[0]);
          }
        }
      }
      vals = std::move(next);
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return out;
}

Count causal_skipped_macs(const Graph& g, const Node& n, bool scores) {
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() || n.outputs[0] < 0) return Count::unknown();
  const Shape& a = g.values[static_cast<size_t>(n.inputs[0])].shape;
  const Shape& y = g.values[static_cast<size_t>(n.outputs[0])].shape;
  if (!a.rank_known || !y.rank_known || a.rank() < 2 || y.rank() < 2) return Count::unknown();
  // Per (batch, head): S(S-1)/2 skipped pairs times the contraction length d.
  const Dim& s = y.dims[y.rank() - 2];
  const Dim& d = scores ? a.dims[a.rank() - 1] : y.dims[y.rank() - 1];
  Dim prod = d * s * (s - Dim(1));
  for (size_t i = 0; i + 2 < y.rank(); ++i) prod = prod * y.dims[i];
  if (prod.is_unknown()) return Count::unknown();
  return Count::of(Dim::floor_div(prod, Dim(2)));  // S(S-1) is even: the quotient is exact
}

}  // namespace flopwise
