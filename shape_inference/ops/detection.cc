// shape_inference/ops/detection.cc — detection family: RoiAlign, MaxRoiPool, NonMaxSuppression.
// RoiAlign's cost is exact when sampling_ratio > 0 (samples per bin fixed); with the adaptive
// sampling_ratio 0 it depends on ROI sizes (data), as do MaxRoiPool's windows and NMS: unknown.
// NMS's output count is folded when boxes, scores and thresholds are all known (small tensors).
#include <algorithm>
#include <optional>
#include <string>

#include "../helpers.h"

namespace flopwise {

namespace {

void require_rank(InferContext& c, size_t i, size_t rank, const char* what) {
  const Shape& s = c.in_shape(i);
  if (s.rank_known && s.rank() != rank)
    c.fail(std::string(what) + " must have rank " + std::to_string(rank) + ", got " + s.str());
}

void require_dim(InferContext& c, size_t i, size_t axis, int64_t v, const char* what) {
  const Shape& s = c.in_shape(i);
  if (!s.rank_known || axis >= s.rank()) return;
  const Dim& d = s.dims[axis];
  if (d.is_known() && d.value() != v)
    c.fail(std::string(what) + " must be " + std::to_string(v) + ", got " + std::to_string(d.value()));
}

Dim dim_or_unknown(const Shape& s, size_t axis) {
  return s.rank_known && axis < s.rank() ? s.dims[axis] : Dim::unknown();
}

// ---- RoiAlign: X [N, C, H, W], rois [R, 4], batch_indices [R] -> [R, C, out_h, out_w] ----
void infer_roi_align(InferContext& c) {
  require_rank(c, 0, 4, "X");
  require_rank(c, 1, 2, "rois");
  require_rank(c, 2, 1, "batch_indices");
  require_dim(c, 1, 1, 4, "rois' second dim (x1, y1, x2, y2)");
  Dim r = merge_dim(c, dim_or_unknown(c.in_shape(1), 0), dim_or_unknown(c.in_shape(2), 0),
                    "number of rois (rois vs batch_indices)");
  const Node& n = c.node();
  c.set_output(0, c.in_dtype(0),
               Shape({r, dim_or_unknown(c.in_shape(0), 1), Dim(n.attr_i("output_height", 1)),
                      Dim(n.attr_i("output_width", 1))}));
}

// Per output element, sampling_ratio^2 bilinear samples; each sample 4 multiplies + 3 adds (the
// interpolation weights are shared across channels and not counted) + 1 accumulate (add for avg,
// compare for max); avg adds one divide. Adaptive sampling (ratio 0) depends on ROI sizes: unknown.
OpCost cost_roi_align(const CostContext& c) {
  int64_t sr = c.node.attr_i("sampling_ratio", 0);
  if (sr <= 0) return cost_unknown(c);
  bool avg = c.node.attr_s("mode", "avg") == "avg";
  return OpCost{Count{}, c.out_numel(0) * Count{8 * sr * sr + (avg ? 1 : 0)}};
}

// ---- MaxRoiPool: X [N, C, H, W], rois [R, 5] -> [R, C, pooled_h, pooled_w] ----
void infer_max_roi_pool(InferContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.rank_known && x.rank() < 3) c.fail("X must have rank >= 3, got " + x.str());
  require_rank(c, 1, 2, "rois");
  require_dim(c, 1, 1, 5, "rois' second dim (batch_index, x1, y1, x2, y2)");
  std::vector<int64_t> pooled = c.node().attr_ints("pooled_shape");
  if (pooled.empty()) c.fail("attribute pooled_shape is required");
  if (x.rank_known && pooled.size() != x.rank() - 2)
    c.fail("pooled_shape has " + std::to_string(pooled.size()) + " dims for input " + x.str());
  std::vector<Dim> out{dim_or_unknown(c.in_shape(1), 0), dim_or_unknown(x, 1)};
  for (int64_t p : pooled) out.push_back(Dim(p));
  c.set_output(0, c.in_dtype(0), Shape(out));
}

// ---- NonMaxSuppression: boxes [B, S, 4], scores [B, classes, S] -> selected [?, 3] int64 ----
// Intersection over union of two boxes, corners [y1, x1, y2, x2] in any order or centre [xc, yc, w, h].
double box_iou(const double* a, const double* b, bool center) {
  auto corners = [center](const double* p, double* y0, double* x0, double* y1, double* x1) {
    if (center) {
      *x0 = p[0] - p[2] / 2, *x1 = p[0] + p[2] / 2, *y0 = p[1] - p[3] / 2, *y1 = p[1] + p[3] / 2;
    } else {
      *y0 = std::min(p[0], p[2]), *y1 = std::max(p[0], p[2]), *x0 = std::min(p[1], p[3]),
      *x1 = std::max(p[1], p[3]);
    }
  };
  double ay0, ax0, ay1, ax1, by0, bx0, by1, bx1;
  corners(a, &ay0, &ax0, &ay1, &ax1);
  corners(b, &by0, &bx0, &by1, &bx1);
  double ih = std::min(ay1, by1) - std::max(ay0, by0), iw = std::min(ax1, bx1) - std::max(ax0, bx0);
  if (ih <= 0 || iw <= 0) return 0;
  double inter = ih * iw;
  double uni = (ay1 - ay0) * (ax1 - ax0) + (by1 - by0) * (bx1 - bx0) - inter;
  return uni > 0 ? inter / uni : 0;
}

// When every input's contents are known (small tensors), runs the selection itself: greedy by score,
// a box is dropped when its IoU with a kept box exceeds iou_threshold, boxes scoring at or below
// score_threshold are ignored, at most max_output_boxes_per_class per (batch, class).
std::optional<std::vector<Dim>> fold_nms(InferContext& c) {
  auto bd = known_dims(c.in_shape(0));
  auto sd = known_dims(c.in_shape(1));
  auto boxes = c.in_floats(0);
  auto scores = c.in_floats(1);
  auto max_out = c.in_ints(2);
  if (!bd || !sd || !boxes || !scores || !max_out || max_out->size() != 1) return std::nullopt;
  const int64_t nb = (*bd)[0], ns = (*bd)[1], nc = (*sd)[1];
  if (static_cast<int64_t>(boxes->size()) != nb * ns * 4 ||
      static_cast<int64_t>(scores->size()) != nb * nc * ns)
    return std::nullopt;
  double iou_thr = 0;
  std::optional<double> score_thr;
  if (c.has_input(3)) {
    auto v = c.in_floats(3);
    if (!v || v->size() != 1) return std::nullopt;
    iou_thr = (*v)[0];
  }
  if (c.has_input(4)) {
    auto v = c.in_floats(4);
    if (!v || v->size() != 1) return std::nullopt;
    score_thr = (*v)[0];
  }
  const bool center = c.node().attr_i("center_point_box", 0) != 0;
  std::vector<Dim> selected;
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t k = 0; k < nc; ++k) {
      const double* sc = scores->data() + (b * nc + k) * ns;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < ns; ++i)
        if (!score_thr || sc[i] > *score_thr) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [sc](int64_t x, int64_t y) { return sc[x] > sc[y]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= (*max_out)[0]) break;
        const double* bi = boxes->data() + (b * ns + i) * 4;
        bool keep = true;
        for (int64_t j : kept)
          if (box_iou(bi, boxes->data() + (b * ns + j) * 4, center) > iou_thr) keep = false;
        if (!keep) continue;
        kept.push_back(i);
        selected.insert(selected.end(), {Dim(b), Dim(k), Dim(i)});
      }
    }
  }
  return selected;
}

