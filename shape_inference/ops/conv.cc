// shape_inference/ops/conv.cc — conv family: Conv, ConvTranspose, DeformConv. MACs count the kernel products;
// FLOPs = 2*MACs plus one bias add per output element when the bias input is present.
#include <algorithm>

#include "../helpers.h"

namespace flopwise {

namespace {

// Shared start of every conv shape rule: X [N, C, spatial...] and W. Returns the spatial rank, or -1
// when X's rank is unknown (then the output gets W's rank if known, with only the channel dim set).
int64_t conv_spatial_rank(InferContext& c, const Shape& x, const Shape& w, const Dim& out_channels) {
  if (!x.rank_known) {
    if (w.rank_known) {
      std::vector<Dim> out(w.rank());
      if (w.rank() >= 2) out[1] = out_channels;
      c.set_output(0, c.in_dtype(0), Shape(out));
    } else {
      c.set_output(0, c.in_dtype(0), Shape::unknown_rank());
    }
    return -1;
  }
  if (x.rank() < 3) c.fail("input " + x.str() + " must have rank >= 3 (N, C, spatial...)");
  if (w.rank_known && w.rank() != x.rank())
    c.fail("weight " + w.str() + " and input " + x.str() + " must have the same rank");
  return static_cast<int64_t>(x.rank()) - 2;
}

int64_t conv_group(InferContext& c) {
  int64_t g = c.node().attr_i("group", 1);
  if (g <= 0) c.fail("group must be positive (got " + std::to_string(g) + ")");
  return g;
}

// Bias B [M] must match the output channel count M.
void check_bias(InferContext& c, size_t idx, const Dim& channels) {
  if (!c.has_input(idx)) return;
  const Shape& b = c.in_shape(idx);
  if (!b.rank_known) return;
  if (b.rank() != 1) c.fail("bias " + b.str() + " must be 1-D");
  merge_dim(c, b.dims[0], channels, "bias length vs output channels");
}

// ---- Conv / DeformConv -----------------------------------------------------------------------
// X [N, C, D1..Dn], W [M, C/group, k1..kn] -> [N, M, O1..On].
void infer_conv_like(InferContext& c, size_t bias_idx) {
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  Dim m = w.rank_known && w.rank() >= 1 ? w.dims[0] : Dim::unknown();
  int64_t n = conv_spatial_rank(c, x, w, m);
  if (n < 0) return;
  int64_t group = conv_group(c);
  if (w.rank_known) {
    merge_dim(c, x.dims[1], w.dims[1] * Dim(group), "input channels vs weight dim 1 * group");
    if (m.is_known() && m.value() % group != 0)
      c.fail("output channels " + std::to_string(m.value()) + " not divisible by group " +
             std::to_string(group));
  }
  check_bias(c, bias_idx, m);
  ConvWindow win = decode_conv_window(c, static_cast<size_t>(n), &w);
  std::vector<Dim> out{x.dims[0], m};
  std::vector<Dim> sp = conv_window_out_dims(c, win, std::vector<Dim>(x.dims.begin() + 2, x.dims.end()));
  out.insert(out.end(), sp.begin(), sp.end());
  c.set_output(0, c.in_dtype(0), Shape(out));
}

void infer_conv(InferContext& c) { infer_conv_like(c, 2); }
void infer_deform_conv(InferContext& c) { infer_conv_like(c, 3); }

// Kernel spatial dims from W, else from kernel_shape.
std::vector<Dim> cost_kernel(const CostContext& c) {
  const Shape& w = c.in_shape(1);
  std::vector<Dim> k;
  if (w.rank_known && w.rank() >= 2) {
    k.assign(w.dims.begin() + 2, w.dims.end());
  } else if (c.node.has_attr("kernel_shape")) {
    for (auto v : c.node.attr_ints("kernel_shape")) k.push_back(Dim(v));
  } else {
    k.push_back(Dim::unknown());
  }
  return k;
}

// MACs = N*Cout*prod(out spatial) * (Cin/group)*prod(kernel) = (output elements) * W[1] * prod(kernel).
OpCost cost_conv_like(const CostContext& c, size_t bias_idx) {
  const Shape& w = c.in_shape(1);
  const Shape& x = c.in_shape(0);
  Dim cin_per_group;
  if (w.rank_known && w.rank() >= 2)
    cin_per_group = w.dims[1];
  else if (x.rank_known && x.rank() >= 2)
    cin_per_group = x.dims[1] / Dim(c.node.attr_i("group", 1));
  Count out = c.out_numel(0);
  Count macs = out * Count::of(cin_per_group * product(cost_kernel(c)));
  return cost_contraction_bias(macs, c.has_input(bias_idx) ? out : Count{});
}

OpCost cost_conv(const CostContext& c) { return cost_conv_like(c, 2); }
OpCost cost_deform_conv(const CostContext& c) { return cost_conv_like(c, 3); }

// ---- ConvTranspose ---------------------------------------------------------------------------
// X [N, C, D1..Dn], W [C, M/group, k1..kn] -> [N, M, O1..On] with
// O = stride*(D-1) + output_padding + dilation*(k-1) + 1 - pad_begin - pad_end, or output_shape.
// auto_pad SAME_* pads total max(0, effective kernel - stride) (ONNX's rule); VALID pads 0.
void infer_conv_transpose(InferContext& c) {
  const Shape& x = c.in_shape(0);
  const Shape& w = c.in_shape(1);
  int64_t group = conv_group(c);
  Dim m = w.rank_known && w.rank() >= 2 ? w.dims[1] * Dim(group) : Dim::unknown();
  int64_t n = conv_spatial_rank(c, x, w, m);
  if (n < 0) return;
  if (w.rank_known) merge_dim(c, x.dims[1], w.dims[0], "input channels vs weight dim 0");
  check_bias(c, 2, m);
  const size_t ns = static_cast<size_t>(n);
  ConvWindow win = decode_conv_window(c, ns, &w);
  std::vector<int64_t> out_pad = c.node().attr_ints("output_padding");
  if (!c.node().has_attr("output_padding")) out_pad.assign(ns, 0);
  if (out_pad.size() != ns)
    c.fail("output_padding has " + std::to_string(out_pad.size()) + " values, expected " +
           std::to_string(ns));
  std::vector<int64_t> out_shape = c.node().attr_ints("output_shape");
  if (out_shape.size() == ns + 2)
    out_shape.erase(out_shape.begin(), out_shape.begin() + 2);  // full shape given
  if (!out_shape.empty() && out_shape.size() != ns)
    c.fail("output_shape has " + std::to_string(out_shape.size()) + " values, expected " +
           std::to_string(ns));
  std::vector<Dim> out{x.dims[0], m};
  for (size_t i = 0; i < ns; ++i) {
    if (!out_shape.empty()) {
      out.push_back(Dim(out_shape[i]));
      continue;
    }
    if (win.kernel.size() != ns) {
      out.push_back(Dim::unknown());
      continue;
    }
    int64_t eff_k = win.dilations[i] * (win.kernel[i] - 1) + 1;
    int64_t pads = win.pads[i] + win.pads[i + ns];
    if (!win.explicit_pads) {
      if (win.auto_pad == "SAME_UPPER" || win.auto_pad == "SAME_LOWER")
        pads = std::max<int64_t>(0, eff_k - win.strides[i]);
      else
        pads = 0;
    }
    Dim o = Dim(win.strides[i]) * (x.dims[i + 2] - Dim(1)) + Dim(out_pad[i] + eff_k - pads);
    if (o.is_known() && o.value() < 1)
      c.fail("spatial axis " + std::to_string(i) + " gives output size " + o.str());
    out.push_back(o);
  }
  c.set_output(0, c.in_dtype(0), Shape(out));
}

// MACs = N*Cin*prod(in spatial) * (Cout/group)*prod(kernel) = (input elements) * W[1] * prod(kernel).
OpCost cost_conv_transpose(const CostContext& c) {
  const Shape& w = c.in_shape(1);
  Dim cout_per_group = w.rank_known && w.rank() >= 2 ? w.dims[1] : Dim::unknown();
  Count macs = c.in_numel(0) * Count::of(cout_per_group * product(cost_kernel(c)));
  return cost_contraction_bias(macs, c.has_input(2) ? c.out_numel(0) : Count{});
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  reg(r, "Conv", 1, 0,
      "MACs = N*Cout*prod(out)*(Cin/group)*prod(kernel); FLOPs = 2*MACs + out elems (bias, if B)", infer_conv,
      cost_conv);
  reg(r, "ConvTranspose", 1, 0,
      "MACs = N*Cin*prod(in)*(Cout/group)*prod(kernel); FLOPs = 2*MACs + out elems (bias, if B)",
      infer_conv_transpose, cost_conv_transpose);
  reg(r, "DeformConv", 19, 0,
      "MACs as Conv; FLOPs = 2*MACs + out elems (bias, if B); bilinear offset sampling not counted",
      infer_deform_conv, cost_deform_conv);
  // --train (flopwise/ops.h, TrainFacts): convolution_backward keeps both operands for every gradient.
  for (const char* op : {"Conv", "ConvTranspose"})
    train(r, op, TrainBackward::products, TrainKeeps::both_operands, TrainAutocast::low);
  // Weight facts (flopwise/ops.h, WeightFacts): the kernel and the bias.
  for (const char* op : {"Conv", "ConvTranspose"}) weights(r, op, Learned{slots_from(1)});
}

}  // namespace flopwise
