// src/aten/aten_elementwise.cc — aten elementwise ops: unary and binary arithmetic, comparisons,
// activations, clamps, where/masked_fill, softmax. Each becomes the ONNX op torch.onnx exports.
#include <map>

#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

const std::map<std::string, std::string>& unary_ops() {
  static const std::map<std::string, std::string> m = {
      {"relu", "Relu"},
      {"sigmoid", "Sigmoid"},
      {"tanh", "Tanh"},
      {"exp", "Exp"},
      {"log", "Log"},
      {"sqrt", "Sqrt"},
      {"neg", "Neg"},
      {"abs", "Abs"},
      {"erf", "Erf"},
      {"sin", "Sin"},
      {"cos", "Cos"},
      {"reciprocal", "Reciprocal"},
      {"floor", "Floor"},
      {"ceil", "Ceil"},
      {"round", "Round"},
      {"sign", "Sign"},
      {"hardswish", "HardSwish"},
      {"hardsigmoid", "HardSigmoid"},
      {"logical_not", "Not"},
      {"softplus", "Softplus"},
      {"elu", "Elu"},
      {"mish", "Mish"},
      {"bitwise_not", "Not"},
      {"selu", "Selu"},
      {"celu", "Celu"},
      {"softsign", "Softsign"},
      {"tan", "Tan"},
      {"atan", "Atan"},
      {"asin", "Asin"},
      {"acos", "Acos"},
      {"sinh", "Sinh"},
      {"cosh", "Cosh"},
      {"isnan", "IsNaN"},
      {"trunc", "Floor"},
  };
  return m;
}

// A binary op's ONNX op, and whether it takes add/sub's third argument alpha (y = a + alpha * b).
struct BinaryRow {
  BinaryRow(const char* o, bool a = false) : onnx(o), alpha(a) {}  // NOLINT: rows convert from "Onnx"
  std::string onnx;
  bool alpha;
};

const std::map<std::string, BinaryRow>& binary_ops() {
  static const std::map<std::string, BinaryRow> m = {
      {"add", {"Add", true}}, {"sub", {"Sub", true}},   {"mul", "Mul"},         {"div", "Div"},
      {"floordiv", "Div"},    {"floor_divide", "Div"},  {"pow", "Pow"},         {"maximum", "Max"},
      {"minimum", "Min"},     {"eq", "Equal"},          {"lt", "Less"},         {"gt", "Greater"},
      {"le", "LessOrEqual"},  {"ge", "GreaterOrEqual"}, {"logical_and", "And"}, {"logical_or", "Or"},
      {"remainder", "Mod"},   {"fmod", "Mod"},          {"__and__", "And"},     {"__or__", "Or"},
      {"logical_xor", "Xor"}, {"__xor__", "Xor"},       {"bitwise_and", "And"}, {"bitwise_or", "Or"},
      {"true_divide", "Div"}, {"atan2", "Atan"},
  };
  return m;
}

bool lower_identity(AtenLowerer& L, const Node* n, const std::string&) {
  int x = L.as_ir(L.in(n, 0));
  if (x < 0) return false;
  L.emit_to(n->output(), "Identity", {x});
  return true;
}

// dropout(x, p, train) and feature_dropout (Dropout2d/3d: one draw per channel): an ONNX Dropout with the
// probability the file records, identity in the forward report (an eval run), active under --train.
enum class DropoutDraw : uint8_t { per_element, per_channel };
template <DropoutDraw draw>
bool lower_dropout(AtenLowerer& L, const Node* n, const std::string& op) {
  int x = L.as_ir(L.in(n, 0));
  if (x < 0) return false;
  auto p = n->inputs().size() > 1 ? L.known_num(L.in(n, 1)) : std::nullopt;
  if (!p || *p <= 0.0) return lower_identity(L, n, op);
  Attrs a;
  if (draw == DropoutDraw::per_channel) a["flopwise.per_channel"] = ai(1);
  L.emit_to(n->output(), "Dropout", {x, L.const_float(*p)}, std::move(a));
  return true;
}

// native_dropout(x, p, train) -> (out, mask): the kernel F.dropout runs on CUDA (and what torch's
// decompositions record); the mask a bool per element, as ONNX's second output.
bool lower_native_dropout(AtenLowerer& L, const Node* n, const std::string&) {
  int x = L.as_ir(L.in(n, 0));
  auto p = n->inputs().size() > 1 ? L.known_num(L.in(n, 1)) : std::nullopt;
  if (x < 0 || !p || n->outputs().size() != 2) return false;
  auto outs = L.emit("Dropout", {x, L.const_float(*p)},
                     {AtenLowerer::ir_name(n->output(0)), AtenLowerer::ir_name(n->output(1))}, {}, "", 13);
  L.set_ir(n->output(0), outs[0]);
  L.set_ir(n->output(1), outs[1]);
  return true;
}

