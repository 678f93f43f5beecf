// src/analysis/parallel.cc — the cost per rank of a training step at scale (flopwise/parallel.h): each node's
// share on a rank from the tensor-parallel plan, sequence, context and expert splits; pipeline stages; model
// states by ZeRO stage; activations with recompute and 1F1B's in-flight micro-batches; the step's
// collectives.
#include "flopwise/parallel.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "flopwise/attention.h"
#include "flopwise/errors.h"
#include "flopwise/moe.h"
#include "parallel_detail.h"

namespace flopwise {

using parallel_detail::ceil_div;

namespace {

int64_t known(const Count& c, const std::string& what) {
  if (!c.known)
    throw UsageError("--parallel: " + what + " is " + (c.symbolic() ? "a formula" : "unknown") +
                     ": bind every dim (--dim batch=8 --dim seq=2048)");
  return c.v;
}

// The layer a node belongs to: its first scope whose last segment is a number ("h.3"), else its outermost.
std::string unit_of(const Node& n, bool* layer) {
  for (const std::string& s : n.scope) {
    const size_t dot = s.rfind('.');
    const std::string tail = dot == std::string::npos ? s : s.substr(dot + 1);
    *layer = !tail.empty() &&
             std::all_of(tail.begin(), tail.end(), [](unsigned char c) { return std::isdigit(c); });
    if (*layer) return s;
  }
  return n.scope.empty() ? std::string() : n.scope[0];
}

// The expert scopes of a mixture-of-experts model (all layers).
std::vector<std::string> expert_scopes(const AnalysedReport& r) {
  std::vector<std::string> out;
  if (r.moe)
    for (const MoeLayer& l : r.moe->layers) out.insert(out.end(), l.experts.begin(), l.experts.end());
  return out;
}

bool in_scopes(const Node& n, const std::vector<std::string>& scopes) {
  for (const std::string& s : scopes)
    for (const std::string& level : n.scope)
      if (level == s) return true;
  return false;
}

}  // namespace

namespace parallel_detail {

int64_t act_bytes(const Value& v, Precision p) {
  const int64_t size = dtype_size(v.dtype);
  return v.dtype == DType::Float32 && p != Precision::Fp32 ? 2 : size;
}

// Each node's share on one rank, per micro-batch (before recompute).
std::vector<NodeShare> node_shares(const Model& model, const AnalysedReport& report,
                                   const TrainingReport& training, const ParallelConfig& cfg,
                                   const TpPlan& plan) {
  const Graph& g = model.graph;
  const std::vector<std::string> experts = cfg.ep > 1 ? expert_scopes(report) : std::vector<std::string>{};
  std::vector<NodeShare> out(report.nodes.size());
  for (size_t i = 0; i < report.nodes.size(); ++i) {
    const NodeReport& nr = report.nodes[i];
    const TrainCounts& tc = training.nodes[i];
    const TpRole role = plan.roles[i];
    const bool split = role != TpRole::Replicated;
    // what the rank does of it: its tp share where split, its sequence share where SP splits the replicated
    // part, its context share everywhere, its experts' share
    const int64_t ep = !experts.empty() && in_scopes(g.nodes[i], experts) ? cfg.ep : 1;
    const int64_t work = (split || cfg.sp ? cfg.tp : 1) * cfg.cp * ep;
    // what it keeps: a column-parallel product keeps its whole input (split only by SP)
    const int64_t keep = (split && role != TpRole::Colwise) || cfg.sp ? cfg.tp * cfg.cp * ep : cfg.cp * ep;
    NodeShare& s = out[i];
    s.unit = unit_of(g.nodes[i], &s.layer);
    s.params =
        ceil_div(known(nr.cost.params, "the params of " + std::string(nr.name)), (split ? cfg.tp : 1) * ep);
    s.fwd_macs = ceil_div(known(nr.cost.macs, "the MACs of " + std::string(nr.name)), work);
    s.fwd_flops =
        ceil_div(known(nr.cost.flops + tc.forward_extra_flops, "the FLOPs of " + std::string(nr.name)), work);
    s.bwd_macs = ceil_div(known(tc.backward_macs, "the backward MACs of " + std::string(nr.name)), work);
    s.bwd_flops = ceil_div(known(tc.backward_flops, "the backward FLOPs of " + std::string(nr.name)), work);
    s.saved = ceil_div(known(tc.saved_bytes, "the bytes kept by " + std::string(nr.name)), keep);
    s.keep_div = keep;
  }
  return out;
}

// Selective recompute (Korthikanti et al. 2022): the attention core (between the scores' product and the
// product with V) keeps nothing and runs again in the backward; the AV product keeps V alone.
void selective_recompute(const Model& model, std::vector<NodeShare>& shares, Precision p) {
  const Graph& g = model.graph;
  std::vector<AttentionProduct> ap = find_attention_products(g);
  for (size_t a = 0; a + 1 < ap.size(); ++a) {
    if (!ap[a].scores || ap[a + 1].scores) continue;
    const size_t qk = ap[a].node, av = ap[a + 1].node;
    for (size_t i = qk + 1; i < av && i < shares.size(); ++i) {
      if (g.nodes[i].scope != g.nodes[qk].scope) continue;
      shares[i].saved = 0;
      shares[qk].recompute_flops += shares[i].fwd_flops;
    }
    const Node& n = g.nodes[av];
    if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
      const Value& v = g.values[static_cast<size_t>(n.inputs[1])];
      const Count vb = v.shape.numel_count() * Count{act_bytes(v, p)};
      if (vb.known) shares[av].saved = std::min(shares[av].saved, ceil_div(vb.v, shares[av].keep_div));
    }
  }
}

}  // namespace parallel_detail

