// src/cost/module_tree.h — a model's module tree (Model::modules) on a report's scope tree: declaration
// order, and the params each module holds.
#pragma once

#include <vector>

#include "flopwise/cost.h"
#include "flopwise/ir.h"

namespace flopwise::cost_detail {

// The model's module tree (Model::modules) on the scope tree: each scope's children in the order their module
// declared them (scopes no module names keep their first-use order, after the declared ones), and each module
// scope's params as the module holds them (ScopeNode::params_held).
void apply_module_tree(ScopeNode& root, const std::vector<ModuleDecl>& modules);

// For a convention whose tool counts each module's params as the module holds them (Convention::held_params):
// every scope's params become its params_held where that is known.
void use_held_params(ScopeNode& root);

}  // namespace flopwise::cost_detail