bool lower_unary(AtenLowerer& L, const Node* n, const std::string& op) {
  const JV& x = L.in(n, 0);
  if (!AtenLowerer::is_tensor(x) && x.kind != JV::ScalarIR) return false;
  bool scalar = x.kind == JV::ScalarIR;
  int r = L.emit_to(n->output(), unary_ops().at(op), {x.ir});
  if (scalar) L.set_ir(n->output(), r, JV::ScalarIR);
  return true;
}

bool lower_binary(AtenLowerer& L, const Node* n, const std::string& op) {
  if (n->inputs().size() < 2) return false;
  JV a = L.in(n, 0), c = L.in(n, 1);
  if (a.kind == JV::Unknown || c.kind == JV::Unknown) return false;
  bool scalar = a.kind != JV::Tensor && c.kind != JV::Tensor;
  int ia = L.as_ir(a), ic = L.as_ir(c);
  if (ia < 0 || ic < 0) return false;
  const AtenValue* o = n->output();
  const BinaryRow& row = binary_ops().at(op);
  if (row.alpha && n->inputs().size() >= 3) {
    auto alpha = L.known_num(L.in(n, 2));
    if (alpha && *alpha != 1.0) ic = L.emit_tmp(o, "alpha", "Mul", {ic, L.const_float(*alpha)});
  }
  int r = L.emit_to(o, row.onnx, {ia, ic});
  if (scalar) L.set_ir(o, r, JV::ScalarIR);
  return true;
}

bool lower_ne(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() != 2) return false;
  int e = L.emit_tmp(n->output(), "eq", "Equal", {L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 1))});
  bool scalar = !AtenLowerer::is_tensor(L.in(n, 0)) && !AtenLowerer::is_tensor(L.in(n, 1));
  int r = L.emit_to(n->output(), "Not", {e});
  if (scalar) L.set_ir(n->output(), r, JV::ScalarIR);
  return true;
}

bool lower_rsub(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 2) return false;
  L.emit_to(n->output(), "Sub", {L.as_ir(L.in(n, 1)), L.as_ir(L.in(n, 0))});
  return true;
}

bool lower_rsqrt(AtenLowerer& L, const Node* n, const std::string&) {
  int s = L.emit_tmp(n->output(), "sqrt", "Sqrt", {L.as_ir(L.in(n, 0))});
  L.emit_to(n->output(), "Reciprocal", {s});
  return true;
}

bool lower_silu(AtenLowerer& L, const Node* n,
                const std::string&) {  // x * sigmoid(x), as torch.onnx exports it
  int x = L.as_ir(L.in(n, 0));
  // Tagged: conventions that count F.silu once per element (DeepSpeed, ptflops) find it at the Sigmoid.
  int s = L.emit_tmp(n->output(), "sigmoid", "Sigmoid", {x}, {{"torch_op", as("silu")}});
  L.emit_to(n->output(), "Mul", {x, s}, {{"torch_op", as("silu")}});
  return true;
}

bool lower_gelu(AtenLowerer& L, const Node* n, const std::string&) {
  Attrs a;
  if (n->inputs().size() >= 2 && L.in(n, 1).kind == JV::Known && L.in(n, 1).iv.isString())
    a["approximate"] = as(L.in(n, 1).iv.toStringRef());
  L.emit_to(n->output(), "Gelu", {L.as_ir(L.in(n, 0))}, a, "", 20);
  return true;
}

// relu6, hardtanh, clamp/clip (min, max scalars or tensors, either None).
enum class ClipOp : uint8_t { relu6, hardtanh, clamp };
template <ClipOp clip>
bool lower_clip(AtenLowerer& L, const Node* n, const std::string&) {
  double lo = clip == ClipOp::hardtanh ? -1.0 : 0.0, hi = clip == ClipOp::hardtanh ? 1.0 : 6.0;
  size_t nin = n->inputs().size();
  std::vector<int> ins{L.as_ir(L.in(n, 0))};
  if (clip == ClipOp::relu6) {
    ins.push_back(L.const_float(0));
    ins.push_back(L.const_float(6));
  } else {
    for (size_t k = 1; k <= 2; ++k) {
      if (nin > k && AtenLowerer::is_none(L.in(n, k))) {
        ins.push_back(-1);
      } else if (nin > k) {
        auto x = L.known_num(L.in(n, k));
        ins.push_back(x ? L.const_float(*x) : L.as_ir(L.in(n, k)));
      } else {
        ins.push_back(L.const_float(k == 1 ? lo : hi));
      }
    }
    while (!ins.empty() && ins.back() < 0) ins.pop_back();
  }
  L.emit_to(n->output(), "Clip", ins);
  return true;
}

