// shape_inference/ops/norm.cc — norm family: BatchNormalization, LayerNormalization, InstanceNormalization,
// GroupNormalization, LpNormalization, LRN, MeanVarianceNormalization, Softmax/LogSoftmax/Hardmax, Dropout.
// FLOPs per output element as each formula states (docs/COUNTING.md: LayerNorm 5 + 2 if affine,
// BatchNorm inference 2, Softmax 5).
#include "../helpers.h"

namespace flopwise {

namespace {

// Per-channel parameter `idx` ([C]) must match C.
void check_channel_param(InferContext& c, size_t idx, const Dim& channels, const char* what) {
  if (!c.has_input(idx)) return;
  const Shape& s = c.in_shape(idx);
  if (!s.rank_known) return;
  if (s.rank() != 1) c.fail(std::string(what) + " " + s.str() + " must be 1-D");
  merge_dim(c, s.dims[0], channels, what);
}

Dim channel_dim(const Shape& x) {
  if (!x.rank_known) return Dim::unknown();
  return x.rank() >= 2 ? x.dims[1] : Dim(1);  // rank-1 input [N]: C = 1
}

// ---- BatchNormalization ----------------------------------------------------------------------

// Y: X's shape. Training outputs (running mean/var; opset < 14 also saved mean/var): [C].
void infer_batch_norm(InferContext& c) {
  infer_same_as_input0(c);
  const Shape& x = c.in_shape(0);
  if (x.rank_known && x.rank() < 1) c.fail("input must have rank >= 1");
  Dim ch = channel_dim(x);
  // spatial=0 (opset < 9) makes the parameters [C, D1..Dn]; only check the usual 1-D layout.
  if (c.node().attr_i("spatial", 1) != 0) {
    const char* names[] = {"scale", "bias B", "mean", "var"};
    for (size_t i = 1; i <= 4; ++i) check_channel_param(c, i, ch, names[i - 1]);
  }
  DType stats = c.node().opset >= 14 && c.has_input(3) ? c.in_dtype(3) : c.in_dtype(0);
  for (size_t i = 1; i < c.num_outputs(); ++i) c.set_output(i, stats, Shape({ch}));
}

// Inference: 2 per element (folded scale and shift). Training: 7 per element (batch statistics as
// LayerNorm's 5, plus scale and shift); the [C]-sized running-stat updates are not counted.
OpCost cost_batch_norm(const CostContext& c) {
  return cost_per_out_elem(c, batch_norm_training(c.node) ? 7 : 2);
}

// ---- LayerNormalization ----------------------------------------------------------------------
// Y: X's shape; Mean, InvStdDev: X's shape with dims [axis, rank) set to 1, element type stash_type.
void infer_layer_norm(InferContext& c) {
  infer_same_as_input0(c);
  DType stash = static_cast<DType>(c.node().attr_i("stash_type", 1));
  const Shape& x = c.in_shape(0);
  Shape stats = Shape::unknown_rank();
  if (x.rank_known) {
    int64_t r = static_cast<int64_t>(x.rank());
    int64_t axis = normalize_axis(c, c.node().attr_i("axis", -1), r);
    stats = x;
    for (int64_t d = axis; d < r; ++d) stats.dims[d] = Dim(1);
    // Scale and B broadcast to the normalised dims X[axis:].
    for (size_t i = 1; i <= 2; ++i) {
      const Shape& s = c.in_shape(i);
      if (!c.has_input(i) || !s.rank_known) continue;
      if (static_cast<int64_t>(s.rank()) > r - axis)
        c.fail((i == 1 ? "Scale " : "B ") + s.str() + " has more dims than the normalised part of " +
               x.str());
    }
  }
  for (size_t i = 1; i <= 2; ++i)
    if (c.has_output(i)) c.set_output(i, stash, stats);
}

// 5 per element (mean, subtract, square, sum, normalise) + 1 if Scale + 1 if B.
OpCost cost_layer_norm(const CostContext& c) {
  return cost_per_out_elem(c, 5 + (c.has_input(1) ? 1 : 0) + (c.has_input(2) ? 1 : 0));
}

// ---- InstanceNormalization / GroupNormalization ----------------------------------------------
void infer_instance_norm(InferContext& c) {
  infer_same_as_input0(c);
  const Shape& x = c.in_shape(0);
  if (x.rank_known && x.rank() < 3) c.fail("input " + x.str() + " must have rank >= 3 (N, C, spatial...)");
  Dim ch = channel_dim(x);
  check_channel_param(c, 1, ch, "scale");
  check_channel_param(c, 2, ch, "bias B");
}

// GroupNormalization-18: scale and bias are [num_groups] (opset 21 changes them to [C]).
void infer_group_norm(InferContext& c) {
  infer_same_as_input0(c);
  const Shape& x = c.in_shape(0);
  int64_t groups = c.node().attr_i("num_groups", 0);
  if (groups <= 0) c.fail("num_groups must be positive (got " + std::to_string(groups) + ")");
  if (!x.rank_known) return;
  if (x.rank() < 2) c.fail("input " + x.str() + " must have rank >= 2 (N, C, ...)");
  Dim ch = x.dims[1];
  if (ch.is_known() && ch.value() % groups != 0)
    c.fail("channels " + std::to_string(ch.value()) + " not divisible by num_groups " +
           std::to_string(groups));
  Dim param = c.node().opset >= 21 ? ch : Dim(groups);
  check_channel_param(c, 1, param, "scale");
  check_channel_param(c, 2, param, "bias");
}

// ---- axis-checked same-shape ops -------------------------------------------------------------
// Softmax family: axis default 1 before opset 13 (input coerced to 2-D), -1 from 13; shape unchanged.
void infer_softmax(InferContext& c) {
  infer_same_as_input0(c);
  const Shape& x = c.in_shape(0);
  if (!x.rank_known) return;
  int64_t dflt = c.node().opset >= 13 ? -1 : 1;
  int64_t r = static_cast<int64_t>(x.rank());
  int64_t axis = c.node().attr_i("axis", dflt);
  if (r == 0 && c.node().opset < 13) return;  // coerced to [1, 1]
  normalize_axis(c, axis, std::max<int64_t>(r, 1));
}

void infer_lp_norm(InferContext& c) {
  infer_same_as_input0(c);
  const Shape& x = c.in_shape(0);
  int64_t p = c.node().attr_i("p", 2);
  if (p != 1 && p != 2) c.fail("p must be 1 or 2 (got " + std::to_string(p) + ")");
  if (x.rank_known) normalize_axis(c, c.node().attr_i("axis", -1), static_cast<int64_t>(x.rank()));
}

void infer_lrn(InferContext& c) {
  infer_same_as_input0(c);
  if (c.node().attr_i("size", 0) <= 0) c.fail("attribute size must be a positive integer");
}

// LRN: square 1, window sum `size`, then alpha/size mul, bias add, pow, divide: size + 5 per element.
OpCost cost_lrn(const CostContext& c) { return cost_per_out_elem(c, c.node.attr_i("size", 0) + 5); }

void infer_mvn(InferContext& c) {
  infer_same_as_input0(c);
  const Shape& x = c.in_shape(0);
  if (!x.rank_known) return;
  std::vector<int64_t> axes =
      c.node().has_attr("axes") ? c.node().attr_ints("axes") : std::vector<int64_t>{0, 2, 3};
  for (int64_t a : axes) normalize_axis(c, a, static_cast<int64_t>(x.rank()));
}

// Dropout: output = input (identity at inference); optional mask of X's shape, bool from opset 10.
void infer_dropout(InferContext& c) {
  infer_same_as_input0(c);
  if (c.has_output(1)) c.set_output(1, c.node().opset >= 10 ? DType::Bool : c.in_dtype(0), c.in_shape(0));
}

OpCost cost_5(const CostContext& c) { return cost_per_out_elem(c, 5); }
OpCost cost_7(const CostContext& c) { return cost_per_out_elem(c, 7); }
OpCost cost_lp_norm(const CostContext& c) { return cost_per_out_elem(c, 3); }

}  // namespace

bool batch_norm_training(const Node& n) {
  if (n.opset >= 14) return n.attr_i("training_mode", 0) != 0;
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0) return true;
  return false;
}

