// src/cost/training.cc — the training step (flopwise/training.h): requires_grad propagated through the graph
// from the trainable parameters, each op's backward by the rules of docs/COUNTING.md ("The training step"),
// the parameters' gradients and the optimizer's state and FLOPs, rolled up by scope as the report's tree.
#include "flopwise/training.h"

#include <optional>
#include <set>
#include <unordered_map>

#include "flopwise/attention.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/ops.h"
#include "stored_tensors.h"
#include "training_step.h"

namespace flopwise {

Optimizer parse_optimizer(const std::string& name) {
  if (name == "sgd") return Optimizer::Sgd;
  if (name == "momentum") return Optimizer::Momentum;
  if (name == "adam") return Optimizer::Adam;
  if (name == "adamw") return Optimizer::AdamW;
  throw UsageError("--optimizer: '" + name + "' is not one of sgd, momentum, adam, adamw");
}

const char* optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::Sgd:
      return "sgd";
    case Optimizer::Momentum:
      return "momentum";
    case Optimizer::Adam:
      return "adam";
    case Optimizer::AdamW:
      return "adamw";
  }
  return "?";
}

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "bf16-mixed") return Precision::Bf16Mixed;
  if (name == "fp16-mixed") return Precision::Fp16Mixed;
  if (name == "bf16-master") return Precision::Bf16Master;
  if (name == "fp16-master") return Precision::Fp16Master;
  throw UsageError("--precision: '" + name +
                   "' is not one of fp32, bf16-mixed, fp16-mixed, bf16-master, fp16-master");
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Fp32:
      return "fp32";
    case Precision::Bf16Mixed:
      return "bf16-mixed";
    case Precision::Fp16Mixed:
      return "fp16-mixed";
    case Precision::Bf16Master:
      return "bf16-master";
    case Precision::Fp16Master:
      return "fp16-master";
  }
  return "?";
}

Device parse_device(const std::string& name) {
  if (name == "cuda") return Device::Cuda;
  if (name == "cpu") return Device::Cpu;
  throw UsageError("--device: '" + name + "' is not one of cuda, cpu");
}

const char* device_name(Device d) { return d == Device::Cpu ? "cpu" : "cuda"; }

void TrainCounts::add(const TrainCounts& o) {
  forward_extra_flops += o.forward_extra_flops;
  backward_macs += o.backward_macs;
  backward_flops += o.backward_flops;
  trainable_params += o.trainable_params;
  saved_bytes += o.saved_bytes;
}

namespace {

using cost_detail::Role;

// Which scopes a list of scope globs names (--freeze, --checkpoint; scope_glob_match, as budgets): a glob
// matching the scope or any scope above it; the region is the outermost scope matched.
class ScopeGlobs {
 public:
  explicit ScopeGlobs(const std::vector<std::string>& globs) : globs_(globs), used_(globs.size(), false) {}
  // The outermost scope of `scope`'s chain that a glob matches, or nullptr.
  const std::string* region(std::string_view scope) {
    if (globs_.empty()) return nullptr;
    auto [it, fresh] = memo_.try_emplace(std::string(scope));
    if (fresh) {
      for (size_t end = 0;; ++end) {  // each prefix ending at a '.', then the whole scope
        end = scope.find('.', end);
        std::string prefix(scope.substr(0, end));
        for (size_t i = 0; i < globs_.size(); ++i)
          if (scope_glob_match(globs_[i], prefix)) {
            used_[i] = true;
            if (!it->second) it->second = std::move(prefix);
          }
        if (it->second || end == std::string_view::npos) break;
      }
    }
    return it->second ? &*it->second : nullptr;
  }
  bool matches(std::string_view scope) { return region(scope) != nullptr; }
  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < globs_.size(); ++i)
      if (!used_[i]) out.push_back(globs_[i]);
    return out;
  }

 private:
  const std::vector<std::string>& globs_;
  std::vector<bool> used_;
  std::unordered_map<std::string, std::optional<std::string>> memo_;
};

bool one_of(const std::string& op, std::initializer_list<const char*> ops) {
  for (const char* o : ops)
    if (op == o) return true;
  return false;
}

// Ops that only move or retype their input's elements (no arithmetic, no gradient of their own to compute
// beyond passing it back).
bool layout_only(const Node& n) {
  return (n.domain.empty() || n.domain == "ai.onnx") &&
         one_of(n.op, {"Identity", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Cast",
                       "Concat", "Slice", "Split", "Gather", "Expand"});
}

using cost_detail::view_op;

