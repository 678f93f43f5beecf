// src/analysis/calibration_fit.h — what the fit (src/measured/calibrate.cc), the calibration file
// (calibration_file.cc) and --predict (latency_prediction.cc) share, defined in calibration_units.cc: which
// fit prices a unit, and a unit's predicted time. Private to src/analysis and the fit.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flopwise/calibration.h"

namespace flopwise::calib {

// What a unit of (op, variant) is predicted with: its first fitted key, that key's fit and local correction;
// without a fitted key, the all-ops fit and no correction. `own`: the key is the unit's own kind (its
// longest key, or the GEMM kernel a MatMul and a Gemm share), not a shorter one ("Conv" for a
// "Conv/depthwise/3x3" unit) nor the all-ops fit: a fit that timed units of its kind.
struct Fitted {
  const std::string* key = nullptr;  // nullptr: the all-ops fit
  const LatencyFit* fit = nullptr;
  const LocalCorrection* local = nullptr;
  bool own = false;
};

double param_per_flop(double flops, double param_bytes);
// Every fitted level of an (op, variant)'s key, longest first: what --predict looks up once per distinct pair
// and then picks from per unit (the first that covers it, else the first; none: the all-ops fit).
std::vector<Fitted> fitted_levels(const Calibration& c, std::string_view op, std::string_view variant);
Fitted pick(const Calibration& c, const std::vector<Fitted>& levels, double param_per_flop);

// What local_factor's window search needs: the points in log10 FLOPs order.
void sort_points(LocalCorrection& l);

// The report's units at granularity g (cost_units' rule), as views of the report's strings.
std::vector<PredictedUnit> units_of(const Report& r, Granularity g, int64_t* unknown, const DimValues* at);

// One unit's prediction: its time, the part of it priced by fits that never timed its kind (Fitted::own
// false), and that part's spread (each such part's time x its fit's rms relative residual).
struct UnitPrediction {
  double ms = 0, extrapolated_ms = 0, spread_ms = 0;
};

// A unit's predicted time (CostUnit or PredictedUnit): a unit of one part by its fit, times its local
// correction; a module's unit of parts, each part's terms by its own op's fit plus its top op's fixed time.
// `levels(op, variant)`: the fitted levels of that key (fitted_levels, cached or not); `factor(local, flops,
// bytes)`: a local correction's factor; `unseen(op)`: called for each part priced by the all-ops fit.
template <class Unit, class Levels, class Factor, class Unseen>
UnitPrediction predict_unit(const Calibration& c, const Unit& u, Levels&& levels, Factor&& factor,
                            Unseen&& unseen) {
  UnitPrediction p;
  auto account = [&](const Fitted& f, std::string_view op, double ms) {
    if (!f.key) unseen(op);
    if (f.own) return;
    p.extrapolated_ms += ms;
    p.spread_ms += ms * f.fit->rel_rms;
  };
  const Fitted f = pick(c, levels(u.op, u.variant), param_per_flop(u.flops, u.param_bytes));
  if (u.parts.empty()) {
    p.ms = f.fit->predict(u.flops, u.bytes, u.calls, u.param_bytes);
    if (f.local) p.ms *= factor(f.local, u.flops, u.bytes);
    account(f, u.op, p.ms);
    return p;
  }
  p.ms = f.fit->per_unit_ms;
  for (const auto& part : u.parts) {
    const Fitted pf = pick(c, levels(part.op, part.variant), param_per_flop(part.flops, part.param_bytes));
    const double ms = pf.fit->terms(part.flops, part.bytes, part.calls, part.param_bytes);
    account(pf, part.op, ms);
    p.ms += ms;
  }
  return p;
}

}  // namespace flopwise::calib
