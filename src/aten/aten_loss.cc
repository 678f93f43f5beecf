// src/aten/aten_loss.cc — aten loss ops. Class-index cross entropy without label smoothing and the nll
// losses become ONNX SoftmaxCrossEntropyLoss / NegativeLogLikelihoodLoss, as torch.onnx exports them
// (ignore_index always given: torch always compares against it); the rest become the "flopwise" domain's
// losses (shape_inference/ops/loss.cc), whose formulas state what is counted per element. The reduction
// argument (0 none, 1 mean, 2 sum) must be known at import. Not lowered: multi_margin_loss,
// multilabel_margin_loss, triplet_margin_loss, ctc_loss (their Python wrappers' other losses, such as
// gaussian_nll_loss and multilabel_soft_margin_loss, are compositions of lowered ops).
#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

// The reduction argument as the ONNX attribute string; nullopt when not known at import.
std::optional<std::string> reduction_of(AtenLowerer& L, const Node* n) {
  JV* r = L.arg(n, "reduction");
  if (!r) return std::nullopt;
  auto v = L.known_int(*r);
  if (!v || *v < 0 || *v > 2) return std::nullopt;
  static const char* names[] = {"none", "mean", "sum"};
  return std::string(names[*v]);
}

// An optional tensor argument: its IR value, -1 when None or absent.
int optional_tensor(AtenLowerer& L, const Node* n, const char* name) {
  JV* j = L.arg(n, name);
  if (!j || AtenLowerer::is_none(*j)) return -1;
  return L.as_ir(*j);
}

// nll_loss / nll_loss_nd / nll_loss2d(self, target, weight, reduction, ignore_index) and, with
// label_smoothing 0 and class-index targets, cross_entropy_loss(self, target, weight, reduction,
// ignore_index, label_smoothing). An unbatched (C) input with a () target is given a batch of 1 around the
// ONNX op (which needs (N, C)).
bool emit_onnx_loss(AtenLowerer& L, const Node* n, const std::string& onnx_op) {
  auto red = reduction_of(L, n);
  JV* ignore = L.arg(n, "ignore_index");
  auto ign = ignore ? L.known_int(*ignore) : std::nullopt;
  if (!red || !ign) return false;
  const AtenValue* o = n->output();
  int x = L.as_ir(L.in(n, 0)), t = L.as_ir(L.in(n, 1));
  if (x < 0 || t < 0) return false;
  std::vector<int> ins{x, t};
  if (int w = optional_tensor(L, n, "weight"); w >= 0) ins.push_back(w);
  Attrs a{{"reduction", as(*red)}, {"ignore_index", ai(*ign)}};
  const bool unbatched = L.known_rank(L.in(n, 0)) == 1;
  if (!unbatched) return L.emit_to(o, onnx_op, ins, a), true;
  ins[0] = L.emit_tmp(o, "batched_input", "Unsqueeze", {x, L.const_ints({0})});
  ins[1] = L.emit_tmp(o, "batched_target", "Unsqueeze", {t, L.const_ints({0})});
  if (*red != "none") return L.emit_to(o, onnx_op, ins, a), true;
  int loss = L.emit_tmp(o, "batched", onnx_op, ins, a);
  L.emit_to(o, "Squeeze", {loss, L.const_ints({0})});
  return true;
}

bool lower_nll_loss(AtenLowerer& L, const Node* n, const std::string&) {
  return emit_onnx_loss(L, n, "NegativeLogLikelihoodLoss");
}

// cross_entropy_loss: probability targets (a float target) or label smoothing go to flopwise
// CrossEntropyLoss.
bool lower_cross_entropy(AtenLowerer& L, const Node* n, const std::string&) {
  JV* ls = L.arg(n, "label_smoothing");
  auto eps = ls ? L.known_num(*ls) : std::optional<double>(0.0);
  const JV& target = L.in(n, 1);
  if (!eps || !AtenLowerer::is_tensor(target)) return false;
  const DType tt = L.facts(target.ir).dtype;
  if (tt == DType::Undefined) return false;
  const bool probs = is_float(tt);
  if (!probs && *eps == 0.0) return emit_onnx_loss(L, n, "SoftmaxCrossEntropyLoss");
  auto red = reduction_of(L, n);
  if (!red) return false;
  Attrs a{{"reduction", as(*red)}, {"label_smoothing", af(*eps)}};
  if (!probs) {  // torch reads ignore_index only for class-index targets
    JV* ignore = L.arg(n, "ignore_index");
    auto ign = ignore ? L.known_int(*ignore) : std::nullopt;
    if (!ign) return false;
    a["ignore_index"] = ai(*ign);
  }
  std::vector<int> ins{L.as_ir(L.in(n, 0)), target.ir};
  if (int w = optional_tensor(L, n, "weight"); w >= 0) ins.push_back(w);
  L.emit_to(n->output(), "CrossEntropyLoss", ins, a, "flopwise");
  return true;
}