// A view whose elements are not contiguous: a transpose that moves a dim, a split or slice of an axis after
// the leading ones (dims of 1 before it aside), an expand.
bool makes_strided_view(const Graph& g, const Node& n) {
  if (n.op == "Expand") return true;
  if (n.op == "TransposeDims") return n.attr_i("dim0", 0) != n.attr_i("dim1", 1);
  if (n.op == "Transpose") {
    auto it = n.attrs.find("perm");
    if (it == n.attrs.end()) return true;
    for (size_t k = 0; k < it->second.ints.size(); ++k)
      if (it->second.ints[k] != static_cast<int64_t>(k)) return true;
    return false;
  }
  if (n.op != "Split" && n.op != "Slice") return false;
  const Shape& x = g.values[static_cast<size_t>(n.inputs[0])].shape;
  if (!x.rank_known) return true;
  int64_t axis = n.attr_i("axis", 0);
  if (n.op == "Slice") {  // axes in an input: one leading-axis slice is contiguous, else strided
    if (n.inputs.size() < 4 || n.inputs[3] < 0) return x.rank() > 1;
    const Value& axes = g.values[static_cast<size_t>(n.inputs[3])];
    if (!axes.data || axes.data->is_float || axes.data->ints.size() != 1 || !axes.data->ints[0].is_known())
      return true;
    axis = axes.data->ints[0].value();
  }
  if (axis < 0) axis += static_cast<int64_t>(x.rank());
  for (int64_t d = 0; d < axis && d < static_cast<int64_t>(x.rank()); ++d)
    if (!(x.dims[static_cast<size_t>(d)].is_known() && x.dims[static_cast<size_t>(d)].value() == 1))
      return true;
  return false;
}

// An ONNX Dropout's probability: its ratio input (opset 12 on) or attribute, 0.5 where neither is given;
// nullopt where the input is computed.
std::optional<double> dropout_ratio(const Graph& g, const Node& n) {
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const Value& r = g.values[static_cast<size_t>(n.inputs[1])];
    if (r.data && r.data->is_float && r.data->floats.size() == 1) return r.data->floats[0];
    return std::nullopt;
  }
  return n.attr_f("ratio", 0.5);
}

bool is_dropout(const Node& n) { return (n.domain.empty() || n.domain == "ai.onnx") && n.op == "Dropout"; }

// What an elementwise op's backward reads (derivatives.yaml): its result or its input. In place, autograd
// saves a copy of the input an op's formula reads before the op overwrites it (hardswish_, hardsigmoid_,
// hardtanh_ and ReLU6, clamp_), unless torch's in-place formula reads the result instead (leaky_relu_,
// elu_, celu_, selu_: InputOrResult). Measured: models/train_keep.py.
enum class Reads : uint8_t { Result, Input, InputOrResult };

const Reads* elementwise_reads(const Node& n) {
  static const std::unordered_map<std::string_view, Reads> table = [] {
    std::unordered_map<std::string_view, Reads> t;
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Sqrt", "Softmax", "LogSoftmax", "Reciprocal"})
      t.emplace(op, Reads::Result);
    for (const char* op : {"LeakyRelu", "Elu", "Selu", "Celu"}) t.emplace(op, Reads::InputOrResult);
    for (const char* op :
         {"Gelu", "Erf", "Log", "Abs", "Sin", "Cos", "HardSigmoid", "HardSwish", "Softplus", "Softsign",
          "Mish", "Clip", "Pow", "AveragePool", "GlobalAveragePool", "ReduceL2", "ThresholdedRelu", "PRelu"})
      t.emplace(op, Reads::Input);
    return t;
  }();
  if (!(n.domain.empty() || n.domain == "ai.onnx")) return nullptr;
  auto it = table.find(n.op);
  return it == table.end() ? nullptr : &it->second;
}

// A BatchNormalization counted as an inference one (2 FLOPs per element): in train mode it computes the batch
// statistics (7 per element, as the op's cost counts a training one).
bool bn_inference(const Node& n) {
  return (n.domain.empty() || n.domain == "ai.onnx") && n.op == "BatchNormalization" &&
         !batch_norm_training(n);
}

// torch.autocast's treatment of an op (CUDA's lists, aten/src/ATen/autocast_mode.cpp): products run in the
// low dtype, the fp32 list's ops in float32, the promote list's in the widest input dtype; other ops in
// their inputs' dtype.
enum class Autocast : uint8_t { None, Low, Fp32, Promote };

Autocast autocast_of(const Node& n) {
  if (n.domain == "com.microsoft" && n.op == "FusedMatMul") return Autocast::Low;
  if (!(n.domain.empty() || n.domain == "ai.onnx")) return Autocast::None;
  if (one_of(n.op, {"Conv", "ConvTranspose", "MatMul", "Gemm", "Einsum", "LSTM", "GRU", "RNN", "PRelu"}))
    return Autocast::Low;
  if (one_of(n.op, {"Softmax",
                    "LogSoftmax",
                    "LayerNormalization",
                    "GroupNormalization",
                    "Exp",
                    "Log",
                    "Pow",
                    "Reciprocal",
                    "Softplus",
                    "ReduceSum",
                    "ReduceProd",
                    "ReduceL1",
                    "ReduceL2",
                    "ReduceLogSumExp",
                    "LpNormalization",
                    "CumSum",
                    "Tan",
                    "Sinh",
                    "Cosh",
                    "Asin",
                    "Acos"}))
    return Autocast::Fp32;
  if (n.op == "Concat") return Autocast::Promote;
  return Autocast::None;
}

DType widest(DType a, DType b) {
  if (a == DType::Undefined || a == b) return b;
  if (b == DType::Undefined) return a;
  if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
  return DType::Float32;  // float32 with anything, or float16 with bfloat16
}

// A recurrent op's steps and hidden elements per step, over its directions: batch x hidden x directions.
struct RnnSteps {
  Count steps, per_step;
};