using parallel_detail::ceil_div;
using parallel_detail::NodeShare;
using parallel_detail::Stage;

namespace {

// Units: maximal runs of nodes of one layer; their boundaries are where stages may start.
// A node of the root scope (a shared Constant, a Shape between a layer's nodes) belongs to the run it sits
// in.
std::vector<size_t> unit_starts(const std::vector<NodeShare>& shares) {
  std::vector<size_t> starts;
  const std::string* last = nullptr;
  for (size_t i = 0; i < shares.size(); ++i) {
    if (i > 0 && shares[i].unit.empty()) continue;
    if (i == 0 || !last || shares[i].unit != *last) starts.push_back(i);
    last = &shares[i].unit;
  }
  return starts;
}

// The first and last named layer of a node range ("" where none is).
std::pair<std::string, std::string> named_ends(const std::vector<NodeShare>& shares, size_t begin,
                                               size_t end) {
  std::pair<std::string, std::string> out;
  for (size_t i = begin; i < end && out.first.empty(); ++i) out.first = shares[i].unit;
  for (size_t i = end; i > begin && out.second.empty(); --i) out.second = shares[i - 1].unit;
  return out;
}

// P contiguous stages at unit boundaries: given starts (a scope glob each), else balanced by weight (each cut
// at the boundary nearest k/P of the total).
std::vector<Stage> split_stages(const Model& model, const std::vector<NodeShare>& shares,
                                const std::vector<double>& weight, const ParallelConfig& cfg) {
  const size_t n = shares.size();
  std::vector<size_t> cuts;
  if (!cfg.stage_starts.empty()) {
    size_t from = 1;
    for (const std::string& glob : cfg.stage_starts) {
      size_t at = from;
      while (at < n && std::none_of(model.graph.nodes[at].scope.begin(), model.graph.nodes[at].scope.end(),
                                    [&](const std::string& s) { return scope_glob_match(glob, s); }))
        ++at;
      if (at >= n)
        throw UsageError("--parallel: stages: no scope matching '" + glob + "' after the previous stage");
      cuts.push_back(at);
      from = at + 1;
    }
  } else {
    std::vector<size_t> starts = unit_starts(shares);
    if (static_cast<int64_t>(starts.size()) < cfg.pp)
      throw UsageError("--parallel: pp=" + std::to_string(cfg.pp) + " but the model has " +
                       std::to_string(starts.size()) + " layer(s) to place");
    double total = 0;
    for (double w : weight) total += w;
    std::vector<double> before(n + 1, 0);
    for (size_t i = 0; i < n; ++i) before[i + 1] = before[i] + weight[i];
    size_t u = 1;
    for (int64_t k = 1; k < cfg.pp; ++k) {
      const double target = total * static_cast<double>(k) / static_cast<double>(cfg.pp);
      const size_t last = starts.size() - static_cast<size_t>(cfg.pp - k);  // room for the stages left
      while (u < last && before[starts[u]] < target) ++u;
      if (u > 1 && u - 1 >= static_cast<size_t>(k) && (cuts.empty() || starts[u - 1] > cuts.back()) &&
          target - before[starts[u - 1]] < before[starts[u]] - target)
        --u;
      cuts.push_back(starts[u]);
      ++u;
    }
  }
  std::vector<Stage> stages;
  size_t b = 0;
  for (size_t c : cuts) {
    stages.push_back({b, c});
    b = c;
  }
  stages.push_back({b, n});
  return stages;
}

// Full recompute: each layer keeps what enters it; the largest layer's own kept bytes come back during its
// backward, and every layer's forward runs again.
int64_t full_recompute(const Model& model, const std::vector<NodeShare>& shares, const Stage& st, Precision p,
                       int64_t keep_div, int64_t* recompute_flops, int64_t* recompute_macs) {
  const Graph& g = model.graph;
  std::map<std::string, int64_t> layer_saved;
  int64_t entering = 0, other = 0;
  std::set<int> counted;
  for (size_t i = st.begin; i < st.end; ++i) {
    const NodeShare& s = shares[i];
    if (!s.layer) {
      other += s.saved;
      continue;
    }
    layer_saved[s.unit] += s.saved;
    *recompute_flops += s.fwd_flops;
    *recompute_macs += s.fwd_macs;
    for (int vi : g.nodes[i].inputs) {
      if (vi < 0 || counted.count(vi)) continue;
      const Value& v = g.values[static_cast<size_t>(vi)];
      if (!is_float(v.dtype) || v.is_initializer || v.producer < 0 ||
          shares[static_cast<size_t>(v.producer)].unit == s.unit)
        continue;
      counted.insert(vi);
      const Count b = v.shape.numel_count() * Count{parallel_detail::act_bytes(v, p)};
      entering += b.known ? ceil_div(b.v, keep_div) : 0;
    }
  }
  int64_t largest = 0;
  for (const auto& kv : layer_saved) largest = std::max(largest, kv.second);
  return entering + largest + other;
}

// 16-bit precisions run the graph's float32 nodes as 16-bit ones: the 16-bit tensor rate, half their bytes.
Hardware sixteen_bit(const Hardware& hw, Precision p) {
  Hardware h = hw;
  const bool fp16 = p == Precision::Fp16Mixed || p == Precision::Fp16Master;
  const double rate = hw.peak[static_cast<size_t>(fp16 ? PeakType::Float16 : PeakType::BFloat16)];
  h.peak[static_cast<size_t>(PeakType::Float32)] = h.peak[static_cast<size_t>(PeakType::TF32)] = rate;
  h.bandwidth = hw.bandwidth * 2;
  return h;
}

// One stage's rank: its nodes' shares summed, recompute, model states, 1F1B's micro-batches in flight, peak.
RankRole stage_rank(const Model& model, const std::vector<NodeShare>& shares,
                    const std::vector<double>& seconds, const Stage& st, size_t k, const ParallelConfig& cfg,
                    const TrainingReport& training, const parallel_detail::Bytes& per) {
  RankRole r;
  r.name = "stage " + std::to_string(k);
  std::tie(r.first, r.last) = named_ends(shares, st.begin, st.end);
  for (size_t i = st.begin; i < st.end; ++i) {
    const NodeShare& s = shares[i];
    r.params += s.params;
    r.fwd_macs += s.fwd_macs;
    r.fwd_flops += s.fwd_flops;
    r.macs += s.fwd_macs + s.bwd_macs;
    r.flops += s.fwd_flops + s.bwd_flops + s.recompute_flops;
    r.activation_bytes += s.saved;
    if (!seconds.empty()) r.compute_seconds += seconds[i] * 3;  // forward and a backward of twice its work
  }
  if (cfg.recompute == Recompute::Full) {
    int64_t flops = 0, macs = 0;
    const int64_t keep = (cfg.sp ? cfg.tp : 1) * cfg.cp;
    r.activation_bytes = full_recompute(model, shares, st, training.precision, keep, &flops, &macs);
    r.flops += flops;
    r.macs += macs;
  }
  const ModelStates m =
      zero_model_states(r.params, cfg.stage(), cfg.state_shards(), per.weight, per.grad, per.k);
  r.weights_bytes = m.weights;
  r.grads_bytes = m.grads;
  r.optimizer_bytes = m.optimizer;
  r.model_states_bytes = m.total();
  r.in_flight = std::min<int64_t>(cfg.pp - static_cast<int64_t>(k), cfg.microbatches);
  const int64_t transient =
      ceil_div(known(training.backward_transient_bytes, "the backward's transient"), cfg.tp);
  r.peak_bytes = r.model_states_bytes + r.activation_bytes * r.in_flight + transient;
  return r;
}

}  // namespace

