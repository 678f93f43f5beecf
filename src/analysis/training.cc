// src/analysis/training.cc — the training step (flopwise/training.h): requires_grad propagated through the
// graph from the trainable parameters, each op's backward by the rules of docs/training.md read from its op
// record (flopwise/ops.h, TrainFacts; training_backward.cc), the parameters' gradients and the optimizer's
// state and FLOPs, rolled up by scope as the report's tree. This file: the entry point, and where tensors
// live before the backward is counted (storages, stored tensors, frozen parameters, dtypes under autocast).
#include "flopwise/training.h"

#include "training_step.h"

namespace flopwise {

TrainingReport analyse_training(const Model& model, const Report& report, const TrainOptions& opts) {
  if (report.joint) return train_detail::analyse_joint_training(model, report, opts);
  const bool scalar_literals = model.format == ModelFormat::ExportArchive;  // .pt2: Scalars, not tensors
  TrainingReport t;
  t.optimizer = opts.optimizer;
  t.precision = opts.precision;
  t.device = opts.device;
  t.freeze = opts.freeze;
  t.checkpoint = opts.checkpoint;
  t.nodes.resize(report.nodes.size());
  train_detail::Step s(model, report, opts, t, scalar_literals);
  train_detail::place_tensors(s);
  train_detail::assign_dtypes(s);
  for (size_t i = 0; i < s.n_nodes; ++i) train_detail::count_backward(s, i);
  train_detail::count_recompute(s);
  train_detail::roll_up_training(t, report);
  train_detail::count_optimizer(t, opts, s.trainable_bytes, s.trainable_tensors);
  t.forward_flops = report.totals.flops + t.total.forward_extra_flops;
  train_detail::finish_training(t, model.graph, report);
  t.estimate_backward_flops = report.totals.backward_flops;
  train_detail::warn_step(s);
  return t;
}

namespace train_detail {

const TrainFacts& facts_of(const Node& n) {
  static const TrainFacts no_rule;
  const OpRegistry& ops = OpRegistry::instance();
  const OpRecord* rec = ops.find(n.domain, n.op, n.opset);
  if (!rec) rec = ops.find(n.domain, n.op, 0);
  return rec ? rec->train : no_rule;
}

const std::string* ScopeGlobs::region(std::string_view scope) {
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

std::vector<std::string> ScopeGlobs::unused() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < globs_.size(); ++i)
    if (!used_[i]) out.push_back(globs_[i]);
  return out;
}

Step::Step(const Model& model, const Report& report, const TrainOptions& opts, TrainingReport& t,
           bool scalar_literals)
    : g(model.graph),
      report(report),
      opts(opts),
      t(t),
      n_nodes(std::min(model.graph.nodes.size(), report.nodes.size())),
      scalar_literals(scalar_literals),
      freeze(opts.freeze),
      checkpoint(opts.checkpoint),
      sources(model.graph) {
  facts.resize(n_nodes);
  for (size_t i = 0; i < n_nodes; ++i) facts[i] = &facts_of(g.nodes[i]);
  for (auto* per_value : {&needs_grad, &seen, &kept, &cast_kept}) per_value->assign(g.values.size(), 0);
}

std::optional<double> dropout_ratio(const Graph& g, const Node& n) {
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const Value& r = g.values[static_cast<size_t>(n.inputs[1])];
    if (r.data && r.data->is_float && r.data->floats.size() == 1) return r.data->floats[0];
    return std::nullopt;
  }
  return n.attr_f("ratio", 0.5);
}

