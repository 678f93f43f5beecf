// shape_inference/ops/tensor_compute.cc — tensor_compute family: the tensor ops that compute what they
// write: CumSum, TopK, Resize (with Upsample), GridSample and Col2Im, each cost stating what it counts. The
// helpers are tensor_common.h's.
#include <algorithm>
#include <cmath>

#include "tensor_common.h"

namespace flopwise {

namespace {

using namespace tensor_ops;

// ---- Resize --------------------------------------------------------------------------------------------
// Inputs (after import normalisation): X, roi, scales, sizes. Output dim = sizes, or floor(in*scale)
// computed in float as ONNX does; Resize-18 `axes` restricts both to some axes.
void infer_resize(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  if (!in.rank_known) {
    c.set_output(0, t, Shape::unknown_rank());
    return;
  }
  const int64_t r = static_cast<int64_t>(in.rank());
  std::vector<int64_t> axes = all_axes(in.rank());
  if (c.node().opset >= 18 && c.node().has_attr("axes"))
    axes = normalize_axes(c, c.node().attr_ints("axes"), r);
  std::vector<Dim> out = in.dims;
  for (int64_t a : axes) out[a] = Dim::unknown();
  auto sizes = c.has_input(3) ? in_dim_data(c, 3) : std::nullopt;
  auto scales = c.has_input(2) ? c.in_floats(2) : std::nullopt;
  if (sizes && !sizes->empty()) {
    if (sizes->size() != axes.size())
      c.fail("sizes " + dims_text(*sizes) + " has " + std::to_string(sizes->size()) + " entries for " +
             std::to_string(axes.size()) + " axes of " + in.str());
    const std::string policy = c.node().attr_s("keep_aspect_ratio_policy", "stretch");
    if (c.node().opset < 18 || policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = (*sizes)[i];
    } else {
      // not_larger / not_smaller: one scale for all axes, min (max) of sizes/in; out = round(scale*in).
      bool known = true;
      double s = policy == "not_larger" ? INFINITY : 0;
      for (size_t i = 0; i < axes.size(); ++i) {
        known =
            known && (*sizes)[i].is_known() && in.dims[axes[i]].is_known() && in.dims[axes[i]].value() > 0;
        if (!known) break;
        double q = static_cast<double>((*sizes)[i].value()) / static_cast<double>(in.dims[axes[i]].value());
        s = policy == "not_larger" ? std::min(s, q) : std::max(s, q);
      }
      if (known)
        for (int64_t a : axes) {
          auto v = exact_int64(std::floor(s * static_cast<double>(in.dims[a].value()) + 0.5));
          out[a] = v ? Dim(*v) : Dim();
        }
    }
  } else if (scales && !scales->empty()) {
    if (scales->size() != axes.size())
      c.fail("scales has " + std::to_string(scales->size()) + " entries for " + std::to_string(axes.size()) +
             " axes of " + in.str());
    for (size_t i = 0; i < axes.size(); ++i) {
      const Dim& d = in.dims[axes[i]];
      const float s = static_cast<float>((*scales)[i]);
      if (!(s > 0)) c.fail("scale " + std::to_string(s) + " must be positive");
      if (d.is_known()) {
        auto v = exact_int64(std::floor(static_cast<float>(d.value()) * s));  // inf past float's range
        out[axes[i]] = v ? Dim(*v) : Dim();
      } else if (s == std::floor(s) && s < 1e9f)
        out[axes[i]] = d * Dim(static_cast<int64_t>(s));  // integral scale: exact on a symbolic dim
    }
  }
  c.set_output(0, t, Shape(out));
}

// Interpolation FLOPs per output element over k resized axes: nearest reads one input (0 FLOPs);
// (bi/tri)linear weights 2^k taps (2^k mul + 2^k - 1 add); cubic 4^k taps (2*4^k - 1).
int64_t interp_flops_per_elem(const std::string& mode, int64_t k) {
  if (k <= 0 || k > 15) return 0;
  if (mode == "linear" || mode == "bilinear") return (int64_t{2} << k) - 1;
  if (mode == "cubic" || mode == "bicubic") return 2 * (int64_t{1} << (2 * k)) - 1;
  return 0;
}

OpCost cost_resize(const CostContext& c) {
  const Shape& in = c.in_shape(0);
  const Shape& out = c.out_shape(0);
  const std::string mode = c.node.attr_s("mode", "nearest");
  if (mode == "nearest") return OpCost{Count{}, Count{}};
  if (!in.rank_known || !out.rank_known || in.rank() != out.rank()) return cost_unknown(c);
  int64_t k = 0;
  for (size_t i = 0; i < in.rank(); ++i) {
    if (in.dims[i].same_as(out.dims[i])) continue;
    if (in.dims[i].is_unknown() || out.dims[i].is_unknown()) return cost_unknown(c);
    ++k;
  }
  return cost_per_out_elem(c, interp_flops_per_elem(mode, k));
}

// GridSample: X [N, C, D1..Dk], grid [N, O1..Ok, k] -> [N, C, O1..Ok].
void infer_grid_sample(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& x = c.in_shape(0);
  const Shape& g = c.in_shape(1);
  if (!g.rank_known) {
    c.set_output(0, t, x.rank_known ? Shape::unknown_of_rank(x.rank()) : Shape::unknown_rank());
    return;
  }
  if (g.rank() < 3) c.fail("grid " + g.str() + " must have rank >= 3");
  const size_t k = g.rank() - 2;
  if (x.rank_known && x.rank() != k + 2)
    c.fail("input " + x.str() + " and grid " + g.str() + " disagree on the number of spatial dims");
  if (g.dims.back().is_known() && g.dims.back().value() != static_cast<int64_t>(k))
    c.fail("grid " + g.str() + " last dim must be " + std::to_string(k));
  std::vector<Dim> out{x.rank_known ? merge_dim(c, x.dims[0], g.dims[0], "GridSample batch") : g.dims[0],
                       x.rank_known ? x.dims[1] : Dim::unknown()};
  out.insert(out.end(), g.dims.begin() + 1, g.dims.end() - 1);
  c.set_output(0, t, Shape(out));
}

OpCost cost_grid_sample(const CostContext& c) {
  const Shape& out = c.out_shape(0);
  if (!out.rank_known) return cost_unknown(c);
  const std::string mode = c.node.attr_s("mode", "bilinear");
  return cost_per_out_elem(c, interp_flops_per_elem(mode, static_cast<int64_t>(out.rank()) - 2));
}

// ---- TopK, CumSum ----------------------------------------------------------------------------------
std::optional<Dim> topk_k(const InferContext& c) {
  auto k = in_dim_data(c, 1);
  if (!k || k->size() != 1) return std::nullopt;
  return (*k)[0];
}

void infer_topk(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  if (!in.rank_known) {
    c.set_output(0, t, Shape::unknown_rank());
    c.set_output(1, DType::Int64, Shape::unknown_rank());
    return;
  }
  const int64_t a = normalize_axis(c, c.node().attr_i("axis", -1), static_cast<int64_t>(in.rank()));
  Dim k = topk_k(c).value_or(Dim::unknown());
  if (k.is_known()) {
    if (k.value() < 0) c.fail("K " + k.str() + " is negative");
    if (in.dims[a].is_known() && k.value() > in.dims[a].value())
      c.fail("K " + k.str() + " exceeds axis " + std::to_string(a) + " of " + in.str());
  }
  Shape out = in;
  out.dims[a] = k;
  c.set_output(0, t, out);
  c.set_output(1, DType::Int64, out);
}

// TopK as heap selection: each input element is compared against a heap of K, ceil(log2 K)
// comparisons (at least 1), an estimate of what a selection does, not of a full sort.
OpCost cost_topk(const CostContext& c) {
  auto kd = c.in_data(1);
  if (!kd || kd->size() != 1 || kd->is_float || !kd->ints[0].is_known()) return cost_unknown(c);
  const int64_t k = kd->ints[0].value();
  return OpCost{Count{}, c.in_numel(0) * Count{std::max<int64_t>(1, ceil_log2(k))}};
}

void infer_cumsum(InferContext& c) {
  const Shape& in = c.in_shape(0);
  if (auto ax = c.in_ints(1); ax && ax->size() == 1 && in.rank_known)
    normalize_axis(c, (*ax)[0], static_cast<int64_t>(in.rank()));
  infer_same_as_input0(c);
}

// ---- Col2Im (opset 18) ---------------------------------------------------------------------------
// Col2Im: input [N, C*prod(block), L] -> [N, C, image...], L = number of block positions.
void infer_col2im(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  if (in.rank_known && in.rank() != 3) c.fail("input " + in.str() + " must have rank 3");
  auto image = c.in_ints(1);
  auto block = c.in_ints(2);
  if (!image) {
    auto n = vector_length(c, 1);
    c.set_output(0, t, n ? Shape::unknown_of_rank(static_cast<size_t>(*n) + 2) : Shape::unknown_rank());
    return;
  }
  const size_t n = image->size();
  std::vector<Dim> out{in.rank_known ? in.dims[0] : Dim::unknown(), Dim::unknown()};
  for (int64_t v : *image) out.push_back(Dim(v));
  if (block) {
    if (block->size() != n)
      c.fail("block_shape " + dims_text(*block) + " and image_shape " + dims_text(*image) +
             " differ in length");
    int64_t bp = 1;
    for (int64_t b : *block) {
      if (b <= 0 || !checked_mul(bp, b, &bp))
        c.fail("block_shape " + dims_text(*block) + " must be positive and its product fit 64 bits");
    }
    if (in.rank_known) {
      const Dim& cb = in.dims[1];
      if (cb.is_known() && cb.value() % bp != 0)
        c.fail("dim 1 of " + in.str() + " does not divide by the block size " + std::to_string(bp));
      out[1] = cb / Dim(bp);
      auto strides = c.node().attr_ints("strides"), dil = c.node().attr_ints("dilations"),
           pads = c.node().attr_ints("pads");
      strides.resize(n, 1);
      dil.resize(n, 1);
      pads.resize(2 * n, 0);
      Dim blocks(1);
      for (size_t i = 0; i < n; ++i)
        blocks = blocks *
                 conv_out_dim(Dim((*image)[i]), (*block)[i], strides[i], dil[i], pads[i], pads[i + n], false);
      if (blocks.is_known() && in.dims[2].is_known() && blocks.value() != in.dims[2].value())
        c.fail("input " + in.str() + " has " + in.dims[2].str() + " blocks; image " + dims_text(*image) +
               " with block " + dims_text(*block) + " gives " + blocks.str());
    }
  }
  c.set_output(0, t, Shape(out));
}

}  // namespace

void register_tensor_compute_ops(OpRegistry& r) {
  reg(r, "CumSum", 11, 0, "1 per output element (running add)", infer_cumsum, cost_per_out_elem_1);
  reg(r, "TopK", 1, 0, "input elements * max(1, ceil(log2 K)) comparisons (heap-selection estimate)",
      infer_topk, cost_topk);
  // Resize also serves Upsample-7/9 and Resize-10, which the importer rewrites into Resize's layout
  // while keeping the node's opset: hence since 1.
  reg(r, "Resize", 1, 0,
      "per output element: nearest 0, linear 2^(k+1)-1, cubic 2*4^k-1 (k = resized axes; 2^k or 4^k taps "
      "weighted)",
      infer_resize, cost_resize);
  reg(r, "GridSample", 16, 0,
      "per output element: nearest 0, bilinear 2^(k+1)-1, bicubic 2*4^k-1 (k = spatial dims)",
      infer_grid_sample, cost_grid_sample);
  reg(r, "Col2Im", 18, 0, "1 per input element (overlapping blocks accumulate)", infer_col2im,
      cost_per_in_elem_1);
  // --train (flopwise/ops.h, TrainFacts).
  train(r, "CumSum", TrainAutocast::fp32);
  train(r, "TopK", TrainKeeps::indices_out);
}

}  // namespace flopwise
