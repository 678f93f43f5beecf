// shape_inference/ops/torch_ext.cc — torch extensions ("flopwise" domain): ops the torch importers
// (src/torch, src/pt2, src/aten) lower to where ONNX has no equivalent: adaptive average and max pooling,
// packing runtime ints into a shape list, transposing two dims of a tensor whose rank is known only after
// inference, torch's grouped GEMM (_grouped_mm), sort and histc, and the backward kernels a training trace
// records. Torch's losses are "flopwise" ops of their own family (loss.cc).
#include "helpers.h"

namespace flopwise {
namespace {

// AdaptiveAvgPool / AdaptiveMaxPool(X) attr output_size: [N, C, *output_size]; windows cover the input
// (once when the sizes divide), so 1 FLOP per input element, as GlobalAveragePool / GlobalMaxPool.
void infer_adaptive_pool(InferContext& c) {
  auto size = c.node().attr_ints("output_size");
  const Shape& x = c.in_shape(0);
  c.set_output_dtype(0, c.in_dtype(0));
  if (!x.rank_known) return;
  if (x.rank() < size.size() + 1)
    c.fail("input " + x.str() + " has fewer dims than output_size (" + std::to_string(size.size()) + ") + 1");
  std::vector<Dim> out(x.dims.begin(), x.dims.end() - static_cast<std::ptrdiff_t>(size.size()));
  for (auto s : size) out.push_back(Dim(s));
  c.set_output(0, c.in_dtype(0), Shape(out));
}

// PackScalars(s0, s1, ...): scalars (or 1-element tensors) into a 1-D int64 list; contents when known.
void infer_pack_scalars(InferContext& c) {
  ConstData d;
  bool known = true;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    const ConstData* in = c.in_data(i);
    if (!in || in->is_float || in->ints.size() != 1) {
      known = false;
      continue;
    }
    d.ints.push_back(in->ints[0]);
  }
  c.set_output(0, DType::Int64, Shape({Dim(static_cast<int64_t>(c.num_inputs()))}));
  if (known) c.set_output_data(0, d);
}

// TransposeDims(X) attrs dim0, dim1 (negative: from the end): X with the two dims swapped.
void infer_transpose_dims(InferContext& c) {
  const Shape& x = c.in_shape(0);
  c.set_output_dtype(0, c.in_dtype(0));
  if (!x.rank_known) return;
  int64_t r = static_cast<int64_t>(x.rank());
  int64_t a = normalize_axis(c, c.node().attr_i("dim0", 0), r);
  int64_t b = normalize_axis(c, c.node().attr_i("dim1", 1), r);
  std::vector<Dim> out = x.dims;
  std::swap(out[a], out[b]);
  c.set_output(0, c.in_dtype(0), Shape(out));
}

// ConvolutionBackward(grad_output, input, weight) attrs output_mask [gi, gw, gb], transposed: torch's
// aten::convolution_backward as a PyTorch trace records it. Outputs: the input's gradient (its shape), the
// weight's (its shape), the bias's ([C_out]); each computed only where output_mask says.
void infer_conv_backward(InferContext& c) {
  const DType t = c.in_dtype(0);
  c.set_output(0, t, c.in_shape(1));
  c.set_output(1, t, c.in_shape(2));
  const Shape& w = c.in_shape(2);
  const bool transposed = c.node().attr_i("transposed", 0) != 0;
  const int64_t groups = c.node().attr_i("groups", 1);
  if (w.rank_known && w.rank() >= 2)
    c.set_output(2, t, Shape({transposed ? w.dims[1] * Dim(groups) : w.dims[0]}));
  else
    c.set_output_dtype(2, t);
}

// Each of the input's and the weight's gradients is a convolution of the forward's MACs (output elements x
// in-channels per group x kernel; a transposed convolution's forward output is this call's input); the bias's
// gradient sums the output's gradient (1 FLOP per element).
OpCost cost_conv_backward(const CostContext& c) {
  auto mask = c.node.attr_ints("output_mask");
  const Shape& w = c.in_shape(2);
  if (mask.size() != 3 || !w.rank_known || w.rank() < 3) return OpCost{Count::unknown(), Count::unknown()};
  const bool transposed = c.node.attr_i("transposed", 0) != 0;
  Count per_out = Count::of(w.dims[1]);
  for (size_t d = 2; d < w.rank(); ++d) per_out = per_out * Count::of(w.dims[d]);
  const Count forward = (transposed ? c.in_numel(1) : c.in_numel(0)) * per_out;
  const Count macs = forward * Count{(mask[0] != 0) + (mask[1] != 0)};
  const Count bias = mask[2] != 0 ? c.in_numel(0) : Count{};
  return OpCost{macs, macs * Count{2} + bias, bias};
}

// BatchNormBackward(grad_output, input) attr output_mask [gi, gw, gb]: torch's batch-norm backward
// (native_batch_norm_backward, cudnn_batch_norm_backward, miopen_batch_norm_backward) as a training trace
// records it. Outputs: the input's gradient (its shape), the weight's and the bias's ([C], dim 1).
void infer_bn_backward(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& x = c.in_shape(1);
  c.set_output(0, t, x);
  for (size_t k = 1; k < 3; ++k) {
    if (x.rank_known && x.rank() >= 2)
      c.set_output(k, t, Shape({x.dims[1]}));
    else
      c.set_output_dtype(k, t);
  }
}

// Per input element: the bias's gradient sums grad_output (1); the weight's sums grad_output x the
// normalised input (x - mean) x invstd (4); the input's needs both sums and then (dy - mean(dy) - xhat x
// mean(dy xhat)) x weight x invstd (9 with the sums).
OpCost cost_bn_backward(const CostContext& c) {
  auto mask = c.node.attr_ints("output_mask");
  if (mask.size() != 3) return OpCost{Count{}, Count::unknown()};
  const int64_t per = mask[0] ? 9 : (mask[1] ? 4 : 0) + (mask[2] ? 1 : 0);
  return OpCost{Count{}, c.in_numel(1) * Count{per}};
}

// MaxPoolBackward(grad_output, indices[, input_shape]) attr input_shape (without the third input): max
// pooling's backward (torch's max_pool2d_with_indices_backward / max_pool3d_...): each output gradient added
// at its argmax in a zeroed input-shaped gradient, 1 per grad_output element.
void infer_maxpool_backward(InferContext& c) {
  if (c.has_input(2)) {  // the forward's input's shape, as a 1-D int64 tensor (its sizes symbolic)
    const ConstData* d = c.in_data(2);
    if (!d || d->is_float) return c.set_output_dtype(0, c.in_dtype(0));
    return c.set_output(0, c.in_dtype(0), Shape(d->ints));
  }
  auto shape = c.node().attr_ints("input_shape");
  std::vector<Dim> dims;
  for (auto d : shape) dims.push_back(Dim(d));
  c.set_output(0, c.in_dtype(0), Shape(dims));
}

// GroupedMatMul(A, B, offs?, bias?): torch's _grouped_mm (and transformers' grouped_mm_fallback, the same
// product one expert at a time): G products, each group's rows (or columns, or inner dim) a slice of offs.
// Shapes as torch's meta function (_create_grouped_mm_output_tensor): (M,K)@(G,K,N) -> (M,N), rows grouped;
// (M,Ktot)@(Ktot,N) -> (G,M,N), the inner dim grouped; (G,M,K)@(K,Ntot) -> (M,Ntot), the columns grouped;
// (G,M,K)@(G,K,N) -> (G,M,N), a bmm.
void infer_grouped_mm(InferContext& c) {
  const Shape& a = c.in_shape(0);
  const Shape& b = c.in_shape(1);
  const DType t = c.in_dtype(0);
  c.set_output_dtype(0, t);
  if (!a.rank_known || !b.rank_known) return;
  if ((a.rank() != 2 && a.rank() != 3) || (b.rank() != 2 && b.rank() != 3))
    c.fail("operands " + a.str() + " and " + b.str() + " must be 2-D or 3-D");
  const bool a2 = a.rank() == 2, b2 = b.rank() == 2;
  if ((a2 || b2) && !c.has_input(2)) c.fail("a 2-D operand needs offs (the groups' ends)");
  const Shape& offs = c.has_input(2) ? c.in_shape(2) : a;
  const Dim groups = a2 && b2 ? (offs.rank_known && offs.rank() == 1 ? offs.dims[0] : Dim()) : Dim();
  if (a2 && b2 && !offs.rank_known) return;
  if (a2 && b2)
    c.set_output(0, t, Shape({groups, a.dims[0], b.dims[1]}));
  else if (a2)
    c.set_output(0, t, Shape({a.dims[0], b.dims[2]}));
  else if (b2)
    c.set_output(0, t, Shape({a.dims[1], b.dims[1]}));
  else
    c.set_output(0, t, Shape({a.dims[0], a.dims[1], b.dims[2]}));
}

// Each output element is one group's dot product over K: (M,K)@(G,K,N): M*K*N (each row by its group's
// matrix); (M,Ktot)@(Ktot,N): M*Ktot*N (the groups split K); (G,M,K)@(K,Ntot): M*K*Ntot (they split N);
// (G,M,K)@(G,K,N): G*M*K*N. FLOPs 2 per MAC, + 1 per output element with a bias.
OpCost cost_grouped_mm(const CostContext& c) {
  const Shape& a = c.in_shape(0);
  const Shape& b = c.in_shape(1);
  if (!a.rank_known || !b.rank_known || a.rank() < 2 || b.rank() < 2) return cost_unknown(c);
  auto d = [](const Shape& s, size_t i) { return Count::of(s.dims[i]); };
  Count macs = d(a, a.rank() - 2) * d(a, a.rank() - 1) * d(b, b.rank() - 1);  // M*K*N, K the inner dim
  if (a.rank() == 3 && b.rank() == 3) macs = macs * d(a, 0);                  // a bmm of G
  const Count bias = c.has_input(3) ? c.out_numel(0) : Count{};
  return OpCost{macs, macs * Count{2} + bias, bias};
}

// Sort(X) attrs axis, descending: values and int64 indices, X's shape. Cost: n*ceil(log2 n) comparisons
// per sorted row of n (a merge sort's), unknown while n is a formula.
void infer_sort(InferContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.rank_known && x.rank() > 0)
    normalize_axis(c, c.node().attr_i("axis", -1), static_cast<int64_t>(x.rank()));
  c.set_output(0, c.in_dtype(0), x);
  c.set_output(1, DType::Int64, x);
}

