// src/cli/calibrate_cmd.cc — `flopwise calibrate RUN.json...`: fits the latency of each op type on one device
// from measured run reports (`flopwise run ... --format json`: ONNX Runtime profiles node by node, LibTorch
// runs and PyTorch traces module by module) and writes the calibration file `flopwise MODEL --predict` reads
// (flopwise/calibration.h).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "commands.h"
#include "flopwise/calibrate.h"
#include "flopwise/errors.h"
#include "flopwise/input_file.h"
#include "flopwise/run_report.h"
#include "output.h"

namespace flopwise {

namespace {

using nlohmann::json;

struct Measured {
  std::string runtime, device, threads;
  Granularity granularity = Granularity::Node;
  std::string model;
  double wall_ms = 0;  // the forward latency the report measured (fastest or median); 0: none
};

// A run report's runtime, device, threads and granularity, and its units as samples of `model`, read by the
// run report's reader (flopwise/run_report.h): a member of the wrong type is a bad file (exit 2), as a
// missing one is.
Measured read_run(const std::string& path, bool fastest, std::vector<TimedSample>* out) {
  const RunReport r = read_run_report(path);
  if (!r.measured_units)
    throw InputError(path +
                     ": a run report without measured_units (written before flopwise calibrate "
                     "existed): run flopwise run again");
  const RunRuntime& rt = r.runtime;
  Measured m;
  m.runtime = run_engine_name(rt.engine);
  if (rt.engine == RunEngine::OnnxRuntime) {
    for (const auto& p : rt.providers) m.device += (m.device.empty() ? "" : "+") + p;
    m.threads = "as the profile was recorded";
  } else {
    m.device = rt.device + (rt.device_name.empty() ? "" : " (" + rt.device_name + ")");
    m.threads = rt.threads >= 0 ? std::to_string(rt.threads) : "not recorded";
  }
  m.granularity = r.measured_units->granularity;
  m.model = r.model.empty() ? path : r.model;
  const double wall = fastest ? r.summary.fwd_latency_ms.min : r.summary.fwd_latency_ms.median;
  if (std::isfinite(wall) && wall > 0) m.wall_ms = wall;
  for (const RunUnit& u : r.measured_units->units) {
    if (fastest && !u.has_min)
      throw InputError(path +
                       ": a run report without its units' fastest times (written before they were kept): run "
                       "flopwise run again, or calibrate with --statistic median");
    TimedSample& s = out->emplace_back();
    s.model = m.model;
    s.unit = u.unit;
    s.ms = fastest ? u.min_ms : u.ms;
  }
  return m;
}

// The fastest or the median of `t` (not empty), as --statistic pools a model's repeats.
double pool_times(std::vector<double> t, bool fastest) {
  std::sort(t.begin(), t.end());
  const size_t h = t.size() / 2;
  return fastest ? t.front() : t.size() % 2 ? t[h] : (t[h - 1] + t[h]) / 2;
}

// Repeated measurements of one model pooled: a unit (the same model file, name and counts) measured by
// several reports is one sample, its fastest time (fastest) or the median of its times (median). Units with
// no time in any report keep 0 (not measured). First-seen order.
std::vector<TimedSample> pool_repeats(std::vector<TimedSample> samples, bool fastest, size_t* pooled) {
  std::map<std::tuple<std::string, std::string, double, double, double>, size_t> index;
  std::vector<TimedSample> out;
  std::vector<std::vector<double>> times;
  for (TimedSample& s : samples) {
    auto [it, fresh] =
        index.try_emplace({s.model, s.unit.name, s.unit.flops, s.unit.bytes, s.unit.calls}, out.size());
    if (fresh) {
      out.push_back(std::move(s));
      times.emplace_back();
    } else {
      ++*pooled;
    }
    const double ms = fresh ? out.back().ms : s.ms;
    if (ms > 0 && std::isfinite(ms)) times[it->second].push_back(ms);
  }
  for (size_t i = 0; i < out.size(); ++i)
    out[i].ms = times[i].empty() ? 0 : pool_times(std::move(times[i]), fastest);
  return out;
}

void write_summary(std::ostream& os, const Calibration& c) {
  char buf[256];
  os << "calibration: " << c.runtime << " on " << c.device << ", threads " << c.threads << ", "
     << granularity_name(c.granularity) << " by " << granularity_name(c.granularity) << ", "
     << c.models.size() << " model(s)\n";
  os << "t = a * GFLOPs + b * activation MB + e * parameter MB + c * calls + d, non-negative least squares"
     << (c.granularity == Granularity::Module ? " (a module's parts each by its op's fit, solved jointly)"
                                              : "")
     << ", " << weighting_name(c.weighting) << " residuals, each unit's "
     << (c.statistic == "fastest" ? "fastest run" : "median run") << "\n\n";
  std::snprintf(buf, sizeof buf, "%-24s %8s %14s %14s %14s %14s %14s %9s\n", "op", "samples", "a ms/GFLOP",
                "b ms/MB", "e ms/param MB", "c ms/call", "d ms/unit", "rel rms");
  os << buf;
  auto row = [&](const std::string& op, const LatencyFit& f) {
    std::snprintf(buf, sizeof buf, "%-24s %8zu %14.6g %14.6g %14.6g %14.6g %14.6g %8.1f%%\n", op.c_str(),
                  f.samples, f.per_gflop_ms, f.per_mb_ms, f.per_param_mb_ms, f.per_call_ms, f.per_unit_ms,
                  100 * f.rel_rms);
    os << buf;
  };
  for (const auto& [op, f] : c.ops) row(op, f);
  row("(all ops)", c.all);
  if (!c.local.empty()) {
    size_t points = 0;
    for (const auto& [key, l] : c.local) points += l.points.size();
    std::snprintf(
        buf, sizeof buf,
        "\nlocal corrections: %zu points over %zu fits, kernel width %.3g decades (each model below "
        "predicted without its own points)\n",
        points, c.local.size(), c.local_bandwidth);
    os << buf;
  }
  os << "\nmodel                                          measured ms  predicted ms    error\n";
  for (const auto& m : c.models) {
    std::snprintf(buf, sizeof buf, "%-46s %11.4g %13.4g %+7.1f%%\n", m.name.c_str(), m.measured_ms,
                  m.predicted_ms, 100 * (m.predicted_ms / m.measured_ms - 1));
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "\nthe models' totals: %.1f %% rms relative error\n", 100 * c.model_rel_rms);
  os << buf;
  if (c.held_out_rel_rms >= 0) {
    std::snprintf(
        buf, sizeof buf,
        "held out: each model predicted by a calibration of the others alone, %.1f %% rms relative "
        "error (the prediction's band%s)\n",
        100 * c.held_out_rel_rms,
        c.held_out_rel_rms > 0.2 ? "; weak: calibrate on more models, of the kinds you will predict" : "");
    os << buf;
  } else if (c.models.size() == 1) {
    os << "one model: how far off the calibration is on another model is not known (predictions say so; "
          "calibrate on three or more)\n";
  }
  if (c.wall.models > 0) {
    std::snprintf(buf, sizeof buf,
                  "forward = %.4g x op sum + %.4g ms x units (%zu models' forwards, %.1f %% rms)\n",
                  c.wall.per_op_ms, c.wall.per_unit_ms, c.wall.models, 100 * c.wall.rel_rms);
    os << buf;
  }
}

}  // namespace

int run_calibrate(int argc, char** argv) {
  std::vector<std::string> runs;
  std::string output;
  size_t min_samples = 10;
  std::string weighting = "sqrt";
  std::string statistic = "fastest";
  double bandwidth = 0.1;
  CLI::App app{
      "flopwise calibrate: fit each op type's latency on one device from measured run reports (flopwise "
      "run ... --format json, LibTorch or ONNX Runtime profiles) and write the calibration --predict reads",
      "flopwise calibrate"};
  app.add_option("runs", runs, "run reports of models measured on one device and runtime")->required();
  app.add_option("--output,-o", output, "the calibration file to write (JSON); without it, only the summary");
  app.add_option("--min-samples", min_samples,
                 "fewer measured units of an op type: it takes the all-ops fit (default 10)")
      ->check(CLI::PositiveNumber);
  app.add_option("--weighting", weighting,
                 "the fit's residuals: sqrt (default: residuals / sqrt(t), the best predicted totals in "
                 "bench/README.md) | absolute (the long units count most) | relative (every unit's relative "
                 "error alike)");
  app.add_option("--statistic", statistic,
                 "which of a unit's run times to fit: fastest (default: each unit's fastest run, what a "
                 "shared machine reproduces) | median; repeated reports of one model are pooled")
      ->check(CLI::IsMember({"fastest", "median"}));
  app.add_option("--local-bandwidth", bandwidth,
                 "the local corrections' kernel width, in decades of FLOPs and bytes (default 0.1; 0: the "
                 "linear fits alone)")
      ->check(CLI::Range(0.0, 10.0));
  if (auto code = parse_command_line(app, argc, argv, "calibrate")) return *code;
  const bool fastest = statistic == "fastest";
  std::vector<TimedSample> samples;
  Measured first;
  std::set<std::string> devices;
  std::map<std::string, std::vector<double>> walls;  // model -> its reports' forwards
  for (size_t i = 0; i < runs.size(); ++i) {
    Measured m = read_run(runs[i], fastest, &samples);
    if (m.wall_ms > 0) walls[m.model].push_back(m.wall_ms);
    if (i == 0) first = m;
    if (m.runtime != first.runtime || m.granularity != first.granularity)
      throw UsageError(runs[i] + " was measured by " + m.runtime + ", " + runs[0] + " by " + first.runtime +
                       ": a calibration is of one runtime");
    devices.insert(m.device);
  }
  size_t pooled = 0;
  samples = pool_repeats(std::move(samples), fastest, &pooled);
  std::map<std::string, double> wall;  // pooled as the units are: the fastest, or the median
  for (auto& [model, v] : walls) wall[model] = pool_times(std::move(v), fastest);
  Calibration c =
      calibrate(samples, first.granularity, min_samples, parse_weighting(weighting), &wall, bandwidth);
  c.statistic = statistic;
  c.runtime = first.runtime;
  for (const auto& d : devices) c.device += (c.device.empty() ? "" : ", ") + d;
  c.threads = first.threads;
  c.sources = runs;
  if (!output.empty()) {
    std::ofstream file;
    output_stream(output, file) << calibration_json(c);
  }
  write_summary(std::cout, c);
  return kExitOk;
}

}  // namespace flopwise
