// src/analysis/training_joint.cc — the training step of a joint program (torch.export's
// _export_forward_backward: forward, loss and backward in one graph, Report::joint): the program's own
// backward node by node, the tensors that backward reads from the forward as what autograd keeps, the
// optimizer for its parameters. No rule of training_backward.cc is applied: the export decided each op's
// backward and what it keeps.
#include <vector>

#include "training_step.h"

namespace flopwise::train_detail {

namespace {

Count stored_bytes(const Value& v) { return v.shape.numel_count() * Count{dtype_size(v.dtype)}; }

// Each value's storage, as torch lays tensors out: a view's output is its input's storage.
std::vector<int> storages(const Graph& g) {
  std::vector<int> storage(g.values.size());
  for (size_t v = 0; v < storage.size(); ++v) storage[v] = static_cast<int>(v);
  for (const Node& n : g.nodes) {
    if (n.inputs.empty() || n.inputs[0] < 0 || !is_view(facts_of(n))) continue;
    for (int o : n.outputs)
      if (o >= 0) storage[static_cast<size_t>(o)] = storage[static_cast<size_t>(n.inputs[0])];
  }
  return storage;
}

// The options a joint program has no use for: its export fixed which parameters train, what is recomputed
// and the dtypes each op runs in.
void warn_fixed_options(TrainingReport& t, const TrainOptions& opts) {
  const char* why = ": a joint program's backward is the one it was exported with";
  if (!opts.freeze.empty()) t.warnings.push_back(std::string("--freeze ignored") + why);
  if (!opts.checkpoint.empty()) t.warnings.push_back(std::string("--checkpoint ignored") + why);
  if (opts.precision != Precision::Fp32)
    t.warnings.push_back(
        std::string("--precision ignored: the program runs in the dtypes it was exported in"));
}

}  // namespace

TrainingReport analyse_joint_training(const Model& model, const Report& report, const TrainOptions& opts) {
  const Graph& g = model.graph;
  TrainingReport t;
  t.optimizer = opts.optimizer;
  t.precision = Precision::Fp32;
  t.device = opts.device;
  t.nodes.resize(report.nodes.size());
  warn_fixed_options(t, opts);
  const size_t n_nodes = std::min(g.nodes.size(), report.nodes.size());
  const std::vector<int> storage = storages(g);
  std::vector<uint8_t> seen(g.values.size(), 0), kept(g.values.size(), 0);
  Count trainable_bytes;
  int64_t trainable_tensors = 0;
  for (size_t i = 0; i < n_nodes; ++i) {
    const Node& n = g.nodes[i];
    TrainCounts& tc = t.nodes[i];
    for (int vi : n.inputs) {  // parameters, at their first user
      if (vi < 0 || seen[static_cast<size_t>(vi)]) continue;
      seen[static_cast<size_t>(vi)] = 1;
      const Value& v = g.values[static_cast<size_t>(vi)];
      if (!cost_detail::is_stored(g, v) || v.is_buffer) continue;
      tc.trainable_params += v.shape.numel_count();
      t.param_bytes += stored_bytes(v);
      trainable_bytes += stored_bytes(v);
      ++trainable_tensors;
    }
    if (!n.backward) continue;
    tc.backward_macs = report.nodes[i].cost.macs;
    tc.backward_flops = report.nodes[i].cost.flops;
    Count transient;
    for (int o : n.outputs)
      if (o >= 0) transient += stored_bytes(g.values[static_cast<size_t>(o)]);
    if (t.transient_at.empty() || rank_value(transient) > rank_value(t.backward_transient_bytes)) {
      t.backward_transient_bytes = transient;
      t.transient_at = n.name;
      t.transient_scope = std::string(report.nodes[i].scope);
    }
    // What it reads from the forward: kept by autograd, each storage once, at the node that made it (not
    // what it reads the dims of: a ones_like of the loss is the backward's seed).
    const OpRecord* rec = OpRegistry::instance().find(n.domain, n.op, n.opset);
    if (rec && rec->reads_dims_only) continue;
    for (int vi : n.inputs) {
      if (vi < 0) continue;
      const int st = storage[static_cast<size_t>(vi)];
      const int p = g.values[static_cast<size_t>(st)].producer;
      if (p < 0 || static_cast<size_t>(p) >= n_nodes || g.nodes[static_cast<size_t>(p)].backward ||
          kept[static_cast<size_t>(st)])
        continue;
      kept[static_cast<size_t>(st)] = 1;
      t.nodes[static_cast<size_t>(p)].saved_bytes += stored_bytes(g.values[static_cast<size_t>(st)]);
    }
  }
  roll_up_training(t, report);
  count_optimizer(t, opts, trainable_bytes, trainable_tensors);
  t.forward_flops = report.totals.flops;
  finish_training(t, g, report);
  t.estimate_backward_flops = report.totals.flops * Count{2};
  return t;
}

}  // namespace flopwise::train_detail
