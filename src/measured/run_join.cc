// src/measured/run_join.cc — measured time joined with the static scope tree (flopwise/run.h): a LibTorch
// run's ops, an ONNX Runtime profile's kernels or a PyTorch trace's scopes become a run report's summary,
// scope rows, op rows and measured units.
#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "flopwise/run.h"

namespace flopwise {

using json = nlohmann::json;

namespace {

double percentile(std::vector<double> xs, double p) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  double at = p * static_cast<double>(xs.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(at)), hi = static_cast<size_t>(std::ceil(at));
  return xs[lo] + (xs[hi] - xs[lo]) * (at - static_cast<double>(lo));
}

double median_of(std::vector<double> xs) { return percentile(std::move(xs), 0.5); }

RunLatency latency_of(const std::vector<double>& ms) {
  return {percentile(ms, 0.5), percentile(ms, 0.1), percentile(ms, 0.9),
          *std::min_element(ms.begin(), ms.end())};
}

// A scope's measured time, joined with the static tree: inclusive op-sum per forward, calls per forward.
struct ScopeTime {
  double ms = 0;            // sum of top-level op durations in the scope or below, per profiled forward
  double self_ms = 0;       // of ops directly in the scope
  double self_min_ms = -1;  // self_ms in the fastest iteration (-1: not measured iteration by iteration)
  int64_t entries = 0;
};

struct Joined {
  std::map<std::string, ScopeTime> scopes;
  std::map<std::string, double> op_ms;  // per op name, per forward
  std::map<std::string, const ScopeNode*> static_scopes;
  double profiled_fwd_ms = 0, op_sum_ms = 0, unattributed_ms = 0;
  int iters = 0;
};

// A unit's measured time per forward: the median (or mean) of the runs, and the fastest run's.
struct UnitTime {
  double ms = 0, min_ms = 0;  // 0: not measured
};

// The run's measured units for flopwise calibrate (flopwise/calibration.h): each unit of the report at the
// runtime's granularity with its static counts and measured times per forward.
RunUnits measured_units(const Report& rep, Granularity g,
                        const std::function<UnitTime(const CostUnit&)>& time) {
  RunUnits out;
  out.granularity = g;
  for (CostUnit& u : cost_units(rep, g, &out.not_numbers)) {
    const UnitTime t = time(u);
    out.units.push_back(RunUnit{std::move(u), t.ms, t.min_ms, true});
  }
  return out;
}

// A scope's own time (its ops, children apart), per forward: LibTorch's and a trace's unit of measure. Where
// the iterations were not told apart (a trace's steps), the fastest is the mean.
RunUnits scope_self_units(const Report& rep, const Joined& j) {
  return measured_units(rep, Granularity::Module, [&](const CostUnit& u) {
    auto it = j.scopes.find(u.name);
    if (it == j.scopes.end()) return UnitTime{};
    const ScopeTime& t = it->second;
    return UnitTime{t.self_ms, t.self_min_ms >= 0 ? t.self_min_ms : t.self_ms};
  });
}

void index_scopes(const ScopeNode& s, std::map<std::string, const ScopeNode*>& out) {
  out[s.name] = &s;
  for (const auto& c : s.children) index_scopes(*c, out);
}

Joined join(const Report& rep, const json& rt) {
  Joined j;
  index_scopes(*rep.scopes, j.static_scopes);
  const json& prof = rt.at("profiled");
  j.iters = prof.value("iters", 0);
  std::vector<double> fwd = prof.at("fwd_ms").get<std::vector<double>>();
  j.profiled_fwd_ms = percentile(fwd, 0.5);
  std::vector<std::string> prev;
  int prev_iter = -1;
  std::map<std::string, std::map<int, double>> self_by_iter;  // scope -> iteration -> its own ops' time
  for (const auto& op : prof.at("ops")) {
    std::string scope = op.value("scope", "");
    // A scope the static tree lacks (a module the lowering inlined differently) counts to its nearest
    // ancestor the tree has, so no time is dropped.
    auto chain = scope_ancestors(scope);
    while (chain.size() > 1 && !j.static_scopes.count(chain.back())) chain.pop_back();
    double ms = op.value("dur_us", 0.0) / 1000.0;
    if (op.value("iter", 0) != prev_iter) prev.clear(), prev_iter = op.value("iter", 0);
    for (const auto& a : chain) {
      auto& t = j.scopes[a];
      t.ms += ms;
      if (std::find(prev.begin(), prev.end(), a) == prev.end()) t.entries++;
    }
    j.scopes[chain.back()].self_ms += ms;
    self_by_iter[chain.back()][op.value("iter", 0)] += ms;
    j.op_ms[op.value("name", "")] += ms;
    j.op_sum_ms += ms;
    prev = chain;
  }
  double n = std::max(1, j.iters);
  for (auto& [k, t] : j.scopes) t.ms /= n, t.self_ms /= n;
  // The fastest iteration's own time, of scopes that ran in every iteration (else the mean stands).
  for (const auto& [scope, by_iter] : self_by_iter)
    if (static_cast<int>(by_iter.size()) == j.iters) {
      double lo = INFINITY;
      for (const auto& [iter, ms] : by_iter) lo = std::min(lo, ms);
      j.scopes[scope].self_min_ms = lo;
    }
  for (auto& [k, ms] : j.op_ms) ms /= n;
  j.op_sum_ms /= n;
  j.unattributed_ms = std::max(0.0, j.profiled_fwd_ms - j.op_sum_ms);
  return j;
}

double flops_of(const ScopeNode& s) { return s.cost.flops.known ? static_cast<double>(s.cost.flops.v) : NAN; }

std::optional<int64_t> known(const Count& c) { return c.known ? std::optional<int64_t>(c.v) : std::nullopt; }
std::optional<int64_t> whole(double v) {
  return std::isnan(v) ? std::nullopt : std::optional<int64_t>(static_cast<int64_t>(v));
}
std::optional<double> maybe(double v) { return std::isnan(v) ? std::nullopt : std::optional<double>(v); }

// The profiled forwards' cost over the unprofiled forward run just before each: the median of the pairs'
// ratios, minus 1 (neighbours share the machine's state; two phases a noisy machine runs at different
// speeds would not).
double profiling_overhead(const json& prof) {
  std::vector<double> p = prof.value("fwd_ms", std::vector<double>{}),
                      c = prof.value("paired_clean_ms", std::vector<double>{}), ratios;
  for (size_t i = 0; i < p.size() && i < c.size(); ++i)
    if (c[i] > 0) ratios.push_back(p[i] / c[i]);
  return ratios.empty() ? NAN : percentile(ratios, 0.5) - 1.0;
}

// The summary of the forwards `fwd` (and backwards `bwd`, LibTorch --backward); profiling_overhead is the
// LibTorch join's to add.
RunSummary summary(const Report& rep, const std::vector<double>& fwd, const std::vector<double>* bwd,
                   const Joined& j, const RunJoinOptions& o) {
  RunSummary s;
  s.fwd_latency_ms = latency_of(fwd);
  const double med = s.fwd_latency_ms.median;
  if (!rep.inputs.empty() && rep.inputs[0].second.second.rank_known &&
      rep.inputs[0].second.second.rank() > 0 && rep.inputs[0].second.second.dims[0].is_known())
    s.batch = rep.inputs[0].second.second.dims[0].value();
  double flops = rep.totals.flops.known ? static_cast<double>(rep.totals.flops.v) : NAN;
  s.samples_per_s = med > 0 ? 1000.0 * static_cast<double>(s.batch) / med : NAN;
  s.fwd_flops_per_s = med > 0 ? flops / (med / 1000.0) : NAN;
  s.profiled_fwd_ms = j.profiled_fwd_ms;
  s.profiled_op_sum_ms = j.op_sum_ms;
  s.coverage = j.profiled_fwd_ms > 0 ? j.op_sum_ms / j.profiled_fwd_ms : NAN;
  if (bwd) {
    s.bwd_latency_ms = latency_of(*bwd);
    double bflops = rep.totals.backward_flops.known ? static_cast<double>(rep.totals.backward_flops.v) : NAN;
    s.fwd_bwd_flops_per_s = (flops + bflops) / ((med + s.bwd_latency_ms->median) / 1000.0);
  }
  if (o.peak_tflops > 0) s.peak_tflops = o.peak_tflops;
  return s;
}

// One row per static scope (pre-order, to --depth), with its measured time.
std::vector<RunScopeRow> scope_rows(const Joined& j, const RunJoinOptions& o) {
  std::vector<RunScopeRow> rows;
  double total = j.profiled_fwd_ms;
  std::vector<const ScopeNode*> stack{j.static_scopes.at("")};
  while (!stack.empty()) {
    const ScopeNode* s = stack.back();
    stack.pop_back();
    if (o.depth >= 0 && s->depth > o.depth) continue;
    auto it = j.scopes.find(s->name);
    ScopeTime t = it == j.scopes.end() ? ScopeTime{} : it->second;
    double fl = flops_of(*s);
    double rate = t.ms > 0 ? fl / (t.ms / 1000.0) : NAN;
    RunScopeRow& r = rows.emplace_back();
    r.name = s->name;
    r.cls = s->cls;
    r.depth = s->depth;
    r.params = known(s->cost.params);
    r.macs = known(s->cost.macs);
    r.flops = whole(fl);
    r.latency_ms = t.ms;
    r.self_ms = t.self_ms;
    r.pct = total > 0 ? 100.0 * t.ms / total : 0.0;
    r.calls = j.iters > 0 ? static_cast<double>(t.entries) / j.iters : 0.0;
    r.flops_per_s = maybe(rate);
    if (o.peak_tflops > 0 && !std::isnan(rate)) {
      r.pct_of_peak = 100.0 * rate / (o.peak_tflops * 1e12);
      r.exceeds_peak = rate > o.peak_tflops * 1e12;
    }
    if (auto b = o.bound_ms.find(s->name); b != o.bound_ms.end()) {
      r.bound_ms = b->second;
      r.below_bound = t.ms > 0 && t.ms < b->second;
    }
    for (auto c = s->children.rbegin(); c != s->children.rend(); ++c) stack.push_back(c->get());
  }
  return rows;
}

// Measured ms per scope name, for the HTML page's latency metric.
std::map<std::string, double> scope_latency(const Joined& j) {
  std::map<std::string, double> m;
  for (const auto& [name, t] : j.scopes) m[name] = t.ms;
  return m;
}

std::vector<RunOpRow> op_rows(const Joined& j) {
  std::vector<std::pair<std::string, double>> v(j.op_ms.begin(), j.op_ms.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<RunOpRow> rows;
  for (const auto& [name, ms] : v) {
    RunOpRow& r = rows.emplace_back();
    r.op = name;
    r.latency_ms = ms;
    r.pct = j.op_sum_ms > 0 ? 100.0 * ms / j.op_sum_ms : 0.0;
  }
  return rows;
}

// The parts of a run report every engine's has: what was measured and its static totals.
RunReport run_base(const Report& rep, const RunJoinOptions& o) {
  RunReport r;
  r.model = o.model;
  r.model_format = rep.format;
  r.convention = rep.convention;
  r.static_totals = {rep.totals.params.v, rep.totals.macs.v, rep.totals.flops.v, rep.totals.complete()};
  return r;
}

}  // namespace

RunJoin join_runtime_response(const Report& rep, const json& rt, const RunJoinOptions& o) {
  Joined j = join(rep, rt);
  RunJoin out;
  RunReport& r = out.report = run_base(rep, o);
  RunRuntime& h = r.runtime;
  h.engine = RunEngine::LibTorch;
  h.device = rt.at("device").get<std::string>();
  h.device_name = rt.at("device_name").get<std::string>();
  h.torch_version = rt.at("torch_version").get<std::string>();
  h.blas = rt.at("blas").get<std::string>();
  h.threads = rt.at("threads").get<int64_t>();
  h.timing = rt.at("timing").get<std::string>();
  h.op_clock = rt.at("profiled").value("op_clock", "");
  if (rt.contains("tf32") && rt["tf32"].is_object())
    h.tf32 = RunRuntime::Tf32{rt["tf32"].value("cudnn", false), rt["tf32"].value("cublas", false)};
  h.warmup = rt.at("warmup").get<int64_t>();
  h.iters = rt.at("iters").get<int64_t>();
  h.profile_iters = rt.at("profiled").at("iters").get<int64_t>();
  const std::vector<double> fwd = rt.at("fwd_ms").get<std::vector<double>>();
  std::vector<double> bwd;
  if (rt.contains("bwd_ms")) bwd = rt.at("bwd_ms").get<std::vector<double>>();
  r.summary = summary(rep, fwd, rt.contains("bwd_ms") ? &bwd : nullptr, j, o);
  r.summary.profiling_overhead = profiling_overhead(rt.at("profiled"));
  if (rt.contains("bwd_ms")) r.summary.backward_note = rt.value("backward_note", "");
  r.scopes = scope_rows(j, o);
  r.op_types = op_rows(j);
  r.unattributed_ms = j.unattributed_ms;
  r.measured_units = scope_self_units(rep, j);
  out.scope_ms = scope_latency(j);
  return out;
}

RunJoin join_ort_profile(const Model& model, const Report& rep, const OrtProfile& prof,
                         const ProfileAttribution& at, const std::vector<std::string>& bindings,
                         const RunJoinOptions& o) {
  const size_t n_runs = prof.run_ms.size(), first = n_runs > 1 ? 1 : 0;
  auto measured = [&](const std::vector<std::map<std::string, double>>& per_run, const std::string& key) {
    std::vector<double> xs;
    for (size_t r = first; r < n_runs; ++r) {
      auto it = per_run[r].find(key);
      xs.push_back(it == per_run[r].end() ? 0.0 : it->second / 1000.0);
    }
    return median_of(xs);
  };
  std::vector<double> run_ms(prof.run_ms.begin() + static_cast<std::ptrdiff_t>(first), prof.run_ms.end());

  Joined j;
  index_scopes(*rep.scopes, j.static_scopes);
  j.iters = 1;
  for (const auto& [name, unused] : j.static_scopes) {
    ScopeTime t;
    t.ms = measured(at.scope_us, name);
    t.self_ms = measured(at.scope_self_us, name);
    auto k = at.scope_kernels.find(name);
    t.entries = k == at.scope_kernels.end() ? 0 : k->second;
    j.scopes[name] = t;
  }
  j.profiled_fwd_ms = median_of(run_ms);
  j.op_sum_ms = measured(at.scope_us, "");
  j.unattributed_ms = std::max(0.0, j.profiled_fwd_ms - j.op_sum_ms);
  RunJoin out;
  RunReport& r = out.report = run_base(rep, o);
  r.summary = summary(rep, run_ms, nullptr, j, o);
  if (n_runs > 1) r.summary.warmup_run_ms = prof.run_ms[0];
  r.scopes = scope_rows(j, o);
  for (auto& row : r.scopes) {
    if (n_runs > 1) {
      auto it = at.scope_us[0].find(row.name);
      row.warmup_ms = it == at.scope_us[0].end() ? 0.0 : it->second / 1000.0;
    }
    auto p = at.scope_providers.find(row.name);
    row.providers = p == at.scope_providers.end() ? std::vector<std::string>{} : p->second;
  }
  r.unattributed_ms = j.unattributed_ms;
  out.scope_ms = scope_latency(j);

  // Op types of the original graph (fused kernels split as for scopes), by measured time.
  std::map<std::string, const OpTypeReport*> static_ops;
  for (const auto& ot : rep.op_types) static_ops[ot.op] = &ot;
  std::set<std::string> op_names;
  for (const auto& per : at.op_type_us)
    for (const auto& [k, v] : per) op_names.insert(k);
  for (const auto& k : op_names) {
    double ms = measured(at.op_type_us, k);
    auto it = static_ops.find(k);
    double fl =
        it != static_ops.end() && it->second->flops.known ? static_cast<double>(it->second->flops.v) : NAN;
    RunOpRow& row = r.op_types.emplace_back();
    row.op = k;
    row.nodes = it != static_ops.end() ? it->second->count : 0;
    row.latency_ms = ms;
    row.pct = j.op_sum_ms > 0 ? 100.0 * ms / j.op_sum_ms : 0.0;
    row.flops = whole(fl);
    row.flops_per_s = ms > 0 && !std::isnan(fl) ? std::optional<double>(fl / (ms / 1000.0)) : std::nullopt;
  }
  std::stable_sort(r.op_types.begin(), r.op_types.end(),
                   [](const RunOpRow& a, const RunOpRow& b) { return a.latency_ms > b.latency_ms; });

  // How the kernels were mapped; kernels with no original node are listed.
  RunAttribution& a = r.attribution.emplace();
  std::map<std::string, UnitTime> node_ms;  // each kernel's time over the nodes it covers, by share
  std::set<std::string> providers;
  for (const auto& [m, us] : at.method_us)
    a.by_method.emplace_back(map_method_name(m), at.total_us > 0 ? 100.0 * us / at.total_us : 0.0);
  for (size_t k = 0; k < prof.kernels.size(); ++k) {
    const OrtKernel& kern = prof.kernels[k];
    const KernelAttribution& ka = at.kernels[k];
    providers.insert(kern.provider);
    std::vector<double> us(kern.us.begin() + static_cast<std::ptrdiff_t>(first), kern.us.end());
    double ms = median_of(us) / 1000.0;
    const double min_ms = us.empty() ? 0.0 : *std::min_element(us.begin(), us.end()) / 1000.0;
    RunKernel rk{kern.key, kern.op, kern.provider, map_method_name(ka.method), ms, {}, std::nullopt};
    for (const auto& [i, share] : ka.nodes) {
      rk.nodes.emplace_back(model.graph.nodes[i].name, share);
      UnitTime& t = node_ms[model.graph.nodes[i].name];
      t.ms += ms * share;
      t.min_ms += min_ms * share;
    }
    if (ka.method == MapMethod::none || ka.method == MapMethod::inserted) {
      RunKernel listed = rk;
      listed.nodes.clear();
      if (!ka.nodes.empty()) listed.counted_to = model.graph.nodes[ka.nodes[0].first].name;
      a.listed.push_back(std::move(listed));
    }
    a.kernels.push_back(std::move(rk));
  }
  a.node_time_ms = j.op_sum_ms;
  auto unmapped = at.method_us.find(MapMethod::none);
  const double none_us = unmapped == at.method_us.end() ? 0.0 : unmapped->second;
  a.attributed_pct = at.total_us > 0 ? 100.0 * (1.0 - none_us / at.total_us) : 100.0;
  a.split_kernels = at.split_kernels;
  a.outside_runs_ms = prof.outside_runs_us / 1000.0;
  r.measured_units = measured_units(rep, Granularity::Node, [&](const CostUnit& u) {
    auto it = node_ms.find(u.name);
    return it == node_ms.end() ? UnitTime{} : it->second;
  });

  RunRuntime& h = r.runtime;
  h.engine = RunEngine::OnnxRuntime;
  h.profile = o.profile;
  h.providers.assign(providers.begin(), providers.end());
  h.runs = static_cast<int64_t>(n_runs);
  h.warmup_runs = static_cast<int64_t>(first);
  h.measured_runs = static_cast<int64_t>(n_runs - first);
  h.timing = "ONNX Runtime profile: model_run wall time; node time = kernel events";
  h.input_bindings = bindings;
  return out;
}

RunJoin join_torch_trace(const Report& rep, const TraceReport& tr, const RunJoinOptions& o,
                         size_t* matched_trace_scopes) {
  const auto matched = match_trace_scopes(tr, *rep.scopes);
  const double steps = static_cast<double>(std::max<size_t>(1, tr.steps.size()));
  Joined j;
  index_scopes(*rep.scopes, j.static_scopes);
  j.iters = 1;
  for (const auto& [name, node] : j.static_scopes) {
    ScopeTime t;
    if (auto it = matched.find(name); it != matched.end())
      for (int i : it->second) {
        t.ms += tr.scopes[static_cast<size_t>(i)].row.gpu_us / steps / 1000.0;
        ++t.entries;
      }
    j.scopes[name] = t;
  }
  for (auto& [name, t] : j.scopes) {  // self: what the scope's children do not hold
    t.self_ms = t.ms;
    for (const auto& c : j.static_scopes.at(name)->children) t.self_ms -= j.scopes[c->name].ms;
    t.self_ms = std::max(0.0, t.self_ms);
  }
  std::vector<double> step_ms;
  for (const auto& s : tr.steps) step_ms.push_back(s.gpu_busy_us / 1000.0);
  j.profiled_fwd_ms = median_of(step_ms);
  j.op_sum_ms = j.scopes[""].ms;
  j.unattributed_ms = std::max(0.0, j.profiled_fwd_ms - j.op_sum_ms);
  for (const auto& op : tr.ops) j.op_ms[op.name] = op.gpu_us / steps / 1000.0;
  RunJoin out;
  RunReport& r = out.report = run_base(rep, o);
  r.summary = summary(rep, step_ms, nullptr, j, o);
  r.scopes = scope_rows(j, o);
  for (const auto& op : tr.ops) {
    double ms = op.gpu_us / steps / 1000.0, fl = op.overflow ? NAN : static_cast<double>(op.flops) / steps;
    RunOpRow& row = r.op_types.emplace_back();
    row.op = op.name;
    row.latency_ms = ms;
    row.pct = j.op_sum_ms > 0 ? 100.0 * ms / j.op_sum_ms : 0.0;
    row.flops = whole(fl);
    row.flops_per_s = ms > 0 && !std::isnan(fl) && op.uncosted == 0
                          ? std::optional<double>(fl / (ms / 1000.0))
                          : std::nullopt;
  }
  r.unattributed_ms = j.unattributed_ms;
  r.measured_units = scope_self_units(rep, j);
  out.scope_ms = scope_latency(j);
  size_t trace_scopes = 0;
  for (const auto& [name, ix] : matched) trace_scopes += ix.size();
  if (matched_trace_scopes) *matched_trace_scopes = trace_scopes;
  RunRuntime& h = r.runtime;
  h.engine = RunEngine::PyTorchTrace;
  h.profile = o.profile;
  h.device = tr.device;
  h.steps = static_cast<int64_t>(tr.steps.size());
  h.timing =
      "PyTorch profiler trace: GPU time of the kernels each scope's ops launched, per step (the mean of " +
      std::to_string(tr.steps.size()) + "); fwd latency = each step's GPU busy time";
  h.matched_scopes = static_cast<int64_t>(matched.size());
  h.trace_scopes = static_cast<int64_t>(tr.scopes.size());
  return out;
}

// A scope and its ancestors, root first: "a.b.c" -> "", "a", "a.b", "a.b.c".
std::vector<std::string> scope_ancestors(const std::string& scope) {
  std::vector<std::string> r{""};
  for (size_t at = 0; !scope.empty();) {
    size_t dot = scope.find('.', at);
    r.push_back(scope.substr(0, dot));
    if (dot == std::string::npos) break;
    at = dot + 1;
  }
  return r;
}

}  // namespace flopwise
