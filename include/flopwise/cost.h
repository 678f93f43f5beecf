// include/flopwise/cost.h — per-node costs and their roll-up by module scope.
// Owns: params (first-user attribution), memory bytes, MACs/FLOPs via the op registry, the scope tree.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "flopwise/dim.h"
#include "flopwise/infer.h"
#include "flopwise/ir.h"
#include "flopwise/string_arena.h"

namespace flopwise {

struct Convention;      // flopwise/convention.h
struct CausalDiscount;  // flopwise/attention.h
struct BodyWork;        // flopwise/ops.h

// Counting options a user asks for; the defaults count the graph as written.
struct CostOptions {
  // Attention products (flopwise/llm.h) counted with a causal mask's upper triangle skipped, as
  // flash-attention's kernels skip it: S(S-1)/2 (query, key) pairs per head. Never on by default.
  bool causal = false;
};

struct Totals {
  Count params, buffers, macs, flops, memory_bytes, backward_flops;
  // A joint training program's own backward (Report::joint): its nodes' MACs; their FLOPs are in
  // backward_flops, and macs and flops count the forward alone. Zero elsewhere.
  Count backward_macs;
  // Roll-up: sums the known parts; a node with any unknown quantity adds to `uncounted` instead of
  // making the whole total unknown, so a report shows "at least X, N nodes not counted".
  int64_t uncounted = 0;
  void add_rollup(const Totals& node_cost);
  // Adds a child scope's roll-up (already summed by add_rollup): its counts and its uncounted nodes. With
  // `add`, each count is added by add(Count& into, const Count& from) (a memo of sums), else by +=.
  void add_subtotal(const Totals& child);
  template <class Add>
  void add_subtotal(const Totals& child, const Add& add) {
    // Counts are non-negative, so a child's overflowed (unknown) sum makes the parent's unknown too, as
    // adding the child's nodes one by one would.
    add(params, child.params);
    add(buffers, child.buffers);
    add(macs, child.macs);
    add(flops, child.flops);
    add(memory_bytes, child.memory_bytes);
    add(backward_flops, child.backward_flops);
    add(backward_macs, child.backward_macs);
    uncounted += child.uncounted;
  }
  bool complete() const { return uncounted == 0; }
};

struct NodeReport {
  // Views of characters the report owns (Report::strings): set them from its `add`/`intern`, or from
  // literals.
  std::string_view name, op, domain, scope;  // scope: innermost scope path ("layer1.0.conv1"), "" for root
  std::vector<std::pair<std::string_view, Shape>> outputs;
  Totals cost;
  bool supported = true;  // has a cost function
  bool backward = false;  // a joint program's backward node (Node::backward): rolled up as the backward
  // The element type its MACs run in (Undefined without MACs): the operands' float type, or an 8-bit integer
  // type for integer kernels (ConvInteger, QLinearMatMul) and for products of dequantised 8-bit operands
  // (a QDQ model's MatMul), which a quantising runtime runs in int8. UInt8 and Int8 both read as Int8.
  DType mac_dtype = DType::Undefined;
  uint32_t param_dtypes = 0;  // bit t set: it holds params of DType t (a mixed node has several)
  // The kernel calls a runtime makes for it, where each has an overhead of its own: a batched MatMul's
  // matrix products (its output's leading dims, where both operands have them), a grouped convolution's
  // groups times its batch; 1 for any other node (and where the shapes do not say).
  int64_t calls = 1;
  // The kind of kernel a runtime picks for it, where one op type runs several with their own speeds (a view
  // of interned characters, "" for most nodes): a Conv's "depthwise/3x3", "grouped", "pointwise" or
  // "spatial/3x3" (its kernel's dims); a MatMul's or Gemm's "batched" (calls > 1), "vector" (one output
  // row) or "matrix". flopwise calibrate fits each "op/variant" with data, falling back to shorter keys
  // (calibration_keys: "Conv/depthwise", "Conv").
  std::string_view variant;
};

// A MatMul's or Gemm's kind of product (NodeReport::variant) from its output's shape: "vector" (one output
// row) or "matrix"; "" where a leading dim is not a number. `at` binds the model's dims first (a sweep's
// point), where the report's shapes keep them as formulas.
const char* product_kind(const Shape& y, const std::vector<std::pair<std::string, int64_t>>* at = nullptr);

// Params stored inside one control-flow body of a node (an If's then_branch, a Loop's body).
struct BranchParams {
  std::string node, branch;
  Count params;
};

// Params, the bytes they take, and MACs, of one element type (Report::by_dtype).
struct DtypeCounts {
  DType dtype = DType::Undefined;
  Count params, weight_bytes, macs;
};

struct ScopeNode {
  std::string name;              // full path ("layer1.0.conv1"); "" for the root
  std::string label;             // name relative to the parent ("conv1", "0")
  std::string cls;               // module class when known
  std::vector<std::string> ops;  // op types of the nodes directly in this scope, first-seen order
  Totals cost;                   // including all children
  // The parameters the module holds, as torch counts them (sum(p.numel() for p in m.parameters()): its own
  // and its children's, each tensor once, a tied one in every module holding it), where the model keeps its
  // module tree (Model::modules); unknown elsewhere. `cost.params` counts each tensor once in the whole
  // model, at its first user.
  Count params_held = Count::unknown();
  std::vector<std::unique_ptr<ScopeNode>> children;
  int depth = 0;
};

struct OpTypeReport {
  std::string op;
  int64_t count = 0;
  Count macs, flops, params, memory_bytes;
};

// What the cost pass computes, and nothing of the analyses above it: the report a command writes is an
// AnalysedReport (flopwise/analysed_report.h), this with their results.
struct Report {
  StringArena strings;  // the characters of `nodes`' names, op types, scopes and output names
  std::string path, format, producer;
  std::map<std::string, int64_t> opsets;
  std::string convention = "default";
  std::vector<std::pair<std::string, std::pair<DType, Shape>>> inputs, outputs;
  Totals totals;
  std::unique_ptr<ScopeNode> scopes;
  std::vector<OpTypeReport> op_types;  // sorted by FLOPs, descending
  std::vector<NodeReport> nodes;
  // The model is a joint training program (forward, loss and backward: torch.export's
  // _export_forward_backward): totals.backward_* are its own backward's counts, not the 2 x forward rule.
  bool joint = false;
  std::map<std::string, std::vector<std::string>> unsupported;  // op -> node names
  std::vector<std::string> warnings;
  std::vector<Assumption> assumptions;  // the formulas hold where these do (flopwise/infer.h)
  std::vector<DimAlias> aliases;        // declared dim names equal to expressions of the input dims
  std::vector<DataDepSymbol> symbols;   // sizes made up for data-dependent outputs (flopwise/infer.h)
  // Params and weight bytes by the type they are stored in, MACs by the type they run in (NodeReport::
  // mac_dtype); one entry per type present, in DType order. Their params and MACs sum to the totals.
  std::vector<DtypeCounts> by_dtype;
  std::vector<BranchParams> branch_params;  // params counted inside control-flow bodies, by node and body
  // A control-flow node's bodies node by node (index in `nodes` -> work), as its counts take them: their
  // MACs by precision are in by_dtype, and a roofline bounds each at its own precision. A node whose counts
  // are no one body's (flopwise/ops.h, OpCost::body) has none.
  std::map<size_t, std::shared_ptr<const std::vector<BodyWork>>> body_work;
  std::vector<std::string> notes;                // what the report is of, set by the caller (an LLM phase)
  std::shared_ptr<const CausalDiscount> causal;  // with --causal (CostOptions::causal)
  bool has_unknown_cost() const;
};

// Orders counts for "largest first": a known count by its value, a symbolic one by its value with
// every dim at 1000 (the leading term dominates), an unknown one last.
int64_t rank_value(const Count& c);

// Glob over full scope names, as budgets, --freeze and --checkpoint take them: `*` matches within one dotted
// segment, `**` across segments, `?` one character other than '.'. "layer4.*" matches layer4.0 and layer4.1,
// not layer4.0.conv1.
bool scope_glob_match(const std::string& pattern, const std::string& name);

// A node's op type as reports key it: "Conv", or "domain::Op" outside the default domain.
std::string op_key(const Node& n);
std::string op_key(const NodeReport& n);

// Costs every node of an inferred model and rolls them up. `infer` is the shape pass's result
// (its warnings and unsupported ops are carried into the report).
// `conv`: the counting convention of the FLOPs (flopwise/convention.h); MACs, params and bytes have none.
Report build_report(const Model& model, InferResult infer, const Convention& conv,
                    const CostOptions& opts = {});
Report build_report(const Model& model, InferResult infer);  // the default convention

}  // namespace flopwise