bool rnn_steps(const Graph& g, const Node& n, RnnSteps* out) {
  if (n.inputs.size() < 3 || n.inputs[0] < 0 || n.inputs[2] < 0 || n.outputs.empty() || n.outputs[0] < 0)
    return false;
  const Shape& x = g.values[static_cast<size_t>(n.inputs[0])].shape;
  const Shape& r = g.values[static_cast<size_t>(n.inputs[2])].shape;  // [directions, gates x hidden, hidden]
  if (!x.rank_known || x.rank() != 3 || !r.rank_known || r.rank() != 3) return false;
  const bool batch_first = n.attr_i("layout", 0) != 0;
  out->steps = Count::of(batch_first ? x.dims[1] : x.dims[0]);
  out->per_step =
      Count::of(batch_first ? x.dims[0] : x.dims[1]) * Count::of(r.dims[2]) * Count::of(r.dims[0]);
  return true;
}

// The first eight names of a list, and how many more.
std::string first_eight(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < 8; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 8) list += ", and " + std::to_string(names.size() - 8) + " more";
  return list;
}

Count numel_of(const Graph& g, int vi) {
  if (vi < 0) return Count::unknown();
  return g.values[static_cast<size_t>(vi)].shape.numel_count();
}

// A recurrent op's products split: the input projection (X by W, all steps at once) and the recurrence (the
// hidden state by R, step by step). False when the shapes do not say.
bool split_recurrent(const Graph& g, const Node& n, const Count& macs, Count* input_part,
                     Count* recurrent_part, Count* first_step) {
  if (n.inputs.size() < 3 || n.inputs[0] < 0 || n.inputs[1] < 0 || n.inputs[2] < 0) return false;
  const Shape& x = g.values[static_cast<size_t>(n.inputs[0])].shape;
  const Shape& w = g.values[static_cast<size_t>(n.inputs[1])].shape;
  if (!x.rank_known || x.rank() != 3 || !w.rank_known || w.rank() != 3) return false;
  const Dim batch = n.attr_i("layout", 0) == 0 ? x.dims[1] : x.dims[0];
  *input_part = x.numel_count() * Count::of(w.dims[0]) * Count::of(w.dims[1]);
  *recurrent_part = macs - *input_part;
  *first_step = Count::of(batch) * numel_of(g, n.inputs[2]);
  return input_part->exact() && recurrent_part->exact() && first_step->exact();
}

}  // namespace