void register_norm_ops(OpRegistry& r) {
  reg(r, "BatchNormalization", 1, 0,
      "inference 2 per element (folded scale, shift); training 7 per element (statistics 5 + affine 2)",
      infer_batch_norm, cost_batch_norm);
  reg(r, "LayerNormalization", 17, 0,
      "5 per element (mean, subtract, square, sum, normalise) + 1 if Scale + 1 if B", infer_layer_norm,
      cost_layer_norm);
  reg(r, "InstanceNormalization", 1, 0, "7 per element (LayerNorm's 5 + scale + bias)", infer_instance_norm,
      cost_7);
  reg(r, "GroupNormalization", 18, 0, "7 per element (LayerNorm's 5 + scale + bias)", infer_group_norm,
      cost_7);
  reg(r, "MeanVarianceNormalization", 9, 0, "5 per element (mean, square, mean of squares, subtract, divide)",
      infer_mvn, cost_5);
  reg(r, "LpNormalization", 1, 0, "3 per element (abs or square, sum, divide); per-slice root not counted",
      infer_lp_norm, cost_lp_norm);
  reg(r, "LRN", 1, 0, "size + 5 per element (square, window sum, scale, bias, pow, divide)", infer_lrn,
      cost_lrn);
  reg(r, "Softmax", 1, 0, "5 per element (max, subtract, exp, sum, divide)", infer_softmax, cost_5);
  reg(r, "LogSoftmax", 1, 0, "5 per element (max, subtract, exp, sum, log-subtract)", infer_softmax, cost_5);
  reg(r, "Hardmax", 1, 0, "1 per element (argmax compare)", infer_softmax, cost_per_out_elem_1);
  reg(r, "Dropout", 1, 0, "0: identity at inference (training-mode masking not counted)", infer_dropout,
      cost_zero);
  // --train (flopwise/ops.h, TrainFacts).
  train(r, "BatchNormalization", TrainKeeps::input_and_channel_stats, TrainForward::batch_norm);
  train(r, "LayerNormalization", TrainKeeps::input_and_row_stats, TrainAutocast::fp32);
  for (const char* op : {"GroupNormalization", "LpNormalization"}) train(r, op, TrainAutocast::fp32);
  for (const char* op : {"Softmax", "LogSoftmax"}) train(r, op, TrainKeeps::result, TrainAutocast::fp32);
  train(r, "Dropout", TrainKeeps::mask, TrainForward::dropout);
  // Weight facts (flopwise/ops.h, WeightFacts): scale and bias; BatchNormalization's running mean and
  // var are buffers. All but InstanceNormalization normalise over the features a tensor-parallel split cuts.
  weights(r, "BatchNormalization", Learned{slots({1, 2})}, Buffers{slots({3, 4})}, NeedsWhole{});
  for (const char* op : {"LayerNormalization", "GroupNormalization"})
    weights(r, op, Learned{slots_from(1)}, NeedsWhole{});
  weights(r, "InstanceNormalization", Learned{slots_from(1)});
  // ONNX's RMSNormalization (opset 23) has no record (its nodes are unsupported), but its scale is a weight.
  unrecorded_weights(r, "", "RMSNormalization", Learned{slots_from(1)}, NeedsWhole{});
}

}  // namespace flopwise
