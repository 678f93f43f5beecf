// src/analysis/moe.cc — mixture-of-experts layers found from their routers (flopwise/moe.h).
#include "flopwise/moe.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

namespace flopwise {

namespace {

bool is_op(const Node& n, const char* op) {
  return n.op == op && (n.domain.empty() || n.domain == "ai.onnx");
}

// A label's stem: "experts.3" -> "experts", "3" -> "" (a ModuleList's own children), else the label.
std::string label_stem(const std::string& label, bool* numbered) {
  size_t dot = label.rfind('.');
  std::string tail = dot == std::string::npos ? label : label.substr(dot + 1);
  *numbered =
      !tail.empty() && std::all_of(tail.begin(), tail.end(), [](unsigned char c) { return std::isdigit(c); });
  return !*numbered ? label : dot == std::string::npos ? std::string() : label.substr(0, dot);
}

// The first scope, breadth first under `root`, with exactly `e` numbered children of one stem.
const ScopeNode* experts_under(const ScopeNode* root, int64_t e, std::vector<const ScopeNode*>* experts,
                               const std::set<const ScopeNode*>& used) {
  std::deque<const ScopeNode*> q{root};
  while (!q.empty()) {
    const ScopeNode* s = q.front();
    q.pop_front();
    std::map<std::string, std::vector<const ScopeNode*>> groups;
    for (const auto& c : s->children) {
      bool numbered = false;
      std::string stem = label_stem(c->label, &numbered);
      if (numbered) groups[stem].push_back(c.get());
      q.push_back(c.get());
    }
    for (auto& [stem, list] : groups)
      if (static_cast<int64_t>(list.size()) == e && !used.count(list.front())) {
        *experts = list;
        return s;
      }
  }
  return nullptr;
}

const ScopeNode* find_scope(const ScopeNode* root, const std::string& name) {
  if (name.empty()) return root;
  const ScopeNode* s = root;
  while (s && s->name != name) {
    const ScopeNode* next = nullptr;
    for (const auto& c : s->children)
      if (name == c->name || name.rfind(c->name + ".", 0) == 0) next = c.get();
    s = next;
  }
  return s;
}

}  // namespace

std::shared_ptr<const MoeSummary> find_moe(const Model& model, const Report& report) {
  const Graph& g = model.graph;
  if (!report.scopes) return nullptr;
  auto moe = std::make_shared<MoeSummary>();
  std::set<const ScopeNode*> used;
  for (const Node& n : g.nodes) {
    const bool topk = is_op(n, "TopK"), argmax = is_op(n, "ArgMax");
    if ((!topk && !argmax) || n.inputs.empty() || n.inputs[0] < 0) continue;
    const Shape& in = g.values[static_cast<size_t>(n.inputs[0])].shape;
    if (!in.rank_known || in.rank() == 0) continue;
    int64_t axis = n.attr_i("axis", topk ? -1 : 0);
    if (axis < 0) axis += static_cast<int64_t>(in.rank());
    if (axis != static_cast<int64_t>(in.rank()) - 1 || !in.dims[static_cast<size_t>(axis)].is_known())
      continue;
    const int64_t e = in.dims[static_cast<size_t>(axis)].value();
    int64_t k = 1;
    if (topk) {
      k = n.attr_i("k", 0);
      if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
        const auto& data = g.values[static_cast<size_t>(n.inputs[1])].data;
        k = data && !data->is_float && data->ints.size() == 1 && data->ints[0].is_known()
                ? data->ints[0].value()
                : 0;
      }
    }
    if (k < 1 || e < 2 || k >= e) continue;
    // The experts: E numbered sibling scopes under the router's scope or one of its two parents.
    std::vector<const ScopeNode*> experts;
    const ScopeNode* parent = nullptr;
    for (size_t up = 0; up < 3 && !parent && n.scope.size() + 1 >= up + 1; ++up) {  // the root last
      const size_t depth = n.scope.size() - up;  // scope levels kept: 0 is the root
      const ScopeNode* s = find_scope(report.scopes.get(), depth == 0 ? std::string() : n.scope[depth - 1]);
      if (s) parent = experts_under(s, e, &experts, used);
    }
    if (!parent) continue;
    used.insert(experts.front());
    MoeLayer layer;
    layer.router = n.name;
    layer.scope = parent->name;
    layer.top_k = k;
    layer.one_params = experts.front()->cost.params;
    layer.one_macs = experts.front()->cost.macs;
    layer.one_flops = experts.front()->cost.flops;
    for (const ScopeNode* x : experts) {
      layer.experts.push_back(x->name);
      layer.params += x->cost.params;
      layer.macs += x->cost.macs;
      layer.flops += x->cost.flops;
      if (x->cost.uncounted) layer.macs = layer.flops = Count::unknown();
      if (!(x->cost.params == layer.one_params)) layer.one_params = Count::unknown();
      if (!(x->cost.macs == layer.one_macs) || !(x->cost.flops == layer.one_flops) || x->cost.uncounted)
        layer.one_macs = layer.one_flops = Count::unknown();
    }
    moe->layers.push_back(std::move(layer));
  }
  if (moe->layers.empty()) return nullptr;
  moe->experts = static_cast<int64_t>(moe->layers.front().experts.size());
  moe->top_k = moe->layers.front().top_k;
  moe->total_params = report.totals.params;
  moe->total_macs = report.totals.uncounted ? Count::unknown() : report.totals.macs;
  moe->total_flops = report.totals.uncounted ? Count::unknown() : report.totals.flops;
  moe->activated_params = moe->total_params;
  moe->activated_macs = moe->total_macs;
  moe->activated_flops = moe->total_flops;
  for (const auto& l : moe->layers) {
    if (static_cast<int64_t>(l.experts.size()) != moe->experts || l.top_k != moe->top_k)
      moe->experts = moe->top_k = 0;
    // All experts but k of them: minus the layer's experts, plus k times one expert.
    const Count k{l.top_k};
    moe->activated_params = moe->activated_params - l.params + k * l.one_params;
    moe->activated_macs = moe->activated_macs - l.macs + k * l.one_macs;
    moe->activated_flops = moe->activated_flops - l.flops + k * l.one_flops;
    if (!l.one_macs.exact()) moe->dense = false;
  }
  return moe;
}

}  // namespace flopwise
