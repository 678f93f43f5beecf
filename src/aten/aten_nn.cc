// src/aten/aten_nn.cc — aten neural-network ops: contractions (matmul family, linear, addmm/baddbmm,
// einsum, bilinear), convolutions (also transposed), norms, pooling, upsampling, embedding.
#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

bool lower_matmul(AtenLowerer& L, const Node* n, const std::string&) {
  L.emit_to(n->output(), "MatMul", {L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 1))});
  return true;
}

// y = x W^T + b: MatMul + Add, as torch.onnx exports a Linear on a rank-3 input (on rank 2 it exports
// Gemm; MACs and FLOPs are the same: M*N*K MACs, 2*M*N*K + M*N FLOPs).
// Both nodes say they are F.linear's: tools that patch torch.matmul but not F.linear tell them apart.
bool lower_linear(AtenLowerer& L, const Node* n, const std::string&) {
  const AtenValue* o = n->output();
  const Attrs call = {{"torch_op", as("linear")}};
  int wt = L.emit_tmp(o, "weight_t", "Transpose", {L.as_ir(L.in(n, 1))}, {{"perm", ais({1, 0})}});
  if (n->inputs().size() < 3 || AtenLowerer::is_none(L.in(n, 2)))
    return L.emit_to(o, "MatMul", {L.as_ir(L.in(n, 0)), wt}, call), true;
  int mm = L.emit_tmp(o, "matmul", "MatMul", {L.as_ir(L.in(n, 0)), wt}, call);
  L.emit_to(o, "Add", {mm, L.as_ir(L.in(n, 2))}, call);
  return true;
}

// beta * input + alpha * (m1 @ m2): addmm as Gemm; baddbmm as MatMul (+ Mul by alpha) + Add.
enum class AddMmAs : uint8_t { gemm, matmul_add };
template <AddMmAs kind>
bool lower_addmm(AtenLowerer& L, const Node* n, const std::string&) {
  size_t nin = n->inputs().size();
  if (nin < 3) return false;
  double beta = nin > 3 ? L.known_num(L.in(n, 3)).value_or(1) : 1,
         alpha = nin > 4 ? L.known_num(L.in(n, 4)).value_or(1) : 1;
  const AtenValue* o = n->output();
  if (kind == AddMmAs::gemm) {
    L.emit_to(o, "Gemm", {L.as_ir(L.in(n, 1)), L.as_ir(L.in(n, 2)), L.as_ir(L.in(n, 0))},
              {{"alpha", af(alpha)}, {"beta", af(beta)}});
    return true;
  }
  int mm = L.emit_tmp(o, "matmul", "MatMul", {L.as_ir(L.in(n, 1)), L.as_ir(L.in(n, 2))});
  if (alpha != 1.0) mm = L.emit_tmp(o, "alpha", "Mul", {mm, L.const_float(alpha)});
  if (beta == 0.0) return L.emit_to(o, "Identity", {mm}), true;
  int c = L.as_ir(L.in(n, 0));
  if (beta != 1.0) c = L.emit_tmp(o, "beta", "Mul", {c, L.const_float(beta)});
  L.emit_to(o, "Add", {c, mm});
  return true;
}

bool lower_einsum(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 2 || L.in(n, 0).kind != JV::Known || !L.in(n, 0).iv.isString() ||
      L.in(n, 1).kind != JV::List)
    return false;
  std::vector<int> ins;
  for (const auto& it : *L.in(n, 1).items) ins.push_back(L.as_ir(it));
  L.emit_to(n->output(), "Einsum", ins, {{"equation", as(L.in(n, 0).iv.toStringRef())}});
  return true;
}

