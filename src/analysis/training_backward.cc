// src/analysis/training_backward.cc — one node's part of the training step (training_step.h, count_backward):
// its forward in train mode, the parameters it is the first user of, whether a gradient flows back through
// it, its backward's MACs and FLOPs, what its backward keeps and its transient, each by the TrainFacts of its
// op's record (flopwise/ops.h; docs/training.md).
#include <optional>
#include <string>
#include <vector>

#include "flopwise/ops.h"
#include "training_step.h"

namespace flopwise::train_detail {

namespace {

// A node as the backward sees it: its facts, its counts, which of its inputs need a gradient.
struct NodeStep {
  Step& s;
  size_t i;
  const Node& n;
  const TrainFacts& f;
  TrainCounts& tc;
  Count out_elems;                   // its first output's elements
  std::optional<double> ratio;       // a dropout's probability (nullopt: computed in the graph)
  std::vector<uint8_t> stored_grad;  // per input: holds a trainable parameter

  // Input `slot` needs a gradient.
  bool grad(size_t slot) const {
    return slot < n.inputs.size() && n.inputs[slot] >= 0 &&
           (stored_grad[slot] || s.needs_grad[static_cast<size_t>(n.inputs[slot])]);
  }
  const Shape* x() const {  // its first input's shape, nullptr without one
    return !n.inputs.empty() && n.inputs[0] >= 0 ? &s.g.values[static_cast<size_t>(n.inputs[0])].shape
                                                 : nullptr;
  }