namespace {

// Whether a view's output is not contiguous: a transpose that moves a dim, a split or slice of an axis after
// the leading ones (dims of 1 before it aside), an expand.
bool makes_strided_view(const Graph& g, const Node& n, TrainView view) {
  switch (view) {
    case TrainView::expand:
      return true;
    case TrainView::transpose_dims:
      return n.attr_i("dim0", 0) != n.attr_i("dim1", 1);
    case TrainView::transpose: {
      auto it = n.attrs.find("perm");
      if (it == n.attrs.end()) return true;
      for (size_t k = 0; k < it->second.ints.size(); ++k)
        if (it->second.ints[k] != static_cast<int64_t>(k)) return true;
      return false;
    }
    case TrainView::split:
    case TrainView::slice:
      break;
    default:
      return false;
  }
  const Shape& x = g.values[static_cast<size_t>(n.inputs[0])].shape;
  if (!x.rank_known) return true;
  int64_t axis = n.attr_i("axis", 0);
  if (view == TrainView::slice) {  // axes in an input: one leading-axis slice is contiguous, else strided
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

// Storages, as torch lays tensors out: a view's output and an in-place op's result are their first input's
// storage; a transpose, or a split or slice past the leading axis, is a view that is not contiguous, and
// reshaping such a view (or making it contiguous: an Identity) copies it into a storage of its own.
void place_storage(Step& s, size_t i, std::vector<uint8_t>& strided) {
  const Node& n = s.g.nodes[i];
  const TrainFacts& f = *s.facts[i];
  const int in0 = n.inputs.empty() ? -1 : n.inputs[0];
  const bool no_dropout =
      f.forward == TrainForward::dropout && dropout_ratio(s.g, n) == 0.0;  // returns its input
  if (in0 < 0 || !(is_view(f) || no_dropout || n.has_attr(kInplaceAttr))) return;
  const bool copies = strided[static_cast<size_t>(in0)] && f.view == TrainView::reshape;
  const bool strides = !copies && (strided[static_cast<size_t>(in0)] || makes_strided_view(s.g, n, f.view));
  for (int o : n.outputs)
    if (o >= 0 && !copies) {
      s.storage[static_cast<size_t>(o)] = s.storage[static_cast<size_t>(in0)];
      strided[static_cast<size_t>(o)] = strides;
    }
}

// A layout-only op of stored tensors alone (an exporter's Identity of a deduplicated initializer, a
// transposed weight): its outputs' roots are the stored tensors under its inputs. False for another node.
bool place_stored_layout(Step& s, size_t i) {
  const Node& n = s.g.nodes[i];
  if (!s.facts[i]->moves_elements) return false;
  std::vector<int> under;
  for (int vi : n.inputs) {
    if (vi < 0) continue;
    const auto& r = s.roots[static_cast<size_t>(vi)];
    if (r.empty()) return false;
    under.insert(under.end(), r.begin(), r.end());
  }
  s.layout_of_stored[i] = 1;
  for (int o : n.outputs)
    if (o >= 0) s.roots[static_cast<size_t>(o)] = under;
  return true;
}

}  // namespace

// Stored tensors, and what layout-only ops make of stored tensors alone: each such value's roots, the stored
// tensors under it. A parameter is frozen when any op using it (through such ops) is in a frozen scope, as
// freezing a module's parameters in torch freezes a tied one for all its users.
void place_tensors(Step& s) {
  const Graph& g = s.g;
  s.region.assign(s.n_nodes, nullptr);
  s.has_backward.assign(s.n_nodes, 0);
  s.roots.assign(g.values.size(), {});
  for (size_t v = 0; v < g.values.size(); ++v)
    if (cost_detail::is_stored(g, g.values[v])) s.roots[v] = {static_cast<int>(v)};
  s.layout_of_stored.assign(s.n_nodes, 0);
  s.frozen_root.assign(g.values.size(), 0);
  s.storage.resize(g.values.size());
  for (size_t v = 0; v < s.storage.size(); ++v) s.storage[v] = static_cast<int>(v);
  std::vector<uint8_t> strided(g.values.size(), 0);  // a view that is not contiguous
  for (size_t i = 0; i < s.n_nodes; ++i) {
    const Node& n = g.nodes[i];
    const bool frozen = s.freeze.matches(s.report.nodes[i].scope);
    s.region[i] = s.checkpoint.region(s.report.nodes[i].scope);
    place_storage(s, i, strided);
    if (place_stored_layout(s, i) || !frozen) continue;
    for (int vi : n.inputs)
      if (vi >= 0)
        for (int r : s.roots[static_cast<size_t>(vi)]) s.frozen_root[static_cast<size_t>(r)] = 1;
  }
}

namespace {

DType widest(DType a, DType b) {
  if (a == DType::Undefined || a == b) return b;
  if (b == DType::Undefined) return a;
  if (a == DType::Float64 || b == DType::Float64) return DType::Float64;
  return DType::Float32;  // float32 with anything, or float16 with bfloat16
}

// Node i's outputs' dtypes under autocast: the low dtype's list, the fp32 list, the promote list's widest
// input; other ops in their activations' dtype, whatever dtype a parameter beside them has (a bias, a norm's
// scale), or their stored inputs' where they have no activation (a weight's transpose: the product casts it).
void autocast_outputs(Step& s, size_t i) {
  const Node& n = s.g.nodes[i];
  const TrainAutocast kind = s.facts[i]->autocast;
  if (kind == TrainAutocast::own) return;
  DType acts = DType::Undefined, stored = DType::Undefined;
  for (int vi : n.inputs)
    if (vi >= 0 && is_float(s.adt[static_cast<size_t>(vi)])) {
      DType& d = s.roots[static_cast<size_t>(vi)].empty() ? acts : stored;
      d = widest(d, s.adt[static_cast<size_t>(vi)]);
    }
  const DType run = kind == TrainAutocast::promote ? widest(acts, stored)
                    : acts != DType::Undefined     ? acts
                                                   : stored;
  for (int o : n.outputs) {
    if (o < 0 || !is_float(s.g.values[static_cast<size_t>(o)].dtype)) continue;
    DType& d = s.adt[static_cast<size_t>(o)];
    if (kind == TrainAutocast::low)
      d = s.low;
    else if (kind == TrainAutocast::fp32)
      d = d == DType::Float64 ? d : DType::Float32;
    else if (run != DType::Undefined)
      d = run;
  }
}

}  // namespace

// --precision: each value's dtype under torch.autocast (CUDA's lists); an op's operand autocast casts is a
// copy of its own. 16-bit weights with fp32 master copies: every float32 tensor (weights, activations,
// gradients) is 16-bit.
void assign_dtypes(Step& s) {
  s.master = is_master(s.opts.precision);
  s.mixed = s.opts.precision != Precision::Fp32 && !s.master;
  const bool fp16 = s.opts.precision == Precision::Fp16Mixed || s.opts.precision == Precision::Fp16Master;
  s.low = fp16 ? DType::Float16 : DType::BFloat16;
  s.adt.resize(s.g.values.size());
  for (size_t v = 0; v < s.adt.size(); ++v) s.adt[v] = s.stored_dtype(s.g.values[v].dtype);
  if (s.mixed)
    for (size_t i = 0; i < s.n_nodes; ++i) autocast_outputs(s, i);
}

DType autocast_copy(const Step& s, const Node& n, size_t slot) {
  if (!s.mixed || slot >= n.inputs.size() || n.inputs[slot] < 0) return DType::Undefined;
  const DType d = s.adt[static_cast<size_t>(n.inputs[slot])];
  if (!is_float(d)) return DType::Undefined;
  DType want = DType::Undefined;
  switch (facts_of(n).autocast) {
    case TrainAutocast::low:
      want = s.low;
      break;
    case TrainAutocast::fp32:
      want = d == DType::Float64 ? d : DType::Float32;
      break;
    case TrainAutocast::promote:
      if (!n.outputs.empty() && n.outputs[0] >= 0) want = s.adt[static_cast<size_t>(n.outputs[0])];
      break;
    case TrainAutocast::none:
    case TrainAutocast::own:
      break;
  }
  return want == d ? DType::Undefined : want;
}

}  // namespace train_detail

}  // namespace flopwise
