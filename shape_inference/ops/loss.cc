// shape_inference/ops/loss.cc — loss family: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset
// 12+).
// Shapes: scores/input (N, C, d1..dk), labels/target (N, d1..dk), optional weight (C); the loss is
// (N, d1..dk) for reduction "none" and a scalar otherwise; SCE's optional log_prob has the scores' shape.
// FLOPs, per loss element L = N*d1*..*dk (the gather of the picked class is layout, 0):
//   negate 1, weight multiply 1 (weight given), ignore_index compare 1 (attribute given);
//   reduction "sum" L adds; "mean" L adds + L adds for the denominator (weights or non-ignored
//   count, when weight or ignore_index is given) + 1 divide.
//   SCE adds its log-softmax over the scores: 5 per scores element (max, subtract, exp, sum, log).
//
// Torch's losses where ONNX has no op ("flopwise" domain; the TorchScript importer lowers aten::*_loss to
// them, src/torch/aten_loss.cc). Attribute reduction "none" | "mean" | "sum" (default "mean"): "none" gives
// the loss elements' shape, the others a scalar. Reduction FLOPs over the L loss elements, as ReduceSum /
// ReduceMean count them: "sum" L (accumulate), "mean" L + 1 (divide), "none" 0.
//   Pointwise losses: the inputs broadcast to the loss elements; a fixed count per element for the
//   formula torch computes, each elementwise step 1 (docs/COUNTING.md), a select and its compare counted
//   where the formula has a branch, both branches counted (as a Where decomposition computes them).
//   CosineEmbeddingLoss: per row of the last dim.
//   CrossEntropyLoss: probability targets or label smoothing (class targets without smoothing are
//   SoftmaxCrossEntropyLoss); see cost_cross_entropy.
#include <algorithm>
#include <stdexcept>

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

// ---- torch's losses ("flopwise" domain) ----------------------------------------------------------------

std::string decode_reduction(InferContext& c) {
  std::string red = c.node().attr_s("reduction", "mean");
  if (red != "none" && red != "sum" && red != "mean")
    c.fail("reduction must be none, sum or mean, got '" + red + "'");
  return red;
}

// Reduction FLOPs over `l` loss elements (header comment).
Count reduction_flops(const std::string& red, const Count& l) {
  if (red == "sum") return l;
  if (red == "mean") return l + Count{1};
  return Count{};
}

// The broadcast of the present inputs' shapes, decoded once for shape and cost: a dim pair that is not
// provably equal or 1 leaves the element count unknown (the shape rule reports a provable clash).
Count broadcast_elems(const CostContext& c) {
  size_t rank = 0;
  for (size_t i = 0; i < c.node.inputs.size(); ++i) {
    if (!c.has_input(i)) continue;
    if (!c.in_shape(i).rank_known) return Count::unknown();
    rank = std::max(rank, c.in_shape(i).rank());
  }
  std::vector<Dim> out(rank, Dim(1));
  for (size_t i = 0; i < c.node.inputs.size(); ++i) {
    if (!c.has_input(i)) continue;
    const Shape& s = c.in_shape(i);
    for (size_t k = 0; k < s.rank(); ++k) {
      const Dim& d = s.dims[k];
      Dim& o = out[rank - s.rank() + k];
      if (d.is_known() && d.value() == 1) continue;
      if (o.is_known() && o.value() == 1)
        o = d;
      else if (!(o == d) || !(o.is_known() || o.is_symbolic()))
        return Count::unknown();
    }
  }
  return Count::of(product(out));
}

// Pointwise losses: output the inputs' broadcast ("none") or a scalar.
void infer_pointwise_loss(InferContext& c) {
  const std::string red = decode_reduction(c);
  std::vector<Shape> shapes;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has_input(i)) shapes.push_back(c.in_shape(i));
  Shape b = broadcast_shapes(c, shapes);
  c.set_output(0, c.in_dtype(0), red == "none" ? b : Shape::scalar());
}