// bilinear(x1 [.., I1], x2 [.., I2], W [O, I1, I2], b): y_o = sum_ij x1_i W_oij x2_j + b_o, computed as
// torch's _trilinear does: the outer product x1 x2^T (I1*I2 multiplies per row, elementwise), then one
// contraction with W flattened to [O, I1*I2] (MACs: rows * O * I1 * I2).
bool lower_bilinear(AtenLowerer& L, const Node* n, const std::string&) {
  const AtenValue* o = n->output();
  int x1 = L.as_ir(L.in(n, 0)), x2 = L.as_ir(L.in(n, 1)), w = L.as_ir(L.in(n, 2));
  int a = L.emit_tmp(o, "x1_col", "Unsqueeze", {x1, L.const_ints({-1})});
  int b = L.emit_tmp(o, "x2_row", "Unsqueeze", {x2, L.const_ints({-2})});
  // Every node that does arithmetic says it is F.bilinear's: conventions whose tool counts the call as
  // one (or not at all) price it by that (conventions.def CALL rows).
  const Attrs call = {{"torch_op", as("bilinear")}};
  int outer = L.emit_tmp(o, "outer", "Mul", {a, b}, call);
  int flat = L.emit_tmp(o, "outer_flat", "Flatten", {outer}, {{"axis", ai(-2)}});
  int wf = L.emit_tmp(o, "weight_flat", "Flatten", {w}, {{"axis", ai(1)}});
  int wt = L.emit_tmp(o, "weight_t", "Transpose", {wf}, {{"perm", ais({1, 0})}});
  // Flatten(axis=-2) folds the leading dims into one: restore them around the contraction.
  auto rank = L.known_rank(L.in(n, 0));
  if (!rank) return false;
  int shape = L.emit_tmp(o, "lead_shape", "Shape", {x1});
  int lead = L.emit_tmp(o, "lead", "Slice", {shape, L.const_ints({0}), L.const_ints({*rank - 1})});
  int ws = L.emit_tmp(o, "w_shape", "Shape", {w});
  int out_dim = L.emit_tmp(o, "out_dim", "Slice", {ws, L.const_ints({0}), L.const_ints({1})});
  int y = L.emit_tmp(o, "matmul", "MatMul", {flat, wt}, call);
  int target = L.emit_tmp(o, "target", "Concat", {lead, out_dim}, {{"axis", ai(0)}});
  y = L.emit_tmp(o, "unflatten", "Reshape", {y, target});
  if (n->inputs().size() < 4 || AtenLowerer::is_none(L.in(n, 3))) return L.emit_to(o, "Identity", {y}), true;
  L.emit_to(o, "Add", {y, L.as_ir(L.in(n, 3))}, call);
  return true;
}

// conv1d/2d/3d(input, weight, bias, stride, padding, dilation, groups), conv_transpose1d/2d/3d(input,
// weight, bias, stride, padding, output_padding, groups, dilation), _convolution/convolution(input, weight,
// bias, stride, padding, dilation, transposed, output_padding, groups, ...): `args` says which.
enum class ConvArgs : uint8_t { conv, conv_transpose, convolution };
template <ConvArgs args>
bool lower_conv(AtenLowerer& L, const Node* n, const std::string&) {
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  bool transposed = args == ConvArgs::conv_transpose;
  std::optional<std::vector<int64_t>> stride = L.known_ints(in(3)), dil, out_pad;
  std::optional<int64_t> groups;
  if (args == ConvArgs::convolution) {
    auto t = L.known_int(in(6));
    if (!t) return false;
    transposed = *t != 0;
    dil = L.known_ints(in(5));
    out_pad = L.known_ints(in(7));
    groups = L.known_int(in(8));
  } else if (transposed) {
    out_pad = L.known_ints(in(5));
    groups = L.known_int(in(6));
    dil = L.known_ints(in(7));
  } else {
    dil = L.known_ints(in(5));
    groups = L.known_int(in(6));
  }
  if (!stride || !dil || !groups) return false;
  Attrs a{{"strides", ais(*stride)}, {"dilations", ais(*dil)}, {"group", ai(*groups)}};
  JV& pad = in(4);
  if (pad.kind == JV::Known && pad.iv.isString()) {
    a["auto_pad"] = as(pad.iv.toStringRef() == "same" ? "SAME_UPPER" : "VALID");
  } else {
    auto p = L.known_ints(pad);
    if (!p) return false;
    std::vector<int64_t> pads = *p;
    pads.insert(pads.end(), p->begin(), p->end());
    a["pads"] = ais(pads);
  }
  if (transposed && out_pad) {
    bool any = false;
    for (auto x : *out_pad) any = any || x != 0;
    if (any) a["output_padding"] = ais(*out_pad);
  }
  std::vector<int> ins{L.as_ir(in(0)), L.as_ir(in(1))};
  if (!AtenLowerer::is_none(in(2))) ins.push_back(L.as_ir(in(2)));
  L.emit_to(n->output(), transposed ? "ConvTranspose" : "Conv", ins, a);
  return true;
}