OpCost cost_sort(const CostContext& c) {
  const Shape& x = c.in_shape(0);
  if (!x.rank_known) return cost_unknown(c);
  if (x.rank() == 0) return OpCost{};
  const int64_t r = static_cast<int64_t>(x.rank());
  int64_t axis = c.node.attr_i("axis", -1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r || !x.dims[static_cast<size_t>(axis)].is_known())
    return OpCost{Count{}, Count::unknown()};  // no products, whatever n is
  const int64_t n = x.dims[static_cast<size_t>(axis)].value();
  return OpCost{Count{}, c.in_numel(0) * Count{ceil_log2(n)}};
}

// Histogram(X) attrs bins, min, max: torch.histc, X's dtype, [bins]. Per element: its bin (x - min) * bins /
// (max - min) and the count's increment, 4; where min = max the data's own min and max are found first, +2.
void infer_histogram(InferContext& c) {
  const int64_t bins = c.node().attr_i("bins", 100);
  if (bins <= 0) c.fail("bins must be positive, got " + std::to_string(bins));
  c.set_output(0, c.in_dtype(0), Shape({Dim(bins)}));
}

OpCost cost_histogram(const CostContext& c) {
  const bool own_range = c.node.attr_f("min", 0) == c.node.attr_f("max", 0);
  return OpCost{Count{}, c.in_numel(0) * Count{own_range ? 6 : 4}};
}

}  // namespace

