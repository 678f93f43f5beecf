// src/cost/convention.cc — see flopwise/convention.h. The rows live in conventions.def; the few
// formulas that need more than a product of a node's counts (recurrent cells, resampling modes, thop's
// adaptive pooling and softmax) are the functions below, each written from the tool's source.
#include "flopwise/convention.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <unordered_map>

#include "flopwise/errors.h"

namespace flopwise {

namespace {

// ---- recurrent ops (ONNX RNN/GRU/LSTM: X [seq, batch, I], W [dirs, G, I], R [dirs, G, H], B) -----
struct Rnn {
  Count steps_batch;  // seq x batch
  int64_t dirs = 1, gates = 0, input = 0, hidden = 0;
  bool bias = false;
  bool ok = false;
};
Rnn rnn_of(const NodeWork& w) {
  Rnn r;
  const Shape& x = w.in_shape(0);
  const Shape& wt = w.in_shape(1);
  if (!x.rank_known || x.rank() != 3 || !wt.rank_known || wt.rank() != 3) return r;
  for (const auto& d : wt.dims)
    if (!d.is_known()) return r;
  r.steps_batch = Count::of(x.dims[0] * x.dims[1]);
  r.dirs = wt.dims[0].value();
  r.gates = wt.dims[1].value();
  r.input = wt.dims[2].value();
  r.hidden = w.attr_i("hidden_size", 0);
  r.bias = w.has_input(3);
  r.ok = r.hidden > 0;
  return r;
}
// Gate arithmetic per step and direction that DeepSpeed's and ptflops' RNN hooks add to the products.
int64_t rnn_gate_math(const NodeWork& w, int64_t h) {
  std::string_view op = w.c.node.op;
  if (op == "LSTM") return 10 * h;  // 4H adds of both states, 3H for the cell state, 3H for the output
  if (op == "GRU") return 7 * h;    // H (reset hadamard), 3H (adds), 3H (final hadamard and add)
  return h;                         // RNN: H (adds of both states)
}
Count ds_rnn(const NodeWork& w) {
  Rnn r = rnn_of(w);
  if (!r.ok) return Count::unknown();
  int64_t g = r.gates;
  int64_t per =
      2 * g * r.input - g + 2 * g * r.hidden - g + rnn_gate_math(w, r.hidden) + (r.bias ? 2 * g : 0);
  return r.steps_batch * Count{per * r.dirs};
}
Count pt_rnn(const NodeWork& w) {
  Rnn r = rnn_of(w);
  if (!r.ok) return Count::unknown();
  int64_t g = r.gates;
  int64_t per = g * r.input + g * r.hidden + rnn_gate_math(w, r.hidden) + (r.bias ? 2 * g : 0);
  return r.steps_batch * Count{per * r.dirs};
}
Count thop_rnn(const NodeWork& w) {
  Rnn r = rnn_of(w);
  if (!r.ok) return Count::unknown();
  int64_t h = r.hidden, i = r.input, b = r.bias ? 2 * h : 0;
  int64_t state = (i + h) * h + h + b;  // one gate's product, its add and its biases
  int64_t per = 0;
  std::string_view op = w.c.node.op;
  if (op == "LSTM")
    per = 4 * state + 3 * h + h;
  else if (op == "GRU")
    per = 2 * state + state + h + 3 * h;
  else
    per = h * (i + h) + h + b;
  return r.steps_batch * Count{per * r.dirs};
}

// ptflops' aten backend sees the gate products as addmm (with a bias) or matmul (without): torch's CPU
// RNN runs the hidden product per step as addmm, and the input product over the whole sequence as
// linear, which is addmm only on a contiguous input (not the transposed batch_first one).
Count aten_rnn(const NodeWork& w) {
  Rnn r = rnn_of(w);
  if (!r.ok || !r.bias) return r.ok ? w.macs : Count::unknown();
  bool batch_first = false;
  const int x = w.c.has_input(0) ? w.c.node.inputs[0] : -1;
  if (int p = x >= 0 ? w.c.graph.values[static_cast<size_t>(x)].producer : -1;
      p >= 0 && static_cast<size_t>(p) < w.c.graph.nodes.size())
    batch_first = w.c.graph.nodes[p].op == "Transpose";
  return w.macs + r.steps_batch * Count{r.gates * r.dirs * (batch_first ? 1 : 2)};
}

// ---- einsum: numpy's einsum_path, whose printed "Optimized FLOP count" DeepSpeed and fvcore parse ---
// Two operands: numpy counts P (every index's size multiplied) x (1, +1 with a summed index), plus 1,
// and prints it with 3 decimals in e-notation. Three or more operands: its path search is not
// reproduced; 2 x MACs stands in for its count.
Count numpy_einsum_flop(const NodeWork& w) {
  if (!w.macs.known) return Count::unknown();
  int64_t cost = w.c.node.inputs.size() == 2 ? 2 * w.macs.v + 1 : 2 * w.macs.v;
  if (w.c.node.inputs.size() == 2) {
    // No summed index: op_factor 1, P = MACs.
    std::string eq = w.attr_s("equation", "");
    auto arrow = eq.find("->");
    if (arrow != std::string::npos) {
      std::string lhs = eq.substr(0, arrow), out = eq.substr(arrow + 2);
      bool summed = false;
      for (char ch : lhs)
        if (std::isalpha(static_cast<unsigned char>(ch)) && out.find(ch) == std::string::npos) summed = true;
      if (!summed) cost = w.macs.v + 1;
    }
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e", static_cast<double>(cost));
  return Count{static_cast<int64_t>(std::strtod(buf, nullptr))};
}
Count ds_einsum(const NodeWork& w) { return numpy_einsum_flop(w); }
Count fv_einsum(const NodeWork& w) {
  // fvcore maps the equation's letters to a, b, c... in order of appearance and counts two forms exactly.
  std::string eq, mapped;
  for (char ch : w.attr_s("equation", ""))
    if (ch != ' ') eq += ch;
  std::string order;
  for (char ch : eq) {
    if (!std::isalpha(static_cast<unsigned char>(ch))) {
      mapped += ch;
      continue;
    }
    auto at = order.find(ch);
    if (at == std::string::npos) at = order.size(), order += ch;
    mapped += static_cast<char>('a' + at);
  }
  if (mapped == "abc,abd->acd" || mapped == "abc,adc->adb") return w.macs;
  Count f = numpy_einsum_flop(w);
  return f.known ? Count{f.v / 2} : f;
}

// ---- which module a node ran in ---------------------------------------------------------------------
// thop and ptflops hook modules by exact class (`type(m) in table`): a subclass (torchvision's Conv3DSimple
// of nn.Conv3d, LayerNorm2d of nn.LayerNorm) is not hooked. in_class: the node ran in a module of one of
// `classes` (its innermost scope's class, .pt); without classes (.onnx) a node in a named scope of its own
// is taken to be the module's op, one at the graph's root a functional call.
bool in_class(const NodeWork& w, const std::vector<std::string_view>& classes) {
  if (w.module.empty()) return !w.c.node.scope.empty();
  for (auto c : classes)
    if (w.module == c) return true;
  return false;
}
// hooked_layer: a layer op (conv, linear, norm, recurrent) that only a module of `classes` runs in those
// tools; without classes (.onnx) it is taken to be one.
bool hooked_layer(const NodeWork& w, const std::vector<std::string_view>& classes) {
  return w.module.empty() || in_class(w, classes);
}
const std::vector<std::string_view> kConvNd = {"Conv1d", "Conv2d", "Conv3d"};
const std::vector<std::string_view> kConvTransposeNd = {"ConvTranspose1d", "ConvTranspose2d",
                                                        "ConvTranspose3d"};
const std::vector<std::string_view> kBatchNormNd = {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d"};
const std::vector<std::string_view> kInstanceNormNd = {"InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"};
const std::vector<std::string_view> kRecurrent = {"RNN", "GRU", "LSTM", "RNNCell", "GRUCell", "LSTMCell"};
const std::vector<std::string_view> kPoolModules = {
    "MaxPool1d",         "MaxPool2d",         "MaxPool3d",         "AvgPool1d",         "AvgPool2d",
    "AvgPool3d",         "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "LPPool1d",          "LPPool2d"};
bool in_pool_module(const NodeWork& w) { return in_class(w, kPoolModules); }
// thop counts products in nn.Linear only; without classes, a product with a weight operand is a layer's.
bool in_linear(const NodeWork& w) { return w.module.empty() ? w.weight_operand : w.module == "Linear"; }
bool is_silu(const NodeWork& w) { return w.in_module("SiLU") || w.attr_s("torch_op", "") == "silu"; }

// ptflops divides what its module hooks counted by its batch counter, len() of the root module's first
// positional argument: dim 0 of the model's one input (several inputs go in as keywords: 1), while the
// patched functionals' figures are added undivided (pytorch_engine.compute_average_flops_cost).
Count pt_hook(const NodeWork& w, const Count& c) {
  const Graph& top = *w.root;
  if (top.inputs.size() != 1) return c;
  const Shape& x = top.values[top.inputs[0]].shape;
  if (!x.rank_known || x.rank() == 0) return c;
  const Dim& d = x.dims[0];
  if (d.is_known() && d.value() == 1) return c;
  if (!c.exact() || (d.is_known() && d.value() <= 0)) return Count::unknown();
  return Count::of(Dim::floor_div(c.as_dim(), d));
}

// DeepSpeed's _conv_trans_flops_compute: MACs = prod(kernel) x in_channels x (weight.shape[1] // groups)
// x batch x prod(input spatial), i.e. per input position; the bias term is weight.shape[1] x batch x the
// spatial size a forward conv of the same parameters would give ((in + 2p - dil*(k-1) - 1) // s + 1).
Count ds_conv_transpose(const NodeWork& w) {
  const Shape& x = w.in_shape(0);
  const Shape& wt = w.in_shape(1);
  if (!x.rank_known || x.rank() < 3 || !wt.rank_known || wt.rank() != x.rank()) return Count::unknown();
  size_t sp = x.rank() - 2;
  for (size_t i = 1; i < wt.rank(); ++i)
    if (!wt.dims[i].is_known()) return Count::unknown();
  int64_t groups = w.attr_i("group", 1);
  if (groups <= 0) return Count::unknown();
  Dim per_position = Dim(wt.dims[1].value() / groups) * x.dims[1];
  for (size_t i = 2; i < wt.rank(); ++i) per_position = per_position * wt.dims[i];
  Dim positions = x.dims[0];
  for (size_t i = 2; i < x.rank(); ++i) positions = positions * x.dims[i];
  Count macs = Count::of(per_position * positions);
  Count flops = macs * Count{2};
  if (!w.has_input(2)) return flops;
  auto pads = w.c.node.attr_ints("pads"), strides = w.c.node.attr_ints("strides"),
       dils = w.c.node.attr_ints("dilations");
  Dim out = Dim(wt.dims[1].value()) * x.dims[0];
  for (size_t i = 0; i < sp; ++i) {
    const Dim& in = x.dims[2 + i];
    int64_t p = i < pads.size() ? pads[i] : 0, s = i < strides.size() ? strides[i] : 1,
            d = i < dils.size() ? dils[i] : 1, k = wt.dims[2 + i].value();
    if (s <= 0) return Count::unknown();
    out = out * (Dim::floor_div(in + Dim(2 * p - (d * (k - 1) + 1)), Dim(s)) + Dim(1));
  }
  return flops + Count::of(out);
}

// ---- resampling (Resize: X, roi, scales, sizes; mode nearest | linear | cubic) ---------------------
int spatial_rank(const NodeWork& w) {
  const Shape& x = w.in_shape(0);
  return x.rank_known ? static_cast<int>(x.rank()) - 2 : -1;
}
Count ds_resample(const NodeWork& w) {
  if (w.c.node.op != "Resize") return 0;
  const Shape& y = w.out_shape(0);
  if (!y.rank_known || y.rank() < 3) return Count::unknown();
  if (w.has_input(3)) {  // a size: DeepSpeed counts prod(size), the spatial output only
    Dim p(1);
    for (size_t i = 2; i < y.rank(); ++i) p = p * y.dims[i];
    return Count::of(p);
  }
  // A scale factor s: input elements x s^len(input), len(input) being the batch size.
  const ConstData* s = w.c.in_data(2);
  const Shape& x = w.in_shape(0);
  if (!s || !s->is_float || s->floats.size() < 3 || !x.dims[0].is_known()) return Count::unknown();
  double f = std::pow(s->floats[2], static_cast<double>(x.dims[0].value()));
  if (!w.in.known) return Count::unknown();
  return Count{static_cast<int64_t>(static_cast<double>(w.in.v) * f)};
}
Count fv_resample(const NodeWork& w) {
  if (w.c.node.op == "GridSample") return w.out * 4;  // grid_sampler: bilinear assumed
  std::string mode = w.attr_s("mode", "nearest");
  if (spatial_rank(w) != 2) return 0;  // only the 2-d upsample handlers exist
  if (mode == "nearest") return w.out;
  if (mode == "linear") return w.out * 4;
  return 0;
}
bool in_upsample_module(const NodeWork& w) {
  return w.in_module("Upsample") || w.in_module("UpsamplingBilinear2d") || w.in_module("UpsamplingNearest2d");
}
Count thop_upsample(const NodeWork& w) {
  if (w.c.node.op != "Resize" || !in_upsample_module(w)) return 0;
  std::string mode = w.attr_s("mode", "nearest");
  int r = spatial_rank(w);
  if (mode == "nearest") return w.out;
  if (mode == "linear" && r == 1) return w.out * 5;
  if (mode == "linear" && r == 2) return w.out * 11;
  if (mode == "cubic" && r == 2) return w.out * (224 + 35);
  return 0;  // trilinear: thop warns and counts 0
}
Count pt_resample(const NodeWork& w) {
  if (w.c.node.op != "Resize") return 0;
  if (!in_upsample_module(w)) return w.out;  // F.interpolate
  // nn.Upsample: its hook counts the first batch element's output, and F.interpolate the whole output.
  const Shape& y = w.out_shape(0);
  if (!y.rank_known || y.rank() < 1 || !y.dims[0].is_known() || !w.out.known || y.dims[0].value() == 0)
    return Count::unknown();
  return w.out + pt_hook(w, Count{w.out.v / y.dims[0].value()});
}
// ptflops' products: nn.Linear's hook (hook/B); F.linear elsewhere is not patched (0); the rest is taken
// to be torch.matmul/mm/bmm (patched; `x @ y` is not, and a saved graph records both as aten::matmul).
bool is_flinear(const NodeWork& w) { return w.attr_s("torch_op", "") == "linear"; }
Count pt_contraction(const NodeWork& w) {
  if (w.weight_operand && hooked_layer(w, {"Linear"})) return pt_hook(w, w.macs);
  return is_flinear(w) ? Count{} : w.macs;
}
// torch 1.13's aten::linear runs addmm (its bias counted by ptflops' aten backend) on a 2-d input and on a
// contiguous 3-d one; otherwise matmul and add_ (not counted). A transposed view is taken as not contiguous.
Count aten_bias(const NodeWork& w) {
  if (!is_flinear(w)) return w.flops;
  const Graph& g = w.c.graph;
  for (int in : w.c.node.inputs) {
    int p = in >= 0 ? g.values[in].producer : -1;
    if (p < 0 || static_cast<size_t>(p) >= g.nodes.size() || g.nodes[p].op != "MatMul" ||
        g.nodes[p].inputs.empty())
      continue;
    int x = g.nodes[p].inputs[0];
    if (x < 0) continue;
    const Shape& s = g.values[x].shape;
    if (!s.rank_known) return Count::unknown();
    if (s.rank() <= 2) return w.flops;
    if (s.rank() > 3) return 0;
    int xp = g.values[x].producer;
    bool view = xp >= 0 && static_cast<size_t>(xp) < g.nodes.size() &&
                (g.nodes[xp].op == "Transpose" || g.nodes[xp].op == "TransposeDims");
    return view ? Count{} : w.flops;
  }
  return w.flops;
}
// Gemm: nn.Linear's hook; torch.addmm(C, A, B): MACs + the elements of C as given (beta != 0).
Count pt_gemm(const NodeWork& w) {
  if (w.weight_operand && hooked_layer(w, {"Linear"})) return pt_hook(w, w.macs + w.bias);
  if (is_flinear(w)) return 0;
  bool add_c = w.has_input(2) && w.c.node.attr_f("beta", 1.0) != 0.0;
  return add_c ? w.macs + w.in_numel(2) : w.macs;
}

// FlopCounterMode's conv_backward_flop: 2 per MAC of each gradient asked, the input's the forward's MACs and
// the weight's counted as if the convolution were not grouped (its formula multiplies the transposed input
// and gradient shapes, whole channels by whole channels): groups x the forward's.
Count torch_conv_backward(const NodeWork& w) {
  const auto mask = w.c.node.attr_ints("output_mask");
  const Shape& wt = w.in_shape(2);
  if (mask.size() != 3 || !wt.rank_known || wt.rank() < 3) return Count::unknown();
  Count forward = w.in_numel(w.attr_i("transposed", 0) != 0 ? 1 : 0);
  for (size_t d = 1; d < wt.rank(); ++d) forward = forward * Count::of(wt.dims[d]);
  return forward * Count{2 * ((mask[0] != 0) + (mask[1] != 0) * w.attr_i("groups", 1))};
}

// ---- thop's own shapes of work ------------------------------------------------------------------
Count thop_conv_transpose(const NodeWork& w) {
  const Shape& x = w.in_shape(0);
  const Shape& wt = w.in_shape(1);
  if (!x.rank_known || x.rank() < 3 || !wt.rank_known || wt.rank() < 3) return Count::unknown();
  Dim k(1);
  for (size_t i = 2; i < wt.rank(); ++i) k = k * wt.dims[i];
  Dim cin_g = x.dims[1] / Dim(w.attr_i("group", 1));
  return w.out * Count::of(cin_g * k);
}
Count thop_adaptive_avg(const NodeWork& w) {
  const Shape& x = w.in_shape(0);
  const Shape& y = w.out_shape(0);
  if (!x.rank_known || !y.rank_known || x.rank() != y.rank() || x.rank() < 3 || !w.out.known)
    return Count::unknown();
  double kernel = 1;  // thop divides the spatial sizes as doubles: fractional windows stay fractional
  for (size_t i = 2; i < x.rank(); ++i) {
    if (!x.dims[i].is_known() || !y.dims[i].is_known() || y.dims[i].value() == 0) return Count::unknown();
    kernel *= static_cast<double>(x.dims[i].value()) / static_cast<double>(y.dims[i].value());
  }
  return Count{static_cast<int64_t>((kernel + 1) * static_cast<double>(w.out.v))};
}
Count thop_softmax(const NodeWork& w) {
  if (!w.in_module("Softmax")) return 0;
  const Shape& x = w.in_shape(0);
  if (!x.rank_known || x.rank() == 0) return Count::unknown();
  int64_t axis = w.attr_i("axis", -1);
  if (axis < 0) axis += static_cast<int64_t>(x.rank());
  if (axis < 0 || axis >= static_cast<int64_t>(x.rank()) || !x.dims[axis].is_known() || !w.in.known)
    return Count::unknown();
  int64_t n = x.dims[axis].value();
  if (n == 0) return 0;
  return Count{w.in.v / n} * Count{3 * n - 1};
}

// ---- functionals bound at construction (BINDS, PATCHES_FUNCTIONALS) ----------------------------------
// A node that calls a function its module stored when built, under a preset whose tool patches the
// functions when profiling starts: the call goes to the original function, unseen by the tool's counter.
bool unseen_bound_call(std::string_view conv, const NodeWork& w) {
  static constexpr std::string_view kPatching[] = {
#define PATCHES_FUNCTIONALS(conv) #conv,
#include "conventions.def"
  };
  struct Binding {
    std::string_view module, op;
  };
  static constexpr Binding kBindings[] = {
#define BINDS(cls, op, text) {#cls, #op},
#include "conventions.def"
  };
  if (w.module.empty() || std::find(std::begin(kPatching), std::end(kPatching), conv) == std::end(kPatching))
    return false;
  return std::any_of(std::begin(kBindings), std::end(kBindings), [&w](const Binding& b) {
    return b.module == w.module && b.op == w.c.node.op && w.c.node.domain.empty();
  });
}

}  // namespace

const std::vector<Convention>& conventions() {
  static const std::vector<Convention> all = [] {
    std::vector<Convention> v = {
#define CONVENTION(name, unit, reproduces, means) {#name, reproduces, means, #unit},
#include "conventions.def"
    };
    auto set = [&v](std::string_view name, bool Convention::*flag) {
      for (auto& c : v)
        if (c.name == name) c.*flag = true;
    };
#define TRAIT(conv, flag) set(#conv, &Convention::flag);
#include "conventions.def"
    return v;
  }();
  return all;
}

const std::vector<ConventionRule>& convention_rules() {
  static const std::vector<ConventionRule> all = {
// One row per line, as conventions.def reads them; every row of a PATCHES_FUNCTIONALS preset gives 0 for a
// call its module bound when built (BINDS).
// clang-format off
#define RULE_FN(conv, expr) \
  [](const NodeWork& w) -> Count { return unseen_bound_call(#conv, w) ? Count{} : Count(expr); }
#define KIND(conv, kind, expr, text) {#conv, WorkKind::kind, "", "", RULE_FN(conv, expr), text, false},
#define OP(conv, op, expr, text) {#conv, WorkKind::other, #op, "", RULE_FN(conv, expr), text, false},
#define SKIP(conv, op, text) \
  {#conv, WorkKind::other, #op, "", [](const NodeWork&) -> Count { return 0; }, text, true},
#define CALL(conv, fn, expr, text) {#conv, WorkKind::other, "", #fn, RULE_FN(conv, expr), text, false},
// clang-format on
#include "conventions.def"
#undef RULE_FN
  };
  return all;
}

const Convention& default_convention() { return conventions().front(); }
bool is_default(const Convention& conv) { return &conv == &default_convention(); }

std::string convention_names() {
  std::string s;
  for (const Convention& c : conventions()) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

const Convention& find_convention(const std::string& name) {
  std::string known, key = name;
  std::replace(key.begin(), key.end(), '-', '_');  // deepspeed-legacy, ptflops-aten
  for (const auto& c : conventions()) {
    if (c.name == key) return c;
    known += (known.empty() ? "" : ", ") + std::string(c.name);
  }
  throw UsageError("unknown convention '" + name + "' (known: " + known + ")");
}

namespace {
// Per convention: its row for each kind and for each op that has its own.
struct RuleIndex {
  const ConventionRule* kinds[kNumWorkKinds] = {};
  std::unordered_map<std::string_view, const ConventionRule*> ops;
  std::unordered_map<std::string_view, const ConventionRule*> calls;
};
const RuleIndex& index_of(const Convention& conv) {
  static const std::vector<RuleIndex> all = [] {
    std::vector<RuleIndex> idx(conventions().size());
    for (size_t i = 0; i < conventions().size(); ++i) {
      for (const auto& r : convention_rules()) {
        if (r.convention != conventions()[i].name) continue;
        if (!r.call.empty())
          idx[i].calls[r.call] = &r;
        else if (r.op.empty())
          idx[i].kinds[static_cast<size_t>(r.kind)] = &r;
        else
          idx[i].ops[r.op] = &r;
      }
      for (size_t k = 0; k < kNumWorkKinds; ++k)
        if (!idx[i].kinds[k])
          throw std::logic_error("conventions.def: " + std::string(conventions()[i].name) +
                                 " has no row for kind " +
                                 std::string(work_kind_name(static_cast<WorkKind>(k))));
    }
    return idx;
  }();
  return all[static_cast<size_t>(&conv - conventions().data())];
}
}  // namespace

const ConventionRule& convention_rule(const Convention& conv, const OpRecord& rec, WorkKind kind,
                                      std::string_view torch_op) {
  const RuleIndex& idx = index_of(conv);
  if (!torch_op.empty()) {
    auto it = idx.calls.find(torch_op);
    if (it != idx.calls.end()) return *it->second;
  }
  if (kind != WorkKind::bias) {  // a bias add is weighed as a bias, whatever its op's own row says
    auto it = idx.ops.find(rec.name);
    if (it != idx.ops.end()) return *it->second;
  }
  return *idx.kinds[static_cast<size_t>(kind)];
}

std::vector<const ConventionRule*> convention_calls(const Convention& conv) {
  std::vector<const ConventionRule*> out;
  for (const auto& r : convention_rules())
    if (r.convention == conv.name && !r.call.empty()) out.push_back(&r);
  return out;
}

std::string convention_formula(const Convention& conv, const OpRecord& rec) {
  return convention_formula(conv, rec, rec.kind);
}

std::string convention_formula(const Convention& conv, const OpRecord& rec, WorkKind kind) {
  const ConventionRule& r = convention_rule(conv, rec, kind);
  if (r.formula == "=") return std::string(rec.formula);
  return std::string(r.formula);
}

}  // namespace flopwise
