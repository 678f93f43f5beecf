// src/analysis/calibration_file.cc — the calibration file (flopwise/calibration.h): calibration_json writes
// what flopwise calibrate fitted as JSON a person can read; read_calibration reads it back for --predict,
// refusing with the file and the member named what is missing, mistyped or out of range.
#include <cmath>
#include <nlohmann/json.hpp>

#include "calibration_fit.h"
#include "flopwise/calibration.h"
#include "flopwise/errors.h"
#include "flopwise/input_file.h"
#include "flopwise/json_text.h"

namespace flopwise {

namespace {

using nlohmann::ordered_json;

ordered_json calib_fit_json(const LatencyFit& f) {
  return {{"per_gflop_ms", f.per_gflop_ms},
          {"per_mb_ms", f.per_mb_ms},
          {"per_param_mb_ms", f.per_param_mb_ms},
          {"per_call_ms", f.per_call_ms},
          {"per_unit_ms", f.per_unit_ms},
          {"samples", f.samples},
          {"rel_rms", f.rel_rms},
          {"measured_ms", f.measured_ms},
          {"predicted_ms", f.predicted_ms},
          {"max_param_per_flop", f.max_param_per_flop}};
}

}  // namespace

std::string calibration_json(const Calibration& c) {
  ordered_json j;
  j["schema"] = "flopwise.calibration/1";
  j["flopwise_version"] = flopwise_version();
  j["model"] =
      "t_ms = per_gflop_ms * FLOPs / 1e9 + per_mb_ms * (bytes - parameter bytes) / 1e6 + per_param_mb_ms * "
      "parameter bytes / 1e6 + per_call_ms * calls + per_unit_ms; a module's unit of several op types: each "
      "part by its op's terms, plus its top op's per_unit_ms";
  j["device"] = c.device;
  j["runtime"] = c.runtime;
  j["threads"] = c.threads;
  j["statistic"] = c.statistic;
  j["granularity"] = granularity_name(c.granularity);
  j["weighting"] = weighting_name(c.weighting);
  j["min_samples"] = c.min_samples;
  j["rounds"] = c.rounds;
  j["model_rel_rms"] = c.model_rel_rms;
  if (c.held_out_rel_rms >= 0) j["held_out_rel_rms"] = c.held_out_rel_rms;
  j["all_ops"] = calib_fit_json(c.all);
  ordered_json ops = ordered_json::object();
  for (const auto& [op, f] : c.ops) ops[op] = calib_fit_json(f);
  j["ops"] = ops;
  if (c.wall.models > 0)
    j["wall"] = {{"model", "forward_ms = per_op_ms * op sum + per_unit_ms * units"},
                 {"per_op_ms", c.wall.per_op_ms},
                 {"per_unit_ms", c.wall.per_unit_ms},
                 {"models", c.wall.models},
                 {"rel_rms", c.wall.rel_rms}};
  ordered_json models = ordered_json::array();
  for (const auto& m : c.models) {
    ordered_json mj = {{"name", m.name}, {"measured_ms", m.measured_ms}, {"predicted_ms", m.predicted_ms}};
    if (m.wall_ms > 0) mj["wall_ms"] = m.wall_ms;
    models.push_back(mj);
  }
  j["models"] = models;
  j["sources"] = c.sources;
  // Last: the points are long, the rest is what a person reads.
  if (!c.local.empty()) {
    ordered_json points = ordered_json::object();
    auto rounded = [](double v) { return std::round(v * 1e4) / 1e4; };
    for (const auto& [key, l] : c.local) {
      ordered_json a = ordered_json::array();
      for (const LocalPoint& p : l.points)
        a.push_back({rounded(p.log_flops), rounded(p.log_bytes), rounded(p.residual)});
      points[key] = a;
    }
    j["local"] = {{"model",
                   "t_ms = fit * exp(sum k_i r_i / (sum k_i + prior)), k_i = exp(-d_i^2 / bandwidth^2), d_i: "
                   "distance in (log10 (FLOPs + 1), log10 (bytes + 1)) to point i = [log10 (FLOPs + 1), "
                   "log10 (bytes + 1), ln(measured / fit)]"},
                  {"bandwidth", c.local_bandwidth},
                  {"prior", c.local_prior},
                  {"points", points}};
  }
  return j.dump(1) + "\n";
}

namespace {

double calib_number(const nlohmann::json& o, const char* key, const std::string& where) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number())
    throw InputError(where + ": '" + key + "' is missing or not a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) throw InputError(where + ": '" + key + "' must be a finite number >= 0");
  return v;
}

LatencyFit calib_fit_from(const nlohmann::json& o, const std::string& where) {
  if (!o.is_object()) throw InputError(where + ": expected an object");
  LatencyFit f;
  f.per_gflop_ms = calib_number(o, "per_gflop_ms", where);
  f.per_mb_ms = calib_number(o, "per_mb_ms", where);
  f.per_call_ms = calib_number(o, "per_call_ms", where);
  f.per_unit_ms = o.contains("per_unit_ms") ? calib_number(o, "per_unit_ms", where) : 0.0;  // stop 48 on
  // Stop 49 on; before, parameter bytes were bytes like any other.
  f.per_param_mb_ms = o.contains("per_param_mb_ms") ? calib_number(o, "per_param_mb_ms", where) : f.per_mb_ms;
  if (o.contains("max_param_per_flop")) {  // -1: none in the data (covers every unit)
    const auto& m = o["max_param_per_flop"];
    if (!m.is_number() || !std::isfinite(m.get<double>()) || m.get<double>() < -1)
      throw InputError(where + ": 'max_param_per_flop' must be a number >= -1");
    f.max_param_per_flop = m.get<double>();
  }
  f.samples = static_cast<size_t>(calib_number(o, "samples", where));
  f.rel_rms = calib_number(o, "rel_rms", where);
  f.measured_ms = calib_number(o, "measured_ms", where);
  f.predicted_ms = calib_number(o, "predicted_ms", where);
  return f;
}

std::string calib_string(const nlohmann::json& o, const char* key, const std::string& where) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_string())
    throw InputError(where + ": '" + key + "' is missing or not a string");
  return it->get<std::string>();
}