// The pointwise losses: tensor arguments in schema order, float arguments as attributes.
struct PointwiseLowering {
  const char* aten;
  const char* op;
  std::vector<const char*> tensors;  // optional ones may be None (then omitted, -1)
  std::vector<std::pair<const char*, const char*>> floats, ints;  // (aten argument, attribute)
  const char* zero_beta = nullptr;  // the op it is with beta 0 (torch: smooth_l1_loss with beta 0 is l1_loss)
};

const std::vector<PointwiseLowering>& pointwise_losses() {
  static const std::vector<PointwiseLowering> v = {
      {"mse_loss", "MSELoss", {"self", "target"}, {}, {}},
      {"l1_loss", "L1Loss", {"self", "target"}, {}, {}},
      {"smooth_l1_loss", "SmoothL1Loss", {"self", "target"}, {{"beta", "beta"}}, {}, "L1Loss"},
      {"huber_loss", "HuberLoss", {"self", "target"}, {{"delta", "delta"}}, {}},
      {"binary_cross_entropy", "BinaryCrossEntropy", {"self", "target", "weight"}, {}, {}},
      {"binary_cross_entropy_with_logits",
       "BinaryCrossEntropyWithLogits",
       {"self", "target", "weight", "pos_weight"},
       {},
       {}},
      {"kl_div", "KLDivLoss", {"self", "target"}, {}, {{"log_target", "log_target"}}},
      {"soft_margin_loss", "SoftMarginLoss", {"self", "target"}, {}, {}},
      {"margin_ranking_loss",
       "MarginRankingLoss",
       {"input1", "input2", "target"},
       {{"margin", "margin"}},
       {}},
      {"hinge_embedding_loss", "HingeEmbeddingLoss", {"self", "target"}, {{"margin", "margin"}}, {}},
      {"cosine_embedding_loss",
       "CosineEmbeddingLoss",
       {"input1", "input2", "target"},
       {{"margin", "margin"}},
       {}},
      {"poisson_nll_loss",
       "PoissonNLLLoss",
       {"input", "target"},
       {{"eps", "eps"}},
       {{"log_input", "log_input"}, {"full", "full"}}},
  };
  return v;
}

bool lower_pointwise_loss(AtenLowerer& L, const Node* n, const std::string& op) {
  const PointwiseLowering* p = nullptr;
  for (const auto& x : pointwise_losses())
    if (op == x.aten) p = &x;
  auto red = reduction_of(L, n);
  if (!p || !red) return false;
  Attrs a{{"reduction", as(*red)}};
  for (const auto& [arg, attr] : p->floats) {
    JV* j = L.arg(n, arg);
    auto v = j ? L.known_num(*j) : std::nullopt;
    if (!v) return false;
    a[attr] = af(*v);
  }
  for (const auto& [arg, attr] : p->ints) {
    JV* j = L.arg(n, arg);
    auto v = j ? L.known_int(*j) : std::nullopt;
    if (!v) return false;
    a[attr] = ai(*v);
  }
  std::vector<int> ins;
  for (const char* name : p->tensors) {
    const std::string arg = name;
    if (arg == "weight" || arg == "pos_weight") {
      ins.push_back(optional_tensor(L, n, name));
      continue;
    }
    JV* j = L.arg(n, arg);
    int v = j ? L.as_ir(*j) : -1;
    if (v < 0) return false;
    ins.push_back(v);
  }
  while (!ins.empty() && ins.back() < 0) ins.pop_back();
  std::string onnx_op = p->op;
  if (p->zero_beta && a["beta"].f == 0.0) {
    onnx_op = p->zero_beta;
    a.erase("beta");
  }
  L.emit_to(n->output(), onnx_op, ins, a, "flopwise");
  return true;
}

}  // namespace

void register_aten_loss(AtenTable& t) {
  t.add({"nll_loss", "nll_loss_nd", "nll_loss2d"}, lower_nll_loss);
  t.add("cross_entropy_loss", lower_cross_entropy);
  for (const auto& p : pointwise_losses()) t.add(p.aten, lower_pointwise_loss);
}

}  // namespace flopwise
