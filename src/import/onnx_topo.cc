// src/import/onnx_topo.cc — topological sort of an imported graph (onnx_topo.h): stable, and a cycle named.
#include "onnx_topo.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "flopwise/errors.h"

namespace flopwise::onnx_detail {

void sort_nodes(Graph& g, const std::string& path, std::vector<std::string>* warnings) {
  const size_t n = g.nodes.size();
  bool sorted = true;
  for (size_t i = 0; i < n && sorted; ++i)
    for (int v : g.nodes[i].inputs)
      if (v >= 0 && g.values[v].producer >= static_cast<int>(i)) sorted = false;
  if (sorted) return;
  std::vector<std::vector<int>> users(n);
  std::vector<int> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<int> seen;
    for (int v : g.nodes[i].inputs) {
      int p = v >= 0 ? g.values[v].producer : -1;
      if (p < 0 || std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
      seen.push_back(p);
      users[static_cast<size_t>(p)].push_back(static_cast<int>(i));
      ++pending[i];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[static_cast<size_t>(i)])
      if (--pending[static_cast<size_t>(u)] == 0) ready.push(u);
  }
  if (order.size() < n) {
    // The nodes left wait on a cycle; those that also feed one are on it: peel off, repeatedly, the
    // left nodes no left node uses.
    std::vector<int> feeds(n, 0);
    for (size_t i = 0; i < n; ++i)
      if (pending[i] > 0)
        for (int u : users[i]) feeds[i] += pending[static_cast<size_t>(u)] > 0;
    std::vector<int> peel;
    for (size_t i = 0; i < n; ++i)
      if (pending[i] > 0 && feeds[i] == 0) peel.push_back(static_cast<int>(i));
    while (!peel.empty()) {
      int i = peel.back();
      peel.pop_back();
      pending[static_cast<size_t>(i)] = 0;
      std::vector<int> seen;  // each producer once, as `users` counts it
      for (int v : g.nodes[static_cast<size_t>(i)].inputs) {
        int p = v >= 0 ? g.values[v].producer : -1;
        if (p < 0 || std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
        seen.push_back(p);
        if (pending[static_cast<size_t>(p)] > 0 && --feeds[static_cast<size_t>(p)] == 0) peel.push_back(p);
      }
    }
    std::string names;
    size_t on = 0;
    for (size_t i = 0; i < n; ++i)
      if (pending[i] > 0 && ++on <= 5) names += (on > 1 ? ", '" : "'") + g.nodes[i].name + "'";
    throw InputError(path + ": the graph has a cycle: " + std::to_string(on) + " nodes wait on each other (" +
                     names + (on > 5 ? ", ..." : "") + ")");
  }
  std::vector<Node> nodes;
  nodes.reserve(n);
  std::vector<int> new_index(n);
  for (size_t k = 0; k < n; ++k) {
    new_index[static_cast<size_t>(order[k])] = static_cast<int>(k);
    nodes.push_back(std::move(g.nodes[static_cast<size_t>(order[k])]));
  }
  g.nodes = std::move(nodes);
  for (auto& v : g.values)
    if (v.producer >= 0 && static_cast<size_t>(v.producer) < n)
      v.producer = new_index[static_cast<size_t>(v.producer)];
  warnings->push_back(std::string(g.parent ? "a subgraph's" : "the graph's") +
                      " nodes are not in topological order (the ONNX checker rejects that; ONNX Runtime runs "
                      "it): analysed in dependency order");
}

}  // namespace flopwise::onnx_detail
