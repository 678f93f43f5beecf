// src/cli/run_cmd.cc — `flopwise run MODEL.pt`: the static report beside measured latency per module scope.
// Owns: the request to the runtime harness (flopwise-runtime, a separate executable linked to LibTorch:
// crashes and ABI differences stay out of this process, and it can be built against any LibTorch), spawning
// it under a timeout, joining its measurements with the static scope tree (the run report's writers are
// src/writers/run_report.cc), and the ONNX Runtime profile path. Sees no LibTorch.
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "commands.h"
#include "flopwise/analyse.h"
#include "flopwise/calibration.h"
#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/formats.h"
#include "flopwise/json_text.h"
#include "flopwise/ort_profile.h"
#include "flopwise/roofline.h"
#include "flopwise/run_report.h"
#include "flopwise/torch_trace.h"
#include "flopwise/verify.h"
#include "flopwise/writers.h"
#include "output.h"

namespace flopwise {
namespace {

using json = nlohmann::json;

struct RunOptions {
  std::string model, device = "auto", format = "text", output, trace, profile;
  std::vector<std::string> inputs, dims, values;
  int threads = 0, warmup = 3, iters = 20, profile_iters = 3, depth = -1, seed = 0;
  int64_t int_range = 0;
  double peak_tflops = 0, timeout = 300;
  bool backward = false, verify = false;
  std::string hardware, hardware_file;     // a roofline bound per scope beside the measured time
  std::map<std::string, double> bound_ms;  // scope -> its roofline bound (filled by with_bounds)
};

// What the run report's writers (flopwise/run_report.h) take from the options.
RunTextOptions text_options(const RunOptions& o) { return RunTextOptions{o.model, o.peak_tflops}; }

// The options with each static scope's roofline bound on --hardware (or --hardware-file): a measured time
// below its bound is a counting or timing error.
// `rt`, a LibTorch runtime's response: on CUDA, its TF32 flags choose the rows convolutions and matrix
// products are bound by (cuDNN runs float32 convolutions in TF32 by default).
RunOptions with_bounds(const RunOptions& o, const Report& rep, const json* rt = nullptr) {
  RunOptions r = o;
  if (o.hardware.empty() && o.hardware_file.empty()) return r;
  Hardware hw = hardware_of(o.hardware, o.hardware_file);
  if (rt && rt->value("device", "") == "cuda" && rt->contains("tf32") && (*rt)["tf32"].is_object()) {
    hw.tf32_conv = (*rt)["tf32"].value("cudnn", false);
    hw.tf32 = hw.tf32 || (*rt)["tf32"].value("cublas", false);
  }
  const RooflineReport rf = roofline(rep, hw);
  for (const auto& e : rf.scopes)
    if (e.nodes > 0) r.bound_ms[e.scope] = e.seconds * 1e3;
  return r;
}

// $FLOPWISE_RUNTIME, else next to this executable, else ../lib/flopwise/.
std::string find_runtime() {
  auto exists = [](const std::string& p) { return access(p.c_str(), X_OK) == 0; };
  if (const char* env = std::getenv("FLOPWISE_RUNTIME"); env && *env) return exists(env) ? env : "";
  for (const std::string& p :
       {exe_dir() + "/flopwise-runtime", exe_dir() + "/../lib/flopwise/flopwise-runtime"})
    if (exists(p)) return p;
  return "";
}

// Exclusive upper bound for an integer input: --int-range, else the rows of the embedding table it indexes
// (a Gather of an initializer on axis 0 with this input as indices), else 2.
int64_t int_high(const Model& m, int input, int64_t user) {
  if (user > 0) return user;
  const Graph& g = m.graph;
  for (const auto& n : g.nodes) {
    if (n.op != "Gather" || n.inputs.size() < 2 || n.inputs[1] != input || n.attr_i("axis", 0) != 0) continue;
    const Value& table = g.values[n.inputs[0]];
    if (table.is_initializer && table.shape.rank_known && table.shape.rank() >= 1 &&
        table.shape.dims[0].is_known())
      return table.shape.dims[0].value();
  }
  return 2;
}

json make_request(const RunOptions& o, const Model& m) {
  json ins = json::array();
  for (int i : m.graph.inputs) {
    const Value& v = m.graph.values[i];
    if (!v.shape.fully_known())
      throw UsageError("input '" + v.name + "' has shape " + v.shape.str() +
                       ": running needs every dim known (give it with --input or bind symbols with --dim)");
    json d = {{"name", v.name}, {"dtype", dtype_name(v.dtype)}, {"shape", json::array()}};
    for (const auto& x : v.shape.dims) d["shape"].push_back(x.value());
    if (is_integer(v.dtype) && v.dtype != DType::Bool) {
      d["low"] = 0;
      d["high"] = int_high(m, i, o.int_range);
    }
    ins.push_back(d);
  }
  return {{"schema", "flopwise.runtime-request/1"},
          {"model", o.model},
          {"inputs", ins},
          {"device", o.device},
          {"threads", o.threads},
          {"warmup", o.warmup},
          {"iters", o.iters},
          {"profile_iters", o.profile_iters},
          {"backward", o.backward},
          {"verify", o.verify},
          {"seed", o.seed}};
}

// Runs `exe request` with stdout into `out`; kills it after `timeout` seconds. Returns its exit status
// (-1: killed by the timeout, 128+N: killed by signal N); `err` gets its first stderr line.
int spawn(const std::string& exe, const std::string& request, const std::string& out, double timeout,
          std::string& err) {
  std::string err_file = out + ".err";
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw Error("cannot start " + exe);
  if (pid == 0) {
    // The runtime ends with flopwise, however flopwise ends (a caller's timeout sends SIGKILL).
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    FILE* o = std::freopen(out.c_str(), "w", stdout);
    FILE* e = std::freopen(err_file.c_str(), "w", stderr);
    if (!o || !e) _exit(127);
    execl(exe.c_str(), exe.c_str(), request.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ifstream ef(err_file);
  std::string line;
  while (std::getline(ef, line))
    if (!line.empty()) err = line;  // the last non-empty line is the runtime's one-line message
  std::remove(err_file.c_str());
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

double percentile(std::vector<double> xs, double p) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  double at = p * static_cast<double>(xs.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(at)), hi = static_cast<size_t>(std::ceil(at));
  return xs[lo] + (xs[hi] - xs[lo]) * (at - static_cast<double>(lo));
}

// Measured time per scope, joined with the static tree: inclusive op-sum per forward, calls per forward.
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
json measured_units(const Report& rep, Granularity g, const std::function<UnitTime(const CostUnit&)>& time) {
  int64_t unknown = 0;
  json units = json::array();
  for (const CostUnit& u : cost_units(rep, g, &unknown)) {
    const UnitTime t = time(u);
    json unit = {{"name", u.name},    {"op", u.op},       {"variant", u.variant},         {"flops", u.flops},
                 {"bytes", u.bytes},  {"calls", u.calls}, {"param_bytes", u.param_bytes}, {"ms", t.ms},
                 {"min_ms", t.min_ms}};
    if (!u.parts.empty()) {  // a module's nodes by op and variant: calibrate fits each part by its own op
      json parts = json::array();
      for (const CostPart& p : u.parts)
        parts.push_back({{"op", p.op},
                         {"variant", p.variant},
                         {"flops", p.flops},
                         {"bytes", p.bytes},
                         {"calls", p.calls},
                         {"param_bytes", p.param_bytes}});
      unit["parts"] = std::move(parts);
    }
    units.push_back(std::move(unit));
  }
  return {{"granularity", granularity_name(g)}, {"not_numbers", unknown}, {"units", units}};
}

// A scope's own time (its ops, children apart), per forward: LibTorch's and a trace's unit of measure. Where
// the iterations were not told apart (a trace's steps), the fastest is the mean.
json scope_self_units(const Report& rep, const Joined& j) {
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

json summary(const Report& rep, const json& rt, const Joined& j, const RunOptions& o) {
  std::vector<double> fwd = rt.at("fwd_ms").get<std::vector<double>>();
  double med = percentile(fwd, 0.5);
  int64_t batch = 1;
  if (!rep.inputs.empty() && rep.inputs[0].second.second.rank_known &&
      rep.inputs[0].second.second.rank() > 0 && rep.inputs[0].second.second.dims[0].is_known())
    batch = rep.inputs[0].second.second.dims[0].value();
  double flops = rep.totals.flops.known ? static_cast<double>(rep.totals.flops.v) : NAN;
  json s = {{"fwd_latency_ms",
             {{"median", med},
              {"p10", percentile(fwd, 0.1)},
              {"p90", percentile(fwd, 0.9)},
              {"min", *std::min_element(fwd.begin(), fwd.end())}}},
            {"samples_per_s", med > 0 ? 1000.0 * static_cast<double>(batch) / med : NAN},
            {"batch", batch},
            {"fwd_flops_per_s", med > 0 ? flops / (med / 1000.0) : NAN},
            {"profiled_fwd_ms", j.profiled_fwd_ms},
            {"profiled_op_sum_ms", j.op_sum_ms},
            {"coverage", j.profiled_fwd_ms > 0 ? j.op_sum_ms / j.profiled_fwd_ms : NAN},
            {"profiling_overhead", profiling_overhead(rt.at("profiled"))}};
  if (rt.contains("bwd_ms")) {
    std::vector<double> bwd = rt.at("bwd_ms").get<std::vector<double>>();
    double bmed = percentile(bwd, 0.5);
    double bflops = rep.totals.backward_flops.known ? static_cast<double>(rep.totals.backward_flops.v) : NAN;
    s["bwd_latency_ms"] = {{"median", bmed},
                           {"p10", percentile(bwd, 0.1)},
                           {"p90", percentile(bwd, 0.9)},
                           {"min", *std::min_element(bwd.begin(), bwd.end())}};
    s["fwd_bwd_flops_per_s"] = (flops + bflops) / ((med + bmed) / 1000.0);
    s["backward_note"] = rt.value("backward_note", "");
  }
  if (o.peak_tflops > 0) s["peak_tflops"] = o.peak_tflops;
  return s;
}

// One row per static scope (pre-order, to --depth), with its measured time.
json scope_rows(const Joined& j, const RunOptions& o) {
  json rows = json::array();
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
    json r = {{"name", s->name},
              {"class", s->cls},
              {"depth", s->depth},
              {"params", s->cost.params.known ? json(s->cost.params.v) : json(nullptr)},
              {"macs", s->cost.macs.known ? json(s->cost.macs.v) : json(nullptr)},
              {"flops", std::isnan(fl) ? json(nullptr) : json(static_cast<int64_t>(fl))},
              {"latency_ms", t.ms},
              {"self_ms", t.self_ms},
              {"pct", total > 0 ? 100.0 * t.ms / total : 0.0},
              {"calls", j.iters > 0 ? static_cast<double>(t.entries) / j.iters : 0.0},
              {"flops_per_s", std::isnan(rate) ? json(nullptr) : json(rate)}};
    if (o.peak_tflops > 0 && !std::isnan(rate)) {
      r["pct_of_peak"] = 100.0 * rate / (o.peak_tflops * 1e12);
      r["exceeds_peak"] = rate > o.peak_tflops * 1e12;
    }
    if (auto b = o.bound_ms.find(s->name); b != o.bound_ms.end()) {
      r["bound_ms"] = b->second;
      r["below_bound"] = t.ms > 0 && t.ms < b->second;
    }
    rows.push_back(r);
    for (auto c = s->children.rbegin(); c != s->children.rend(); ++c) stack.push_back(c->get());
  }
  return rows;
}

// Measured ms per scope name, for the HTML page's latency metric.
std::map<std::string, double> latency_of(const Joined& j) {
  std::map<std::string, double> m;
  for (const auto& [name, t] : j.scopes) m[name] = t.ms;
  return m;
}

json op_rows(const Joined& j) {
  std::vector<std::pair<std::string, double>> v(j.op_ms.begin(), j.op_ms.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  json rows = json::array();
  for (const auto& [name, ms] : v)
    rows.push_back({{"op", name},
                    {"latency_ms", ms},
                    {"pct", j.op_sum_ms > 0 ? 100.0 * ms / j.op_sum_ms : 0.0},
                    {"flops", nullptr},
                    {"flops_per_s", nullptr}});
  return rows;
}

// Pins for a model profiled by ONNX Runtime: the user's, else its symbolic input dims bound to what the
// profile's kernels saw (a whole input shape where a dim has no name).
Pins profile_pins(const LoadedModel& loaded, Pins pins, const OrtProfile& prof,
                  std::vector<std::string>& notes) {
  if (!pins.inputs.empty() || !pins.dims.empty()) return pins;
  Analysis first = analyse(loaded, pins, find_convention("default"));
  const Graph& g = first.model->graph;
  std::map<std::string, int64_t> bound;
  ProfileAttribution at = attribute_profile(*first.model, first.report, prof);
  for (const auto& [name, dims] : profile_input_shapes(*first.model, prof, at)) {
    const Shape& s = g.values[g.find(name)].shape;
    bool by_symbol = s.rank_known && s.rank() == dims.size();
    for (size_t d = 0; by_symbol && d < dims.size(); ++d) {
      const Dim& x = s.dims[d];
      by_symbol = x.is_known() ? x.value() == dims[d]
                               : x.is_symbolic() && x.terms().size() == 1 && x.terms()[0].first.size() == 1 &&
                                     x.terms()[0].second == 1;
    }
    if (by_symbol) {
      for (size_t d = 0; d < dims.size(); ++d)
        if (s.dims[d].is_symbolic()) bound.emplace(s.dims[d].terms()[0].first[0], dims[d]);
    } else {
      InputPin pin;
      pin.name = name;
      pin.shape = Shape(std::vector<Dim>(dims.begin(), dims.end()));
      pins.inputs.push_back(pin);
      notes.push_back(name + " " + pin.shape->str());
    }
  }
  for (const auto& [sym, v] : bound) {
    pins.dims.emplace_back(sym, v);
    notes.push_back(sym + "=" + std::to_string(v));
  }
  return pins;
}

double median_of(std::vector<double> xs) { return percentile(std::move(xs), 0.5); }

// `flopwise run MODEL.onnx --profile PROFILE.json`: the static report beside the time ONNX Runtime
// measured, per module scope. The first run is the warm-up (reported apart), the rest are measured
// (medians); with one run, that run is both.
int run_ort(const RunOptions& o) {
  OrtProfile prof = read_ort_profile(o.profile);
  std::vector<std::string> bound;
  Pins user = parse_pins(o.inputs, o.dims, o.values);
  const LoadedModel loaded = load(o.model, user);  // read once for both analyses
  Pins pins = profile_pins(loaded, user, prof, bound);
  Analysis analysis = analyse(loaded, pins, find_convention("default"));
  const Report& rep = analysis.report;
  ProfileAttribution at = attribute_profile(*analysis.model, rep, prof);

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
  json rt = {{"fwd_ms", run_ms}, {"profiled", {{"iters", run_ms.size()}, {"fwd_ms", run_ms}}}};
  json sum = summary(rep, rt, j, o);
  sum.erase("profiling_overhead");
  if (n_runs > 1) sum["warmup_run_ms"] = prof.run_ms[0];
  json rows = scope_rows(j, with_bounds(o, rep));
  for (auto& r : rows) {
    std::string name = r["name"].get<std::string>();
    if (n_runs > 1) {
      auto it = at.scope_us[0].find(name);
      r["warmup_ms"] = it == at.scope_us[0].end() ? 0.0 : it->second / 1000.0;
    }
    auto p = at.scope_providers.find(name);
    r["providers"] = p == at.scope_providers.end() ? json::array() : json(p->second);
  }

  // Op types of the original graph (fused kernels split as for scopes), by measured time.
  std::map<std::string, const OpTypeReport*> static_ops;
  for (const auto& ot : rep.op_types) static_ops[ot.op] = &ot;
  std::set<std::string> op_names;
  for (const auto& per : at.op_type_us)
    for (const auto& [k, v] : per) op_names.insert(k);
  json ops = json::array();
  for (const auto& k : op_names) {
    double ms = measured(at.op_type_us, k);
    auto it = static_ops.find(k);
    double fl =
        it != static_ops.end() && it->second->flops.known ? static_cast<double>(it->second->flops.v) : NAN;
    json r = {{"op", k},
              {"nodes", it != static_ops.end() ? it->second->count : 0},
              {"latency_ms", ms},
              {"pct", j.op_sum_ms > 0 ? 100.0 * ms / j.op_sum_ms : 0.0},
              {"flops", std::isnan(fl) ? json(nullptr) : json(static_cast<int64_t>(fl))},
              {"flops_per_s", ms > 0 && !std::isnan(fl) ? json(fl / (ms / 1000.0)) : json(nullptr)}};
    ops.push_back(r);
  }
  std::stable_sort(ops.begin(), ops.end(), [](const json& a, const json& b) {
    return a["latency_ms"].get<double>() > b["latency_ms"].get<double>();
  });

  // How the kernels were mapped; kernels with no original node are listed.
  json methods = json::object(), listed = json::array(), kernels = json::array();
  std::map<std::string, UnitTime> node_ms;  // each kernel's time over the nodes it covers, by share
  std::set<std::string> providers;
  for (const auto& [m, us] : at.method_us)
    methods[map_method_name(m)] = at.total_us > 0 ? 100.0 * us / at.total_us : 0.0;
  for (size_t k = 0; k < prof.kernels.size(); ++k) {
    const OrtKernel& kern = prof.kernels[k];
    const KernelAttribution& ka = at.kernels[k];
    providers.insert(kern.provider);
    std::vector<double> us(kern.us.begin() + static_cast<std::ptrdiff_t>(first), kern.us.end());
    double ms = median_of(us) / 1000.0;
    const double min_ms = us.empty() ? 0.0 : *std::min_element(us.begin(), us.end()) / 1000.0;
    json nodes = json::array();
    for (const auto& [i, share] : ka.nodes) {
      nodes.push_back({{"node", analysis.model->graph.nodes[i].name}, {"share", share}});
      UnitTime& t = node_ms[analysis.model->graph.nodes[i].name];
      t.ms += ms * share;
      t.min_ms += min_ms * share;
    }
    kernels.push_back({{"kernel", kern.key},
                       {"op", kern.op},
                       {"provider", kern.provider},
                       {"method", map_method_name(ka.method)},
                       {"latency_ms", ms},
                       {"nodes", nodes}});
    if (ka.method == MapMethod::none || ka.method == MapMethod::inserted)
      listed.push_back(
          {{"kernel", kern.key},
           {"op", kern.op},
           {"provider", kern.provider},
           {"method", map_method_name(ka.method)},
           {"latency_ms", ms},
           {"counted_to",
            ka.nodes.empty() ? json(nullptr) : json(analysis.model->graph.nodes[ka.nodes[0].first].name)}});
  }
  double attributed = at.total_us > 0 ? 100.0 * (1.0 - at.method_us[MapMethod::none] / at.total_us) : 100.0;

  std::ofstream file;
  std::ostream* os = &output_stream(o.output, file);
  if (o.format == "html") {
    const auto latency = latency_of(j);
    write_html(*os, rep, nullptr, &latency);
    return kExitOk;
  }
  if (o.format == "json") {
    json doc = run_doc(text_options(o), rep,
                       {{"engine", "onnxruntime"},
                        {"profile", o.profile},
                        {"providers", providers},
                        {"runs", n_runs},
                        {"warmup_runs", first},
                        {"measured_runs", n_runs - first},
                        {"timing", "ONNX Runtime profile: model_run wall time; node time = kernel events"},
                        {"input_bindings", bound}},
                       sum, rows, ops, j.unattributed_ms);
    doc["attribution"] = {{"node_time_ms", j.op_sum_ms},
                          {"attributed_pct", attributed},
                          {"by_method_pct", methods},
                          {"split_kernels", at.split_kernels},
                          {"outside_runs_ms", prof.outside_runs_us / 1000.0},
                          {"listed", listed},
                          {"kernels", kernels}};
    doc["measured_units"] = measured_units(rep, Granularity::Node, [&](const CostUnit& u) {
      auto it = node_ms.find(u.name);
      return it == node_ms.end() ? UnitTime{} : it->second;
    });
    *os << json_text(doc, 1) << "\n";
    return kExitOk;
  }
  auto& out = *os;
  out << "------------------------------ flopwise run ------------------------------\n";
  out << "model:                 " << o.model << "\n";
  out << "measured by:           ONNX Runtime profile " << o.profile << " (" << n_runs << " run(s): "
      << (n_runs > 1 ? "1 warm-up, " + std::to_string(n_runs - 1) + " measured)" : "no warm-up to set apart)")
      << "\n";
  std::string plist;
  for (const auto& p : providers) plist += (plist.empty() ? "" : ", ") + p;
  out << "providers:             " << plist << "\n";
  if (!bound.empty()) {
    std::string b;
    for (const auto& x : bound) b += (b.empty() ? "" : ", ") + x;
    out << "inputs (from profile): " << b << "\n";
  }
  out << "\n";
  const auto& f = sum["fwd_latency_ms"];
  out << "fwd latency (model_run):          median " << fmt(f["median"]) << " ms, p10 " << fmt(f["p10"])
      << ", p90 " << fmt(f["p90"]) << ", min " << fmt(f["min"]);
  if (n_runs > 1) out << "; warm-up run " << fmt(prof.run_ms[0]) << " ms";
  out << "\n";
  out << "samples/s:                        " << fmt(sum["samples_per_s"].get<double>(), 1) << " (batch "
      << sum["batch"] << ")\n";
  out << "fwd FLOPs (static):               " << human(rep.totals.flops) << "\n";
  out << "fwd FLOP/s (static / median):     " << human(sum["fwd_flops_per_s"].get<double>()) << "FLOP/s\n";
  out << "node time (sum of kernels):       " << fmt(j.op_sum_ms)
      << " ms = " << fmt(j.profiled_fwd_ms > 0 ? 100.0 * j.op_sum_ms / j.profiled_fwd_ms : 0.0, 1)
      << " % of the run; " << fmt(attributed, 1) << " % of it attributed to scopes\n";
  out << "kernels mapped by:                ";
  bool first_m = true;
  for (const auto& [m, us] : at.method_us) {
    if (us <= 0) continue;
    out << (first_m ? "" : ", ") << map_method_name(m) << " "
        << fmt(at.total_us > 0 ? 100.0 * us / at.total_us : 0.0, 1) << " %";
    first_m = false;
  }
  out << "\n";
  if (at.split_kernels > 0)
    out << "fused kernels:                    " << at.split_kernels
        << " cover several original nodes: their time is split over them by static FLOPs\n";
  out << "\nPer module scope (latency = kernel time in the scope per run, median of the measured runs;\n"
         "FLOP/s = static FLOPs / that latency):\n";
  write_scope_table(out, rows, text_options(o));
  out << "\nPer op type of the original graph (median ms per run):\n";
  out << "  " << std::left << std::setw(28) << "op type" << std::right << std::setw(7) << "nodes"
      << std::setw(11) << "ms" << std::setw(8) << "%" << std::setw(10) << "FLOPs" << std::setw(12) << "FLOP/s"
      << "\n";
  for (const auto& r : ops) {
    std::string name = r["op"].get<std::string>();
    if (name.size() > 27) name = name.substr(0, 26) + "~";
    out << "  " << std::left << std::setw(28) << name << std::right << std::setw(7)
        << r["nodes"].get<int64_t>() << std::setw(11) << fmt(r["latency_ms"], 3) << std::setw(8)
        << fmt(r["pct"], 1) << std::setw(10)
        << (r["flops"].is_null() ? "-" : human(Count(r["flops"].get<int64_t>()))) << std::setw(12)
        << (r["flops_per_s"].is_null() ? "-" : human(r["flops_per_s"].get<double>())) << "\n";
  }
  if (!listed.empty()) {
    out << "\nKernels with no original node (inserted by ORT: counted to the node run before; unattributed: "
           "at "
           "the root only):\n";
    for (const auto& l : listed)
      out << "  " << l["kernel"].get<std::string>() << " (" << l["op"].get<std::string>() << ", "
          << short_provider(l["provider"].get<std::string>()) << "): " << fmt(l["latency_ms"], 3) << " ms, "
          << l["method"].get<std::string>()
          << (l["counted_to"].is_null() ? "" : " -> " + l["counted_to"].get<std::string>()) << "\n";
  }
  return kExitOk;
}

// `flopwise run MODEL --profile TRACE.pt.trace.json[.gz]`: a PyTorch profiler trace's GPU time on MODEL's
// static module tree, per step (the mean of the trace's steps). The trace's scopes are matched to the tree by
// match_trace_scopes; a scope's time is the GPU time of the kernels its ops launched. The forward latency is
// each step's GPU busy time.
int run_torch_profile(const RunOptions& o) {
  TraceReport tr = analyse_trace_file(o.profile);
  Analysis analysis = analyse(o.model, parse_pins(o.inputs, o.dims, o.values), find_convention("default"));
  const Report& rep = analysis.report;
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
  json rt = {{"fwd_ms", step_ms}, {"profiled", {{"iters", step_ms.size()}, {"fwd_ms", step_ms}}}};
  json sum = summary(rep, rt, j, o);
  sum.erase("profiling_overhead");
  json rows = scope_rows(j, with_bounds(o, rep));
  json ops = json::array();
  for (const auto& op : tr.ops) {
    double ms = op.gpu_us / steps / 1000.0, fl = op.overflow ? NAN : static_cast<double>(op.flops) / steps;
    ops.push_back({{"op", op.name},
                   {"latency_ms", ms},
                   {"pct", j.op_sum_ms > 0 ? 100.0 * ms / j.op_sum_ms : 0.0},
                   {"flops", std::isnan(fl) ? json(nullptr) : json(static_cast<int64_t>(fl))},
                   {"flops_per_s", ms > 0 && !std::isnan(fl) && op.uncosted == 0 ? json(fl / (ms / 1000.0))
                                                                                 : json(nullptr)}});
  }
  size_t trace_scopes = 0;
  for (const auto& [name, ix] : matched) trace_scopes += ix.size();
  std::ofstream file;
  std::ostream& out = output_stream(o.output, file);
  if (o.format == "html") {
    const auto latency = latency_of(j);
    write_html(out, rep, nullptr, &latency);
    return kExitOk;
  }
  const std::string timing =
      "PyTorch profiler trace: GPU time of the kernels each scope's ops launched, per step (the mean of " +
      std::to_string(tr.steps.size()) + "); fwd latency = each step's GPU busy time";
  if (o.format == "json") {
    json doc = run_doc(text_options(o), rep,
                       {{"engine", "pytorch-trace"},
                        {"profile", o.profile},
                        {"device", tr.device},
                        {"steps", tr.steps.size()},
                        {"timing", timing},
                        {"matched_scopes", matched.size()},
                        {"trace_scopes", tr.scopes.size()}},
                       sum, rows, ops, j.unattributed_ms);
    doc["measured_units"] = scope_self_units(rep, j);
    out << json_text(doc, 1) << "\n";
    return kExitOk;
  }
  out << "------------------------------ flopwise run ------------------------------\n";
  out << "model:                 " << o.model << "\n";
  out << "measured by:           PyTorch profiler trace " << o.profile << " ("
      << (tr.device.empty() ? "device not named" : tr.device) << ", " << tr.steps.size() << " step(s))\n";
  out << "scopes matched:        " << matched.size() << " of the model's " << j.static_scopes.size() << " to "
      << trace_scopes << " of the trace's " << tr.scopes.size() << "\n\n";
  const auto& f = sum["fwd_latency_ms"];
  out << "GPU busy per step:                median " << fmt(f["median"]) << " ms, min " << fmt(f["min"])
      << "\n";
  out << "model's GPU time per step:        " << fmt(j.op_sum_ms, 3) << " ms\n";
  out << "fwd FLOPs (static):               " << human(rep.totals.flops) << "\n";
  out << "\nPer module scope (latency = GPU time of the scope's kernels per step; FLOP/s = static FLOPs / "
         "that):\n";
  write_scope_table(out, rows, text_options(o));
  return kExitOk;
}

int run(const RunOptions& o) {
  if (!o.profile.empty() && looks_like_torch_trace(o.profile)) return run_torch_profile(o);
  std::string lower = o.model;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  bool onnx = detect_format(o.model) == ModelFormat::Onnx ||
              (lower.size() >= 5 && lower.compare(lower.size() - 5, 5, ".onnx") == 0);
  if (onnx && o.profile.empty())
    throw UsageError(
        o.model +
        ": flopwise run measures TorchScript (.pt) models with LibTorch; an ONNX model is measured by "
        "ONNX Runtime: profile it (SessionOptions.enable_profiling) and give the profile with --profile");
  if (!o.profile.empty()) {
    if (!onnx)
      throw UsageError("--profile reads an ONNX Runtime profile of a .onnx model; " + o.model +
                       " is measured by running it (leave out --profile)");
    return run_ort(o);
  }
  std::string exe = find_runtime();
  if (exe.empty()) {
    print_error(
        "flopwise: error: ", "RunError",
        "the runtime harness flopwise-runtime is not built (it needs LibTorch: install libtorch-dev, or "
        "configure with -DCMAKE_PREFIX_PATH=<LibTorch>, and rebuild)");
    return kExitNoRuntime;
  }
  Pins io = parse_pins(o.inputs, o.dims, o.values);
  Analysis analysis = analyse(o.model, io, find_convention("default"));
  const Model& model = *analysis.model;
  json request = make_request(o, model);
  const Report& rep = analysis.report;

  char tmpl[] = "/tmp/flopwise-run-XXXXXX";
  if (!mkdtemp(tmpl)) throw Error("cannot create a temporary directory");
  std::string dir = tmpl, req = dir + "/request.json", out = dir + "/response.json";
  std::ofstream(req) << json_text(request);
  std::string err;
  int rc = spawn(exe, req, out, o.timeout, err);
  std::ifstream rf(out);
  json rt;
  try {
    rt = json::parse(rf);
  } catch (const std::exception&) {
    rt = json();
  }
  std::remove(req.c_str());
  std::remove(out.c_str());
  rmdir(dir.c_str());
  if (rc == -1) {
    std::ostringstream msg;
    msg << o.model << ": the run did not finish within --timeout " << o.timeout << " s";
    print_error("flopwise: error: ", "RunError", msg.str());
    return kExitRunFailed;
  }
  if (rc != 0) {
    std::string msg = rt.is_object() && rt.contains("error") && rt["error"].is_object()
                          ? rt["error"].value("message", err)
                          : err;
    if (rt.is_object() && rt["error"].is_object() && !rt["error"].value("op", "").empty())
      msg += " (op " + rt["error"].value("op", "") + " in scope '" + rt["error"].value("scope", "") + "')";
    if (rc == 2) throw InputError(msg.empty() ? o.model + ": the runtime could not load it" : msg);
    // Seen on a GPU with traces made on the CPU (torch.arange in GPT-2's positions, an LSTM's zero state):
    // torch.jit.trace records a tensor the model creates with the device it was traced on.
    if (rt.is_object() && rt.value("device", "") == "cuda" &&
        (msg.find("on the same device") != std::string::npos ||
         msg.find("at the same device") != std::string::npos))
      msg +=
          "; a traced module keeps the device of the tensors it creates (torch.arange, torch.zeros) as they "
          "were when traced: trace it on the GPU, or script it";
    print_error("flopwise: error: ", "RunError",
                msg.empty() ? "flopwise-runtime failed (exit " + std::to_string(rc) + ")" : msg);
    return kExitRunFailed;
  }
  Joined j = join(rep, rt);
  json sum = summary(rep, rt, j, o);
  json rows = scope_rows(j, with_bounds(o, rep, &rt));
  if (!o.trace.empty()) write_trace(o.trace, rt);
  std::optional<VerifyResult> ver;
  if (o.verify) ver = verify_shapes(model, rt.at("verify").at("ops"));

  std::ofstream file;
  std::ostream* os = &output_stream(o.output, file);
  if (o.format == "html") {
    const auto latency = latency_of(j);
    write_html(*os, rep, nullptr, &latency);
  } else if (o.format == "json") {
    json doc = run_doc(text_options(o), rep,
                       {{"device", rt["device"]},
                        {"device_name", rt["device_name"]},
                        {"torch_version", rt["torch_version"]},
                        {"blas", rt["blas"]},
                        {"threads", rt["threads"]},
                        {"timing", rt["timing"]},
                        {"op_clock", rt["profiled"].value("op_clock", "")},
                        {"tf32", rt.value("tf32", json(nullptr))},
                        {"warmup", rt["warmup"]},
                        {"iters", rt["iters"]},
                        {"profile_iters", rt["profiled"]["iters"]}},
                       sum, rows, op_rows(j), j.unattributed_ms);
    doc["measured_units"] = scope_self_units(rep, j);
    if (ver)
      doc["verify"] = {{"ok", ver->ok()},
                       {"executed_ops", ver->executed},
                       {"matched_ops", ver->matched},
                       {"shapes_checked", ver->shapes_checked},
                       {"unknown_static", ver->unknown_static},
                       {"disagreements", ver->disagreements},
                       {"unmatched", ver->unmatched}};
    *os << json_text(doc, 1) << "\n";
  } else {
    write_run_text(*os, rep, rt, sum, rows, text_options(o));
    if (ver) write_verify_text(*os, *ver);
  }
  if (ver && !ver->ok()) {
    print_error(
        "flopwise: error: ", "RunError",
        "--verify: " + std::to_string(ver->disagreements.size()) +
            " shape(s) differ between the run and the static analysis, first: " + ver->disagreements[0]);
    return kExitVerifyFailed;
  }
  return kExitOk;
}

}  // namespace

int run_run(int argc, char** argv) {
  RunOptions o;
  CLI::App app{
      "flopwise run: measure a TorchScript model with LibTorch, or read an ONNX Runtime profile of an ONNX "
      "model, beside its static counts, by module scope"};
  app.footer(
      "Exit codes: 0 done, 2 bad input or usage, 4 the runtime harness is not built, 5 the run failed (the "
      "model raised, --timeout, or the device is not available), 6 --verify found a shape disagreement.");
  app.add_option("model", o.model, "TorchScript model (.pt), or ONNX model (.onnx) with --profile")
      ->required();
  app.add_option(
      "--profile", o.profile,
      "report measured time by module scope instead of running: an ONNX Runtime profile "
      "(SessionOptions.enable_profiling) of MODEL.onnx, or a PyTorch profiler trace (.json[.gz]) of MODEL");
  app.add_option("--input,-i", o.inputs, "pin an input: NAME:1x3x224x224[:dtype]");
  app.add_option("--dim,-d", o.dims, "bind a symbolic dim: batch=8");
  app.add_option("--value", o.values, "pin the contents of a shape-like input");
  app.add_option("--device", o.device, "cpu | cuda | auto")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  app.add_option("--threads", o.threads, "intra-op threads (0: LibTorch's default)");
  app.add_option("--warmup", o.warmup, "untimed runs first")->check(CLI::NonNegativeNumber);
  app.add_option("--iters", o.iters, "timed runs (clean phase)")->check(CLI::PositiveNumber);
  app.add_option("--profile-iters", o.profile_iters, "runs of the profiled phase")
      ->check(CLI::PositiveNumber);
  app.add_flag("--backward", o.backward, "also time backward of the sum of the outputs");
  app.add_option("--int-range", o.int_range,
                 "integer inputs drawn from [0, N) (default: the embedding's rows)");
  app.add_option("--seed", o.seed, "seed of the random inputs");
  app.add_option("--peak-tflops", o.peak_tflops, "the device's peak: adds % of peak per scope");
  app.add_option("--hardware", o.hardware,
                 "a device of the roofline table (" + hardware_names_text() +
                     "): each scope's bound beside its measured time; a time below its bound is flagged");
  app.add_option("--hardware-file", o.hardware_file, "the roofline device from a TOML file");
  app.add_option("--timeout", o.timeout, "seconds before the run is stopped");
  app.add_option("--format,-f", o.format,
                 format_help(Output::Run) + " (html: the static page with measured latency per scope)")
      ->check(CLI::IsMember(format_choices(Output::Run)));
  app.add_option("--output,-o", o.output, "write the report to FILE");
  app.add_option("--trace", o.trace,
                 "write a Chrome trace (Perfetto, chrome://tracing) of the profiled runs");
  app.add_option("--depth", o.depth, "depth of the scope table (-1: all)");
  app.add_flag("--verify", o.verify,
               "compare every executed op's input and output shapes with the static analysis; exit 6 on a "
               "disagreement");
  if (auto code = parse_command_line(app, argc, argv, "run")) return *code;
  return run(o);
}

}  // namespace flopwise
