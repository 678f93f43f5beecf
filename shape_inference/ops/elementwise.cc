// shape_inference/ops/elementwise.cc — elementwise family: unary math and activations, binary arithmetic and
// comparison, logic, Where, casts between element types. FLOPs per output element per docs/COUNTING.md.
#include <cmath>

#include "../helpers.h"

namespace flopwise {

namespace {

// ---- shape rules ----
void infer_unary(InferContext& c) {
  infer_same_as_input0(c);
  fold_elementwise(c, nullptr, nullptr);
}

// Unary ops that appear in shape arithmetic (Range's length via Ceil, Relu as max(0, x)) fold their
// known contents; integers stay exact, floats go through double.
void infer_fold_unary(InferContext& c, Dim (*fi)(const Dim&), double (*ff)(double)) {
  infer_same_as_input0(c);
  fold_elementwise(
      c,
      fi ? std::function<Dim(const std::vector<Dim>&)>([fi](const std::vector<Dim>& a) { return fi(a[0]); })
         : nullptr,
      [ff](const std::vector<double>& a) { return ff(a[0]); });
}
Dim int_identity(const Dim& d) { return d; }
void infer_relu(InferContext& c) {
  infer_fold_unary(
      c, [](const Dim& d) { return d.is_known() ? Dim(d.value() < 0 ? 0 : d.value()) : Dim(); },
      [](double x) { return x < 0 ? 0.0 : x; });
}
// Floor/Ceil of a float Div of exact integers (floor(seq / 2.0), a size computed in float): the float Div
// keeps only exact quotients, so a scalar Floor/Ceil looks through it to floor_div/ceil_div of its operands.
void fold_rounded_quotient(InferContext& c, bool ceil) {
  const Value* x = c.input(0);
  Value* out = c.output(0);
  if (!x || !out ||
      (out->data && !out->data->is_float && out->data->ints.size() == 1 && !out->data->ints[0].is_unknown()))
    return;
  if (x->producer < 0 || !x->shape.rank_known || x->shape.rank() > 1) return;
  const Node& div = c.graph().nodes[static_cast<size_t>(x->producer)];
  if (div.op != "Div" || div.inputs.size() != 2 || div.inputs[0] < 0 || div.inputs[1] < 0) return;
  const Value& a = c.graph().values[static_cast<size_t>(div.inputs[0])];
  const Value& b = c.graph().values[static_cast<size_t>(div.inputs[1])];
  if (!a.data || !b.data || a.data->size() != 1 || b.data->size() != 1) return;
  auto ia = exact_ints(*a.data), ib = exact_ints(*b.data);
  if (!ia || !ib) return;
  Dim q = ceil ? Dim::ceil_div((*ia)[0], (*ib)[0]) : Dim::floor_div((*ia)[0], (*ib)[0]);
  if (q.is_unknown()) return;
  c.set_output_data(0, is_float(out->dtype) ? float_valued({q}) : ConstData{{q}, {}, false});
}
void infer_ceil(InferContext& c) {
  infer_fold_unary(c, int_identity, [](double x) { return std::ceil(x); });
  fold_rounded_quotient(c, true);
}
void infer_floor(InferContext& c) {
  infer_fold_unary(c, int_identity, [](double x) { return std::floor(x); });
  fold_rounded_quotient(c, false);
}
void infer_round(InferContext& c) {
  infer_fold_unary(c, int_identity, [](double x) { return std::nearbyint(x); });
}
void infer_sqrt(InferContext& c) {
  infer_fold_unary(c, nullptr, [](double x) { return std::sqrt(x); });
}
void infer_sign(InferContext& c) {
  infer_fold_unary(
      c,
      [](const Dim& d) { return d.is_known() ? Dim(d.value() > 0 ? 1 : (d.value() < 0 ? -1 : 0)) : Dim(); },
      [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); });
}

void infer_neg(InferContext& c) {
  infer_same_as_input0(c);
  fold_elementwise(
      c, [](const std::vector<Dim>& a) { return Dim(0) - a[0]; },
      [](const std::vector<double>& a) { return -a[0]; });
}
void infer_abs(InferContext& c) {
  infer_same_as_input0(c);
  fold_elementwise(
      c,
      [](const std::vector<Dim>& a) {
        auto v = a[0].maybe_value();
        return v ? (*v == INT64_MIN ? Dim() : Dim(*v < 0 ? -*v : *v)) : (a[0].is_symbolic() ? a[0] : Dim());
      },
      [](const std::vector<double>& a) { return std::fabs(a[0]); });
}

void infer_to_bool(InferContext& c) {  // comparisons and logic: broadcast, bool output
  infer_broadcast(c, DType::Bool);
}

#define FW_BINARY_FOLD(NAME, IEXPR, FEXPR)                                         \
  void NAME(InferContext& c) {                                                     \
    infer_broadcast(c);                                                            \
    fold_elementwise(                                                              \
        c, [](const std::vector<Dim>& a) -> Dim { return IEXPR; },                 \
        [](const std::vector<double>& a) -> double { return FEXPR; }, nullptr, 2); \
  }
FW_BINARY_FOLD(infer_add, a[0] + a[1], a[0] + a[1])
FW_BINARY_FOLD(infer_sub, a[0] - a[1], a[0] - a[1])
FW_BINARY_FOLD(infer_mul, a[0] * a[1], a[0] * a[1])
// Integer Div truncates toward zero in ONNX; floor_div equals it for non-negative shape values. A float
// Div of exact integers (sizes cast to float) stays exact only where the quotient is.
void infer_div(InferContext& c) {
  infer_broadcast(c);
  fold_elementwise(
      c,
      [](const std::vector<Dim>& a) -> Dim {
        return (a[0].is_known() && a[1].is_known() && a[1].value() != 0) ? Dim(a[0].value() / a[1].value())
                                                                         : a[0] / a[1];
      },
      [](const std::vector<double>& a) -> double { return a[0] / a[1]; },
      [](const std::vector<Dim>& a) -> Dim { return a[0] / a[1]; }, 2);
}
FW_BINARY_FOLD(infer_mod, Dim::mod(a[0], a[1]), std::fmod(a[0], a[1]))
#undef FW_BINARY_FOLD

void infer_variadic_minmax(InferContext& c, bool is_max) {
  infer_broadcast(c);
  if (is_max)
    fold_elementwise(
        c,
        [](const std::vector<Dim>& a) {
          Dim r = a[0];
          for (size_t i = 1; i < a.size(); ++i) r = Dim::max(r, a[i]);
          return r;
        },
        [](const std::vector<double>& a) {
          double r = a[0];
          for (double x : a) r = std::max(r, x);
          return r;
        });
  else
    fold_elementwise(
        c,
        [](const std::vector<Dim>& a) {
          Dim r = a[0];
          for (size_t i = 1; i < a.size(); ++i) r = Dim::min(r, a[i]);
          return r;
        },
        [](const std::vector<double>& a) {
          double r = a[0];
          for (double x : a) r = std::min(r, x);
          return r;
        });
}
void infer_max(InferContext& c) { infer_variadic_minmax(c, true); }
void infer_min(InferContext& c) { infer_variadic_minmax(c, false); }

void infer_sum_mean(InferContext& c) { infer_broadcast(c); }
void infer_pow(InferContext& c) { infer_broadcast(c); }

void infer_equal(InferContext& c) {
  infer_broadcast(c, DType::Bool);
  fold_elementwise(
      c,
      [](const std::vector<Dim>& a) {
        auto o = Dim::compare(a[0], a[1]);  // sizes are >= 0: seq == -1 is false
        return o ? Dim(*o == 0 ? 1 : 0) : Dim();
      },
      [](const std::vector<double>& a) { return a[0] == a[1] ? 1.0 : 0.0; }, nullptr, 2);
}
void infer_less(InferContext& c) {
  infer_broadcast(c, DType::Bool);
  fold_elementwise(
      c,
      [](const std::vector<Dim>& a) {
        auto o = Dim::compare(a[0], a[1]);
        return o ? Dim(*o < 0 ? 1 : 0) : Dim();
      },
      [](const std::vector<double>& a) { return a[0] < a[1] ? 1.0 : 0.0; }, nullptr, 2);
}
void infer_greater(InferContext& c) {
  infer_broadcast(c, DType::Bool);
  fold_elementwise(
      c,
      [](const std::vector<Dim>& a) {
        auto o = Dim::compare(a[0], a[1]);
        return o ? Dim(*o > 0 ? 1 : 0) : Dim();
      },
      [](const std::vector<double>& a) { return a[0] > a[1] ? 1.0 : 0.0; }, nullptr, 2);
}
void infer_not(InferContext& c) {
  c.set_output(0, DType::Bool, c.in_shape(0));
  fold_elementwise(
      c, [](const std::vector<Dim>& a) { return a[0].is_known() ? Dim(a[0].value() ? 0 : 1) : Dim(); },
      nullptr);
}

void infer_where(InferContext& c) {
  std::vector<Shape> shapes{c.in_shape(0), c.in_shape(1), c.in_shape(2)};
  c.set_output(0, c.in_dtype(1), broadcast_shapes(c, shapes));
  fold_elementwise(
      c,
      [](const std::vector<Dim>& a) {
        if (!a[0].is_known()) return a[1].same_as(a[2]) ? a[1] : Dim();
        return a[0].value() ? a[1] : a[2];
      },
      [](const std::vector<double>& a) { return a[0] != 0 ? a[1] : a[2]; }, nullptr, 3);
}

// Input 0 converted to `to`, its contents too when known (shape arithmetic passes through casts).
void cast_to(InferContext& c, DType to) {
  c.set_output(0, to, c.in_shape(0));
  const ConstData* d = c.in_data(0);
  if (!d) return;
  ConstData out;
  if (is_float(to)) {
    // A size cast to float keeps its exact (maybe symbolic) value: float shape arithmetic follows.
    out = d->is_float ? *d : float_valued(d->ints);
  } else if (is_integer(to)) {
    if (d->is_float) {
      for (double f : d->floats)
        out.ints.push_back(to == DType::Bool ? Dim(f != 0) : (trunc_int64(f) ? Dim(*trunc_int64(f)) : Dim()));
    } else {
      out.ints = d->ints;
      if (to == DType::Bool)
        for (auto& x : out.ints) x = x.is_known() ? Dim(x.value() != 0) : Dim();
    }
  } else {
    return;
  }
  c.set_output_data(0, std::move(out));
}

void infer_cast(InferContext& c) { cast_to(c, static_cast<DType>(c.node().attr_i("to", 0))); }
// torch_lib's rank tests (CastLike(2, Size(Shape(x))) == rank) fold through the contents.
void infer_cast_like(InferContext& c) { cast_to(c, c.in_dtype(1)); }

void infer_clip(InferContext& c) { infer_same_as_input0(c); }

void infer_prelu(InferContext& c) {
  // Slope broadcasts unidirectionally to X; output is X's shape.
  infer_same_as_input0(c);
}

void infer_bitshift_like(InferContext& c) { infer_broadcast(c); }

void infer_isnan(InferContext& c) { c.set_output(0, DType::Bool, c.in_shape(0)); }

// ---- cost rules ----
OpCost cost_1(const CostContext& c) { return cost_per_out_elem_1(c); }
// Variadic Sum/Max/Min: (n-1) operations per output element.
OpCost cost_variadic(const CostContext& c) {
  int64_t n = 0;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) n += c.has_input(i) ? 1 : 0;
  return cost_per_out_elem(c, n > 1 ? n - 1 : 0);
}
// Mean: n-1 adds + 1 divide.
OpCost cost_mean(const CostContext& c) {
  int64_t n = 0;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) n += c.has_input(i) ? 1 : 0;
  return cost_per_out_elem(c, n);
}
// GELU as its decomposition: x * 0.5 * (1 + erf(x / sqrt(2))) = div, erf, add, mul, mul.
OpCost cost_gelu(const CostContext& c) { return cost_per_out_elem(c, 5); }
// Softplus log(exp(x) + 1): exp, add, log.
OpCost cost_softplus(const CostContext& c) { return cost_per_out_elem(c, 3); }
// Softsign x / (1 + |x|): abs, add, div.
OpCost cost_3(const CostContext& c) { return cost_per_out_elem(c, 3); }
// Elu/Selu/Celu: compare, exp, sub, mul (negative branch), mul for selu scale.
OpCost cost_4(const CostContext& c) { return cost_per_out_elem(c, 4); }
// HardSigmoid max(0, min(1, a*x + b)): mul, add, min, max. HardSwish: that and one mul.
OpCost cost_hardswish(const CostContext& c) { return cost_per_out_elem(c, 5); }
// Mish x * tanh(softplus(x)): exp, add, log, tanh, mul.
OpCost cost_mish(const CostContext& c) { return cost_per_out_elem(c, 5); }
// Clip: min and max, only for the bounds present; Sigmoid 1/(1+exp(-x)) counted as 1 (transcendental).
OpCost cost_clip(const CostContext& c) {
  int64_t k = (c.has_input(1) ? 1 : 0) + (c.has_input(2) ? 1 : 0);
  return cost_per_out_elem(c, k ? k : 1);
}
OpCost cost_2(const CostContext& c) { return cost_per_out_elem(c, 2); }

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  const char* k1 = "1 per output element";
  // Binary arithmetic with constant folding.
  reg(r, "Add", 1, 0, k1, infer_add, cost_1);
  reg(r, "Sub", 1, 0, k1, infer_sub, cost_1);
  reg(r, "Mul", 1, 0, k1, infer_mul, cost_1);
  reg(r, "Div", 1, 0, k1, infer_div, cost_1);
  reg(r, "Mod", 10, 0, k1, infer_mod, cost_1);
  reg(r, "Pow", 1, 0, "1 per output element (transcendental)", infer_pow, cost_1);
  reg(r, "Max", 1, 0, "(inputs - 1) per output element", infer_max, cost_variadic);
  reg(r, "Min", 1, 0, "(inputs - 1) per output element", infer_min, cost_variadic);
  reg(r, "Sum", 1, 0, "(inputs - 1) per output element", infer_sum_mean, cost_variadic);
  reg(r, "Mean", 1, 0, "inputs per output element ((n-1) adds, 1 divide)", infer_sum_mean, cost_mean);
  reg(r, "BitShift", 11, 0, k1, infer_bitshift_like, cost_1);
  reg(r, "BitwiseAnd", 18, 0, k1, infer_bitshift_like, cost_1);
  reg(r, "BitwiseOr", 18, 0, k1, infer_bitshift_like, cost_1);
  reg(r, "BitwiseXor", 18, 0, k1, infer_bitshift_like, cost_1);
  reg(r, "BitwiseNot", 18, 0, k1, infer_unary, cost_1);
  // Comparison and logic.
  reg(r, "Equal", 1, 0, k1, infer_equal, cost_1);
  reg(r, "Less", 1, 0, k1, infer_less, cost_1);
  reg(r, "Greater", 1, 0, k1, infer_greater, cost_1);
  reg(r, "LessOrEqual", 12, 0, k1, infer_to_bool, cost_1);
  reg(r, "GreaterOrEqual", 12, 0, k1, infer_to_bool, cost_1);
  reg(r, "And", 1, 0, k1, infer_to_bool, cost_1);
  reg(r, "Or", 1, 0, k1, infer_to_bool, cost_1);
  reg(r, "Xor", 1, 0, k1, infer_to_bool, cost_1);
  reg(r, "Not", 1, 0, k1, infer_not, cost_1);
  reg(r, "Where", 9, 0, "1 per output element (select)", infer_where, cost_1);
  reg(r, "IsNaN", 9, 0, k1, infer_isnan, cost_1);
  reg(r, "IsInf", 10, 0, k1, infer_isnan, cost_1);
  // Unary arithmetic and transcendental: 1 per output element.
  reg(r, "Relu", 1, 0, k1, infer_relu, cost_1);
  reg(r, "Ceil", 1, 0, k1, infer_ceil, cost_1);
  reg(r, "Floor", 1, 0, k1, infer_floor, cost_1);
  reg(r, "Round", 11, 0, k1, infer_round, cost_1);
  reg(r, "Sqrt", 1, 0, k1, infer_sqrt, cost_1);
  reg(r, "Sign", 9, 0, k1, infer_sign, cost_1);
  for (const char* op :
       {"LeakyRelu", "ThresholdedRelu", "Reciprocal", "Exp", "Log", "Erf", "Tanh", "Sigmoid", "Sin", "Cos",
        "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}) {
    reg(r, op, 1, 0, k1, infer_unary, cost_1);
  }
  reg(r, "Abs", 1, 0, k1, infer_abs, cost_1);
  reg(r, "Neg", 1, 0, k1, infer_neg, cost_1);
  reg(r, "PRelu", 1, 0, "1 per output element", infer_prelu, cost_1);
  reg(r, "Clip", 1, 0, "1 per bound present per output element", infer_clip, cost_clip);
  reg(r, "Elu", 1, 0, "4 per output element (compare, exp, sub, mul)", infer_unary, cost_4);
  reg(r, "Selu", 1, 0, "4 per output element (compare, exp, sub, mul)", infer_unary, cost_4);
  reg(r, "Celu", 12, 0, "4 per output element (compare, exp, sub, mul)", infer_unary, cost_4);
  reg(r, "HardSigmoid", 1, 0, "4 per output element (mul, add, min, max)", infer_unary, cost_4);
  reg(r, "HardSwish", 14, 0, "5 per output element (hardsigmoid, mul)", infer_unary, cost_hardswish);
  reg(r, "Softplus", 1, 0, "3 per output element (exp, add, log)", infer_unary, cost_softplus);
  reg(r, "Softsign", 1, 0, "3 per output element (abs, add, div)", infer_unary, cost_3);
  reg(r, "Mish", 18, 0, "5 per output element (exp, add, log, tanh, mul)", infer_unary, cost_mish);
  reg(r, "Gelu", 20, 0, "5 per output element (div, erf, add, mul, mul)", infer_unary, cost_gelu);
  reg(r, "Shrink", 9, 0, "2 per output element (compare, add)", infer_unary, cost_2);
  // Element type changes: no arithmetic.
  reg(r, "Cast", 1, 0, "layout only (element type conversion)", infer_cast, cost_zero);
  reg(r, "CastLike", 15, 0, "layout only (element type conversion)", infer_cast_like, cost_zero);
  // --train (flopwise/ops.h, TrainFacts): what the backward keeps (derivatives.yaml); in place, autograd
  // copies the input a formula reads before the op overwrites it (hardswish_, clamp_), unless torch's
  // in-place formula reads the result (leaky_relu_, elu_: InputOrResult). Measured: models/train_keep.py.
  for (const char* op : {"Add", "Sub", "Neg", "Sum", "Mean"}) train(r, op, TrainKeeps::nothing);
  train(r, "Mul", TrainKeeps::other_operand);
  train(r, "Div", TrainKeeps::divisor);
  train(r, "Where", TrainKeeps::first_input);  // the condition
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Sqrt"}) train(r, op, TrainKeeps::result);
  for (const char* op : {"Exp", "Reciprocal"}) train(r, op, TrainKeeps::result, TrainAutocast::fp32);
  for (const char* op : {"LeakyRelu", "Elu", "Selu", "Celu"}) train(r, op, TrainKeeps::input_or_result);
  for (const char* op : {"Gelu", "Erf", "Abs", "Sin", "Cos", "HardSigmoid", "HardSwish", "Softsign", "Mish",
                         "Clip", "ThresholdedRelu"})
    train(r, op, TrainKeeps::input);
  for (const char* op : {"Log", "Pow", "Softplus"}) train(r, op, TrainKeeps::input, TrainAutocast::fp32);
  for (const char* op : {"Tan", "Sinh", "Cosh", "Asin", "Acos"}) train(r, op, TrainAutocast::fp32);
  train(r, "PRelu", TrainKeeps::input_and_slope, TrainAutocast::low);
  train(r, "Cast", TrainKeeps::nothing, TrainAutocast::own, MovesElements{});
  train(r, "CastLike", TrainAutocast::own);
  // Weight facts (flopwise/ops.h, WeightFacts): PRelu's slope; a tensor applied to an activation by
  // the binary arithmetic (a decomposed norm's scale and shift, a Linear's bias add).
  weights(r, "PRelu", Learned{slots_from(1)});
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) weights(r, op, ElementwiseParams{});
}

}  // namespace flopwise