// clamp_min(x, lo) / clamp_max(x, hi): Clip with one bound.
enum class ClampBound : uint8_t { min, max };
template <ClampBound bound>
bool lower_clamp_bound(AtenLowerer& L, const Node* n, const std::string&) {
  auto v = L.known_num(L.in(n, 1));
  int b = v ? L.const_float(*v) : L.as_ir(L.in(n, 1));
  if (b < 0) return false;
  std::vector<int> ins{L.as_ir(L.in(n, 0)), bound == ClampBound::min ? b : -1};
  if (bound == ClampBound::max) ins.push_back(b);
  L.emit_to(n->output(), "Clip", ins);
  return true;
}

bool lower_leaky_relu(AtenLowerer& L, const Node* n, const std::string&) {
  double slope = n->inputs().size() >= 2 ? L.known_num(L.in(n, 1)).value_or(0.01) : 0.01;
  L.emit_to(n->output(), "LeakyRelu", {L.as_ir(L.in(n, 0))}, {{"alpha", af(slope)}});
  return true;
}

bool lower_prelu(AtenLowerer& L, const Node* n, const std::string&) {
  // PReLU's slope has one value per channel (dim 1); ONNX broadcasts from the right: [C] -> [C, 1, ...].
  int x = L.as_ir(L.in(n, 0)), w = L.as_ir(L.in(n, 1));
  auto rank = L.known_rank(L.in(n, 0));
  if (!rank) return false;
  if (*rank >= 3) {
    std::vector<int64_t> axes;
    for (int64_t k = 1; k <= *rank - 2; ++k) axes.push_back(k);
    w = L.emit_tmp(n->output(), "slope", "Unsqueeze", {w, L.const_ints(axes)});
  }
  L.emit_to(n->output(), "PRelu", {x, w});
  return true;
}

bool lower_where(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() == 1) return lower_nonzero_numpy(L, n);  // where(condition): nonzero_numpy
  if (n->inputs().size() != 3) return false;
  L.emit_to(n->output(), "Where", {L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 1)), L.as_ir(L.in(n, 2))});
  return true;
}

bool lower_masked_fill(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() != 3) return false;
  L.emit_to(n->output(), "Where", {L.as_ir(L.in(n, 1)), L.as_ir(L.in(n, 2)), L.as_ir(L.in(n, 0))});
  return true;
}

enum class SoftmaxForm : uint8_t { probs, log };
template <SoftmaxForm form>
bool lower_softmax(AtenLowerer& L, const Node* n, const std::string&) {
  auto dim = L.known_int(L.in(n, 1));
  if (!dim) return false;
  L.emit_to(n->output(), form == SoftmaxForm::log ? "LogSoftmax" : "Softmax", {L.as_ir(L.in(n, 0))},
            {{"axis", ai(*dim)}});
  return true;
}

}  // namespace

void register_aten_elementwise(AtenTable& t) {
  // Identity at runtime in an eval run (alpha dropout: training is false), or a copy: layout only.
  t.add("dropout", lower_dropout<DropoutDraw::per_element>);
  t.add("feature_dropout", lower_dropout<DropoutDraw::per_channel>);
  t.add("native_dropout", lower_native_dropout);
  t.add({"contiguous", "detach", "alpha_dropout", "feature_alpha_dropout", "clone", "alias", "lift_fresh",
         "lift_fresh_copy", "positive", "resolve_conj", "resolve_neg"},
        lower_identity);
  for (const auto& [op, onnx] : unary_ops()) t.add(op, lower_unary);
  for (const auto& [op, onnx] : binary_ops()) t.add(op, lower_binary);
  t.add("ne", lower_ne);
  t.add("rsub", lower_rsub);
  t.add("rsqrt", lower_rsqrt);
  t.add("silu", lower_silu);
  t.add("gelu", lower_gelu);
  t.add("relu6", lower_clip<ClipOp::relu6>);
  t.add("hardtanh", lower_clip<ClipOp::hardtanh>);
  t.add({"clamp", "clip"}, lower_clip<ClipOp::clamp>);
  t.add("leaky_relu", lower_leaky_relu);
  t.add("clamp_min", lower_clamp_bound<ClampBound::min>);
  t.add("clamp_max", lower_clamp_bound<ClampBound::max>);
  t.add("prelu", lower_prelu);
  t.add("where", lower_where);
  t.add("masked_fill", lower_masked_fill);
  t.add({"softmax", "_softmax"}, lower_softmax<SoftmaxForm::probs>);  // _: core ATen's
  t.add({"log_softmax", "_log_softmax"}, lower_softmax<SoftmaxForm::log>);
}

}  // namespace flopwise