// _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps): the
// inference batch norm of core-aten programs (torch.export's run_decompositions); its statistics outputs
// (empty in inference) are not used.
bool lower_batch_norm_no_training(AtenLowerer& L, const Node* n, const std::string&) {
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  for (size_t i = 1; i < 5; ++i)
    if (AtenLowerer::is_none(in(i))) return false;
  const double eps = L.known_num(in(6)).value_or(1e-5);
  L.emit_to(n->output(0), "BatchNormalization",
            {L.as_ir(in(0)), L.as_ir(in(1)), L.as_ir(in(2)), L.as_ir(in(3)), L.as_ir(in(4))},
            {{"epsilon", af(eps)}});
  return true;
}

bool lower_batch_norm(AtenLowerer& L, const Node* n, const std::string&) {
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  if (n->inputs().size() < 8) return false;
  auto eps = L.known_num(in(7)).value_or(1e-5);
  if (AtenLowerer::is_none(in(3)) || AtenLowerer::is_none(in(4))) return false;  // batch statistics: training
  // Without affine parameters, scale 1 and bias 0 (constants: not params).
  auto affine = [&](size_t i, double v) {
    if (!AtenLowerer::is_none(in(i))) return L.as_ir(in(i));
    int stats = L.as_ir(in(3));
    return L.emit_tmp(n->output(), i == 1 ? "ones" : "zeros", "ConstantOfShape",
                      {L.emit_tmp(n->output(), "channels", "Shape", {stats})},
                      {{"value", [&] {
                          Attribute t;
                          t.kind = Attribute::Kind::Tensor;
                          t.tensor.dtype = DType::Float32;
                          t.tensor.dims = {1};
                          ConstData d;
                          d.is_float = true;
                          d.floats = {v};
                          t.tensor.data = d;
                          return t;
                        }()}});
  };
  int scale = affine(1, 1.0), bias = affine(2, 0.0);
  L.emit_to(n->output(), "BatchNormalization", {L.as_ir(in(0)), scale, bias, L.as_ir(in(3)), L.as_ir(in(4))},
            {{"epsilon", af(eps)}});
  return true;
}

// Batch normalisation as core ATen writes it: _native_batch_norm_legit_functional(input, weight, bias,
// running_mean, running_var, training, momentum, eps) -> (out, save_mean, save_invstd, new running_mean, new
// running_var); _native_batch_norm_legit (the running statistics updated in place) and native_batch_norm ->
// (out, save_mean, save_invstd). In training, one BatchNormalization in training mode: the batch statistics
// are its running-statistics outputs ([C], as save_mean and save_invstd); in eval, as batch_norm.
bool lower_native_batch_norm(AtenLowerer& L, const Node* n, const std::string&) {
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  if (n->inputs().size() < 8 || n->outputs().size() < 3) return false;
  auto training = L.known_bool(in(5));
  if (!training || AtenLowerer::is_none(in(1)) || AtenLowerer::is_none(in(2)) ||
      AtenLowerer::is_none(in(3)) || AtenLowerer::is_none(in(4)))
    return false;
  const AtenValue* o = n->output(0);
  auto eps = L.known_num(in(7)).value_or(1e-5), momentum = L.known_num(in(6)).value_or(0.1);
  const std::vector<int> ins{L.as_ir(in(0)), L.as_ir(in(1)), L.as_ir(in(2)), L.as_ir(in(3)), L.as_ir(in(4))};
  if (!*training) {
    L.emit_to(o, "BatchNormalization", ins, {{"epsilon", af(eps)}});
    for (size_t k = 1; k < n->outputs().size(); ++k) L.set_ir(n->output(k), ins[k % 2 == 1 ? 3 : 4]);
    return true;
  }
  auto r = L.emit("BatchNormalization", ins, {AtenLowerer::ir_name(o), L.tmp(o, "mean"), L.tmp(o, "var")},
                  {{"epsilon", af(eps)}, {"momentum", af(1 - momentum)}, {"training_mode", ai(1)}});
  L.set_ir(o, r[0]);
  for (size_t k = 1; k < n->outputs().size(); ++k) L.set_ir(n->output(k), r[k % 2 == 1 ? 1 : 2]);
  return true;
}

