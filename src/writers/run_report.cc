// src/writers/run_report.cc — the run report's text (flopwise/run_report.h): each engine's header and
// summary, the scope table, --verify's result, and the Chrome trace of a LibTorch run's profiled ops.
#include "flopwise/run_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "flopwise/errors.h"
#include "flopwise/json_text.h"
#include "flopwise/writers.h"

namespace flopwise {

using json = nlohmann::json;

namespace {}  // namespace

std::string fmt(double v, int prec) {
  if (std::isnan(v)) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

// "CUDAExecutionProvider" -> "CUDA".
std::string short_provider(const std::string& p) {
  const std::string suffix = "ExecutionProvider";
  return p.size() > suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0
             ? p.substr(0, p.size() - suffix.size())
             : p;
}

namespace {

std::string latency_line(const RunLatency& l) {
  return "median " + fmt(l.median) + " ms, p10 " + fmt(l.p10) + ", p90 " + fmt(l.p90) + ", min " + fmt(l.min);
}

void write_libtorch_text(std::ostream& os, const Report& rep, const RunReport& run, const RunTextOptions& o) {
  const RunRuntime& rt = run.runtime;
  const RunSummary& sum = run.summary;
  os << "device:                " << rt.device << " (" << rt.device_name << "), LibTorch " << rt.torch_version
     << ", " << rt.threads << " thread(s)\n";
  os << "BLAS:                  " << rt.blas << "\n";
  os << "timing:                " << rt.timing << "; " << rt.warmup << " warm-up, " << rt.iters << " timed, "
     << rt.profile_iters << " profiled iteration(s)\n";
  if (rt.tf32)
    os << "op clock:              " << rt.op_clock << "\n"
       << "float32 on TF32 cores: convolutions " << (rt.tf32->cudnn ? "yes" : "no")
       << " (cuDNN), matrix products " << (rt.tf32->cublas ? "yes" : "no")
       << " (cuBLAS); the roofline bounds use the same rows\n";
  os << "\n";
  os << "fwd latency (wall, clean phase):  " << latency_line(sum.fwd_latency_ms) << "\n";
  os << "samples/s:                        " << fmt(sum.samples_per_s, 1) << " (batch " << sum.batch << ")\n";
  os << "fwd FLOPs (static):               " << human(rep.totals.flops) << "\n";
  os << "fwd FLOP/s (static / median):     " << human(sum.fwd_flops_per_s) << "FLOP/s\n";
  if (sum.bwd_latency_ms) {
    os << "bwd latency (wall):               " << latency_line(*sum.bwd_latency_ms) << "\n";
    os << "fwd+bwd FLOP/s:                   " << human(sum.fwd_bwd_flops_per_s) << "FLOP/s ("
       << sum.backward_note << "; backward FLOPs estimated as 2 x forward)\n";
  }
  os << "profiled phase:                   forward " << fmt(sum.profiled_fwd_ms) << " ms (overhead "
     << fmt(100.0 * sum.profiling_overhead.value_or(NAN), 1)
     << " % vs an unprofiled run before each), op-sum " << fmt(sum.profiled_op_sum_ms)
     << " ms = " << fmt(100.0 * sum.coverage, 1) << " % of it\n\n";
  os << "Per module scope (latency = op-sum of the scope's top-level ops per forward, profiled phase;\n"
        "FLOP/s = static FLOPs / that latency):\n";
  write_scope_table(os, run.scopes, o);
}

void write_ort_text(std::ostream& os, const Report& rep, const RunReport& run, const RunTextOptions& o) {
  const RunRuntime& rt = run.runtime;
  const RunSummary& sum = run.summary;
  const RunAttribution& at = *run.attribution;
  const int64_t n_runs = rt.runs;
  os << "measured by:           ONNX Runtime profile " << rt.profile << " (" << n_runs << " run(s): "
     << (n_runs > 1 ? "1 warm-up, " + std::to_string(n_runs - 1) + " measured)" : "no warm-up to set apart)")
     << "\n";
  std::string plist;
  for (const auto& p : rt.providers) plist += (plist.empty() ? "" : ", ") + p;
  os << "providers:             " << plist << "\n";
  if (!rt.input_bindings.empty()) {
    std::string b;
    for (const auto& x : rt.input_bindings) b += (b.empty() ? "" : ", ") + x;
    os << "inputs (from profile): " << b << "\n";
  }
  os << "\n";
  const RunLatency& f = sum.fwd_latency_ms;
  os << "fwd latency (model_run):          median " << fmt(f.median) << " ms, p10 " << fmt(f.p10) << ", p90 "
     << fmt(f.p90) << ", min " << fmt(f.min);
  if (sum.warmup_run_ms) os << "; warm-up run " << fmt(*sum.warmup_run_ms) << " ms";
  os << "\n";
  os << "samples/s:                        " << fmt(sum.samples_per_s, 1) << " (batch " << sum.batch << ")\n";
  os << "fwd FLOPs (static):               " << human(rep.totals.flops) << "\n";
  os << "fwd FLOP/s (static / median):     " << human(sum.fwd_flops_per_s) << "FLOP/s\n";
  os << "node time (sum of kernels):       " << fmt(at.node_time_ms)
     << " ms = " << fmt(sum.profiled_fwd_ms > 0 ? 100.0 * at.node_time_ms / sum.profiled_fwd_ms : 0.0, 1)
     << " % of the run; " << fmt(at.attributed_pct, 1) << " % of it attributed to scopes\n";
  os << "kernels mapped by:                ";
  bool first_m = true;
  for (const auto& [m, pct] : at.by_method) {
    if (pct <= 0) continue;
    os << (first_m ? "" : ", ") << m << " " << fmt(pct, 1) << " %";
    first_m = false;
  }
  os << "\n";
  if (at.split_kernels > 0)
    os << "fused kernels:                    " << at.split_kernels
       << " cover several original nodes: their time is split over them by static FLOPs\n";
  os << "\nPer module scope (latency = kernel time in the scope per run, median of the measured runs;\n"
        "FLOP/s = static FLOPs / that latency):\n";
  write_scope_table(os, run.scopes, o);
  os << "\nPer op type of the original graph (median ms per run):\n";
  os << "  " << std::left << std::setw(28) << "op type" << std::right << std::setw(7) << "nodes"
     << std::setw(11) << "ms" << std::setw(8) << "%" << std::setw(10) << "FLOPs" << std::setw(12) << "FLOP/s"
     << "\n";
  for (const auto& r : run.op_types) {
    std::string name = r.op;
    if (name.size() > 27) name = name.substr(0, 26) + "~";
    os << "  " << std::left << std::setw(28) << name << std::right << std::setw(7) << r.nodes.value_or(0)
       << std::setw(11) << fmt(r.latency_ms, 3) << std::setw(8) << fmt(r.pct, 1) << std::setw(10)
       << (r.flops ? human(Count(*r.flops)) : "-") << std::setw(12)
       << (r.flops_per_s ? human(*r.flops_per_s) : "-") << "\n";
  }
  if (!at.listed.empty()) {
    os << "\nKernels with no original node (inserted by ORT: counted to the node run before; unattributed: "
          "at "
          "the root only):\n";
    for (const auto& l : at.listed)
      os << "  " << l.kernel << " (" << l.op << ", " << short_provider(l.provider)
         << "): " << fmt(l.latency_ms, 3) << " ms, " << l.method
         << (l.counted_to ? " -> " + *l.counted_to : "") << "\n";
  }
}

void write_trace_run_text(std::ostream& os, const Report& rep, const RunReport& run,
                          const RunTextOptions& o) {
  const RunRuntime& rt = run.runtime;
  std::set<std::string> static_scopes;  // the model's scopes, by name
  std::vector<const ScopeNode*> stack{rep.scopes.get()};
  while (!stack.empty()) {
    const ScopeNode* s = stack.back();
    stack.pop_back();
    static_scopes.insert(s->name);
    for (const auto& c : s->children) stack.push_back(c.get());
  }
  os << "measured by:           PyTorch profiler trace " << rt.profile << " ("
     << (rt.device.empty() ? "device not named" : rt.device) << ", " << rt.steps << " step(s))\n";
  os << "scopes matched:        " << rt.matched_scopes << " of the model's " << static_scopes.size() << " to "
     << o.matched_trace_scopes << " of the trace's " << rt.trace_scopes << "\n\n";
  const RunLatency& f = run.summary.fwd_latency_ms;
  os << "GPU busy per step:                median " << fmt(f.median) << " ms, min " << fmt(f.min) << "\n";
  os << "model's GPU time per step:        " << fmt(run.summary.profiled_op_sum_ms, 3) << " ms\n";
  os << "fwd FLOPs (static):               " << human(rep.totals.flops) << "\n";
  os << "\nPer module scope (latency = GPU time of the scope's kernels per step; FLOP/s = static FLOPs / "
        "that):\n";
  write_scope_table(os, run.scopes, o);
}

}  // namespace

void write_run_text(std::ostream& os, const Report& rep, const RunReport& run, const RunTextOptions& o) {
  using Writer = void (*)(std::ostream&, const Report&, const RunReport&, const RunTextOptions&);
  static const Writer kByEngine[] = {write_libtorch_text, write_ort_text, write_trace_run_text};
  os << "------------------------------ flopwise run ------------------------------\n";
  os << "model:                 " << run.model << "\n";
  kByEngine[static_cast<int>(run.runtime.engine)](os, rep, run, o);
}

// The per-scope table of a run report (LibTorch run or ONNX Runtime profile alike).
void write_scope_table(std::ostream& os, const std::vector<RunScopeRow>& rows, const RunTextOptions& o) {
  std::set<std::string> all_providers;
  for (const auto& r : rows)
    if (r.providers)
      for (const auto& p : *r.providers) all_providers.insert(p);
  const bool mixed_providers = all_providers.size() > 1;
  bool peak = o.peak_tflops > 0;
  bool bounds = false;  // --hardware: the rows carry their roofline bound
  for (const auto& r : rows) bounds = bounds || r.bound_ms.has_value();
  size_t width = 8;
  for (const auto& r : rows) width = std::max(width, 2 * static_cast<size_t>(r.depth) + r.name.size() + 2);
  width = std::min<size_t>(width, 80);
  os << std::left << std::setw(static_cast<int>(width)) << "scope" << std::setw(18) << "class" << std::right
     << std::setw(10) << "MACs" << std::setw(10) << "FLOPs" << std::setw(11) << "ms" << std::setw(8) << "%"
     << std::setw(7) << "calls" << std::setw(12) << "FLOP/s" << (peak ? "   % peak" : "")
     << (bounds ? "   bound ms" : "") << "\n";
  for (const auto& r : rows) {
    std::string name =
        std::string(2 * static_cast<size_t>(r.depth), ' ') + (r.name == "" ? "(model)" : r.name);
    if (name.size() >= width) name = name.substr(0, width - 4) + "...";
    auto c = [](const std::optional<int64_t>& v) { return v ? human(Count(*v)) : std::string("unknown"); };
    os << std::left << std::setw(static_cast<int>(width)) << name << std::setw(18) << r.cls.substr(0, 17)
       << std::right << std::setw(10) << c(r.macs) << std::setw(10) << c(r.flops) << std::setw(11)
       << fmt(r.latency_ms, 3) << std::setw(8) << fmt(r.pct, 1) << std::setw(7) << fmt(r.calls, 0)
       << std::setw(12) << (r.flops_per_s ? human(*r.flops_per_s) : "-");
    if (peak && r.pct_of_peak)
      os << std::setw(9) << fmt(*r.pct_of_peak, 1) << (r.exceeds_peak ? "  EXCEEDS PEAK" : "");
    if (bounds)
      os << std::setw(11) << (r.bound_ms ? fmt(*r.bound_ms, 4) : std::string("-"))
         << (r.below_bound ? "  BELOW BOUND" : "");
    if (mixed_providers && r.providers) {
      std::string list;
      for (const auto& p : *r.providers) list += (list.empty() ? "" : ",") + short_provider(p);
      os << "  " << list;
    }
    os << "\n";
  }
  bool any_over = false;
  for (const auto& r : rows) any_over = any_over || r.exceeds_peak;
  if (any_over)
    os << "\nwarning: a scope's measured FLOP/s exceeds --peak-tflops: a timing or counting error (the "
          "scope's "
          "time is an op-sum; fused ops may run in a parent scope)\n";
  bool any_below = false;
  for (const auto& r : rows) any_below = any_below || r.below_bound;
  if (any_below)
    os << "\nwarning: a scope ran faster than its roofline bound on --hardware: a counting or timing error, "
          "or "
          "a run on other hardware than named\n";
}

void write_verify_text(std::ostream& os, const VerifyResult& v) {
  os << "\nverify (tensor shapes of every op of one forward of the saved graph, executor optimizations off, "
        "vs "
        "the static analysis):\n";
  os << "  " << v.executed << " executed ops with tensors, " << v.matched << " paired with a static op, "
     << v.shapes_checked << " shapes agree, " << v.disagreements.size() << " disagree, " << v.unknown_static
     << " unknown statically, " << v.unmatched.size()
     << " ops not in the static analysis (listed, not a failure)\n";
  for (const auto& d : v.disagreements) os << "  DISAGREE " << d << "\n";
  for (const auto& u : v.unmatched) os << "  not compared: " << u << "\n";
  if (v.ok()) os << "  ok\n";
}

// Chrome Trace Event Format: per profiled iteration, scope spans (the interval from a scope's first to its
// last op in each contiguous run) and op events, on one thread, so every op lies inside its scope's span.
void write_trace(const std::string& path, const json& rt) {
  json events = json::array();
  events.push_back(
      {{"ph", "M"}, {"name", "process_name"}, {"pid", 1}, {"args", {{"name", rt.value("device", "")}}}});
  events.push_back(
      {{"ph", "M"}, {"name", "thread_name"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", "forward"}}}});
  double offset = 0;  // iterations laid end to end
  const json& ops = rt.at("profiled").at("ops");
  std::vector<double> fwd = rt.at("profiled").at("fwd_ms").get<std::vector<double>>();
  std::vector<std::pair<std::string, double>> open;  // scope, start
  double last_end = 0;
  int iter = -1;
  auto close_to = [&](size_t keep, double at) {
    while (open.size() > keep) {
      events.push_back({{"ph", "X"},
                        {"name", open.back().first},
                        {"cat", "scope"},
                        {"pid", 1},
                        {"tid", 1},
                        {"ts", open.back().second},
                        {"dur", at - open.back().second}});
      open.pop_back();
    }
  };
  for (const auto& op : ops) {
    int it = op.value("iter", 0);
    if (it != iter) {
      close_to(0, last_end);
      if (iter >= 0)
        offset += iter < static_cast<int>(fwd.size()) ? fwd[static_cast<size_t>(iter)] * 1000.0 : 0;
      iter = it;
    }
    double ts = offset + op.value("start_us", 0.0), dur = op.value("dur_us", 0.0);
    auto chain = scope_ancestors(op.value("scope", ""));
    chain.erase(chain.begin());  // the root is the thread itself
    size_t common = 0;
    while (common < open.size() && common < chain.size() && open[common].first == chain[common]) ++common;
    close_to(common, std::max(last_end, ts));
    for (size_t k = common; k < chain.size(); ++k) open.emplace_back(chain[k], ts);
    events.push_back(
        {{"ph", "X"},
         {"name", op.value("name", "")},
         {"cat", "op"},
         {"pid", 1},
         {"tid", 1},
         {"ts", ts},
         {"dur", dur},
         {"args", {{"scope", op.value("scope", "")}, {"input_shapes", op.value("input_shapes", json())}}}});
    last_end = ts + dur;
  }
  close_to(0, last_end);
  std::ofstream f(path);
  if (!f) throw UsageError("cannot write " + path);
  f << json_text(json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}) << "\n";
}

}  // namespace flopwise
