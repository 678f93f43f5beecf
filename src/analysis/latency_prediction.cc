// src/analysis/latency_prediction.cc — --predict (flopwise/calibration.h): a report's units priced by a
// calibration, summed per scope and for the model, with the band the calibration's own errors give and what
// makes a prediction weak.
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "calibration_fit.h"
#include "flopwise/calibration.h"

namespace flopwise {

std::string prediction_summary(const LatencyPrediction& p) {
  char buf[96];
  if (p.band_ms >= 0)
    std::snprintf(buf, sizeof buf, "%.4g ms +- %.2g ms", p.total_ms, p.band_ms);
  else
    std::snprintf(buf, sizeof buf, "%.4g ms (band not known)", p.total_ms);
  std::string s = buf;
  s += std::string(p.statistic == "fastest" ? " (each op's fastest run" : " (each op's median run") +
       "; calibrated on " + p.device + ", " + p.runtime + ")";
  if (p.wall_ms >= 0) {
    std::snprintf(buf, sizeof buf, "; forward %.4g ms", p.wall_ms);
    s += buf;
  }
  if (!p.unseen.empty()) {
    s += "; not calibrated, the all-ops fit: ";
    for (size_t i = 0; i < p.unseen.size(); ++i) s += (i ? ", " : "") + p.unseen[i];
  }
  if (p.unpredicted)
    s += "; " + std::to_string(p.unpredicted) +
         " nodes not predicted: their counts are not numbers (formulas in the model's dims: bind them with "
         "--dim NAME=VALUE, or --sweep them)";
  if (!p.weak.empty()) s += "; weak: " + p.weak;
  return s;
}

namespace {

// A prediction is weak where more than this share of its time is priced by fits that never timed those kinds
// of op (held out on the bundled profiles, bench/README.md "Predicted latency with few models": such
// predictions were 17 % within +-10 % of the measured time, the others 83 % and all within +-20 %).
constexpr double kWeakExtrapolated = 0.25;

// The band (the calibration's error on models it did not see, plus the extrapolated units' own spread) and
// why the prediction is weak.
void judge(const Calibration& c, LatencyPrediction& p, double spread_ms) {
  std::vector<std::string> why;
  if (c.models.size() == 1) {
    p.band_ms = -1;
    why.push_back("calibrated on one model, whose error on another model is not known");
  } else {
    p.band_ms = p.total_ms * std::max(c.held_out_rel_rms, c.model_rel_rms) + spread_ms;
  }
  if (p.total_ms > 0 && p.extrapolated_ms > kWeakExtrapolated * p.total_ms) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%.0f %% of the time is priced by fits that never timed its kinds of op",
                  100 * p.extrapolated_ms / p.total_ms);
    why.push_back(buf);
  }
  for (size_t i = 0; i < why.size(); ++i) p.weak += (i ? "; " : "") + why[i];
}

// Each scope's time: its own units' and its children's, in tree order.
void scope_times(const ScopeNode& root, const std::unordered_map<std::string_view, double>& own,
                 LatencyPrediction& p) {
  std::function<double(const ScopeNode&)> sum = [&](const ScopeNode& s) {
    const size_t at_index = p.scopes.size();
    p.scopes.emplace_back(s.name, 0.0);
    auto it = own.find(s.name);
    double ms = it != own.end() ? it->second : 0.0;
    for (const auto& ch : s.children) ms += sum(*ch);
    p.scopes[at_index].second = ms;
    return ms;
  };
  sum(root);
}

}  // namespace

LatencyPrediction predict_latency(const Report& r, const Calibration& c, const std::string& path,
                                  const DimValues* at) {
  LatencyPrediction p;
  p.calibration = path;
  p.device = c.device;
  p.runtime = c.runtime;
  p.statistic = c.statistic;
  p.granularity = c.granularity;
  std::set<std::string_view> unseen;
  std::unordered_map<std::string_view, double> own;  // innermost scope -> its units' time
  // Op types and variants are interned in the report: one lookup per distinct pair, by where their
  // characters are.
  std::map<std::pair<const char*, const char*>, std::vector<calib::Fitted>> fits;
  auto levels = [&](std::string_view op, std::string_view variant) -> const std::vector<calib::Fitted>& {
    auto [it, fresh] = fits.try_emplace(std::make_pair(op.data(), variant.data()));
    if (fresh) it->second = calib::fitted_levels(c, op, variant);
    return it->second;
  };
  struct FactorKey {
    const LocalCorrection* local;
    double flops, bytes;
    bool operator==(const FactorKey& o) const {
      return local == o.local && flops == o.flops && bytes == o.bytes;
    }
  };
  struct FactorHash {
    size_t operator()(const FactorKey& k) const {
      const size_t h = std::hash<const void*>()(k.local);
      return (h * 1000003u) ^ std::hash<double>()(k.flops) ^ (std::hash<double>()(k.bytes) << 1);
    }
  };
  std::unordered_map<FactorKey, double, FactorHash> factors;  // repeated layers: one sum
  auto factor = [&](const LocalCorrection* l, double flops, double bytes) {
    auto [fi, fresh] = factors.try_emplace(FactorKey{l, flops, bytes}, 1.0);
    if (fresh) fi->second = local_factor(*l, flops, bytes, c.local_bandwidth, c.local_prior);
    return fi->second;
  };
  auto not_calibrated = [&](std::string_view op) { unseen.insert(op); };
  p.units = calib::units_of(r, c.granularity, &p.unpredicted, at);
  std::string_view run_scope;  // consecutive units of one scope, summed before one lookup
  double run_ms = 0, spread_ms = 0;
  for (PredictedUnit& u : p.units) {
    if (u.flops > 0 || u.bytes > 0) {
      const calib::UnitPrediction up = calib::predict_unit(c, u, levels, factor, not_calibrated);
      u.ms = up.ms;
      p.extrapolated_ms += up.extrapolated_ms;
      spread_ms += up.spread_ms;
    }
    p.total_ms += u.ms;
    if (u.scope != run_scope) {
      if (run_ms != 0) own[run_scope] += run_ms;
      run_scope = u.scope;
      run_ms = 0;
    }
    run_ms += u.ms;
  }
  if (run_ms != 0) own[run_scope] += run_ms;
  judge(c, p, spread_ms);
  for (const PredictedUnit& u : p.units) p.timed_units += u.flops > 0 || u.bytes > 0;
  if (c.wall.models > 0) p.wall_ms = c.wall.predict(p.total_ms, static_cast<double>(p.timed_units));
  for (std::string_view op : unseen) p.unseen.emplace_back(op);
  if (r.scopes) scope_times(*r.scopes, own, p);
  return p;
}

}  // namespace flopwise