bool lower_layer_norm(AtenLowerer& L, const Node* n, const std::string&) {
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  if (n->inputs().size() < 5) return false;
  auto shape = L.known_ints(in(1));
  if (!shape) return false;
  std::vector<int> ins{L.as_ir(in(0))};
  if (AtenLowerer::is_none(in(2))) {  // elementwise_affine=False: scale of ones (a constant, not a param)
    int x = ins[0];
    int sh = L.emit_tmp(n->output(), "shape", "Shape", {x});
    int last =
        L.emit_tmp(n->output(), "normalized_shape", "Slice",
                   {sh, L.const_ints({-static_cast<int64_t>(shape->size())}), L.const_ints({INT64_MAX})});
    Attribute one;
    one.kind = Attribute::Kind::Tensor;
    one.tensor.dtype = DType::Float32;
    one.tensor.dims = {1};
    ins.push_back(L.emit_tmp(n->output(), "ones", "ConstantOfShape", {last}, {{"value", one}}));
  } else {
    ins.push_back(L.as_ir(in(2)));
    if (!AtenLowerer::is_none(in(3))) ins.push_back(L.as_ir(in(3)));
  }
  L.emit_to(n->output(), "LayerNormalization", ins,
            {{"axis", ai(-static_cast<int64_t>(shape->size()))},
             {"epsilon", af(L.known_num(in(4)).value_or(1e-5))}});
  return true;
}

bool lower_group_norm(AtenLowerer& L, const Node* n, const std::string&) {
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  if (n->inputs().size() < 5) return false;
  auto groups = L.known_int(in(1));
  if (!groups || AtenLowerer::is_none(in(2)) || AtenLowerer::is_none(in(3))) return false;
  // Opset 21's GroupNormalization: scale and bias per channel, as torch's.
  L.emit_to(n->output(), "GroupNormalization", {L.as_ir(in(0)), L.as_ir(in(2)), L.as_ir(in(3))},
            {{"num_groups", ai(*groups)}, {"epsilon", af(L.known_num(in(4)).value_or(1e-5))}}, "", 21);
  return true;
}

// instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn):
// with input statistics (the default) ONNX InstanceNormalization; affine-less gets ones/zeros constants.
bool lower_instance_norm(AtenLowerer& L, const Node* n, const std::string&) {
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  if (n->inputs().size() < 8) return false;
  auto use_stats = L.known_int(in(5));
  if (!use_stats || !*use_stats) return false;
  if (AtenLowerer::is_none(in(1)) || AtenLowerer::is_none(in(2))) {
    // Channels from the input's dim 1: scale/bias constants (not params).
    int x = L.as_ir(in(0));
    int sh = L.emit_tmp(n->output(), "shape", "Shape", {x});
    int c = L.emit_tmp(n->output(), "channels", "Slice", {sh, L.const_ints({1}), L.const_ints({2})});
    Attribute one, zero;
    one.kind = zero.kind = Attribute::Kind::Tensor;
    one.tensor.dtype = zero.tensor.dtype = DType::Float32;
    one.tensor.dims = zero.tensor.dims = {1};
    int s = L.emit_tmp(n->output(), "ones", "ConstantOfShape", {c}, {{"value", one}});
    int b = L.emit_tmp(n->output(), "zeros", "ConstantOfShape", {c}, {{"value", zero}});
    L.emit_to(n->output(), "InstanceNormalization", {x, s, b},
              {{"epsilon", af(L.known_num(in(7)).value_or(1e-5))}});
    return true;
  }
  L.emit_to(n->output(), "InstanceNormalization", {L.as_ir(in(0)), L.as_ir(in(1)), L.as_ir(in(2))},
            {{"epsilon", af(L.known_num(in(7)).value_or(1e-5))}});
  return true;
}

