// src/cost/scope_tree.h — a report's scope tree: each node placed in its module scope as the nodes are
// costed, then every scope's subtree rolled up into its parent.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "count_interner.h"
#include "flopwise/cost.h"
#include "flopwise/ir.h"

namespace flopwise::cost_detail {

// Places nodes, in graph order, in the scope tree under r.scopes: a scope node is made on first use, with its
// ancestors. Nodes of one module share their scope lists (StringList): the node before this one usually had
// the same, and then the same scope node.
class ScopeTree {
 public:
  // The scope node of `n` (of which `nr` is the report), nr.scope set to its path. Paths deeper than
  // limits().max_scope_depth are cut there, with one warning in `r`.
  ScopeNode* place(const Node& n, NodeReport& nr, Report& r);

 private:
  // Scope path -> (its parent, the node): finds a child in O(1), not by scanning the parent's children.
  std::unordered_map<std::string, std::pair<const ScopeNode*, ScopeNode*>> scope_index;
  std::pair<const void*, const void*> last_lists{nullptr, nullptr};
  ScopeNode* last_scope = nullptr;
  std::string_view last_scope_path;
  bool scope_cut = false;  // a node's scope was deeper than limits().max_scope_depth
};

// Each scope's own nodes are summed; adds every subtree into its parent, children first (one addition per
// scope rather than one per node and ancestor), and interns the scopes' counts.
// The sums are made by `sums` (Totals::add_subtotal's).
void roll_up_scopes(ScopeNode& root, CountInterner& intern, SumMemo& sums);

}  // namespace flopwise::cost_detail
