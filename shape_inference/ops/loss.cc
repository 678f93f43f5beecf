// Loss family: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12+).
// Shapes: scores/input (N, C, d1..dk), labels/target (N, d1..dk), optional weight (C); the loss is
// (N, d1..dk) for reduction "none" and a scalar otherwise; SCE's optional log_prob has the scores' shape.
// FLOPs, per loss element L = N*d1*..*dk (the gather of the picked class is layout, 0):
//   negate 1, weight multiply 1 (weight given), ignore_index compare 1 (attribute given);
//   reduction "sum" L adds; "mean" L adds + L adds for the denominator (weights or non-ignored
//   count, when weight or ignore_index is given) + 1 divide.
//   SCE adds its log-softmax over the scores: 5 per scores element (max, subtract, exp, sum, log).
#include "../helpers.h"

namespace flopwise {

namespace {

// The per-sample loss shape (N, d1..dk) and the refined scores shape, decoded once.
struct LossDims {
  std::string reduction;  // "none", "sum", "mean"
  Shape scores;           // (N, C, d1..dk), refined with the labels' dims
  Shape per_sample;       // (N, d1..dk); unknown rank when neither input's rank is known
};

LossDims decode_loss(InferContext& c) {
  LossDims d;
  d.reduction = c.node().attr_s("reduction", "mean");
  if (d.reduction != "none" && d.reduction != "sum" && d.reduction != "mean")
    c.fail("reduction must be none, sum or mean, got '" + d.reduction + "'");
  d.scores = c.in_shape(0);
  const Shape& y = c.in_shape(1);
  if (d.scores.rank_known && d.scores.rank() < 2)
    c.fail("scores must have rank >= 2 (N, C, d1..dk), got " + d.scores.str());
  if (d.scores.rank_known && y.rank_known && y.rank() + 1 != d.scores.rank())
    c.fail("labels must have rank scores rank - 1: scores " + d.scores.str() + ", labels " + y.str());
  if (d.scores.rank_known) {
    if (y.rank_known) {
      for (size_t i = 0; i < y.rank(); ++i) {
        size_t xi = i == 0 ? 0 : i + 1;
        d.scores.dims[xi] = merge_dim(c, d.scores.dims[xi], y.dims[i], "scores vs labels dim");
      }
    }
    std::vector<Dim> per{d.scores.dims[0]};
    per.insert(per.end(), d.scores.dims.begin() + 2, d.scores.dims.end());
    d.per_sample = Shape(per);
  } else if (y.rank_known) {
    d.per_sample = y;
  }
  if (c.has_input(2)) {
    const Shape& w = c.in_shape(2);
    if (w.rank_known && w.rank() != 1) c.fail("weight must be 1-D (C), got " + w.str());
    if (w.rank_known && d.scores.rank_known)
      d.scores.dims[1] = merge_dim(c, d.scores.dims[1], w.dims[0], "weight length vs classes C");
  }
  return d;
}

void infer_nll(InferContext& c) {
  LossDims d = decode_loss(c);
  c.set_output(0, c.in_dtype(0), d.reduction == "none" ? d.per_sample : Shape::scalar());
}

void infer_sce(InferContext& c) {
  LossDims d = decode_loss(c);
  c.set_output(0, c.in_dtype(0), d.reduction == "none" ? d.per_sample : Shape::scalar());
  if (c.has_output(1)) c.set_output(1, c.in_dtype(0), d.scores);
}

// Loss elements L: the labels' element count, else scores elements / C.
Count loss_elems(const CostContext& c) {
  Count l = c.in_numel(1);
  if (l.known) return l;
  const Shape& x = c.in_shape(0);
  const auto n = x.numel().maybe_value();  // unknown past int64
  if (!x.fully_known() || x.rank() < 2 || x.dims[1].value() == 0 || !n) return Count::unknown();
  return Count{*n / x.dims[1].value()};
}

// The NLL part shared by both ops (see the header comment).
Count nll_flops(const CostContext& c) {
  const Count l = loss_elems(c);
  const bool weighted = c.has_input(2);
  const bool ignore = c.node.has_attr("ignore_index");
  const std::string red = c.node.attr_s("reduction", "mean");
  int64_t per = 1 + (weighted ? 1 : 0) + (ignore ? 1 : 0);
  if (red == "sum") per += 1;
  if (red == "mean") per += (weighted || ignore) ? 2 : 1;
  Count f = l * Count{per};
  if (red == "mean") f += Count{1};
  return f;
}

OpCost cost_nll(const CostContext& c) { return OpCost{Count{}, nll_flops(c)}; }

OpCost cost_sce(const CostContext& c) { return OpCost{Count{}, c.in_numel(0) * Count{5} + nll_flops(c)}; }

}  // namespace

void register_loss_ops(OpRegistry& r) {
  reg(r, "NegativeLogLikelihoodLoss", 12, 0,
      "per loss element: 1 negate (+1 weight, +1 ignore_index compare); sum +1; mean +1 (+1 denominator) and "
      "1 divide",
      infer_nll, cost_nll);
  reg(r, "SoftmaxCrossEntropyLoss", 12, 0,
      "log-softmax 5 per scores element + NegativeLogLikelihoodLoss's count on the log-probabilities",
      infer_sce, cost_sce);
}

}  // namespace flopwise