enum class PoolBy : uint8_t { max, avg };
template <PoolBy by>
bool lower_pool(AtenLowerer& L, const Node* n, const std::string&) {
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  constexpr bool is_max = by == PoolBy::max;
  auto k = L.known_ints(in(1));
  auto s = L.known_ints(in(2));
  auto p = L.known_ints(in(3));
  if (!k || !p) return false;
  if (!s || s->empty()) s = k;
  std::vector<int64_t> pads = *p;
  pads.insert(pads.end(), p->begin(), p->end());
  Attrs a{{"kernel_shape", ais(*k)}, {"strides", ais(*s)}, {"pads", ais(pads)}};
  if (is_max) {
    auto d = L.known_ints(in(4));
    auto c = L.known_int(in(5));
    if (!d || !c) return false;
    a["dilations"] = ais(*d);
    a["ceil_mode"] = ai(*c);
    if (n->outputs().size() == 2) {  // max_pool*_with_indices: the indices as the second output
      auto r = L.emit("MaxPool", {L.as_ir(in(0))},
                      {AtenLowerer::ir_name(n->output(0)), AtenLowerer::ir_name(n->output(1))}, a);
      L.set_ir(n->output(0), r[0]);
      L.set_ir(n->output(1), r[1]);
      return true;
    }
    L.emit_to(n->output(), "MaxPool", {L.as_ir(in(0))}, a);
    return true;
  }
  auto c = L.known_int(in(4));
  auto cip = L.known_int(in(5));
  if (!c || !cip) return false;
  if (n->inputs().size() > 6 && !AtenLowerer::is_none(in(6))) return false;  // divisor_override: not ONNX
  a["ceil_mode"] = ai(*c);
  a["count_include_pad"] = ai(*cip);
  L.emit_to(n->output(), "AveragePool", {L.as_ir(in(0))}, a);
  return true;
}

template <PoolBy by>
bool lower_adaptive_pool(AtenLowerer& L, const Node* n, const std::string&) {
  auto size = L.known_ints(L.in(n, 1));
  if (!size) return false;
  bool global = true;
  for (auto s : *size) global = global && s == 1;
  constexpr bool is_max = by == PoolBy::max;
  int x = L.as_ir(L.in(n, 0));
  int out;
  if (global)
    out =
        L.emit(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {x}, {AtenLowerer::ir_name(n->output(0))})[0];
  else
    out = L.emit(is_max ? "AdaptiveMaxPool" : "AdaptiveAvgPool", {x}, {AtenLowerer::ir_name(n->output(0))},
                 {{"output_size", ais(*size)}}, "flopwise")[0];
  L.set_ir(n->output(0), out);
  if (n->outputs().size() == 2) L.set(n->output(1), JV());  // indices: not modelled
  return true;
}