// FLOPs per loss element of each pointwise loss (the registration's formula text says which steps).
int64_t pointwise_loss_per_elem(const CostContext& c) {
  const Node& n = c.node;
  if (n.op == "MSELoss" || n.op == "L1Loss") return 2;
  if (n.op == "SmoothL1Loss" || n.op == "HuberLoss") return 8;
  if (n.op == "BinaryCrossEntropy") return 10 + (c.has_input(2) ? 1 : 0);
  if (n.op == "BinaryCrossEntropyWithLogits") return 9 + (c.has_input(2) ? 1 : 0) + (c.has_input(3) ? 1 : 0);
  if (n.op == "KLDivLoss") return n.attr_i("log_target", 0) ? 3 : 5;
  if (n.op == "SoftMarginLoss" || n.op == "MarginRankingLoss") return 5;
  if (n.op == "HingeEmbeddingLoss") return 7;
  if (n.op == "PoissonNLLLoss") return (n.attr_i("log_input", 1) ? 3 : 4) + (n.attr_i("full", 0) ? 10 : 0);
  throw std::logic_error("pointwise loss without a count: " + n.op);
}

OpCost cost_pointwise_loss(const CostContext& c) {
  const Count l = broadcast_elems(c);
  return OpCost{Count{}, l * Count{pointwise_loss_per_elem(c)} +
                             reduction_flops(c.node.attr_s("reduction", "mean"), l)};
}

// CosineEmbeddingLoss(x1, x2, target): x1, x2 (N, D) or (D) broadcast; one loss per row: (N) or ().
void infer_cosine_embedding(InferContext& c) {
  const std::string red = decode_reduction(c);
  Shape b = broadcast_shapes(c, {c.in_shape(0), c.in_shape(1)});
  if (b.rank_known && b.rank() == 0) c.fail("inputs must have rank >= 1, got scalars");
  Shape rows;
  if (b.rank_known) rows = Shape(std::vector<Dim>(b.dims.begin(), b.dims.end() - 1));
  c.set_output(0, c.in_dtype(0), red == "none" ? rows : Shape::scalar());
}

OpCost cost_cosine_embedding(const CostContext& c) {
  const Shape& a = c.in_shape(0);
  const Shape& b = c.in_shape(1);
  if (!a.rank_known || !b.rank_known || a.rank() != b.rank() || a.rank() == 0)
    return OpCost{Count{}, Count::unknown()};
  std::vector<Dim> rows;
  Dim d;
  for (size_t k = 0; k < a.rank(); ++k) {
    const Dim& x = a.dims[k];
    const Dim& y = b.dims[k];
    Dim m = x.is_known() && x.value() == 1               ? y
            : (y.is_known() && y.value() == 1) || x == y ? x
                                                         : Dim::unknown();
    if (k + 1 < a.rank())
      rows.push_back(m);
    else
      d = m;
  }
  const Count r = Count::of(product(rows)), e = Count::of(product({product(rows), d}));
  // per element: 3 products x (multiply, add) = 6; per row: 2 eps adds, multiply, sqrt, divide, 1 - cos,
  // cos - margin, clamp, 2 compares, 2 selects, add = 13.
  return OpCost{Count{},
                e * Count{6} + r * Count{13} + reduction_flops(c.node.attr_s("reduction", "mean"), r)};
}

// CrossEntropyLoss(scores, target, weight?): scores (N, C, d1..dk) or (C); target class indices (integer,
// (N, d1..dk) or ()) or probabilities (float, the scores' shape); weight (C).
struct CrossEntropyDims {
  std::string reduction;
  bool probs = false;
  Shape per_sample;  // (N, d1..dk) or (); unknown rank when neither input's rank is known
};