TrainingReport analyse_training(const Model& model, const Report& report, const TrainOptions& opts) {
  if (report.joint) return cost_detail::analyse_joint_training(model, report, opts);
  const Graph& g = model.graph;
  const bool scalar_literals = model.format == ModelFormat::ExportArchive;  // .pt2: Scalars, not tensors
  TrainingReport t;
  t.optimizer = opts.optimizer;
  t.precision = opts.precision;
  t.device = opts.device;
  t.freeze = opts.freeze;
  t.checkpoint = opts.checkpoint;
  t.nodes.resize(report.nodes.size());
  ScopeGlobs freeze(opts.freeze), checkpoint(opts.checkpoint);
  // --checkpoint: each node's region (its outermost checkpointed scope), nullptr outside any.
  std::vector<const std::string*> region(std::min(g.nodes.size(), report.nodes.size()), nullptr);
  std::vector<uint8_t> has_backward(region.size(), 0);
  cost_detail::WeightSources sources(g);
  const size_t n_nodes = std::min(g.nodes.size(), report.nodes.size());

  // Stored tensors, and what layout-only ops make of stored tensors alone (an exporter's Identity of a
  // deduplicated initializer, a transposed weight): each such value's roots, the stored tensors under it. A
  // parameter is frozen when any op using it (through such ops) is in a frozen scope, as freezing a module's
  // parameters in torch freezes a tied one for all its users.
  std::vector<std::vector<int>> roots(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (cost_detail::is_stored(g, g.values[v])) roots[v] = {static_cast<int>(v)};
  std::vector<uint8_t> layout_of_stored(n_nodes, 0), frozen_root(g.values.size(), 0);
  // Storages, as torch lays tensors out: a view's output and an in-place op's result are their first
  // input's storage; a transpose, or a split or slice past the leading axis, is a view that is not
  // contiguous, and reshaping such a view (or making it contiguous: an Identity) copies it into a storage of
  // its own.
  std::vector<int> storage(g.values.size());
  std::vector<uint8_t> strided(g.values.size(), 0);  // a view that is not contiguous
  for (size_t v = 0; v < storage.size(); ++v) storage[v] = static_cast<int>(v);
  for (size_t i = 0; i < n_nodes; ++i) {
    const Node& n = g.nodes[i];
    const bool frozen = freeze.matches(report.nodes[i].scope);
    region[i] = checkpoint.region(report.nodes[i].scope);
    const int in0 = n.inputs.empty() ? -1 : n.inputs[0];
    const bool no_dropout = is_dropout(n) && dropout_ratio(g, n) == 0.0;  // returns its input
    if (in0 >= 0 && (view_op(n) || no_dropout || n.has_attr(kInplaceAttr))) {
      const bool copies =
          strided[static_cast<size_t>(in0)] && (n.op == "Reshape" || n.op == "Flatten" || n.op == "Identity");
      const bool strides = !copies && (strided[static_cast<size_t>(in0)] || makes_strided_view(g, n));
      for (int o : n.outputs)
        if (o >= 0 && !copies) {
          storage[static_cast<size_t>(o)] = storage[static_cast<size_t>(in0)];
          strided[static_cast<size_t>(o)] = strides;
        }
    }
    if (layout_only(n)) {
      std::vector<int> under;
      bool all_stored = true;
      for (int vi : n.inputs) {
        if (vi < 0) continue;
        if (roots[static_cast<size_t>(vi)].empty()) {
          all_stored = false;
          break;
        }
        const auto& r = roots[static_cast<size_t>(vi)];
        under.insert(under.end(), r.begin(), r.end());
      }
      if (all_stored) {
        layout_of_stored[i] = 1;
        for (int o : n.outputs)
          if (o >= 0) roots[static_cast<size_t>(o)] = under;
        continue;
      }
    }
    if (frozen)
      for (int vi : n.inputs)
        if (vi >= 0)
          for (int r : roots[static_cast<size_t>(vi)]) frozen_root[static_cast<size_t>(r)] = 1;
  }

  // --precision: each value's dtype under torch.autocast (CUDA's lists); an op's operand autocast casts is a
  // copy of its own. A layout-only op of stored tensors alone stays in their dtype (a weight's transpose: the
  // product casts it); an op of activations runs in theirs, whatever dtype a parameter beside them has (a
  // bias, a norm's scale).
  const bool master = is_master(opts.precision);
  const bool mixed = opts.precision != Precision::Fp32 && !master;
  const bool fp16 = opts.precision == Precision::Fp16Mixed || opts.precision == Precision::Fp16Master;
  const DType low = fp16 ? DType::Float16 : DType::BFloat16;
  // 16-bit weights with fp32 master copies: every float32 tensor (weights, activations, gradients) is 16-bit.
  auto stored_dtype = [&](DType d) { return master && d == DType::Float32 ? low : d; };
  std::vector<DType> adt(g.values.size());
  for (size_t v = 0; v < adt.size(); ++v) adt[v] = stored_dtype(g.values[v].dtype);
  if (mixed)
    for (size_t i = 0; i < n_nodes; ++i) {
      const Node& n = g.nodes[i];
      const Autocast kind = autocast_of(n);
      if ((n.domain.empty() || n.domain == "ai.onnx") && (n.op == "Cast" || n.op == "CastLike")) continue;
      DType acts = DType::Undefined, stored = DType::Undefined;
      for (int vi : n.inputs)
        if (vi >= 0 && is_float(adt[static_cast<size_t>(vi)])) {
          DType& d = roots[static_cast<size_t>(vi)].empty() ? acts : stored;
          d = widest(d, adt[static_cast<size_t>(vi)]);
        }
      const DType run = kind == Autocast::Promote  ? widest(acts, stored)
                        : acts != DType::Undefined ? acts
                                                   : stored;
      for (int o : n.outputs) {
        if (o < 0 || !is_float(g.values[static_cast<size_t>(o)].dtype)) continue;
        DType& d = adt[static_cast<size_t>(o)];
        if (kind == Autocast::Low)
          d = low;
        else if (kind == Autocast::Fp32)
          d = d == DType::Float64 ? d : DType::Float32;
        else if (run != DType::Undefined)
          d = run;
      }
    }
  // The dtype of the copy autocast makes of node n's operand at `slot`, or Undefined where it takes it as is.
  auto copy_to = [&](const Node& n, size_t slot) {
    if (!mixed || slot >= n.inputs.size() || n.inputs[slot] < 0) return DType::Undefined;
    const DType d = adt[static_cast<size_t>(n.inputs[slot])];
    if (!is_float(d)) return DType::Undefined;
    DType want = DType::Undefined;
    switch (autocast_of(n)) {
      case Autocast::Low:
        want = low;
        break;
      case Autocast::Fp32:
        want = d == DType::Float64 ? d : DType::Float32;
        break;
      case Autocast::Promote:
        if (!n.outputs.empty() && n.outputs[0] >= 0) want = adt[static_cast<size_t>(n.outputs[0])];
        break;
      case Autocast::None:
        break;
    }
    return want == d ? DType::Undefined : want;
  };

  std::vector<uint8_t> needs_grad(g.values.size(), 0), seen(g.values.size(), 0), kept(g.values.size(), 0);
  std::vector<uint8_t> cast_kept(mixed ? g.values.size() : 0, 0);  // a parameter's cached copy, kept
  auto bytes_of = [&](int vi) { return numel_of(g, vi) * Count{dtype_size(adt[static_cast<size_t>(vi)])}; };
  std::vector<std::string> unknown_dropout;
  Count trainable_bytes;
  int64_t trainable_tensors = 0;
  for (size_t i = 0; i < n_nodes; ++i) {
    const Node& n = g.nodes[i];
    const NodeReport& nr = report.nodes[i];
    TrainCounts& tc = t.nodes[i];
    if (layout_of_stored[i]) continue;  // its output's parameters are decided where they are used
    // The forward in train mode: an active dropout draws its mask and multiplies (2 per element), a batch
    // norm computes its batch's statistics (7 per element, where the report counted 2).
    const Count out_elems = n.outputs.empty() ? Count::unknown() : numel_of(g, n.outputs[0]);
    std::optional<double> ratio;
    if (is_dropout(n)) {
      ratio = dropout_ratio(g, n);
      if (!ratio) unknown_dropout.push_back(n.name);
      if (!ratio || *ratio > 0) tc.forward_extra_flops = out_elems * Count{2};
    } else if (bn_inference(n)) {
      tc.forward_extra_flops = out_elems * Count{5};
    }
    // Parameters first used here (directly or through layout-only ops): trainable unless frozen.
    std::vector<uint8_t> stored_grad(n.inputs.size(), 0);
    for (size_t s = 0; s < n.inputs.size(); ++s) {
      const int vi = n.inputs[s];
      if (vi < 0) continue;
      for (int r : roots[static_cast<size_t>(vi)]) {
        const Value& v = g.values[static_cast<size_t>(r)];
        if (!seen[static_cast<size_t>(r)]) {
          seen[static_cast<size_t>(r)] = 1;
          if (cost_detail::stored_role(g, v, n, s, sources, v) == Role::Param) {
            const Count numel = v.shape.numel_count();
            t.param_bytes += numel * Count{dtype_size(stored_dtype(v.dtype))};
            if (frozen_root[static_cast<size_t>(r)]) {
              t.frozen_params += numel;
            } else {
              tc.trainable_params += numel;
              trainable_bytes += numel * Count{dtype_size(stored_dtype(v.dtype))};
              ++trainable_tensors;
              needs_grad[static_cast<size_t>(r)] = 1;
            }
          }
        }
        if (needs_grad[static_cast<size_t>(r)]) stored_grad[s] = 1;
      }
    }
    auto grad = [&](size_t slot) {
      return slot < n.inputs.size() && n.inputs[slot] >= 0 &&
             (stored_grad[slot] || needs_grad[static_cast<size_t>(n.inputs[slot])]);
    };
    bool any_in = false;
    for (size_t s = 0; s < n.inputs.size(); ++s) any_in = any_in || grad(s);
    bool any_out = false;
    for (int o : n.outputs)
      if (o >= 0 && any_in && is_float(g.values[static_cast<size_t>(o)].dtype)) {
        needs_grad[static_cast<size_t>(o)] = 1;
        any_out = true;
      }
    if (!any_out) continue;  // no gradient flows back through this node

    const Count& macs = nr.cost.macs;
    // the op's arithmetic beside its products, in train mode
    const Count other = nr.cost.flops + tc.forward_extra_flops - macs * Count{2};
    const bool onnx = n.domain.empty() || n.domain == "ai.onnx";
    Count bwd;
    if ((onnx && (n.op == "Conv" || n.op == "ConvTranspose" || n.op == "MatMul" || n.op == "Gemm")) ||
        (n.domain == "com.microsoft" && n.op == "FusedMatMul") ||
        (onnx && n.op == "Einsum" && n.inputs.size() == 2)) {
      // Two operands: each one's gradient is a product of the other with the output's gradient, as many
      // MACs as the forward's.
      bwd = macs * Count{int64_t{grad(0)} + int64_t{grad(1)}};
    } else if (Count in, rec, first; onnx && (n.op == "LSTM" || n.op == "GRU" || n.op == "RNN") &&
                                     split_recurrent(g, n, macs, &in, &rec, &first)) {
      // dX and dW: the input projection's; dR: the recurrence's; the hidden state's gradient at every step
      // but the first, unless the initial state needs one too.
      bwd = (grad(0) ? in : Count{}) + (grad(1) ? in : Count{}) + (grad(2) ? rec : Count{}) +
            (grad(5) ? rec : rec - first);
    } else if (macs.known && macs.v == 0) {
      bwd = Count{};
    } else {
      bwd = macs * Count{2};
      t.estimated.push_back(n.name + " (" + n.op + ")");
    }
    tc.backward_macs = bwd;
    tc.backward_flops = bwd * Count{2} + other;
    has_backward[i] = 1;

    // What its backward keeps (derivatives.yaml), each storage once; in a checkpointed region, only what
    // enters the region (its forward runs again in the backward and keeps the rest then).
    auto keep_value = [&](int vi) {
      if (vi < 0) return;
      const size_t st = static_cast<size_t>(storage[static_cast<size_t>(vi)]);
      const Value& owner = g.values[st];
      // a literal the .pt2 importer made (a Python scalar operand: autograd keeps a Scalar, no tensor) has no
      // producer, as inputs and stored tensors have none; a TorchScript tensor constant is a tensor it keeps
      if (kept[st] || owner.is_input || cost_detail::is_stored(g, owner) ||
          (scalar_literals && owner.producer < 0))
        return;
      kept[st] = 1;
      tc.saved_bytes += bytes_of(static_cast<int>(st));
    };
    auto keep_fresh = [&](const Count& elems, DType dt) { tc.saved_bytes += elems * Count{dtype_size(dt)}; };
    auto keep_in = [&](size_t slot) {
      if (slot >= n.inputs.size() || n.inputs[slot] < 0) return;
      const DType copy = copy_to(n, slot);
      if (copy == DType::Undefined) return keep_value(n.inputs[slot]);
      // autocast's copy: one per trainable parameter (autocast caches those), else one per use
      const auto& r = roots[static_cast<size_t>(n.inputs[slot])];
      if (r.size() == 1 && needs_grad[static_cast<size_t>(r[0])]) {
        if (cast_kept[static_cast<size_t>(r[0])]) return;
        cast_kept[static_cast<size_t>(r[0])] = 1;
      }
      keep_fresh(numel_of(g, n.inputs[slot]), copy);
    };
    auto keep_out = [&](size_t k) {
      if (k < n.outputs.size()) keep_value(n.outputs[k]);
    };
    const Shape* x =
        !n.inputs.empty() && n.inputs[0] >= 0 ? &g.values[static_cast<size_t>(n.inputs[0])].shape : nullptr;
    const std::string& op = n.op;
    const bool ext = n.domain == "flopwise";  // the TorchScript importer's own ops
    if (region[i]) {
      for (size_t s = 0; s < n.inputs.size(); ++s) {
        const int vi = n.inputs[s];
        const int p = vi >= 0 ? g.values[static_cast<size_t>(vi)].producer : -1;
        const std::string* from =
            p >= 0 && static_cast<size_t>(p) < region.size() ? region[static_cast<size_t>(p)] : nullptr;
        if (!from || *from != *region[i]) keep_in(s);
      }
    } else if (ext && (op == "TransposeDims" || op == "PackScalars")) {
      // a view; scalars
    } else if (ext && op == "AdaptiveAvgPool") {
      keep_in(0);
    } else if (ext && op == "AdaptiveMaxPool") {
      keep_in(0);  // and int64 indices per output element
      if (!n.outputs.empty() && n.outputs[0] >= 0)
        keep_fresh(g.values[static_cast<size_t>(n.outputs[0])].shape.numel_count(), DType::Int64);
    } else if (!onnx && !(n.domain == "com.microsoft" && op == "FusedMatMul")) {
      for (size_t s = 0; s < n.inputs.size(); ++s) keep_in(s);
      t.saved_estimated.push_back(n.name + " (" + n.domain + "::" + op + ")");
    } else if (op == "Conv" || op == "ConvTranspose") {
      keep_in(0);  // one formula (convolution_backward) for every gradient: both operands, whichever is asked
      keep_in(1);
    } else if (one_of(op, {"MatMul", "Gemm", "FusedMatMul", "Einsum", "Mul"})) {
      if (grad(1)) keep_in(0);  // an operand for the other's gradient
      if (grad(0)) keep_in(1);
    } else if (op == "Div") {
      if (grad(0) || grad(1)) keep_in(1);
      if (grad(1)) keep_in(0);
    } else if (const Reads* reads = elementwise_reads(n)) {
      if (*reads == Reads::Result || (*reads == Reads::InputOrResult && n.has_attr(kInplaceAttr)))
        keep_out(0);  // the result (an in-place one shares its input's storage)
      else if (n.has_attr(kInplaceAttr) && x)
        keep_fresh(x->numel_count(), adt[static_cast<size_t>(n.inputs[0])]);  // the input, copied first
      else
        keep_in(0);  // the input
      if (op == "PRelu" && grad(0)) keep_in(1);
    } else if (op == "BatchNormalization") {
      keep_in(0);  // and the batch's mean and inverse std, one per channel
      if (x && x->rank_known && x->rank() >= 2) keep_fresh(Count::of(x->dims[1]) * Count{2}, DType::Float32);
    } else if (op == "LayerNormalization") {
      keep_in(0);  // and the mean and inverse std of each normalised row
      if (x && x->rank_known) {
        int64_t axis = n.attr_i("axis", -1);
        if (axis < 0) axis += static_cast<int64_t>(x->rank());
        Count rows{1};
        for (int64_t d = 0; d < axis && d < static_cast<int64_t>(x->rank()); ++d)
          rows = rows * Count::of(x->dims[static_cast<size_t>(d)]);
        keep_fresh(rows * Count{2}, DType::Float32);
      }
    } else if (op == "MaxPool" || op == "GlobalMaxPool") {
      keep_in(0);  // and the argmax indices, int64 per output element
      if (n.outputs.size() > 1 && n.outputs[1] >= 0)
        keep_out(1);
      else if (!n.outputs.empty() && n.outputs[0] >= 0)
        keep_fresh(g.values[static_cast<size_t>(n.outputs[0])].shape.numel_count(), DType::Int64);
    } else if (RnnSteps steps; one_of(op, {"LSTM", "GRU", "RNN"}) && rnn_steps(g, n, &steps)) {
      // torch's recurrent cells, step by step (per direction): an LSTM or GRU keeps its gates, its previous
      // cell state (or the GRU's products) and their activations, 6 per hidden element and step, and the
      // previous hidden state for R's gradient; a tanh/ReLU RNN its outputs and the initial state for R's.
      // The input for W's gradient.
      if (grad(1)) keep_in(0);
      const DType dt = adt[static_cast<size_t>(n.outputs[0])];
      if (op == "RNN")
        keep_fresh(steps.per_step * steps.steps + (grad(2) ? steps.per_step : Count{}), dt);
      else
        keep_fresh(steps.per_step * steps.steps * Count{grad(2) ? 7 : 6}, dt);
    } else if (is_dropout(n)) {
      // An active dropout keeps what it multiplied by: a mask as an output of its own (ONNX's,
      // aten::native_dropout's), a bool per element; else out of place on CUDA, the fused kernel's bool mask;
      // on the CPU, in place, or per channel (Dropout2d/3d, one draw per channel), on any device, the noise
      // tensor in the input's dtype (ATen's Dropout.cpp; models/train_keep.py).
      if (n.outputs.size() > 1 && n.outputs[1] >= 0) {
        keep_out(1);
      } else if (!ratio || *ratio > 0) {
        const bool per_channel = n.attr_i("flopwise.per_channel", 0) && x && x->rank_known && x->rank() >= 2;
        const bool fused = opts.device == Device::Cuda && !per_channel && !n.has_attr(kInplaceAttr);
        const Count elems = per_channel ? Count::of(x->dims[0]) * Count::of(x->dims[1]) : out_elems;
        keep_fresh(elems, fused || !x ? DType::Bool : adt[static_cast<size_t>(n.inputs[0])]);
      }
    } else if (op == "TopK") {
      keep_out(1);  // the indices (derivatives.yaml: value_selecting_reduction_backward)
    } else if (op == "Gather" || op == "GatherElements" || op == "GatherND") {
      keep_in(1);  // the indices
    } else if (op == "Where") {
      keep_in(0);  // the condition
    } else if (one_of(op, {"ReduceMax", "ReduceMin"})) {
      keep_in(0);
      keep_out(0);
    } else if (view_op(n) || one_of(op, {"Add", "Sub", "Neg", "Concat", "Cast", "ReduceSum", "ReduceMean",
                                         "Pad", "Dropout", "Tile", "Sum", "Mean"})) {
      // sizes only
    } else {
      for (size_t s = 0; s < n.inputs.size(); ++s) keep_in(s);
      t.saved_estimated.push_back(n.name + " (" + op + ")");
    }

    // The backward's transient at this op: its outputs' gradients and the input gradients it makes.
    Count transient;
    for (int o : n.outputs)
      if (o >= 0 && needs_grad[static_cast<size_t>(o)]) transient += bytes_of(o);
    for (size_t s = 0; s < n.inputs.size(); ++s)
      if (grad(s) && !stored_grad[s]) transient += bytes_of(n.inputs[s]);
    if (t.transient_at.empty() || rank_value(transient) > rank_value(t.backward_transient_bytes)) {
      t.backward_transient_bytes = transient;
      t.transient_at = n.name;
      t.transient_scope = std::string(nr.scope);
    }
  }

  // --checkpoint: a region with a backward runs its forward again during it, every node of it.
  std::set<std::string> active;
  for (size_t i = 0; i < region.size(); ++i)
    if (region[i] && has_backward[i]) active.insert(*region[i]);
  for (size_t i = 0; i < region.size(); ++i)
    if (region[i] && active.count(*region[i])) {
      t.nodes[i].backward_macs += report.nodes[i].cost.macs;
      t.nodes[i].backward_flops += report.nodes[i].cost.flops;
    }

  cost_detail::roll_up_training(t, report);
  cost_detail::count_optimizer(t, opts, trainable_bytes, trainable_tensors);
  t.forward_flops = report.totals.flops + t.total.forward_extra_flops;
  cost_detail::finish_training(t, g, report);
  t.estimate_backward_flops = report.totals.backward_flops;
  for (const auto& glob : freeze.unused())
    t.warnings.push_back("--freeze '" + glob + "' matches no scope of the model: nothing frozen by it");
  for (const auto& glob : checkpoint.unused())
    t.warnings.push_back("--checkpoint '" + glob +
                         "' matches no scope of the model: nothing checkpointed by it");
  if (!unknown_dropout.empty()) {
    t.warnings.push_back("--train: dropout probability computed in the graph for " +
                         first_eight(unknown_dropout) + ": counted as active");
  }
  if (!t.saved_estimated.empty()) {
    t.warnings.push_back("--train: no rule of what the backward keeps for " + first_eight(t.saved_estimated) +
                         ": their inputs counted");
  }
  if (!t.estimated.empty()) {
    t.warnings.push_back("--train: no exact backward rule for " + first_eight(t.estimated) +
                         ": 2 x forward MACs taken");
  }
  return t;
}

namespace cost_detail {

// Ops whose output is a view of their first input in torch (reshape of a contiguous tensor, transpose,
// slice, split, expand): it shares the input's storage.
bool view_op(const Node& n) {
  if (n.domain == "flopwise") return n.op == "TransposeDims";
  return (n.domain.empty() || n.domain == "ai.onnx") &&
         one_of(n.op, {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice",
                       "Split", "Expand"});
}

void roll_up_training(TrainingReport& t, const Report& report) {
  std::unordered_map<std::string_view, TrainCounts> by_scope;
  for (size_t i = 0; i < t.nodes.size() && i < report.nodes.size(); ++i) {
    std::string_view s = report.nodes[i].scope;
    by_scope[""].add(t.nodes[i]);
    for (size_t end = 0; !s.empty(); ++end) {
      end = s.find('.', end);
      by_scope[s.substr(0, end)].add(t.nodes[i]);
      if (end == std::string_view::npos) break;
    }
  }
  t.total = by_scope[""];
  if (report.scopes) {
    std::vector<const ScopeNode*> stack{report.scopes.get()};
    while (!stack.empty()) {
      const ScopeNode* s = stack.back();
      stack.pop_back();
      auto it = by_scope.find(s->name);
      t.scopes.emplace_back(s->name, it != by_scope.end() ? it->second : TrainCounts{});
      for (auto c = s->children.rbegin(); c != s->children.rend(); ++c) stack.push_back(c->get());
    }
  }
}

void count_optimizer(TrainingReport& t, const TrainOptions& opts, const Count& trainable_bytes,
                     int64_t trainable_tensors) {
  // Gradients and the optimizer (torch.optim's single-tensor steps, docs/COUNTING.md).
  t.gradient_bytes = trainable_bytes;
  const Count& p = t.total.trainable_params;
  switch (opts.optimizer) {
    case Optimizer::Sgd:
      t.optimizer_state_bytes = Count{};
      t.optimizer_flops = p * Count{2};
      break;
    case Optimizer::Momentum:
      t.optimizer_state_bytes = trainable_bytes;
      t.optimizer_flops = p * Count{4};
      break;
    case Optimizer::Adam:
    case Optimizer::AdamW:
      t.optimizer_state_bytes = trainable_bytes * Count{2} + Count{4 * trainable_tensors};
      t.optimizer_flops = p * Count{opts.optimizer == Optimizer::Adam ? 13 : 14};
      break;
  }
  // torch.cuda.amp.GradScaler: each gradient unscaled and checked for infinities before the step.
  const bool fp16 = opts.precision == Precision::Fp16Mixed || opts.precision == Precision::Fp16Master;
  if (fp16) t.optimizer_flops += p * Count{2};
  // The master modes' optimizer holds an fp32 copy of each weight beside its state (ZeRO's K = 12 with Adam).
  if (is_master(opts.precision)) {
    const int64_t per = opts.optimizer == Optimizer::Sgd ? 4 : opts.optimizer == Optimizer::Momentum ? 8 : 12;
    t.optimizer_state_bytes = p * Count{per} + Count{per == 12 ? 4 * trainable_tensors : 0};
  }
}

void finish_training(TrainingReport& t, const Graph& g, const Report& report) {
  // Per trained token: a decoder's or encoder's [batch, seq] token ids.
  for (int in : g.inputs) {
    const Value& v = g.values[static_cast<size_t>(in)];
    if ((v.dtype == DType::Int64 || v.dtype == DType::Int32) && v.shape.rank_known && v.shape.rank() == 2) {
      t.tokens = v.shape.numel_count();
      break;
    }
  }
  t.per_token = t.tokens.exact() && !(t.tokens.known && t.tokens.v <= 0);
  if (t.per_token) {
    auto per_token = [&](const Count& c) {
      if (!c.exact()) return Count::unknown();
      const Dim q = c.as_dim() / t.tokens.as_dim();
      return q.is_unknown() ? Count::unknown() : Count::of(q);
    };
    Count attention;
    for (const auto& ap : find_attention_products(g))
      if (ap.node < t.nodes.size())
        attention += report.nodes[ap.node].cost.flops + t.nodes[ap.node].backward_flops;
    t.flops_per_token = per_token(t.forward_flops + t.total.backward_flops);
    t.attention_flops_per_token = per_token(attention);
    t.six_params = t.total.trainable_params * Count{6};
  }
  t.memory_estimate_bytes = t.param_bytes + t.gradient_bytes + t.optimizer_state_bytes + t.total.saved_bytes +
                            t.backward_transient_bytes;
}

}  // namespace cost_detail

void fit_training(TrainingReport& t, int64_t limit_bytes) {
  t.fit_limit = limit_bytes;
  const Count& est = t.memory_estimate_bytes;
  if (est.known) {
    t.fit_bytes = est;
    return;
  }
  if (!est.symbolic()) {
    t.warnings.push_back(
        "--fit: the training memory estimate is not known (a count overflowed or is unknown)");
    return;
  }
  const std::vector<std::string> syms = est.sym.symbols();
  if (syms.size() != 1) {
    std::string list;
    for (const auto& x : syms) list += (list.empty() ? "" : ", ") + x;
    t.warnings.push_back("--fit: the estimate depends on " + list +
                         ": bind all but one with --dim NAME=VALUE");
    return;
  }
  t.fit_dim = syms[0];
  auto at = [&](int64_t v) -> std::optional<int64_t> {
    return est.sym.substitute({{t.fit_dim, v}}).maybe_value();
  };
  auto fits = [&](int64_t v) {
    auto b = at(v);
    return b && *b <= limit_bytes;
  };
  if (!fits(1)) {
    t.fit_max = 0;
    if (auto b = at(1)) t.fit_bytes = Count{*b};
    return;
  }
  int64_t lo = 1, hi = 2;  // fits(lo), and hi is the first power of two found not to
  while (hi < (int64_t{1} << 40) && fits(hi)) lo = hi, hi *= 2;
  if (fits(hi)) {
    t.warnings.push_back("--fit: the estimate fits at " + t.fit_dim + " = 2^40: it does not grow with it");
    return;
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  t.fit_max = lo;
  t.fit_bytes = Count{*at(lo)};
}

}  // namespace flopwise
