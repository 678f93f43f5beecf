// src/cost/module_tree.cc — a model's module tree on a report's scope tree (module_tree.h).
#include "module_tree.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>

namespace flopwise::cost_detail {

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
  std::vector<size_t> stamp(static_cast<size_t>(max_id + 1),
                            SIZE_MAX);  // tensor id -> last scope counting it
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

void use_held_params(ScopeNode& root) {
  std::vector<ScopeNode*> all{&root};
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i]->params_held.known) all[i]->cost.params = all[i]->params_held;
    for (auto& c : all[i]->children) all.push_back(c.get());
  }
}

}  // namespace flopwise::cost_detail
