// src/analysis/training_totals.cc — the training step's totals (training_step.h): the option names, the
// roll-up by scope, the optimizer's state and FLOPs, per-token figures and the memory estimate,
// --checkpoint's recomputed forward, the rule-based step's warnings, and --fit.
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "flopwise/attention.h"
#include "flopwise/errors.h"
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

namespace train_detail {

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

void count_recompute(Step& s) {
  std::set<std::string> active;
  for (size_t i = 0; i < s.region.size(); ++i)
    if (s.region[i] && s.has_backward[i]) active.insert(*s.region[i]);
  for (size_t i = 0; i < s.region.size(); ++i)
    if (s.region[i] && active.count(*s.region[i])) {
      s.t.nodes[i].backward_macs += s.report.nodes[i].cost.macs;
      s.t.nodes[i].backward_flops += s.report.nodes[i].cost.flops;
    }
}

namespace {

// The first eight names of a list, and how many more.
std::string first_eight(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < 8; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 8) list += ", and " + std::to_string(names.size() - 8) + " more";
  return list;
}

}  // namespace

void warn_step(Step& s) {
  TrainingReport& t = s.t;
  for (const auto& glob : s.freeze.unused())
    t.warnings.push_back("--freeze '" + glob + "' matches no scope of the model: nothing frozen by it");
  for (const auto& glob : s.checkpoint.unused())
    t.warnings.push_back("--checkpoint '" + glob +
                         "' matches no scope of the model: nothing checkpointed by it");
  if (!s.unknown_dropout.empty()) {
    t.warnings.push_back("--train: dropout probability computed in the graph for " +
                         first_eight(s.unknown_dropout) + ": counted as active");
  }
  if (!t.saved_estimated.empty()) {
    t.warnings.push_back("--train: no rule of what the backward keeps for " + first_eight(t.saved_estimated) +
                         ": their inputs counted");
  }
  if (!t.estimated.empty()) {
    t.warnings.push_back("--train: no exact backward rule for " + first_eight(t.estimated) +
                         ": 2 x forward MACs taken");
  }
}

}  // namespace train_detail

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
