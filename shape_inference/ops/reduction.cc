// shape_inference/ops/reduction.cc — reduction family: Reduce* (axes as input 1 after import normalisation,
// keepdims, noop_with_empty_axes) and ArgMax/ArgMin. FLOPs per docs/COUNTING.md: 1 per input element for the
// accumulation, plus the op's own elementwise step per input element (abs, square, exp) and its
// finishing step per output element (divide, sqrt, log), each counted as 1.
#include <algorithm>

#include "../helpers.h"

namespace flopwise {

namespace {

// What a Reduce node reduces, decoded once for the shape and cost rules.
struct ReduceDecoded {
  bool noop = false;          // empty axes with noop_with_empty_axes: output = input
  bool all = false;           // reduce every axis
  bool axes_known = true;     // false: axes input present but its contents unknown
  std::vector<int64_t> axes;  // as given (may be negative)
  bool keepdims = true;
};

ReduceDecoded decode_reduce(const Node& n, bool has_axes, const Shape* axes_shape,
                            const ConstData* axes_data) {
  ReduceDecoded d;
  d.keepdims = n.attr_i("keepdims", 1) != 0;
  bool noop_attr = n.attr_i("noop_with_empty_axes", 0) != 0;
  bool empty = !has_axes;
  if (has_axes) {
    if (axes_data && !axes_data->is_float) {
      for (const auto& a : axes_data->ints) {
        if (!a.is_known()) {
          d.axes_known = false;
          break;
        }
        d.axes.push_back(a.value());
      }
      if (d.axes_known) empty = d.axes.empty();
    } else if (axes_shape && axes_shape->rank_known && axes_shape->rank() == 1 &&
               axes_shape->dims[0].is_known() && axes_shape->dims[0].value() == 0) {
      empty = true;
    } else {
      d.axes_known = false;
    }
  }
  if (d.axes_known && empty) {
    if (noop_attr)
      d.noop = true;
    else
      d.all = true;
  }
  return d;
}

ReduceDecoded decode_reduce(const InferContext& c) {
  return decode_reduce(c.node(), c.has_input(1), c.has_input(1) ? &c.in_shape(1) : nullptr, c.in_data(1));
}
ReduceDecoded decode_reduce(const CostContext& c) {
  return decode_reduce(c.node, c.has_input(1), c.has_input(1) ? &c.in_shape(1) : nullptr, c.in_data(1));
}

// Output shape of reducing `in` over `reduced` (one flag per axis).
Shape reduced_shape(const Shape& in, const std::vector<bool>& reduced, bool keepdims) {
  std::vector<Dim> out;
  for (size_t i = 0; i < in.rank(); ++i) {
    if (!reduced[i])
      out.push_back(in.dims[i]);
    else if (keepdims)
      out.push_back(Dim(1));
  }
  return Shape(out);
}

// Folds a reduction of small integer contents (shape arithmetic: ReduceProd of a Shape is numel).
void fold_reduce(InferContext& c, const std::vector<bool>& reduced, Dim (*combine)(const Dim&, const Dim&)) {
  const ConstData* d = c.in_data(0);
  auto dims = known_dims(c.in_shape(0));
  Value* out = c.output(0);
  if (!combine || !d || d->is_float || !dims || !out) return;
  if (static_cast<int64_t>(d->size()) != product(*dims) || d->size() == 0) return;
  auto od = known_dims(out->shape);
  if (!od) return;
  std::vector<std::optional<Dim>> acc(static_cast<size_t>(product(*od)));
  std::vector<int64_t> idx(dims->size(), 0);
  for (size_t e = 0; e < d->size(); ++e) {
    int64_t o = 0;
    for (size_t j = 0; j < dims->size(); ++j)
      if (!reduced[j]) o = o * (*dims)[j] + idx[j];
    auto& a = acc[static_cast<size_t>(o)];
    a = a ? combine(*a, d->ints[e]) : d->ints[e];
    for (size_t j = dims->size(); j-- > 0;) {
      if (++idx[j] < (*dims)[j]) break;
      idx[j] = 0;
    }
  }
  ConstData res;
  for (auto& a : acc) res.ints.push_back(a ? *a : Dim());
  c.set_output_data(0, std::move(res));
}

void infer_reduce_impl(InferContext& c, Dim (*combine)(const Dim&, const Dim&)) {
  DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  ReduceDecoded d = decode_reduce(c);
  if (d.noop) {
    c.set_output(0, t, in);
    if (c.in_data(0)) c.set_output_data(0, *c.in_data(0));
    return;
  }
  if (!in.rank_known) {
    c.set_output(0, t, d.all && !d.keepdims ? Shape::scalar() : Shape::unknown_rank());
    return;
  }
  const int64_t rank = static_cast<int64_t>(in.rank());
  if (!d.axes_known) {
    // Which axes is unknown: with keepdims the rank survives; without, it drops by the number of
    // distinct axes, which repeated entries make unknowable.
    c.set_output(0, t, d.keepdims ? Shape::unknown_of_rank(in.rank()) : Shape::unknown_rank());
    return;
  }
  std::vector<bool> reduced(in.rank(), d.all);
  for (int64_t a : d.axes) {
    reduced[normalize_axis(c, a, rank)] = true;  // a repeated axis reduces once
  }
  c.set_output(0, t, reduced_shape(in, reduced, d.keepdims));
  fold_reduce(c, reduced, combine);
}

Dim add_dims(const Dim& a, const Dim& b) { return a + b; }
Dim mul_dims(const Dim& a, const Dim& b) { return a * b; }
Dim max_dims(const Dim& a, const Dim& b) { return Dim::max(a, b); }
Dim min_dims(const Dim& a, const Dim& b) { return Dim::min(a, b); }

void infer_reduce(InferContext& c) { infer_reduce_impl(c, nullptr); }
void infer_reduce_sum(InferContext& c) { infer_reduce_impl(c, add_dims); }
void infer_reduce_prod(InferContext& c) { infer_reduce_impl(c, mul_dims); }
void infer_reduce_max(InferContext& c) { infer_reduce_impl(c, max_dims); }
void infer_reduce_min(InferContext& c) { infer_reduce_impl(c, min_dims); }

// ---- ArgMax / ArgMin ----
void infer_arg(InferContext& c) {
  const Shape& in = c.in_shape(0);
  bool keepdims = c.node().attr_i("keepdims", 1) != 0;
  if (!in.rank_known) {
    c.set_output(0, DType::Int64, Shape::unknown_rank());
    return;
  }
  int64_t rank = static_cast<int64_t>(in.rank());
  if (rank == 0) c.fail("input must have rank >= 1");
  int64_t axis = normalize_axis(c, c.node().attr_i("axis", 0), rank);
  std::vector<bool> reduced(in.rank(), false);
  reduced[axis] = true;
  c.set_output(0, DType::Int64, reduced_shape(in, reduced, keepdims));
}

// ---- costs ----
// per_in: FLOPs per input element (accumulate, plus abs/square/exp); per_out: finishing FLOPs per
// output element (mean's divide, L2's sqrt, log). A noop reduction (empty axes) costs nothing.
OpCost cost_reduce_k(const CostContext& c, int64_t per_in, int64_t per_out) {
  if (decode_reduce(c).noop) return OpCost{Count{}, Count{}};
  Count f = c.in_numel(0) * Count{per_in};
  if (per_out) f += c.out_numel(0) * Count{per_out};
  return OpCost{Count{}, f};
}
OpCost cost_reduce_1_0(const CostContext& c) { return cost_reduce_k(c, 1, 0); }
OpCost cost_reduce_1_1(const CostContext& c) { return cost_reduce_k(c, 1, 1); }
OpCost cost_reduce_2_0(const CostContext& c) { return cost_reduce_k(c, 2, 0); }
OpCost cost_reduce_2_1(const CostContext& c) { return cost_reduce_k(c, 2, 1); }

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  const char* k_acc = "1 per input element (accumulate); 0 when noop with empty axes";
  reg(r, "ReduceSum", 1, 0, k_acc, infer_reduce_sum, cost_reduce_1_0);
  reg(r, "ReduceMax", 1, 0, "1 per input element (compare); 0 when noop with empty axes", infer_reduce_max,
      cost_reduce_1_0);
  reg(r, "ReduceMin", 1, 0, "1 per input element (compare); 0 when noop with empty axes", infer_reduce_min,
      cost_reduce_1_0);
  reg(r, "ReduceProd", 1, 0, "1 per input element (multiply); 0 when noop with empty axes", infer_reduce_prod,
      cost_reduce_1_0);
  reg(r, "ReduceMean", 1, 0, "1 per input element (add) + 1 per output element (divide)", infer_reduce,
      cost_reduce_1_1);
  reg(r, "ReduceL1", 1, 0, "2 per input element (abs, add)", infer_reduce, cost_reduce_2_0);
  reg(r, "ReduceSumSquare", 1, 0, "2 per input element (square, add)", infer_reduce, cost_reduce_2_0);
  reg(r, "ReduceL2", 1, 0, "2 per input element (square, add) + 1 per output element (sqrt)", infer_reduce,
      cost_reduce_2_1);
  reg(r, "ReduceLogSum", 1, 0, "1 per input element (add) + 1 per output element (log)", infer_reduce,
      cost_reduce_1_1);
  reg(r, "ReduceLogSumExp", 1, 0, "2 per input element (exp, add) + 1 per output element (log)", infer_reduce,
      cost_reduce_2_1);
  reg(r, "ArgMax", 1, 0, "1 per input element (compare)", infer_arg, cost_per_in_elem_1);
  reg(r, "ArgMin", 1, 0, "1 per input element (compare)", infer_arg, cost_per_in_elem_1);
  // --train (flopwise/ops.h, TrainFacts).
  train(r, "ReduceSum", TrainKeeps::nothing, TrainAutocast::fp32);
  train(r, "ReduceMean", TrainKeeps::nothing);
  train(r, "ReduceL2", TrainKeeps::input, TrainAutocast::fp32);
  for (const char* op : {"ReduceProd", "ReduceL1", "ReduceLogSumExp"}) train(r, op, TrainAutocast::fp32);
  for (const char* op : {"ReduceMax", "ReduceMin"}) train(r, op, TrainKeeps::input_and_result);
}

}  // namespace flopwise
