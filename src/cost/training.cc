// src/cost/training.cc — the training step (flopwise/training.h): requires_grad propagated through the graph
// from the trainable parameters, each op's backward by the rules of COUNTING.md ("The training step"), the
// parameters' gradients and the optimizer's state and FLOPs, rolled up by scope as the report's tree.
#include "flopwise/training.h"

#include <fnmatch.h>

#include <unordered_map>

#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "stored_tensors.h"

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

void TrainCounts::add(const TrainCounts& o) {
  backward_macs += o.backward_macs;
  backward_flops += o.backward_flops;
  trainable_params += o.trainable_params;
}

namespace {

using cost_detail::Role;

// Which scopes --freeze names: a glob matching the scope or any scope above it.
class FreezeMatcher {
 public:
  explicit FreezeMatcher(const std::vector<std::string>& globs) : globs_(globs), used_(globs.size(), false) {}
  bool frozen(std::string_view scope) {
    if (globs_.empty()) return false;
    auto [it, fresh] = memo_.try_emplace(std::string(scope), false);
    if (!fresh) return it->second;
    bool hit = false;
    for (size_t i = 0; i < globs_.size(); ++i) {
      for (size_t end = 0;; ++end) {  // each prefix ending at a '.', then the whole scope
        end = scope.find('.', end);
        std::string prefix(scope.substr(0, end));
        if (fnmatch(globs_[i].c_str(), prefix.c_str(), 0) == 0) {
          used_[i] = true;
          hit = true;
          break;
        }
        if (end == std::string_view::npos) break;
      }
    }
    return it->second = hit;
  }
  std::vector<std::string> unused() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < globs_.size(); ++i)
      if (!used_[i]) out.push_back(globs_[i]);
    return out;
  }

 private:
  const std::vector<std::string>& globs_;
  std::vector<bool> used_;
  std::unordered_map<std::string, bool> memo_;
};

// Ops that only move or retype their input's elements (no arithmetic, no gradient of their own to compute
// beyond passing it back).
bool layout_only(const Node& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  static const char* const kOps[] = {"Identity", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten",
                                     "Cast",     "Concat",  "Slice",     "Split",   "Gather",    "Expand"};
  for (const char* op : kOps)
    if (n.op == op) return true;
  return false;
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
  const Graph& g = model.graph;
  TrainingReport t;
  t.optimizer = opts.optimizer;
  t.freeze = opts.freeze;
  t.nodes.resize(report.nodes.size());
  FreezeMatcher freeze(opts.freeze);
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
  for (size_t i = 0; i < n_nodes; ++i) {
    const Node& n = g.nodes[i];
    const bool frozen = freeze.frozen(report.nodes[i].scope);
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

  std::vector<uint8_t> needs_grad(g.values.size(), 0), seen(g.values.size(), 0);
  Count trainable_bytes;
  int64_t trainable_tensors = 0;
  for (size_t i = 0; i < n_nodes; ++i) {
    const Node& n = g.nodes[i];
    const NodeReport& nr = report.nodes[i];
    TrainCounts& tc = t.nodes[i];
    if (layout_of_stored[i]) continue;  // its output's parameters are decided where they are used
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
            if (frozen_root[static_cast<size_t>(r)]) {
              t.frozen_params += numel;
            } else {
              tc.trainable_params += numel;
              trainable_bytes += numel * Count{dtype_size(v.dtype)};
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
    const Count other = nr.cost.flops - macs * Count{2};  // the op's arithmetic beside its products
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
  }

  // Scopes: each node's counts in its scope and every scope above it.
  std::unordered_map<std::string_view, TrainCounts> by_scope;
  for (size_t i = 0; i < n_nodes; ++i) {
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

  // Gradients and the optimizer (torch.optim's single-tensor steps, COUNTING.md).
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
  t.forward_flops = report.totals.flops;
  t.estimate_backward_flops = report.totals.backward_flops;
  for (const auto& glob : freeze.unused())
    t.warnings.push_back("--freeze '" + glob + "' matches no scope of the model: nothing frozen by it");
  if (!t.estimated.empty()) {
    std::string list;
    for (size_t i = 0; i < t.estimated.size() && i < 8; ++i) list += (i ? ", " : "") + t.estimated[i];
    if (t.estimated.size() > 8) list += ", and " + std::to_string(t.estimated.size() - 8) + " more";
    t.warnings.push_back("--train: no exact backward rule for " + list + ": 2 x forward MACs taken");
  }
  return t;
}

}  // namespace flopwise