void register_torch_ext_ops(OpRegistry& r) {
  const char* d = "flopwise";
  reg(r, "AdaptiveAvgPool", 1, 0, "1 per input element (windows cover the input)", infer_adaptive_pool,
      cost_per_in_elem_1, d);
  reg(r, "AdaptiveMaxPool", 1, 0, "1 per input element (windows cover the input)", infer_adaptive_pool,
      cost_per_in_elem_1, d);
  reg(r, "PackScalars", 1, 0, "layout only (shape arithmetic)", infer_pack_scalars, cost_zero, d);
  reg(r, "TransposeDims", 1, 0, "layout only", infer_transpose_dims, cost_zero, d);
  reg(r, "ConvolutionBackward", 1, 0,
      "MACs = the forward convolution's x (input gradient + weight gradient, as output_mask asks); FLOPs = "
      "2*MACs + the bias gradient's sum (1 per output-gradient element)",
      infer_conv_backward, cost_conv_backward, d);
  reg(r, "BatchNormBackward", 1, 0,
      "per input element: 9 with the input's gradient (both sums, then the normalised combination); else 4 "
      "for the weight's (sum of dy x xhat) + 1 for the bias's (sum of dy)",
      infer_bn_backward, cost_bn_backward, d);
  reg(r, "GroupedMatMul", 1, 0,
      "MACs = (M,K)@(G,K,N): M*K*N; (M,Ktot)@(Ktot,N): M*Ktot*N; (G,M,K)@(K,Ntot): M*K*Ntot; "
      "(G,M,K)@(G,K,N): "
      "G*M*K*N; FLOPs = 2*MACs (+ 1 per output element with a bias)",
      infer_grouped_mm, cost_grouped_mm, d);
  reg(r, "Sort", 1, 0, "n*ceil(log2 n) comparisons per sorted row of n (unknown while n is a formula)",
      infer_sort, cost_sort, d);
  reg(r, "Histogram", 1, 0,
      "4 per input element (its bin and the count); 6 where min = max (the data's range first)",
      infer_histogram, cost_histogram, d);
  reg(r, "MaxPoolBackward", 1, 0, "1 per grad_output element (added at its argmax)", infer_maxpool_backward,
      cost_per_in_elem_1, d);
  // --train (flopwise/ops.h, TrainFacts).
  train_in(r, d, "TransposeDims", TrainKeeps::nothing, TrainView::transpose_dims);
  train_in(r, d, "PackScalars", TrainKeeps::nothing);  // scalars
  train_in(r, d, "AdaptiveAvgPool", TrainKeeps::first_input);
  train_in(r, d, "AdaptiveMaxPool", TrainKeeps::input_and_argmax);
}

}  // namespace flopwise
