// shape_inference/ops/generator.cc — generator family: ops that make tensors from attributes or from a shape
// (Constant, ConstantOfShape, Range, EyeLike) and random generators. Deterministic generators do no
// arithmetic (values are written, not computed); random ones count one FLOP per value drawn.
#include <cmath>

#include "../helpers.h"

namespace flopwise {

namespace {

DType attr_dtype(const Node& n, DType dflt) {
  return n.has_attr("dtype") ? static_cast<DType>(n.attr_i("dtype", 0)) : dflt;
}

// ---- Constant ----
// Exactly one of value / sparse_value (11+) / value_float(s) / value_int(s) / value_string(s) (12+).
void infer_constant(InferContext& c) {
  const Node& n = c.node();
  for (const char* k : {"value", "sparse_value"}) {
    auto it = n.attrs.find(k);
    if (it == n.attrs.end() || it->second.kind != Attribute::Kind::Tensor) continue;
    const TensorAttr& t = it->second.tensor;
    c.set_output(0, t.dtype, Shape(std::vector<Dim>(t.dims.begin(), t.dims.end())));
    if (t.data && std::string(k) == "value") c.set_output_data(0, *t.data);
    return;
  }
  auto vec = [](size_t len) { return Shape({Dim(static_cast<int64_t>(len))}); };
  if (n.has_attr("value_float")) {
    c.set_output(0, DType::Float32, Shape::scalar());
    ConstData d;
    d.is_float = true;
    d.floats = {n.attr_f("value_float", 0)};
    c.set_output_data(0, std::move(d));
  } else if (n.has_attr("value_floats")) {
    auto v = n.attr_floats("value_floats");
    c.set_output(0, DType::Float32, vec(v.size()));
    ConstData d;
    d.is_float = true;
    d.floats = v;
    c.set_output_data(0, std::move(d));
  } else if (n.has_attr("value_int")) {
    c.set_output(0, DType::Int64, Shape::scalar());
    ConstData d;
    d.ints = {Dim(n.attr_i("value_int", 0))};
    c.set_output_data(0, std::move(d));
  } else if (n.has_attr("value_ints")) {
    auto v = n.attr_ints("value_ints");
    c.set_output(0, DType::Int64, vec(v.size()));
    ConstData d;
    for (auto x : v) d.ints.push_back(Dim(x));
    c.set_output_data(0, std::move(d));
  } else if (n.has_attr("value_string")) {
    c.set_output(0, DType::String, Shape::scalar());
  } else if (n.has_attr("value_strings")) {
    c.set_output(0, DType::String, vec(n.attrs.at("value_strings").strings.size()));
  }
  // No value attribute: the model is malformed; the output stays unknown.
}

// ---- ConstantOfShape ----
// Output shape = contents of input 0 (1-D int64); element type and fill value from the one-element
// `value` tensor (default float32 0).
void infer_constant_of_shape(InferContext& c) {
  const Node& n = c.node();
  DType t = DType::Float32;
  ConstData fill;
  fill.is_float = true;
  fill.floats = {0.0};
  auto it = n.attrs.find("value");
  if (it != n.attrs.end() && it->second.kind == Attribute::Kind::Tensor) {
    t = it->second.tensor.dtype;
    if (it->second.tensor.data && it->second.tensor.data->size() == 1)
      fill = *it->second.tensor.data;
    else
      fill = ConstData{};  // fill value not known
  }
  c.set_output_dtype(0, t);
  const Shape& in = c.in_shape(0);
  if (in.rank_known && in.rank() != 1) c.fail("shape input must be 1-D, got " + in.str());
  const ConstData* d = c.in_data(0);
  if (!d || d->is_float) {
    // Rank is the length of the shape input when that is known.
    if (in.rank_known && in.dims[0].is_known())
      c.set_output(0, t, Shape::unknown_of_rank(static_cast<size_t>(in.dims[0].value())));
    else
      c.set_output(0, t, Shape::unknown_rank());
    return;
  }
  for (const auto& x : d->ints)
    if (x.is_known() && x.value() < 0)
      c.fail("negative dim " + std::to_string(x.value()) + " in shape input");
  Shape out(d->ints);
  c.set_output(0, t, out);
  auto od = known_dims(out);
  if (!od || product(*od) > limits().max_const_elements || fill.size() != 1) return;
  ConstData res;
  res.is_float = fill.is_float;
  int64_t count = product(*od);
  if (fill.is_float)
    res.floats.assign(static_cast<size_t>(count), fill.floats[0]);
  else
    res.ints.assign(static_cast<size_t>(count), fill.ints[0]);
  c.set_output_data(0, std::move(res));
}

// ---- Range ----
// length = max(ceil((limit - start) / delta), 0). With symbolic operands and a known positive
// delta the length is the exact quotient (limit - start) / delta, or unknown when not exact; symbolic
// operands are shape values, so limit >= start is taken as given.
struct RangeDecoded {
  Dim length;  // unknown when not derivable
  bool is_float = false;
  std::vector<double> f;  // start, limit, delta (float case, all known)
  Dim start, delta;       // integer case
};

RangeDecoded decode_range(const InferContext& c) {
  RangeDecoded r;
  const ConstData* ds = c.in_data(0);
  const ConstData* dl = c.in_data(1);
  const ConstData* dd = c.in_data(2);
  if (!ds || !dl || !dd || ds->size() != 1 || dl->size() != 1 || dd->size() != 1) return r;
  const bool some_float = ds->is_float || dl->is_float || dd->is_float;
  const bool some_symbolic = (!ds->is_float && !ds->ints[0].is_known()) ||
                             (!dl->is_float && !dl->ints[0].is_known()) ||
                             (!dd->is_float && !dd->ints[0].is_known());
  if (some_float && !some_symbolic) {
    auto s = c.in_floats(0), l = c.in_floats(1), d = c.in_floats(2);
    if (!s || !l || !d || (*d)[0] == 0) return r;
    double len = std::ceil(((*l)[0] - (*s)[0]) / (*d)[0]);
    if (!(len < 9e18)) return r;  // NaN or beyond int64
    r.length = Dim(static_cast<int64_t>(len > 0 ? len : 0));
    r.is_float = true;
    r.f = {(*s)[0], (*l)[0], (*d)[0]};
    return r;
  }
  // Integers, or a float range over exact integers of which some are symbolic (arange(seq) in float).
  auto is = exact_ints(*ds), il = exact_ints(*dl), id = exact_ints(*dd);
  if (!is || !il || !id) return r;
  r.start = (*is)[0];
  r.delta = (*id)[0];
  const Dim limit = (*il)[0];
  if (!r.delta.is_known() || r.delta.value() == 0) return r;
  if (r.start.is_known() && limit.is_known()) {
    Dim q = Dim::ceil_div(limit - r.start, r.delta);
    r.length = q.is_known() ? Dim(std::max<int64_t>(q.value(), 0)) : Dim();
  } else if (r.delta.value() > 0) {
    r.length = Dim::ceil_div(limit - r.start, r.delta);  // exact quotient or unknown
  }
  return r;
}

void infer_range(InferContext& c) {
  DType t = c.in_dtype(0);
  for (size_t i = 0; i < 3; ++i) {
    const Shape& s = c.in_shape(i);
    if (s.rank_known && !(s.rank() == 0 || (s.rank() == 1 && s.dims[0].is_known() && s.dims[0].value() == 1)))
      c.fail("input " + std::to_string(i) + " must be a scalar, got " + s.str());
  }
  RangeDecoded r = decode_range(c);
  c.set_output(0, t, Shape({r.length}));
  if (!r.length.is_known() || r.length.value() > limits().max_const_elements) return;
  if (!r.is_float && is_float(t)) {  // exact integers in a float tensor
    std::vector<Dim> xs;
    for (int64_t i = 0; i < r.length.value(); ++i) xs.push_back(r.start + Dim(i) * r.delta);
    c.set_output_data(0, float_valued(std::move(xs)));
    return;
  }
  ConstData d;
  d.is_float = r.is_float && is_float(t);
  for (int64_t i = 0; i < r.length.value(); ++i) {
    if (r.is_float) {
      double v = r.f[0] + static_cast<double>(i) * r.f[2];
      if (d.is_float)
        d.floats.push_back(v);
      else
        d.ints.push_back(trunc_int64(v) ? Dim(*trunc_int64(v)) : Dim());
    } else {
      d.ints.push_back(r.start + Dim(i) * r.delta);
    }
  }
  c.set_output_data(0, std::move(d));
}

// ---- EyeLike ----
void infer_eye_like(InferContext& c) {
  const Shape& s = c.in_shape(0);
  if (s.rank_known && s.rank() != 2) c.fail("input must be 2-D, got " + s.str());
  c.set_output(0, attr_dtype(c.node(), c.in_dtype(0)), s.rank_known ? s : Shape::unknown_of_rank(2));
}

// ---- random generators ----
void infer_random_shape_attr(InferContext& c) {  // RandomNormal, RandomUniform: shape attribute
  auto dims = c.node().attr_ints("shape");
  for (auto x : dims)
    if (x < 0) c.fail("negative dim " + std::to_string(x) + " in shape attribute");
  DType t = attr_dtype(c.node(), DType::Float32);
  if (!c.node().has_attr("shape")) {
    c.set_output(0, t, Shape::unknown_rank());
    return;
  }
  c.set_output(0, t, Shape(std::vector<Dim>(dims.begin(), dims.end())));
}

void infer_random_like(InferContext& c) {  // *Like and Bernoulli: input's shape, dtype attr or input's
  c.set_output(0, attr_dtype(c.node(), c.in_dtype(0)), c.in_shape(0));
}

void infer_multinomial(InferContext& c) {  // [batch, classes] -> [batch, sample_size], int32 default
  DType t = attr_dtype(c.node(), DType::Int32);
  int64_t samples = c.node().attr_i("sample_size", 1);
  const Shape& s = c.in_shape(0);
  if (!s.rank_known) {
    c.set_output(0, t, Shape({Dim(), Dim(samples)}));
    return;
  }
  if (s.rank() != 2) c.fail("input must be 2-D [batch, classes], got " + s.str());
  c.set_output(0, t, Shape({s.dims[0], Dim(samples)}));
}

// ---- costs ----
// Multinomial: a cumulative sum over the class probabilities (1 per input element) and one draw
// per sample (1 per output element).
OpCost cost_multinomial(const CostContext& c) { return OpCost{Count{}, c.in_numel(0) + c.out_numel(0)}; }

}  // namespace

void register_generator_ops(OpRegistry& r) {
  const char* k0 = "no arithmetic: values generated";
  reg(r, "Constant", 1, 0, k0, infer_constant, cost_zero);
  reg(r, "ConstantOfShape", 9, 0, k0, infer_constant_of_shape, cost_zero);
  reg(r, "Range", 11, 0, k0, infer_range, cost_zero);
  reg(r, "EyeLike", 9, 0, k0, infer_eye_like, cost_zero);
  const char* kdraw = "1 per output element (one random draw; scale and shift not counted)";
  reg(r, "RandomNormal", 1, 0, kdraw, infer_random_shape_attr, cost_per_out_elem_1);
  reg(r, "RandomUniform", 1, 0, kdraw, infer_random_shape_attr, cost_per_out_elem_1);
  reg(r, "RandomNormalLike", 1, 0, kdraw, infer_random_like, cost_per_out_elem_1);
  reg(r, "RandomUniformLike", 1, 0, kdraw, infer_random_like, cost_per_out_elem_1);
  reg(r, "Bernoulli", 15, 0, "1 per output element (one draw and compare)", infer_random_like,
      cost_per_out_elem_1);
  reg(r, "Multinomial", 7, 0, "1 per input element (cumulative sum) + 1 per output element (draw)",
      infer_multinomial, cost_multinomial);
}

}  // namespace flopwise
