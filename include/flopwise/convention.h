// include/flopwise/convention.h — counting conventions (--convention): how a node's convention-free work
// becomes the FLOP figure a tool reports. Owns: the preset table (src/cost/conventions.def: one row per
// convention x work kind, and per convention x op where an op departs from its kind), lookup by name,
// a node's FLOPs and an op's formula text under a convention.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flopwise/dim.h"
#include "flopwise/ops.h"

namespace flopwise {

struct Convention {
  std::string_view name;
  std::string_view reproduces;  // the tool and figure it reproduces
  std::string_view flop_means;  // what one of its "FLOPs" is
  std::string_view unit;        // "FLOPs" or "MACs": what the tool itself calls its figure
  // Its tool counts a module's params as the module holds them (sum(p.numel() for p in m.parameters()): a
  // tied tensor in every module holding it): scopes report ScopeNode::params_held where the model keeps its
  // tree.
  bool held_params = false;
  // Its tool's MACs are its own figure, not flopwise's (the rule gives MACs; its FLOPs are 2 x MACs).
  bool own_macs = false;
};

// What a convention's rule sees of one node: its work from the op's cost rule, split by kind, and
// the facts some tools look at (element counts, the module the op ran in, a weight operand).
struct NodeWork {
  const CostContext& c;
  const Graph* root;  // the model's main graph (c.graph, or the graph whose subgraph c.graph is)
  WorkKind kind;      // the op's kind; `bias` for an Add of a parameter onto a contraction's output
  Count macs, bias;   // contraction MACs; bias-add elements
  Count rest;         // the default convention's other arithmetic: flops - 2 x macs - bias
  Count flops;        // the default convention's FLOPs (2 x macs + bias + rest)
  Count in, out;      // elements of input 0 and of output 0
  // Class of the module the node ran in: its innermost scope's ("Conv2d", "Softmax"), the root module's
  // for a node at the root (.pt: "ResNet", a bare "Linear"); "" when unknown (ONNX).
  std::string_view module;
  bool weight_operand = false;  // a contraction whose second operand is a parameter (a layer, not x @ y)
  bool affine = false;          // input 1 (a norm's scale) is a parameter: affine / elementwise_affine

  bool in_module(std::string_view cls) const { return module == cls; }
  int64_t attr_i(const char* name, int64_t dflt) const { return c.node.attr_i(name, dflt); }
  std::string attr_s(const char* name, const char* dflt) const { return c.node.attr_s(name, dflt); }
  Count in_numel(size_t i) const { return c.in_numel(i); }
  bool has_input(size_t i) const { return c.has_input(i); }
  const Shape& in_shape(size_t i) const { return c.in_shape(i); }
  const Shape& out_shape(size_t i) const { return c.out_shape(i); }
};

using ConventionFn = Count (*)(const NodeWork&);

// One row of conventions.def: how `convention` counts an op kind, or one op that departs from it.
struct ConventionRule {
  std::string_view convention;
  WorkKind kind = WorkKind::other;
  std::string_view op;    // "" for a kind row
  std::string_view call;  // a CALL row: the torch function whose decomposition it counts ("bilinear")
  ConventionFn flops = nullptr;
  std::string_view formula;  // "=" for the op's own (default-convention) formula
  bool skipped = false;      // the tool skips the op with a warning (fvcore's "unsupported operator")
};

const std::vector<Convention>& conventions();
// "default, torch, torchvision, ...": every convention's name, in table order (help text, README).
std::string convention_names();
const std::vector<ConventionRule>& convention_rules();
const Convention& default_convention();
bool is_default(const Convention& conv);
// The convention called `name`; throws UsageError naming the known ones.
const Convention& find_convention(const std::string& name);

// The rule of `conv` for a node of op `rec` whose work is of kind `kind`: the row of the torch function
// the .pt importer decomposed into it (the node's `torch_op` attribute) where `conv` has one, else the
// op's row, else the kind's.
const ConventionRule& convention_rule(const Convention& conv, const OpRecord& rec, WorkKind kind,
                                      std::string_view torch_op = {});
// The CALL rows of `conv` (torch functions it counts apart from the ops they decompose into).
std::vector<const ConventionRule*> convention_calls(const Convention& conv);
// An op's formula under `conv` (its kind's or its own row's text; the op's formula for the default),
// for a node whose work is of `kind` (the op's own unless it is a bias add).
std::string convention_formula(const Convention& conv, const OpRecord& rec);
std::string convention_formula(const Convention& conv, const OpRecord& rec, WorkKind kind);
// The kind of a node's work in its graph: its op's, or `bias` for an Add of a 1-d parameter onto a
// contraction's output. Defined with the per-node costing (src/cost/node_cost.cc).
WorkKind node_work_kind(const Graph& g, const Node& n);

}  // namespace flopwise
