// src/analysis/training_step.h — what the training step's files share (private to src/analysis): the
// rule-based step of a forward graph (training.cc: where tensors live and which train; training_backward.cc:
// each op's backward by its record's TrainFacts) and a joint program's own backward (training_joint.cc); the
// roll-up, optimizer and totals both end with (training_totals.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flopwise/cost.h"
#include "flopwise/ops.h"
#include "flopwise/stored_tensors.h"
#include "flopwise/training.h"

namespace flopwise::train_detail {

// The training facts of node n's op (flopwise/ops.h): its record's for its opset, else any record of the op
// (the facts are the same in each version), else the defaults of an op no rule covers.
const TrainFacts& facts_of(const Node& n);
// Its output is a view of its first input in torch: it shares the input's storage.
inline bool is_view(const TrainFacts& f) { return f.view != TrainView::none; }

// Which scopes a list of scope globs names (--freeze, --checkpoint; scope_glob_match, as budgets): a glob
// matching the scope or any scope above it; the region is the outermost scope matched.
class ScopeGlobs {
 public:
  explicit ScopeGlobs(const std::vector<std::string>& globs) : globs_(globs), used_(globs.size(), false) {}
  // The outermost scope of `scope`'s chain that a glob matches, or nullptr.
  const std::string* region(std::string_view scope);
  bool matches(std::string_view scope) { return region(scope) != nullptr; }
  std::vector<std::string> unused() const;

 private:
  const std::vector<std::string>& globs_;
  std::vector<bool> used_;
  std::unordered_map<std::string, std::optional<std::string>> memo_;
};

// The rule-based step's state over one forward graph, filled pass by pass.
struct Step {
  Step(const Model& model, const Report& report, const TrainOptions& opts, TrainingReport& t,
       bool scalar_literals);
  const Graph& g;
  const Report& report;
  const TrainOptions& opts;
  TrainingReport& t;
  const size_t n_nodes;        // the graph's nodes the report covers
  const bool scalar_literals;  // operands torch passed as Scalars (a .pt2's literals), not tensors
  ScopeGlobs freeze, checkpoint;
  cost_detail::WeightSources sources;
  std::vector<const TrainFacts*> facts;  // per node
  // Where tensors live (place_tensors): each node's --checkpoint region (its outermost checkpointed scope),
  // nullptr outside any; the stored tensors under each value (through layout-only ops of stored tensors
  // alone); the nodes that are such ops; the stored tensors a frozen scope uses; each value's storage.
  std::vector<const std::string*> region;
  std::vector<std::vector<int>> roots;
  std::vector<uint8_t> layout_of_stored, frozen_root;
  std::vector<int> storage;
  // --precision (assign_dtypes): 16-bit masters, autocast's mixed modes, their low dtype; each value's dtype.
  bool master = false, mixed = false;
  DType low = DType::BFloat16;
  std::vector<DType> adt;
  // The backward (count_backward): which values need a gradient, parameters seen, storages kept, autocast's
  // cached copies of parameters kept, nodes with a backward.
  std::vector<uint8_t> needs_grad, seen, kept, cast_kept, has_backward;
  std::vector<std::string> unknown_dropout;  // dropouts whose probability the graph computes
  Count trainable_bytes;
  int64_t trainable_tensors = 0;

  // A stored tensor's dtype under the master modes: every float32 tensor 16-bit.
  DType stored_dtype(DType d) const { return master && d == DType::Float32 ? low : d; }
  Count numel(int vi) const {
    return vi < 0 ? Count::unknown() : g.values[static_cast<size_t>(vi)].shape.numel_count();
  }
  Count bytes(int vi) const { return numel(vi) * Count{dtype_size(adt[static_cast<size_t>(vi)])}; }
};

// training.cc: storages, stored tensors' roots, checkpoint regions and frozen parameters, node by node.
void place_tensors(Step& s);
// training.cc: each value's dtype under --precision (torch.autocast's lists, or the master modes' 16 bits).
void assign_dtypes(Step& s);
// training.cc: the dtype of the copy autocast makes of node n's operand at `slot`, or Undefined where it
// takes it as is.
DType autocast_copy(const Step& s, const Node& n, size_t slot);
// training.cc: an ONNX Dropout's probability: its ratio input or attribute, 0.5 where neither is given;
// nullopt where the input is computed.
std::optional<double> dropout_ratio(const Graph& g, const Node& n);
// training_backward.cc: node i's backward (MACs, FLOPs, what it keeps, its transient) and the parameters it
// is the first user of, into s.t.
void count_backward(Step& s, size_t i);

// training_totals.cc: each node's counts (t.nodes) in its scope and every scope above it: t.total and
// t.scopes, pre-order.
void roll_up_training(TrainingReport& t, const Report& report);
// training_totals.cc: one gradient per trainable parameter and torch.optim's state and FLOPs
// (docs/COUNTING.md), for `trainable_bytes` in `trainable_tensors` tensors.
void count_optimizer(TrainingReport& t, const TrainOptions& opts, const Count& trainable_bytes,
                     int64_t trainable_tensors);
// training_totals.cc: per trained token (a [batch, seq] integer input) and the memory estimate, once
// t.forward_flops, t.total and the optimizer are counted.
void finish_training(TrainingReport& t, const Graph& g, const Report& report);
// training_totals.cc: --checkpoint: a region with a backward runs its forward again during it, every node.
void count_recompute(Step& s);
// training_totals.cc: the warnings of the rule-based step: unused globs, computed dropout probabilities, ops
// with no rule.
void warn_step(Step& s);
// training_joint.cc: a joint program's training step (Report::joint): its own backward node by node, the
// tensors that backward reads from the forward as what autograd keeps, the optimizer for its parameters.
TrainingReport analyse_joint_training(const Model& model, const Report& report, const TrainOptions& opts);

}  // namespace flopwise::train_detail