// aten::convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
// output_padding, groups, output_mask): a PyTorch trace's backward of a convolution (a TorchScript graph has
// none) -> flopwise::ConvolutionBackward, its output_mask saying which gradients run.
bool lower_convolution_backward(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() != 11) return false;
  const JV& m = L.in(n, 10);
  std::vector<int64_t> mask;
  if (m.kind == JV::Known && m.iv.isBoolList()) {
    for (bool b : m.iv.toBoolList()) mask.push_back(b);
  } else if (auto ints = L.known_ints(m)) {
    mask = *ints;
  }
  auto transposed = L.known_int(L.in(n, 7));
  auto groups = L.known_int(L.in(n, 9));
  if (mask.size() != 3 || !transposed || !groups) return false;
  std::vector<std::string> names;
  for (size_t k = 0; k < 3; ++k) names.push_back(AtenLowerer::ir_name(n->output(k)));
  auto outs =
      L.emit("ConvolutionBackward", {L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 1)), L.as_ir(L.in(n, 2))}, names,
             {{"output_mask", ais(mask)},
              {"transposed", Attribute::of_int(*transposed)},
              {"groups", Attribute::of_int(*groups)}},
             "flopwise");
  for (size_t k = 0; k < 3 && k < outs.size(); ++k) L.set_ir(n->output(k), outs[k]);
  return true;
}

// A trace's batch-norm backward -> flopwise::BatchNormBackward(grad_output, input):
// native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd,
// train, eps, output_mask), and cuDNN's and MIOpen's (input, grad_output, weight, ...), which compute all
// three gradients.
enum class BnBackwardArgs : uint8_t { native, cudnn };
template <BnBackwardArgs args>
bool lower_batch_norm_backward(AtenLowerer& L, const Node* n, const std::string&) {
  constexpr bool native = args == BnBackwardArgs::native;
  if (n->inputs().size() < (native ? 10u : 8u) || n->outputs().size() != 3) return false;
  std::vector<int64_t> mask{1, 1, 1};
  if (native) {
    const JV& m = L.in(n, 9);
    mask.clear();
    if (m.kind == JV::Known && m.iv.isBoolList()) {
      for (bool b : m.iv.toBoolList()) mask.push_back(b);
    } else if (auto ints = L.known_ints(m)) {
      mask = *ints;
    }
    if (mask.size() != 3) return false;
  }
  const int dy = L.as_ir(L.in(n, native ? 0 : 1)), x = L.as_ir(L.in(n, native ? 1 : 0));
  if (dy < 0 || x < 0) return false;
  std::vector<std::string> names;
  for (size_t k = 0; k < 3; ++k) names.push_back(AtenLowerer::ir_name(n->output(k)));
  auto outs = L.emit("BatchNormBackward", {dy, x}, names, {{"output_mask", ais(mask)}}, "flopwise");
  for (size_t k = 0; k < 3 && k < outs.size(); ++k) L.set_ir(n->output(k), outs[k]);
  return true;
}

// max_pool{2,3}d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
// indices) -> flopwise::MaxPoolBackward(grad_output, indices), the input's shape as an attribute.
bool lower_max_pool_backward(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() != 8) return false;
  const int dy = L.as_ir(L.in(n, 0)), x = L.as_ir(L.in(n, 1)), idx = L.as_ir(L.in(n, 7));
  if (dy < 0 || x < 0 || idx < 0) return false;
  const Shape s = L.facts(x).shape;  // a copy: emitting reallocates the values
  if (!s.fully_known()) {            // symbolic sizes: the shape as a third input, from the forward's input
    const int shape = L.emit_tmp(n->output(), "input_shape", "Shape", {x});
    L.emit_to(n->output(), "MaxPoolBackward", {dy, idx, shape}, {}, "flopwise");
    return true;
  }
  std::vector<int64_t> dims;
  for (const auto& d : s.dims) dims.push_back(d.value());
  L.emit_to(n->output(), "MaxPoolBackward", {dy, idx}, {{"input_shape", ais(dims)}}, "flopwise");
  return true;
}

