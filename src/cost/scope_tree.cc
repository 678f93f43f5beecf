// src/cost/scope_tree.cc — a report's scope tree (scope_tree.h).
#include "scope_tree.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "flopwise/limits.h"

namespace flopwise::cost_detail {

ScopeNode* ScopeTree::place(const Node& n, NodeReport& nr, Report& r) {
  ScopeNode* cur = r.scopes.get();
  const std::pair<const void*, const void*> lists{n.scope.id(), n.scope_classes.id()};
  const bool same_lists = lists == last_lists && last_scope;
  if (same_lists) cur = last_scope;
  const size_t levels = std::min(n.scope.size(), static_cast<size_t>(limits().max_scope_depth));
  if (levels < n.scope.size() && !scope_cut) {
    scope_cut = true;
    r.warnings.push_back("scope paths deeper than " + std::to_string(levels) +
                         " levels are cut there (node '" + n.name +
                         "'; the bound is FLOPWISE_MAX_SCOPE_DEPTH)");
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
      ch->label =
          cur->name.empty() || path.rfind(cur->name + ".", 0) != 0 ? path : path.substr(cur->name.size() + 1);
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
  return cur;
}

void roll_up_scopes(ScopeNode& root, CountInterner& intern, SumMemo& sums) {
  // Iterative (a hostile file's scope depth must not exhaust the stack): scopes in pre-order, then each
  // added into its parent in reverse, so every child is complete before it is added.
  std::vector<std::pair<ScopeNode*, ScopeNode*>> order;  // (scope, parent)
  order.push_back({&root, nullptr});
  for (size_t i = 0; i < order.size(); ++i)
    for (auto& c : order[i].first->children) order.push_back({c.get(), order[i].first});
  for (size_t i = order.size(); i-- > 1;) sums.add_subtotal(order[i].second->cost, order[i].first->cost);
  for (auto& [scope, parent] : order) intern(scope->cost);
}

}  // namespace flopwise::cost_detail