ParallelReport analyse_parallel(const Model& model, const AnalysedReport& report,
                                const TrainingReport& training, const ParallelConfig& cfg,
                                const std::vector<PlanRule>& rules, const Hardware* hw) {
  ParallelReport out;
  out.cfg = cfg;
  out.precision = training.precision;
  out.model_params = known(report.totals.params, "the model's params");
  out.model_flops = known(training.forward_flops + training.total.backward_flops, "the step's FLOPs");
  out.plan = plan_tensor_parallel(model, report, cfg.tp, rules);
  std::vector<NodeShare> shares = parallel_detail::node_shares(model, report, training, cfg, out.plan);
  if (cfg.recompute == Recompute::Selective)
    parallel_detail::selective_recompute(model, shares, training.precision);
  std::optional<Hardware> device;
  if (hw) device = training.precision == Precision::Fp32 ? *hw : sixteen_bit(*hw, training.precision);
  std::vector<double> seconds, weight(shares.size());  // stages balance by roofline time, else forward FLOPs
  for (size_t i = 0; device && i < shares.size(); ++i)
    seconds.push_back(parallel_detail::node_seconds(report, i, *device, shares[i]));
  for (size_t i = 0; i < shares.size(); ++i)
    weight[i] = device ? seconds[i] : static_cast<double>(shares[i].fwd_flops);
  const std::vector<Stage> stages =
      cfg.pp > 1 ? split_stages(model, shares, weight, cfg) : std::vector<Stage>{{0, shares.size()}};
  const parallel_detail::Bytes per = parallel_detail::bytes_per_param(training, report);
  for (size_t k = 0; k < stages.size(); ++k)
    out.ranks.push_back(stage_rank(model, shares, seconds, stages[k], k, cfg, training, per));
  out.bubble = static_cast<double>(cfg.pp - 1) / static_cast<double>(cfg.microbatches + cfg.pp - 1);
  out.largest_layer = parallel_detail::largest_unit_params(shares);
  int64_t most = 0;  // DeepSpeed's estimate for the rank holding the most params
  for (const RankRole& r : out.ranks) most = std::max(most, r.params);
  out.deepspeed_bytes = deepspeed_estimate(most, out.largest_layer, cfg.stage(), cfg.state_shards());
  out.comm =
      parallel_detail::collectives(model, report, cfg, out.plan, shares, stages, training.precision, per);
  if (training.per_token && training.tokens.known) out.tokens = training.tokens.v;
  out.warnings = out.plan.warnings;
  if (device) out.time = parallel_detail::step_time(out, *device);
  return out;
}

}  // namespace flopwise
