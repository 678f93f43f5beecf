// src/analysis/peak_memory.cc — peak activation memory by liveness (flopwise/peak_memory.h).
#include "flopwise/peak_memory.h"

#include <algorithm>
#include <set>

namespace flopwise {

namespace {

constexpr size_t kMaxCandidates = 8;  // incomparable peaks kept before the answer is given up as unknown

// a >= b for every value >= 1 of the model's symbols (a dim of 0 empties the model): each symbol x is
// written 1 + x' with x' >= 0 and the difference must have no negative coefficient. Derived symbols (floor,
// min, max) stay as they are: >= 0 where their arguments are.
bool ge_at_least_one(const Dim& a, const Dim& b) {
  const Dim diff = a - b;
  if (diff.is_unknown()) return false;
  if (!diff.is_symbolic()) return diff.value() >= 0;
  Dim shifted(0);
  for (const auto& [mono, coef] : diff.terms()) {
    Dim t(coef);
    for (const auto& name : mono) t = t * (Dim::atom(name) ? Dim::symbol(name) : Dim::symbol(name) + Dim(1));
    shifted = shifted + t;
    if (shifted.is_unknown()) return false;
  }
  return shifted.provably_nonneg();
}

Count bytes_of(const Value& v, bool* unknown) {
  const Count n = v.shape.numel_count();
  const int64_t sz = dtype_size(v.dtype);
  if (!n.exact() || (sz == 0 && !(n.known && n.v == 0))) {
    *unknown = true;
    return Count{};
  }
  return n * Count{sz};
}

bool is_stored(const Graph& g, const Value& v) {
  if (v.is_initializer) return true;
  if (v.producer < 0 || static_cast<size_t>(v.producer) >= g.nodes.size()) return false;
  const Node& p = g.nodes[static_cast<size_t>(v.producer)];
  return p.op == "Constant" && p.inputs.empty();
}

// Names a control-flow body reads from enclosing graphs (its outer references, nested bodies too).
void outer_names(const Graph& body, std::set<std::string>& out) {
  for (const auto& v : body.values)
    if (v.is_outer) out.insert(v.name);
  for (const auto& n : body.nodes)
    for (const auto& sg : n.subgraphs) outer_names(*sg, out);
}

// The schedule the liveness walks: depth first from the graph outputs, operands in input order (a control-
// flow node's outer references after them), then whatever no output needs, in stored order. A topological
// order that depends on the graph alone, not on the order the file stores its nodes in, so reordering the
// file leaves the peak as it is. Iterative: a million-node chain does not recurse.
std::vector<size_t> schedule(const Graph& g) {
  const size_t n = g.nodes.size();
  std::vector<std::vector<int>> implicit(n);  // outer values a node's bodies read
  for (size_t i = 0; i < n; ++i) {
    if (g.nodes[i].subgraphs.empty()) continue;
    std::set<std::string> names;
    for (const auto& sg : g.nodes[i].subgraphs) outer_names(*sg, names);
    for (const auto& name : names)
      if (int v = g.find(name); v >= 0) implicit[i].push_back(v);
  }
  std::vector<uint8_t> seen(n, 0);
  std::vector<size_t> order;
  order.reserve(n);
  std::vector<std::pair<size_t, size_t>> stack;  // node, next operand
  auto visit = [&](size_t root) {
    if (seen[root]) return;
    seen[root] = 1;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      const size_t i = stack.back().first;
      const size_t slot = stack.back().second++;
      const Node& node = g.nodes[i];
      const size_t explicit_n = node.inputs.size();
      if (slot < explicit_n + implicit[i].size()) {
        const int v = slot < explicit_n ? node.inputs[slot] : implicit[i][slot - explicit_n];
        const int p = v >= 0 ? g.values[static_cast<size_t>(v)].producer : -1;
        if (p >= 0 && static_cast<size_t>(p) < n && !seen[static_cast<size_t>(p)]) {
          seen[static_cast<size_t>(p)] = 1;
          stack.push_back({static_cast<size_t>(p), 0});
        }
      } else {
        order.push_back(i);
        stack.pop_back();
      }
    }
  };
  for (int o : g.outputs)
    if (o >= 0 && g.values[static_cast<size_t>(o)].producer >= 0)
      visit(static_cast<size_t>(g.values[static_cast<size_t>(o)].producer));
  for (size_t i = 0; i < n; ++i) visit(i);
  return order;
}

}  // namespace