Calibration read_calibration_json(const std::string& path) {
  const std::string where = "calibration " + path;
  nlohmann::json j = nlohmann::json::parse(read_input_file(path, " the calibration"), nullptr, false);
  if (j.is_discarded()) throw InputError(where + ": not JSON (truncated?)");
  if (!j.is_object() || j.value("schema", "") != "flopwise.calibration/1")
    throw InputError(where +
                     ": not a flopwise calibration (schema flopwise.calibration/1; made by flopwise "
                     "calibrate)");
  Calibration c;
  c.device = calib_string(j, "device", where);
  c.runtime = calib_string(j, "runtime", where);
  c.threads = calib_string(j, "threads", where);
  c.statistic = j.contains("statistic") ? calib_string(j, "statistic", where) : "median";
  if (c.statistic != "fastest" && c.statistic != "median")
    throw InputError(where + ": statistic '" + c.statistic + "' is not fastest or median");
  const std::string g = calib_string(j, "granularity", where);
  if (g != "node" && g != "module")
    throw InputError(where + ": granularity '" + g + "' is not node or module");
  c.granularity = g == "node" ? Granularity::Node : Granularity::Module;
  c.min_samples = static_cast<size_t>(calib_number(j, "min_samples", where));
  if (j.contains("rounds")) c.rounds = static_cast<int>(std::min(calib_number(j, "rounds", where), 1e6));
  try {
    c.weighting = parse_weighting(calib_string(j, "weighting", where));
  } catch (const UsageError& e) {
    throw InputError(where + ": " + e.what());
  }
  c.model_rel_rms = calib_number(j, "model_rel_rms", where);
  if (j.contains("held_out_rel_rms")) c.held_out_rel_rms = calib_number(j, "held_out_rel_rms", where);
  c.all = calib_fit_from(j.contains("all_ops") ? j["all_ops"] : nlohmann::json(), where + " all_ops");
  if (!j.contains("ops") || !j["ops"].is_object()) throw InputError(where + ": 'ops' is missing");
  for (const auto& [op, f] : j["ops"].items()) c.ops[op] = calib_fit_from(f, where + " ops." + op);
  if (j.contains("wall")) {
    const nlohmann::json& w = j["wall"];
    if (!w.is_object()) throw InputError(where + ": 'wall' is not an object");
    c.wall.per_op_ms = calib_number(w, "per_op_ms", where + " wall");
    c.wall.per_unit_ms = calib_number(w, "per_unit_ms", where + " wall");
    c.wall.models = static_cast<size_t>(calib_number(w, "models", where + " wall"));
    c.wall.rel_rms = calib_number(w, "rel_rms", where + " wall");
  }
  c.local_bandwidth = 0;
  if (j.contains("local")) {
    const nlohmann::json& l = j["local"];
    if (!l.is_object() || !l.contains("points") || !l["points"].is_object())
      throw InputError(where + ": 'local' is not an object with 'points'");
    c.local_bandwidth = calib_number(l, "bandwidth", where + " local");
    c.local_prior = calib_number(l, "prior", where + " local");
    for (const auto& [key, a] : l["points"].items()) {
      if (!a.is_array()) throw InputError(where + ": local points of '" + key + "' are not an array");
      LocalCorrection& lc = c.local[key];
      for (const auto& p : a) {
        if (!p.is_array() || p.size() != 3 || !p[0].is_number() || !p[1].is_number() || !p[2].is_number())
          throw InputError(where + ": a local point of '" + key +
                           "' is not [log10 FLOPs, log10 bytes, residual]");
        LocalPoint lp{p[0].get<double>(), p[1].get<double>(), p[2].get<double>()};
        if (!std::isfinite(lp.log_flops) || !std::isfinite(lp.log_bytes) || !std::isfinite(lp.residual) ||
            lp.log_flops < 0 || lp.log_bytes < 0 || std::abs(lp.residual) > 50)
          throw InputError(where + ": a local point of '" + key + "' is out of range");
        lc.points.push_back(lp);
      }
      calib::sort_points(lc);
    }
  }
  if (j.contains("models") && j["models"].is_array())
    for (const auto& m : j["models"])
      if (m.is_object())
        c.models.push_back({m.value("name", ""), calib_number(m, "measured_ms", where + " models"),
                            calib_number(m, "predicted_ms", where + " models")});
  if (j.contains("sources") && j["sources"].is_array())
    for (const auto& s : j["sources"])
      if (s.is_string()) c.sources.push_back(s.get<std::string>());
  return c;
}

}  // namespace

Calibration read_calibration(const std::string& path) {
  try {
    return read_calibration_json(path);
  } catch (const nlohmann::json::exception& e) {
    throw InputError("calibration " + path + ": not as flopwise calibrate writes it (" + e.what() + ")");
  }
}

}  // namespace flopwise