  // Keeps value vi's storage, once: not a model input, a stored tensor or a .pt2's literal. A literal the
  // .pt2 importer made (a Python scalar operand: autograd keeps a Scalar, no tensor) has no producer, as
  // inputs and stored tensors have none; a TorchScript tensor constant is a tensor it keeps.
  void keep_value(int vi) {
    if (vi < 0) return;
    const size_t st = static_cast<size_t>(s.storage[static_cast<size_t>(vi)]);
    const Value& owner = s.g.values[st];
    if (s.kept[st] || owner.is_input || cost_detail::is_stored(s.g, owner) ||
        (s.scalar_literals && owner.producer < 0))
      return;
    s.kept[st] = 1;
    tc.saved_bytes += s.bytes(static_cast<int>(st));
  }
  void keep_fresh(const Count& elems, DType dt) { tc.saved_bytes += elems * Count{dtype_size(dt)}; }
  // Input `slot`, or autocast's copy of it: one per trainable parameter (autocast caches those), else one
  // per use.
  void keep_in(size_t slot) {
    if (slot >= n.inputs.size() || n.inputs[slot] < 0) return;
    const DType copy = autocast_copy(s, n, slot);
    if (copy == DType::Undefined) return keep_value(n.inputs[slot]);
    const auto& r = s.roots[static_cast<size_t>(n.inputs[slot])];
    if (r.size() == 1 && s.needs_grad[static_cast<size_t>(r[0])]) {
      if (s.cast_kept[static_cast<size_t>(r[0])]) return;
      s.cast_kept[static_cast<size_t>(r[0])] = 1;
    }
    keep_fresh(s.numel(n.inputs[slot]), copy);
  }
  void keep_out(size_t k) {
    if (k < n.outputs.size()) keep_value(n.outputs[k]);
  }
};

// The forward in train mode: an active dropout draws its mask and multiplies (2 per element), a batch norm
// computes its batch's statistics (7 per element, where the report counted 2).
void count_train_forward(NodeStep& ns) {
  if (ns.f.forward == TrainForward::dropout) {
    ns.ratio = dropout_ratio(ns.s.g, ns.n);
    if (!ns.ratio) ns.s.unknown_dropout.push_back(ns.n.name);
    if (!ns.ratio || *ns.ratio > 0) ns.tc.forward_extra_flops = ns.out_elems * Count{2};
  } else if (ns.f.forward == TrainForward::batch_norm && !batch_norm_training(ns.n)) {
    ns.tc.forward_extra_flops = ns.out_elems * Count{5};
  }
}

// Parameters first used here (directly or through layout-only ops): trainable unless frozen.
void take_params(NodeStep& ns) {
  Step& s = ns.s;
  ns.stored_grad.assign(ns.n.inputs.size(), 0);
  for (size_t slot = 0; slot < ns.n.inputs.size(); ++slot) {
    const int vi = ns.n.inputs[slot];
    if (vi < 0) continue;
    for (int r : s.roots[static_cast<size_t>(vi)]) {
      const Value& v = s.g.values[static_cast<size_t>(r)];
      if (!s.seen[static_cast<size_t>(r)]) {
        s.seen[static_cast<size_t>(r)] = 1;
        if (cost_detail::stored_role(s.g, v, ns.n, slot, s.sources, v) == cost_detail::Role::Param) {
          const Count numel = v.shape.numel_count();
          const Count bytes = numel * Count{dtype_size(s.stored_dtype(v.dtype))};
          s.t.param_bytes += bytes;
          if (s.frozen_root[static_cast<size_t>(r)]) {
            s.t.frozen_params += numel;
          } else {
            ns.tc.trainable_params += numel;
            s.trainable_bytes += bytes;
            ++s.trainable_tensors;
            s.needs_grad[static_cast<size_t>(r)] = 1;
          }
        }
      }
      if (s.needs_grad[static_cast<size_t>(r)]) ns.stored_grad[slot] = 1;
    }
  }
}

// Its float outputs need a gradient where an input does; false where no gradient flows back through it.
bool flows_back(NodeStep& ns) {
  bool any_in = false;
  for (size_t slot = 0; slot < ns.n.inputs.size(); ++slot) any_in = any_in || ns.grad(slot);
  bool any_out = false;
  for (int o : ns.n.outputs)
    if (o >= 0 && any_in && is_float(ns.s.g.values[static_cast<size_t>(o)].dtype)) {
      ns.s.needs_grad[static_cast<size_t>(o)] = 1;
      any_out = true;
    }
  return any_out;
}

// A recurrent op's products split: the input projection (X by W, all steps at once) and the recurrence (the
// hidden state by R, step by step). False when the shapes do not say.
bool split_recurrent(const Step& s, const Node& n, const Count& macs, Count* input_part,
                     Count* recurrent_part, Count* first_step) {
  if (n.inputs.size() < 3 || n.inputs[0] < 0 || n.inputs[1] < 0 || n.inputs[2] < 0) return false;
  const Shape& x = s.g.values[static_cast<size_t>(n.inputs[0])].shape;
  const Shape& w = s.g.values[static_cast<size_t>(n.inputs[1])].shape;
  if (!x.rank_known || x.rank() != 3 || !w.rank_known || w.rank() != 3) return false;
  const Dim batch = n.attr_i("layout", 0) == 0 ? x.dims[1] : x.dims[0];
  *input_part = x.numel_count() * Count::of(w.dims[0]) * Count::of(w.dims[1]);
  *recurrent_part = macs - *input_part;
  *first_step = Count::of(batch) * s.numel(n.inputs[2]);
  return input_part->exact() && recurrent_part->exact() && first_step->exact();
}

// The backward's MACs (TrainFacts::backward): two operands' gradients, each a product of the other with the
// output's gradient, as many MACs as the forward's; a recurrent op's dX and dW (the input projection's), dR
// (the recurrence's) and the hidden state's gradient at every step but the first, unless the initial state
// needs one too; else none without forward MACs, 2 x them otherwise (listed as estimated).
Count backward_macs(NodeStep& ns) {
  const Node& n = ns.n;
  const Count& macs = ns.s.report.nodes[ns.i].cost.macs;
  const TrainBackward rule = ns.f.backward;
  if (rule == TrainBackward::products || (rule == TrainBackward::products_of_two && n.inputs.size() == 2))
    return macs * Count{int64_t{ns.grad(0)} + int64_t{ns.grad(1)}};
  if (Count in, rec, first;
      rule == TrainBackward::recurrent && split_recurrent(ns.s, n, macs, &in, &rec, &first))
    return (ns.grad(0) ? in : Count{}) + (ns.grad(1) ? in : Count{}) + (ns.grad(2) ? rec : Count{}) +
           (ns.grad(5) ? rec : rec - first);
  if (macs.known && macs.v == 0) return Count{};
  ns.s.t.estimated.push_back(n.name + " (" + n.op + ")");
  return macs * Count{2};
}

// No rule of what its backward keeps: its inputs, listed.
void keep_unknown(NodeStep& ns) {
  const Node& n = ns.n;
  for (size_t slot = 0; slot < n.inputs.size(); ++slot) ns.keep_in(slot);
  const bool onnx = n.domain.empty() || n.domain == "ai.onnx";
  ns.s.t.saved_estimated.push_back(n.name + " (" + (onnx ? n.op : n.domain + "::" + n.op) + ")");
}

// In a checkpointed region, only what enters the region: its forward runs again in the backward and keeps
// the rest then.
void keep_region_inputs(NodeStep& ns) {
  const Step& s = ns.s;
  for (size_t slot = 0; slot < ns.n.inputs.size(); ++slot) {
    const int vi = ns.n.inputs[slot];
    const int p = vi >= 0 ? s.g.values[static_cast<size_t>(vi)].producer : -1;
    const std::string* from =
        p >= 0 && static_cast<size_t>(p) < s.region.size() ? s.region[static_cast<size_t>(p)] : nullptr;
    if (!from || *from != *s.region[ns.i]) ns.keep_in(slot);
  }
}

// An elementwise op's result or input (TrainKeeps::result, input, input_or_result, input_and_slope): in
// place, a result shares its input's storage, and an input is copied before the op overwrites it.
void keep_elementwise(NodeStep& ns) {
  const TrainKeeps k = ns.f.keeps;
  const bool inplace = ns.n.has_attr(kInplaceAttr);
  if (k == TrainKeeps::result || (k == TrainKeeps::input_or_result && inplace))
    ns.keep_out(0);
  else if (inplace && ns.x())
    ns.keep_fresh(ns.x()->numel_count(), ns.s.adt[static_cast<size_t>(ns.n.inputs[0])]);
  else
    ns.keep_in(0);
  if (k == TrainKeeps::input_and_slope && ns.grad(0)) ns.keep_in(1);
}

// A norm's input and its statistics, a mean and an inverse std in float32: per channel for a batch norm, per
// normalised row for a layer norm.
void keep_norm_stats(NodeStep& ns) {
  ns.keep_in(0);
  const Shape* x = ns.x();
  if (ns.f.keeps == TrainKeeps::input_and_channel_stats) {
    if (x && x->rank_known && x->rank() >= 2) ns.keep_fresh(Count::of(x->dims[1]) * Count{2}, DType::Float32);
    return;
  }
  if (!x || !x->rank_known) return;
  int64_t axis = ns.n.attr_i("axis", -1);
  if (axis < 0) axis += static_cast<int64_t>(x->rank());
  Count rows{1};
  for (int64_t d = 0; d < axis && d < static_cast<int64_t>(x->rank()); ++d)
    rows = rows * Count::of(x->dims[static_cast<size_t>(d)]);
  ns.keep_fresh(rows * Count{2}, DType::Float32);
}

// Max pooling's input and its argmax indices: its indices output, or int64 per output element.
void keep_argmax(NodeStep& ns) {
  const Node& n = ns.n;
  ns.keep_in(0);
  if (n.outputs.size() > 1 && n.outputs[1] >= 0)
    ns.keep_out(1);
  else if (!n.outputs.empty() && n.outputs[0] >= 0)
    ns.keep_fresh(ns.s.numel(n.outputs[0]), DType::Int64);
}

// A recurrent op's steps and hidden elements per step, over its directions: batch x hidden x directions.
bool rnn_steps(const Graph& g, const Node& n, Count* steps, Count* per_step) {
  if (n.inputs.size() < 3 || n.inputs[0] < 0 || n.inputs[2] < 0 || n.outputs.empty() || n.outputs[0] < 0)
    return false;
  const Shape& x = g.values[static_cast<size_t>(n.inputs[0])].shape;
  const Shape& r = g.values[static_cast<size_t>(n.inputs[2])].shape;  // [directions, gates x hidden, hidden]
  if (!x.rank_known || x.rank() != 3 || !r.rank_known || r.rank() != 3) return false;
  const bool batch_first = n.attr_i("layout", 0) != 0;
  *steps = Count::of(batch_first ? x.dims[1] : x.dims[0]);
  *per_step = Count::of(batch_first ? x.dims[0] : x.dims[1]) * Count::of(r.dims[2]) * Count::of(r.dims[0]);
  return true;
}

// torch's recurrent cells, step by step (per direction): an LSTM or GRU keeps its gates, its previous cell
// state (or the GRU's products) and their activations, 6 per hidden element and step, and the previous hidden
// state for R's gradient; a tanh/ReLU RNN its outputs and the initial state for R's. The input for W's
// gradient. False where the shapes do not say.
bool keep_cells(NodeStep& ns) {
  Count steps, per_step;
  if (!rnn_steps(ns.s.g, ns.n, &steps, &per_step)) return false;
  if (ns.grad(1)) ns.keep_in(0);
  const DType dt = ns.s.adt[static_cast<size_t>(ns.n.outputs[0])];
  if (ns.f.keeps == TrainKeeps::rnn_cells)
    ns.keep_fresh(per_step * steps + (ns.grad(2) ? per_step : Count{}), dt);
  else
    ns.keep_fresh(per_step * steps * Count{ns.grad(2) ? 7 : 6}, dt);
  return true;
}

// An active dropout keeps what it multiplied by: a mask as an output of its own (ONNX's,
// aten::native_dropout's), a bool per element; else out of place on CUDA, the fused kernel's bool mask; on
// the CPU, in place, or per channel (Dropout2d/3d, one draw per channel), on any device, the noise tensor in
// the input's dtype (ATen's Dropout.cpp; models/train_keep.py).
void keep_mask(NodeStep& ns) {
  const Node& n = ns.n;
  const Shape* x = ns.x();
  if (n.outputs.size() > 1 && n.outputs[1] >= 0) {
    ns.keep_out(1);
  } else if (!ns.ratio || *ns.ratio > 0) {
    const bool per_channel = n.attr_i("flopwise.per_channel", 0) && x && x->rank_known && x->rank() >= 2;
    const bool fused = ns.s.opts.device == Device::Cuda && !per_channel && !n.has_attr(kInplaceAttr);
    const Count elems = per_channel ? Count::of(x->dims[0]) * Count::of(x->dims[1]) : ns.out_elems;
    ns.keep_fresh(elems, fused || !x ? DType::Bool : ns.s.adt[static_cast<size_t>(n.inputs[0])]);
  }
}

// What its backward keeps (derivatives.yaml, TrainFacts::keeps), each storage once.
void keep_for_backward(NodeStep& ns) {
  if (ns.s.region[ns.i]) return keep_region_inputs(ns);
  switch (ns.f.keeps) {
    case TrainKeeps::nothing:
      return;  // sizes only
    case TrainKeeps::both_operands:
      ns.keep_in(0);  // one formula (convolution_backward) for every gradient, whichever is asked
      return ns.keep_in(1);
    case TrainKeeps::other_operand:
      if (ns.grad(1)) ns.keep_in(0);
      if (ns.grad(0)) ns.keep_in(1);
      return;
    case TrainKeeps::divisor:
      if (ns.grad(0) || ns.grad(1)) ns.keep_in(1);
      if (ns.grad(1)) ns.keep_in(0);
      return;
    case TrainKeeps::result:
    case TrainKeeps::input:
    case TrainKeeps::input_or_result:
    case TrainKeeps::input_and_slope:
      return keep_elementwise(ns);
    case TrainKeeps::input_and_channel_stats:
    case TrainKeeps::input_and_row_stats:
      return keep_norm_stats(ns);
    case TrainKeeps::input_and_argmax:
      return keep_argmax(ns);
    case TrainKeeps::gated_cells:
    case TrainKeeps::rnn_cells:
      if (!keep_cells(ns)) keep_unknown(ns);
      return;
    case TrainKeeps::mask:
      return keep_mask(ns);
    case TrainKeeps::indices_out:
      return ns.keep_out(1);  // value_selecting_reduction_backward
    case TrainKeeps::indices_in:
      return ns.keep_in(1);
    case TrainKeeps::first_input:
      return ns.keep_in(0);
    case TrainKeeps::input_and_result:
      ns.keep_in(0);
      return ns.keep_out(0);
    case TrainKeeps::unknown:
      break;
  }
  keep_unknown(ns);
}

// The backward's transient at this op: its outputs' gradients and the input gradients it makes; the largest
// is the report's.
void note_transient(NodeStep& ns) {
  const Step& s = ns.s;
  Count transient;
  for (int o : ns.n.outputs)
    if (o >= 0 && s.needs_grad[static_cast<size_t>(o)]) transient += s.bytes(o);
  for (size_t slot = 0; slot < ns.n.inputs.size(); ++slot)
    if (ns.grad(slot) && !ns.stored_grad[slot]) transient += s.bytes(ns.n.inputs[slot]);
  TrainingReport& t = ns.s.t;
  if (t.transient_at.empty() || rank_value(transient) > rank_value(t.backward_transient_bytes)) {
    t.backward_transient_bytes = transient;
    t.transient_at = ns.n.name;
    t.transient_scope = std::string(s.report.nodes[ns.i].scope);
  }
}

}  // namespace

void count_backward(Step& s, size_t i) {
  if (s.layout_of_stored[i]) return;  // its output's parameters are decided where they are used
  const Node& n = s.g.nodes[i];
  NodeStep ns{s,
              i,
              n,
              *s.facts[i],
              s.t.nodes[i],
              n.outputs.empty() ? Count::unknown() : s.numel(n.outputs[0]),
              std::nullopt,
              {}};
  count_train_forward(ns);
  take_params(ns);
  if (!flows_back(ns)) return;
  const NodeReport& nr = s.report.nodes[i];
  // the op's arithmetic beside its products, in train mode
  const Count other = nr.cost.flops + ns.tc.forward_extra_flops - nr.cost.macs * Count{2};
  const Count bwd = backward_macs(ns);
  ns.tc.backward_macs = bwd;
  ns.tc.backward_flops = bwd * Count{2} + other;
  s.has_backward[i] = 1;
  keep_for_backward(ns);
  note_transient(ns);
}

}  // namespace flopwise::train_detail