PeakMemory peak_memory(const Model& model, const std::optional<KvCache>& kv) {
  const Graph& g = model.graph;
  PeakMemory pm;
  const size_t n = g.nodes.size();
  std::set<std::string> cache_names;
  if (kv)
    for (const auto& p : kv->pairs) cache_names.insert(p.past), cache_names.insert(p.present);

  // Last reader of every value (a control-flow node reads what its bodies reference); graph outputs live to
  // the end.
  // Positions are steps of the schedule.
  const std::vector<size_t> order = schedule(g);
  std::vector<int64_t> last(g.values.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[order[i]];
    for (int v : node.inputs)
      if (v >= 0) last[static_cast<size_t>(v)] = static_cast<int64_t>(i);
    if (!node.subgraphs.empty()) {
      std::set<std::string> names;
      for (const auto& sg : node.subgraphs) outer_names(*sg, names);
      for (const auto& name : names) {
        int v = g.find(name);
        if (v >= 0) last[static_cast<size_t>(v)] = static_cast<int64_t>(i);
      }
    }
  }
  for (int o : g.outputs)
    if (o >= 0) last[static_cast<size_t>(o)] = static_cast<int64_t>(n);

  // Stored tensors and the cache apart; graph inputs live from the start.
  Count live;
  std::vector<std::vector<int>> frees(n + 1);
  std::vector<bool> counted(g.values.size(), false);
  for (size_t vi = 0; vi < g.values.size(); ++vi) {
    const Value& v = g.values[vi];
    bool unknown = false;
    if (is_stored(g, v)) {
      pm.weights += bytes_of(v, &unknown);
      continue;
    }
    if (cache_names.count(v.name)) {
      pm.kv_cache += bytes_of(v, &unknown);
      continue;
    }
    if (v.is_input && last[vi] >= 0) {
      live += bytes_of(v, &unknown);
      pm.unknown_tensors += unknown;
      counted[vi] = !unknown;
      frees[static_cast<size_t>(last[vi])].push_back(static_cast<int>(vi));
    }
  }

  // The sweep: at node i its outputs join the live set (its inputs are still live), the sum is a candidate,
  // then what i read last (and outputs nobody reads) leave.
  std::vector<std::pair<Dim, size_t>> cands;  // pairwise not provably ordered
  bool gave_up = false;
  auto consider = [&](const Count& c, size_t i) {
    if (gave_up || !c.exact()) return;
    const Dim d = c.as_dim();
    for (const auto& [e, k] : cands)
      if (ge_at_least_one(e, d)) return;  // dominated (or equal): the earlier one names the peak
    cands.erase(std::remove_if(cands.begin(), cands.end(),
                               [&](const std::pair<Dim, size_t>& x) { return ge_at_least_one(d, x.first); }),
                cands.end());
    cands.push_back({d, i});
    if (cands.size() > kMaxCandidates) gave_up = true;
  };
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[order[i]];
    if (!(node.op == "Constant" && node.inputs.empty())) {
      for (int o : node.outputs) {
        if (o < 0 || cache_names.count(g.values[static_cast<size_t>(o)].name)) continue;
        bool unknown = false;
        Count b = bytes_of(g.values[static_cast<size_t>(o)], &unknown);
        if (unknown) {
          ++pm.unknown_tensors;
          continue;
        }
        live += b;
        pm.saved_for_training += b;
        counted[static_cast<size_t>(o)] = true;
        const int64_t l = last[static_cast<size_t>(o)];
        frees[static_cast<size_t>(l < 0 ? static_cast<int64_t>(i) : l)].push_back(o);
      }
    }
    consider(live, i);
    for (int v : frees[i]) {
      bool unknown = false;
      if (counted[static_cast<size_t>(v)]) live = live - bytes_of(g.values[static_cast<size_t>(v)], &unknown);
    }
  }
  if (gave_up || cands.empty()) {
    pm.peak = cands.empty() ? Count{} : Count::unknown();
    return pm;
  }
  Dim peak = cands[0].first;
  for (size_t k = 1; k < cands.size(); ++k) peak = Dim::max(peak, cands[k].first);
  pm.peak = Count::of(peak);
  for (const auto& [d, i] : cands) {
    const Node& node = g.nodes[order[i]];
    pm.at.push_back((node.scope.empty() ? std::string("(root)") : node.scope_name()) + " at node '" +
                    node.name + "'");
  }
  return pm;
}

}  // namespace flopwise