CrossEntropyDims decode_cross_entropy(InferContext& c) {
  CrossEntropyDims d;
  d.reduction = decode_reduction(c);
  d.probs = is_float(c.in_dtype(1));
  Shape x = c.in_shape(0);
  const Shape& t = c.in_shape(1);
  if (x.rank_known && x.rank() == 0)
    c.fail("scores must have rank >= 1 ((C) or (N, C, d1..dk)), got a scalar");
  if (x.rank_known && t.rank_known) {
    const size_t want = d.probs ? x.rank() : x.rank() - 1;
    if (t.rank() != want)
      c.fail(std::string(d.probs ? "probability" : "class-index") + " target must have rank " +
             std::to_string(want) + ": scores " + x.str() + ", target " + t.str());
    for (size_t i = 0; i < t.rank(); ++i) {
      size_t xi = d.probs || x.rank() < 2 || i == 0 ? i : i + 1;
      x.dims[xi] = merge_dim(c, x.dims[xi], t.dims[i], "scores vs target dim");
    }
  }
  if (x.rank_known) {
    std::vector<Dim> per = x.dims;
    per.erase(per.begin() + (x.rank() >= 2 ? 1 : 0));
    d.per_sample = Shape(per);
    if (c.has_input(2)) {
      const Shape& w = c.in_shape(2);
      if (w.rank_known && w.rank() != 1) c.fail("weight must be 1-D (C), got " + w.str());
      if (w.rank_known) merge_dim(c, x.dims[x.rank() >= 2 ? 1 : 0], w.dims[0], "weight length vs classes C");
    }
  } else if (t.rank_known && !d.probs) {
    d.per_sample = t;
  } else if (t.rank_known && t.rank() >= 1) {
    std::vector<Dim> per = t.dims;
    per.erase(per.begin() + (t.rank() >= 2 ? 1 : 0));
    d.per_sample = Shape(per);
  }
  return d;
}

void infer_cross_entropy(InferContext& c) {
  CrossEntropyDims d = decode_cross_entropy(c);
  c.set_output(0, c.in_dtype(0), d.reduction == "none" ? d.per_sample : Shape::scalar());
}

// S scores elements, L = S / C loss elements, w = 1 when weighted, e = label smoothing > 0:
//   log-softmax 5 S;
//   probability targets: (multiply by target 1 + w + class sum 1 + 2e (mixing t(1-e) + e/C)) S + negate L
//     + reduction(L) (mean divides by L, not by the weights);
//   class targets: NegativeLogLikelihoodLoss's count on the log-probabilities (ignore_index and weight as
//     there), and with smoothing: (class sum 1 + w) S + (negate 1, ignore fill 1 when ignore_index) L,
//     reduced as the NLL term is, then (1-e) nll + e/C smooth: 3 per loss element (3 for a reduced scalar).
OpCost cost_cross_entropy(const CostContext& c) {
  const Shape& x = c.in_shape(0);
  const Count s = c.in_numel(0);
  Count l = Count::unknown();
  if (x.rank_known && x.rank() >= 1) {
    std::vector<Dim> per = x.dims;
    per.erase(per.begin() + (x.rank() >= 2 ? 1 : 0));
    l = Count::of(product(per));
  } else if (!is_float(c.in_dtype(1))) {
    l = c.in_numel(1);
  }
  const bool probs = is_float(c.in_dtype(1));
  const int64_t w = c.has_input(2) ? 1 : 0;
  const bool smooth = c.node.attr_f("label_smoothing", 0.0) > 0.0;
  const std::string red = c.node.attr_s("reduction", "mean");
  Count f = s * Count{5};
  if (probs) return OpCost{Count{}, f + s * Count{2 + w + (smooth ? 2 : 0)} + l + reduction_flops(red, l)};
  const bool ignore = c.node.has_attr("ignore_index");
  auto reduce = [&](const Count& n) {  // as nll_flops reduces: mean adds a denominator when weighted/ignoring
    if (red == "sum") return n;
    if (red == "mean") return n * Count{(w || ignore) ? 2 : 1} + Count{1};
    return Count{};
  };
  f += l * Count{1 + w + (ignore ? 1 : 0)} + reduce(l);
  if (smooth)
    f += s * Count{1 + w} + l * Count{1 + (ignore ? 1 : 0)} + reduce(l) +
         (red == "none" ? l * Count{3} : Count{3});
  return OpCost{Count{}, f};
}

}  // namespace

