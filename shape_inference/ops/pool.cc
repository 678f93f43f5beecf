// shape_inference/ops/pool.cc — pool family: MaxPool, AveragePool, LpPool, their Global forms, MaxUnpool.
// FLOPs per docs/COUNTING.md: 1 per window element read (output elements * prod(kernel); global pools: input
// elements).
#include "../helpers.h"

namespace flopwise {

namespace {

// X [N, C, D1..Dn] -> [N, C, O1..On]; MaxPool's optional Indices (int64) has the same shape.
void infer_pool(InferContext& c) {
  const Shape& x = c.in_shape(0);
  if (!c.node().has_attr("kernel_shape")) c.fail("attribute kernel_shape must be specified");
  if (c.has_output(1)) c.set_output_dtype(1, DType::Int64);
  if (!x.rank_known) {
    // kernel_shape fixes the spatial rank.
    Shape s = Shape::unknown_of_rank(c.node().attr_ints("kernel_shape").size() + 2);
    c.set_output(0, c.in_dtype(0), s);
    if (c.has_output(1)) c.set_output(1, DType::Int64, s);
    return;
  }
  if (x.rank() < 3) c.fail("input " + x.str() + " must have rank >= 3 (N, C, spatial...)");
  ConvWindow win = decode_conv_window(c, x.rank() - 2, nullptr);
  std::vector<Dim> out{x.dims[0], x.dims[1]};
  std::vector<Dim> sp = conv_window_out_dims(c, win, std::vector<Dim>(x.dims.begin() + 2, x.dims.end()));
  out.insert(out.end(), sp.begin(), sp.end());
  c.set_output(0, c.in_dtype(0), Shape(out));
  if (c.has_output(1)) c.set_output(1, DType::Int64, Shape(out));
}

// out elems * prod(kernel).
OpCost cost_pool(const CostContext& c) {
  Count k{1};
  for (int64_t v : c.node.attr_ints("kernel_shape")) k = k * Count{v};
  return OpCost{Count{}, c.out_numel(0) * k};
}

// X [N, C, D1..Dn] -> [N, C, 1..1].
void infer_global_pool(InferContext& c) {
  const Shape& x = c.in_shape(0);
  if (!x.rank_known) {
    c.set_output(0, c.in_dtype(0), Shape::unknown_rank());
    return;
  }
  if (x.rank() < 2) c.fail("input " + x.str() + " must have rank >= 2 (N, C, spatial...)");
  std::vector<Dim> out(x.rank(), Dim(1));
  out[0] = x.dims[0];
  out[1] = x.dims[1];
  c.set_output(0, c.in_dtype(0), Shape(out));
}

// MaxUnpool: X [N, C, D1..Dn], I (indices, X's shape), optional output_shape [n+2] ->
// output_shape, else [N, C, (D-1)*stride + kernel - pad_begin - pad_end].
void infer_max_unpool(InferContext& c) {
  const Shape& x = c.in_shape(0);
  if (!c.node().has_attr("kernel_shape")) c.fail("attribute kernel_shape must be specified");
  if (x.rank_known && x.rank() < 3) c.fail("input " + x.str() + " must have rank >= 3 (N, C, spatial...)");
  const Shape& idx = c.in_shape(1);
  if (x.rank_known && idx.rank_known) {
    if (x.rank() != idx.rank()) c.fail("indices " + idx.str() + " must have the input's shape " + x.str());
    for (size_t i = 0; i < x.rank(); ++i) merge_dim(c, x.dims[i], idx.dims[i], "indices vs input dim");
  }
  if (c.has_input(2)) {
    const Shape& os = c.in_shape(2);
    if (os.rank_known && os.rank() != 1) c.fail("output_shape input " + os.str() + " must be 1-D");
    const ConstData* d = c.in_data(2);
    if (d && !d->is_float) {
      if (x.rank_known && d->ints.size() != x.rank())
        c.fail("output_shape has " + std::to_string(d->ints.size()) + " values for an input of rank " +
               std::to_string(x.rank()));
      c.set_output(0, c.in_dtype(0), Shape(d->ints));
      return;
    }
    Shape out = Shape::unknown_rank();
    if (x.rank_known)
      out = Shape::unknown_of_rank(x.rank());
    else if (os.rank_known && os.dims[0].is_known())
      out = Shape::unknown_of_rank(os.dims[0].value());
    c.set_output(0, c.in_dtype(0), out);
    return;
  }
  if (!x.rank_known) {
    c.set_output(0, c.in_dtype(0), Shape::unknown_of_rank(c.node().attr_ints("kernel_shape").size() + 2));
    return;
  }
  const size_t n = x.rank() - 2;
  ConvWindow win = decode_conv_window(c, n, nullptr, false);
  std::vector<Dim> out{x.dims[0], x.dims[1]};
  for (size_t i = 0; i < n; ++i)
    out.push_back(Dim(win.strides[i]) * (x.dims[i + 2] - Dim(1)) +
                  Dim(win.kernel[i] - win.pads[i] - win.pads[i + n]));
  c.set_output(0, c.in_dtype(0), Shape(out));
}

}  // namespace

void register_pool_ops(OpRegistry& r) {
  const char* window = "1 per window element read: out elems * prod(kernel)";
  reg(r, "MaxPool", 1, 0, window, infer_pool, cost_pool);
  reg(r, "AveragePool", 1, 0, window, infer_pool, cost_pool);
  reg(r, "LpPool", 1, 0, window, infer_pool, cost_pool);
  const char* global = "1 per input element read";
  reg(r, "GlobalMaxPool", 1, 0, global, infer_global_pool, cost_per_in_elem_1);
  reg(r, "GlobalAveragePool", 1, 0, global, infer_global_pool, cost_per_in_elem_1);
  reg(r, "GlobalLpPool", 1, 0, global, infer_global_pool, cost_per_in_elem_1);
  reg(r, "MaxUnpool", 9, 0, "layout only (scatter into zeros)", infer_max_unpool, cost_zero);
  // --train (flopwise/ops.h, TrainFacts).
  for (const char* op : {"MaxPool", "GlobalMaxPool"}) train(r, op, TrainKeeps::input_and_argmax);
  for (const char* op : {"AveragePool", "GlobalAveragePool"}) train(r, op, TrainKeeps::input);
}

}  // namespace flopwise