// aten::upsample_*(input, output_size?, [align_corners,] scale_factors?) (the .vec overloads) or
// (input, output_size, [align_corners,] scales...) -> Resize with scales [1, 1, s...] or sizes
// [N, C, output_size...].
enum class ResizeMode : uint8_t { nearest, linear, cubic };
template <ResizeMode mode>
bool lower_upsample(AtenLowerer& L, const Node* n, const std::string&) {
  const AtenValue* o = n->output();
  JV* size = L.arg(n, "output_size");
  JV* factors = L.arg(n, "scale_factors");
  Attrs a{{"mode", as(mode == ResizeMode::nearest ? "nearest"
                      : mode == ResizeMode::cubic ? "cubic"
                                                  : "linear")}};
  if (JV* ac = L.arg(n, "align_corners"))
    if (auto v = L.known_int(*ac); v && *v) a["coordinate_transformation_mode"] = as("align_corners");
  int x = L.as_ir(L.in(n, 0));
  if (factors && !AtenLowerer::is_none(*factors)) {
    auto f = L.known_doubles(*factors);
    if (!f) return false;
    std::vector<double> sc{1.0, 1.0};
    sc.insert(sc.end(), f->begin(), f->end());
    ConstData d;
    d.is_float = true;
    d.floats = sc;
    int scales = L.const_value(DType::Float32, Shape({Dim(static_cast<int64_t>(sc.size()))}), d);
    L.emit_to(o, "Resize", {x, -1, scales}, a);
    return true;
  }
  if (!size || AtenLowerer::is_none(*size)) return false;
  int sz = L.pack_ints(*size);
  if (sz < 0) return false;
  int shape = L.emit_tmp(o, "shape", "Shape", {x});
  int nc = L.emit_tmp(o, "nc", "Slice", {shape, L.const_ints({0}), L.const_ints({2})});
  int sizes = L.emit_tmp(o, "sizes", "Concat", {nc, sz}, {{"axis", ai(0)}});
  L.emit_to(o, "Resize", {x, -1, -1, sizes}, a);
  return true;
}

bool lower_embedding(AtenLowerer& L, const Node* n, const std::string&) {
  L.emit_to(n->output(), "Gather", {L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 1))}, {{"axis", ai(0)}});
  return true;
}

// embedding_bag(weight, indices, offsets, scale_grad, mode, sparse, per_sample_weights, include_last_offset,
// ...): the rows gathered, then reduced per bag (mode sum 0, mean 1, max 2) -> [bags, D]. nn.EmbeddingBag on
// 2-D input [B, N] passes it flattened with offsets arange(0, B*N, N): bags of equal size, lowered as a
// Reshape to [B, N, D] and a reduction over N. Bags of unequal or unknown sizes are not lowered (their
// sizes are data). Outputs 2-4 (offsets and indices bookkeeping) are not modelled.
bool lower_embedding_bag(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 5) return false;
  auto rank = L.known_rank(L.in(n, 1));
  auto mode = L.known_int(L.in(n, 4));
  if (!rank || !mode || *mode < 0 || *mode > 2) return false;
  if (n->inputs().size() > 6 && !AtenLowerer::is_none(L.in(n, 6))) return false;  // per-sample weights
  const AtenValue* o = n->output(0);
  int idx = L.as_ir(L.in(n, 1));
  if (*rank == 1) {
    const JV& off = L.in(n, 2);
    if (off.kind != JV::Tensor) return false;
    const flopwise::Value offsets = L.facts(off.ir);
    const Shape ishape = L.facts(idx).shape;
    bool last = n->inputs().size() > 7 && L.known_int(L.in(n, 7)).value_or(0) != 0;
    if (!offsets.data || offsets.data->is_float || !ishape.fully_known() || offsets.data->ints.size() < 2)
      return false;
    std::vector<int64_t> v;
    for (const auto& d : offsets.data->ints) {
      if (!d.is_known()) return false;
      v.push_back(d.value());
    }
    if (!last) v.push_back(ishape.dims[0].value());
    int64_t step = v[1] - v[0];
    for (size_t k = 1; k < v.size(); ++k)
      if (v[k] - v[k - 1] != step || v[0] != 0) return false;
    idx = L.emit_tmp(o, "bags", "Reshape", {idx, L.const_ints({static_cast<int64_t>(v.size() - 1), step})});
  } else if (*rank != 2) {
    return false;
  }
  int rows = L.emit_tmp(o, "rows", "Gather", {L.as_ir(L.in(n, 0)), idx}, {{"axis", ai(0)}});
  const char* reduce = *mode == 0 ? "ReduceSum" : *mode == 1 ? "ReduceMean" : "ReduceMax";
  L.emit_to(o, reduce, {rows, L.const_ints({1})}, {{"keepdims", ai(0)}});
  for (size_t k = 1; k < n->outputs().size(); ++k) L.set(n->output(k), JV());
  return true;
}