void register_loss_ops(OpRegistry& r) {
  reg(r, "NegativeLogLikelihoodLoss", 12, 0,
      "per loss element: 1 negate (+1 weight, +1 ignore_index compare); sum +1; mean +1 (+1 denominator) and "
      "1 divide",
      infer_nll, cost_nll);
  reg(r, "SoftmaxCrossEntropyLoss", 12, 0,
      "log-softmax 5 per scores element + NegativeLogLikelihoodLoss's count on the log-probabilities",
      infer_sce, cost_sce);

  // Formulas are string literals (the registry keeps views). "; reduction ...": see the header comment.
  const char* d = "flopwise";
#define FLOPWISE_RED "; reduction sum +L, mean +L +1"
  const struct {
    const char* name;
    const char* formula;
  } pointwise[] = {
      {"MSELoss", "per loss element: 2 (subtract, square)" FLOPWISE_RED},
      {"L1Loss", "per loss element: 2 (subtract, abs)" FLOPWISE_RED},
      {"SmoothL1Loss",
       "per loss element: 8 (subtract, abs, compare, 0.5 z^2 / beta 3, z - 0.5 beta 1, select)" FLOPWISE_RED},
      {"HuberLoss",
       "per loss element: 8 (subtract, abs, compare, 0.5 z^2 2, delta (z - 0.5 delta) 2, "
       "select)" FLOPWISE_RED},
      {"BinaryCrossEntropy",
       "per loss element: 10 (log x, clamp, 1 - x, log, clamp, 1 - y, 2 multiplies, add, negate) +1 "
       "weight" FLOPWISE_RED},
      {"BinaryCrossEntropyWithLogits",
       "per loss element: 9 (sigmoid, log, 1 - s, 1 - y, log, 2 multiplies, add, negate: torch.onnx's "
       "decomposition) +1 weight +1 pos_weight" FLOPWISE_RED},
      {"KLDivLoss",
       "per loss element: 5 (log t, subtract, multiply, t > 0 compare, select); log_target 3 (exp, subtract, "
       "multiply)" FLOPWISE_RED},
      {"SoftMarginLoss", "per loss element: 5 (multiply, negate, exp, add 1, log)" FLOPWISE_RED},
      {"MarginRankingLoss",
       "per loss element: 5 (subtract, negate, multiply, add margin, clamp)" FLOPWISE_RED},
      {"HingeEmbeddingLoss",
       "per loss element: 7 (margin - x, clamp, 2 compares, 2 selects, add)" FLOPWISE_RED},
      {"PoissonNLLLoss",
       "per loss element: log_input 3 (exp, multiply, subtract), else 4 (add eps, log, multiply, subtract); "
       "full +10 (Stirling term: 2 logs, 4 multiplies, subtract, add, compare, fill)" FLOPWISE_RED},
  };
  for (const auto& p : pointwise)
    reg(r, p.name, 1, 0, p.formula, infer_pointwise_loss, cost_pointwise_loss, d);
  reg(r, "CosineEmbeddingLoss", 1, 0,
      "6 per input element (3 products: multiply, add) + 13 per row (eps 2, multiply, sqrt, divide, 1 - cos, "
      "cos - margin, clamp, 2 compares, 2 selects, add); reduction over the L rows: sum +L, mean +L +1",
      infer_cosine_embedding, cost_cosine_embedding, d);
#undef FLOPWISE_RED
  reg(r, "CrossEntropyLoss", 1, 0,
      "log-softmax 5 per scores element S; probability targets +(2 + weight + 2 if smoothing) S + negate L + "
      "reduction; class targets: NegativeLogLikelihoodLoss's count, smoothing +(1 + weight) S + (1 + ignore) "
      "L, "
      "reduced as the NLL term, + 3 per loss element (3 when reduced)",
      infer_cross_entropy, cost_cross_entropy, d);
}

}  // namespace flopwise
