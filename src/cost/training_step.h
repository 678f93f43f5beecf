// src/cost/training_step.h — what the training step's two analyses share (private to src/cost): the
// rule-based one of a forward graph (training.cc) and a joint program's own backward (training_joint.cc).
#pragma once

#include <cstdint>

#include "flopwise/cost.h"
#include "flopwise/training.h"

namespace flopwise::cost_detail {

// Ops whose output is a view of their first input in torch (reshape of a contiguous tensor, transpose,
// slice, split, expand): it shares the input's storage.
bool view_op(const Node& n);
// Each node's counts (t.nodes) in its scope and every scope above it: t.total and t.scopes, pre-order.
void roll_up_training(TrainingReport& t, const Report& report);
// One gradient per trainable parameter and torch.optim's state and FLOPs (docs/COUNTING.md), for
// `trainable_bytes` in `trainable_tensors` tensors.
void count_optimizer(TrainingReport& t, const TrainOptions& opts, const Count& trainable_bytes,
                     int64_t trainable_tensors);
// Per trained token (a [batch, seq] integer input) and the memory estimate, once t.forward_flops, t.total and
// the optimizer are counted.
void finish_training(TrainingReport& t, const Graph& g, const Report& report);
// A joint program's training step (Report::joint): its own backward node by node, the tensors that backward
// reads from the forward as what autograd keeps, the optimizer for the parameters it holds.
TrainingReport analyse_joint_training(const Model& model, const Report& report, const TrainOptions& opts);

}  // namespace flopwise::cost_detail