// torch._grouped_mm(self, mat2, offs=None, bias=None, out_dtype=None) and transformers' grouped_mm_fallback
// (input, weight, offs), which runs the same products one expert at a time: one GroupedMatMul.
bool lower_grouped_mm(AtenLowerer& L, const Node* n, const std::string&) {
  std::vector<int> ins{L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 1))};
  for (size_t i = 2; i < 4 && i < n->inputs().size(); ++i) {
    if (AtenLowerer::is_none(L.in(n, i))) {
      if (i == 3) break;
      ins.push_back(-1);
      continue;
    }
    ins.push_back(L.as_ir(L.in(n, i)));
  }
  while (!ins.empty() && ins.back() < 0) ins.pop_back();
  L.emit_to(n->output(), "GroupedMatMul", ins, {}, "flopwise");
  return true;
}

}  // namespace

void register_aten_nn(AtenTable& t) {
  t.add({"matmul", "mm", "bmm"}, lower_matmul);
  t.add("linear", lower_linear);
  t.add("addmm", lower_addmm<AddMmAs::gemm>);
  t.add("baddbmm", lower_addmm<AddMmAs::matmul_add>);
  t.add({"_grouped_mm", "transformers::grouped_mm_fallback"}, lower_grouped_mm);
  t.add("einsum", lower_einsum);
  t.add("bilinear", lower_bilinear);
  t.add({"_convolution", "convolution"}, lower_conv<ConvArgs::convolution>);
  t.add({"conv1d", "conv2d", "conv3d"}, lower_conv<ConvArgs::conv>);
  t.add({"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}, lower_conv<ConvArgs::conv_transpose>);
  t.add("batch_norm", lower_batch_norm);
  t.add({"_native_batch_norm_legit_functional", "_native_batch_norm_legit", "native_batch_norm"},
        lower_native_batch_norm);
  t.add("_native_batch_norm_legit_no_training", lower_batch_norm_no_training);
  t.add("layer_norm", lower_layer_norm);
  t.add("group_norm", lower_group_norm);
  t.add("instance_norm", lower_instance_norm);
  t.add({"max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
         "max_pool3d_with_indices"},
        lower_pool<PoolBy::max>);
  t.add({"avg_pool1d", "avg_pool2d", "avg_pool3d"}, lower_pool<PoolBy::avg>);
  t.add({"convolution_backward"}, lower_convolution_backward);
  t.add("native_batch_norm_backward", lower_batch_norm_backward<BnBackwardArgs::native>);
  t.add({"cudnn_batch_norm_backward", "miopen_batch_norm_backward"},
        lower_batch_norm_backward<BnBackwardArgs::cudnn>);
  t.add({"max_pool2d_with_indices_backward", "max_pool3d_with_indices_backward"}, lower_max_pool_backward);
  t.add({"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"},
        lower_adaptive_pool<PoolBy::avg>);
  t.add({"adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"},
        lower_adaptive_pool<PoolBy::max>);
  t.add({"upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d"},
        lower_upsample<ResizeMode::nearest>);
  t.add({"upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d"},
        lower_upsample<ResizeMode::linear>);
  t.add("upsample_bicubic2d", lower_upsample<ResizeMode::cubic>);
  t.add("embedding", lower_embedding);
  t.add({"embedding_bag", "_embedding_bag", "_embedding_bag_forward_only"}, lower_embedding_bag);
}

}  // namespace flopwise