void infer_nms(InferContext& c) {
  require_rank(c, 0, 3, "boxes");
  require_rank(c, 1, 3, "scores");
  require_dim(c, 0, 2, 4, "boxes' last dim");
  merge_dim(c, dim_or_unknown(c.in_shape(0), 0), dim_or_unknown(c.in_shape(1), 0),
            "num_batches (boxes vs scores)");
  merge_dim(c, dim_or_unknown(c.in_shape(0), 1), dim_or_unknown(c.in_shape(1), 2),
            "spatial dimension (boxes vs scores)");
  // The number of selected boxes is data-dependent: known only when all inputs' contents are, or
  // when max_output_boxes_per_class is absent or 0 (nothing is selected).
  Dim count = Dim::unknown();
  if (!c.has_input(2)) {
    count = Dim(0);
  } else if (auto m = c.in_ints(2); m && m->size() == 1 && (*m)[0] == 0) {
    count = Dim(0);
  } else if (auto sel = fold_nms(c)) {
    count = Dim(static_cast<int64_t>(sel->size() / 3));
    c.set_output(0, DType::Int64, Shape({count, Dim(3)}));
    ConstData d;
    d.ints = std::move(*sel);
    c.set_output_data(0, std::move(d));
    return;
  }
  c.set_output(0, DType::Int64, Shape({count, Dim(3)}));
}

}  // namespace

void register_detection_ops(OpRegistry& r) {
  reg(r, "RoiAlign", 10, 0,
      "per output element (8*sampling_ratio^2 + 1 for avg): bilinear 4 mul + 3 add + accumulate per sample; "
      "unknown when sampling_ratio is 0 (adaptive)",
      infer_roi_align, cost_roi_align);
  reg(r, "MaxRoiPool", 1, 0, "unknown: pooling windows depend on ROI coordinates (data)", infer_max_roi_pool,
      cost_unknown);
  reg(r, "NonMaxSuppression", 10, 0, "unknown: data-dependent (scores, IoU threshold)", infer_nms,
      cost_unknown);
}

}  // namespace flopwise
