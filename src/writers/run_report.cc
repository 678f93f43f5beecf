// src/writers/run_report.cc — the run report's writers (flopwise/run_report.h).
#include "flopwise/run_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

#include "flopwise/errors.h"
#include "flopwise/json_text.h"
#include "flopwise/writers.h"

namespace flopwise {

using json = nlohmann::json;

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

std::string fmt(double v, int prec) {
  if (std::isnan(v)) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

// Measured time per op name (aten::conv2d, ...), largest first: LibTorch ops have no static FLOPs of their
// own (the static report counts the lowered graph), so rates are absent.
// The parts of a run report (flopwise.run/1) every engine's has: what was measured and its static totals.
json run_doc(const RunTextOptions& o, const Report& rep, json runtime, json sum, json rows, json ops,
             double unattributed_ms) {
  return {{"schema", "flopwise.run/1"},
          {"model", {{"path", o.model}, {"format", rep.format}}},
          {"convention", rep.convention},
          {"runtime", std::move(runtime)},
          {"static_totals",
           {{"params", rep.totals.params.v},
            {"macs", rep.totals.macs.v},
            {"flops", rep.totals.flops.v},
            {"complete", rep.totals.complete()}}},
          {"summary", std::move(sum)},
          {"scopes", std::move(rows)},
          {"op_types", std::move(ops)},
          {"unattributed_ms", unattributed_ms}};
}

// "CUDAExecutionProvider" -> "CUDA".
std::string short_provider(const std::string& p) {
  const std::string suffix = "ExecutionProvider";
  return p.size() > suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0
             ? p.substr(0, p.size() - suffix.size())
             : p;
}

void write_run_text(std::ostream& os, const Report& rep, const json& rt, const json& sum, const json& rows,
                    const RunTextOptions& o) {
  os << "------------------------------ flopwise run ------------------------------\n";
  os << "model:                 " << o.model << "\n";
  os << "device:                " << rt.value("device", "") << " (" << rt.value("device_name", "")
     << "), LibTorch " << rt.value("torch_version", "") << ", " << rt.value("threads", 0) << " thread(s)\n";
  os << "BLAS:                  " << rt.value("blas", "unknown") << "\n";
  os << "timing:                " << rt.value("timing", "") << "; " << rt.value("warmup", 0) << " warm-up, "
     << rt.value("iters", 0) << " timed, " << rt.at("profiled").value("iters", 0)
     << " profiled iteration(s)\n";
  if (rt.contains("tf32") && rt["tf32"].is_object())
    os << "op clock:              " << rt.at("profiled").value("op_clock", "") << "\n"
       << "float32 on TF32 cores: convolutions " << (rt["tf32"].value("cudnn", false) ? "yes" : "no")
       << " (cuDNN), matrix products " << (rt["tf32"].value("cublas", false) ? "yes" : "no")
       << " (cuBLAS); the roofline bounds use the same rows\n";
  os << "\n";
  const auto& f = sum["fwd_latency_ms"];
  os << "fwd latency (wall, clean phase):  median " << fmt(f["median"]) << " ms, p10 " << fmt(f["p10"])
     << ", p90 " << fmt(f["p90"]) << ", min " << fmt(f["min"]) << "\n";
  os << "samples/s:                        " << fmt(sum["samples_per_s"].get<double>(), 1) << " (batch "
     << sum["batch"] << ")\n";
  os << "fwd FLOPs (static):               " << human(rep.totals.flops) << "\n";
  os << "fwd FLOP/s (static / median):     " << human(sum["fwd_flops_per_s"].get<double>()) << "FLOP/s\n";
  if (sum.contains("bwd_latency_ms")) {
    const auto& b = sum["bwd_latency_ms"];
    os << "bwd latency (wall):               median " << fmt(b["median"]) << " ms, p10 " << fmt(b["p10"])
       << ", p90 " << fmt(b["p90"]) << ", min " << fmt(b["min"]) << "\n";
    os << "fwd+bwd FLOP/s:                   " << human(sum["fwd_bwd_flops_per_s"].get<double>())
       << "FLOP/s (" << sum.value("backward_note", "") << "; backward FLOPs estimated as 2 x forward)\n";
  }
  os << "profiled phase:                   forward " << fmt(sum["profiled_fwd_ms"]) << " ms (overhead "
     << fmt(100.0 * sum["profiling_overhead"].get<double>(), 1)
     << " % vs an unprofiled run before each), op-sum " << fmt(sum["profiled_op_sum_ms"])
     << " ms = " << fmt(100.0 * sum["coverage"].get<double>(), 1) << " % of it\n\n";
  os << "Per module scope (latency = op-sum of the scope's top-level ops per forward, profiled phase;\n"
        "FLOP/s = static FLOPs / that latency):\n";
  write_scope_table(os, rows, o);
}

// The per-scope table of a run report (LibTorch run or ONNX Runtime profile alike).
void write_scope_table(std::ostream& os, const json& rows, const RunTextOptions& o) {
  std::set<std::string> all_providers;
  for (const auto& r : rows)
    if (r.contains("providers"))
      for (const auto& p : r["providers"]) all_providers.insert(p.get<std::string>());
  const bool mixed_providers = all_providers.size() > 1;
  bool peak = o.peak_tflops > 0;
  bool bounds = false;  // --hardware: the rows carry their roofline bound
  for (const auto& r : rows) bounds = bounds || r.contains("bound_ms");
  size_t width = 8;
  for (const auto& r : rows)
    width = std::max(width, 2 * r["depth"].get<size_t>() + r["name"].get<std::string>().size() + 2);
  width = std::min<size_t>(width, 80);
  os << std::left << std::setw(static_cast<int>(width)) << "scope" << std::setw(18) << "class" << std::right
     << std::setw(10) << "MACs" << std::setw(10) << "FLOPs" << std::setw(11) << "ms" << std::setw(8) << "%"
     << std::setw(7) << "calls" << std::setw(12) << "FLOP/s" << (peak ? "   % peak" : "")
     << (bounds ? "   bound ms" : "") << "\n";
  for (const auto& r : rows) {
    std::string name = std::string(2 * r["depth"].get<int>(), ' ') +
                       (r["name"] == "" ? "(model)" : r["name"].get<std::string>());
    if (name.size() >= width) name = name.substr(0, width - 4) + "...";
    auto c = [](const json& v) {
      return v.is_null() ? std::string("unknown") : human(Count(v.get<int64_t>()));
    };
    os << std::left << std::setw(static_cast<int>(width)) << name << std::setw(18)
       << r["class"].get<std::string>().substr(0, 17) << std::right << std::setw(10) << c(r["macs"])
       << std::setw(10) << c(r["flops"]) << std::setw(11) << fmt(r["latency_ms"], 3) << std::setw(8)
       << fmt(r["pct"], 1) << std::setw(7) << fmt(r["calls"], 0) << std::setw(12)
       << (r["flops_per_s"].is_null() ? "-" : human(r["flops_per_s"].get<double>()));
    if (peak && r.contains("pct_of_peak"))
      os << std::setw(9) << fmt(r["pct_of_peak"], 1)
         << (r["exceeds_peak"].get<bool>() ? "  EXCEEDS PEAK" : "");
    if (bounds)
      os << std::setw(11) << (r.contains("bound_ms") ? fmt(r["bound_ms"], 4) : std::string("-"))
         << (r.value("below_bound", false) ? "  BELOW BOUND" : "");
    if (mixed_providers && r.contains("providers")) {
      std::string list;
      for (const auto& p : r["providers"])
        list += (list.empty() ? "" : ",") + short_provider(p.get<std::string>());
      os << "  " << list;
    }
    os << "\n";
  }
  bool any_over = false;
  for (const auto& r : rows) any_over = any_over || r.value("exceeds_peak", false);
  if (any_over)
    os << "\nwarning: a scope's measured FLOP/s exceeds --peak-tflops: a timing or counting error (the "
          "scope's "
          "time is an op-sum; fused ops may run in a parent scope)\n";
  bool any_below = false;
  for (const auto& r : rows) any_below = any_below || r.value("below_bound", false);
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
