// src/measured/calibrate.cc — latency calibrated from measurements (flopwise/calibrate.h): the per-op-type
// non-negative least-squares fits (Eigen), solved jointly over a module's parts, the wall fit, the local
// corrections and the errors on models held out. What a fit applies to (units, keys, levels) is
// src/analysis/calibration_units.cc's; the file, src/analysis/calibration_file.cc's.
#include "flopwise/calibrate.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "../analysis/calibration_fit.h"
#include "flopwise/errors.h"

namespace flopwise {

namespace {

// min |a x - b| over x >= 0, x of a's (up to five) columns, exactly: the optimum is the unconstrained least
// squares on its support, so solve every support and keep the best whose coefficients are all >= 0 (on a
// tie, the first support: fewer and earlier columns). Columns are scaled to unit maximum so that counts of
// very different sizes solve alike; an all-zero column stays 0.
Eigen::VectorXd nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const Eigen::Index n = a.rows(), m = a.cols();
  Eigen::VectorXd scale(m);
  for (Eigen::Index j = 0; j < m; ++j) scale(j) = n ? a.col(j).cwiseAbs().maxCoeff() : 0.0;
  Eigen::VectorXd best = Eigen::VectorXd::Zero(m);
  double best_err = b.squaredNorm();  // all zero
  for (unsigned mask = 1; mask < (1u << m); ++mask) {
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < m; ++j)
      if ((mask >> j & 1) && scale(j) > 0) cols.push_back(j);
    if (cols.size() != static_cast<size_t>(__builtin_popcount(mask))) continue;
    Eigen::MatrixXd as(n, static_cast<Eigen::Index>(cols.size()));
    for (size_t k = 0; k < cols.size(); ++k)
      as.col(static_cast<Eigen::Index>(k)) = a.col(cols[k]) / scale(cols[k]);
    const Eigen::VectorXd x = as.colPivHouseholderQr().solve(b);
    if (!x.allFinite() || (x.array() < 0).any()) continue;
    const double err = (as * x - b).squaredNorm();
    if (err < best_err * (1 - 1e-12)) {  // a support must be better beyond rounding to replace the first
      best_err = err;
      best.setZero();
      for (size_t k = 0; k < cols.size(); ++k)
        best(cols[k]) = x(static_cast<Eigen::Index>(k)) / scale(cols[k]);
    }
  }
  return best;
}

}  // namespace

namespace {

// One row of a fit: the counts of what the fitted op covers in a unit, whether the unit's fixed time is the
// op's (it names the unit), and the time left to them: the unit's measured time less what its other parts
// are predicted to take. `ms`, the unit's whole measured time, weighs the row.
struct FitRow {
  double flops = 0, activation_bytes = 0, param_bytes = 0, calls = 0, fixed = 1;
  double target = 0, ms = 0;
  double others = 0;  // target = ms - others
};

double pow_weight(double ms, Weighting weighting) {
  const double power = weighting == Weighting::Relative ? 1.0 : weighting == Weighting::Sqrt ? 0.5 : 0.0;
  return std::pow(ms, -power);
}

// The coefficients from rows (all timed): non-negative least squares over FLOPs, activation bytes, calls,
// the unit's fixed time and parameter bytes, in that order (nnls prefers fewer and earlier columns on a tie).
// Rows weighted by measured time^-p (p = 1: min sum (prediction / measured - 1)^2; p = 0: min sum
// (prediction - measured)^2). The fixed time only where calls vary (else it is the calls' column); without
// parameter bytes in the data, parameters cost what activations cost.
// A size column (FLOPs, activation bytes, parameter bytes) is fitted only where the rows' size per call
// varies (by more than 1 %): rows of one size per call (every scalar Div: 1 FLOP, 16 bytes a call) cannot
// tell a cost per FLOP from a cost per call, and nnls, preferring earlier columns on a tie, would price a
// 1,000-FLOP Div at 1,000 calls. Their time is then per call.
constexpr double kSizeSpan = 1.01;

bool size_varies(const std::vector<FitRow>& rows, double FitRow::*size) {
  double lo = HUGE_VAL, hi = 0;
  for (const FitRow& r : rows) {
    const double per = r.calls > 0 ? r.*size / r.calls : r.*size;
    lo = std::min(lo, per);
    hi = std::max(hi, per);
  }
  return hi > 0 && hi >= kSizeSpan * lo;
}

void solve_rows(const std::vector<FitRow>& rows, Weighting weighting, LatencyFit* f) {
  const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
  const bool use_flops = size_varies(rows, &FitRow::flops),
             use_bytes = size_varies(rows, &FitRow::activation_bytes),
             use_params = size_varies(rows, &FitRow::param_bytes);
  const bool calls_vary =
      std::any_of(rows.begin(), rows.end(), [](const FitRow& r) { return r.calls != r.fixed; });
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, 5);
  Eigen::VectorXd b(n);
  bool params = false;
  for (Eigen::Index i = 0; i < n; ++i) {
    const FitRow& r = rows[static_cast<size_t>(i)];
    const double w = pow_weight(r.ms, weighting);
    if (use_flops) a(i, 0) = r.flops * 1e-9 * w;
    if (use_bytes) a(i, 1) = r.activation_bytes * 1e-6 * w;
    a(i, 2) = r.calls * w;
    if (calls_vary) a(i, 3) = r.fixed * w;
    if (use_params) a(i, 4) = r.param_bytes * 1e-6 * w;
    params = params || r.param_bytes > 0;
    b(i) = r.target * w;
  }
  const Eigen::VectorXd best = nnls(a, b);
  f->per_gflop_ms = best(0);
  f->per_mb_ms = best(1);
  f->per_call_ms = best(2);
  f->per_unit_ms = best(3);
  f->per_param_mb_ms = params ? best(4) : best(1);
}

// The fit's residual statistics over its rows: each row's prediction (its terms, its fixed time where it
// names the unit, and the other parts' prediction) against the unit's measured time.
void fit_stats(const std::vector<FitRow>& rows, LatencyFit* f) {
  f->samples = rows.size();
  f->max_param_per_flop = -1;
  for (const FitRow& r : rows)
    if (r.flops > 0) f->max_param_per_flop = std::max(f->max_param_per_flop, r.param_bytes / r.flops);
  f->measured_ms = f->predicted_ms = 0;
  double sq = 0;
  for (const FitRow& r : rows) {
    const double p = f->terms(r.flops, r.activation_bytes + r.param_bytes, r.calls, r.param_bytes) +
                     r.fixed * f->per_unit_ms + r.others;
    sq += (p / r.ms - 1) * (p / r.ms - 1);
    f->measured_ms += r.ms;
    f->predicted_ms += p;
  }
  f->rel_rms = rows.empty() ? 0 : std::sqrt(sq / static_cast<double>(rows.size()));
}

}  // namespace

LatencyFit fit_latency(const std::vector<const TimedSample*>& samples, Weighting weighting) {
  std::vector<FitRow> rows;
  for (const TimedSample* x : samples)
    if (x->ms > 0 && std::isfinite(x->ms)) {
      const CostUnit& u = x->unit;
      const double params = std::min(u.param_bytes, u.bytes);
      rows.push_back({u.flops, u.bytes - params, params, u.calls, 1, x->ms, x->ms, 0});
    }
  LatencyFit f;
  if (rows.empty()) return f;
  solve_rows(rows, weighting, &f);
  fit_stats(rows, &f);
  return f;
}

namespace {

// A calibration unit's parts: its CostUnit::parts, or the unit itself as its one part.
struct SamplePart {
  double flops = 0, bytes = 0, calls = 0, param_bytes = 0;  // its counts (the unit's, where it is the unit)
  std::vector<int> chain;  // its key's levels (calibration_keys) as key ids, longest first
  int key = -1;            // the first level fitted (its fit's id); -1: the all-ops fit
};
struct Sample {
  const TimedSample* s = nullptr;
  std::vector<SamplePart> parts;
  std::vector<int> top_chain;  // the unit's own key's levels: its fixed time is theirs
  int top_key = -1;
};

double part_terms(const LatencyFit& f, const SamplePart& p) {
  return f.terms(p.flops, p.bytes, p.calls, p.param_bytes);
}

}  // namespace

namespace {

// calibrate() without the held-out errors.
Calibration calibrate_fits(const std::vector<TimedSample>& samples, Granularity g, size_t min_samples,
                           Weighting w, const std::map<std::string, double>* walls, double local_bandwidth) {
  Calibration c;
  c.granularity = g;
  c.weighting = w;
  c.min_samples = min_samples;
  c.local_bandwidth = local_bandwidth;
  // Every level of each unit's parts' keys, with the units measured at 0 (a node the runtime ran no kernel
  // for: a constant, a folded shape computation): a key whose units all took no time is fitted as taking
  // none.
  std::vector<const TimedSample*> all, measured;  // all: the timed units; measured: with those at 0
  std::vector<std::string> key_names;
  std::map<std::string, int> key_id;
  auto chain_of = [&](const std::string& op, const std::string& variant) {
    std::vector<int> chain;
    for (std::string& k : calibration_keys(op, variant)) {
      auto [it, fresh] = key_id.try_emplace(std::move(k), static_cast<int>(key_names.size()));
      if (fresh) key_names.push_back(it->first);
      chain.push_back(it->second);
    }
    return chain;
  };
  std::vector<Sample> xs;
  for (const TimedSample& s : samples) {
    if (!(s.ms >= 0) || !std::isfinite(s.ms)) continue;
    measured.push_back(&s);
    if (s.ms > 0) all.push_back(&s);
    Sample& x = xs.emplace_back();
    x.s = &s;
    x.top_chain = chain_of(s.unit.op, s.unit.variant);
    const CostUnit& u = s.unit;
    if (u.parts.empty())
      x.parts.push_back({u.flops, u.bytes, u.calls, std::min(u.param_bytes, u.bytes), x.top_chain});
    for (const CostPart& p : u.parts)
      x.parts.push_back(
          {p.flops, p.bytes, p.calls, std::min(p.param_bytes, p.bytes), chain_of(p.op, p.variant)});
  }
  if (all.empty()) throw InputError("calibrate: no measured unit has a time: nothing to fit");
  c.all = fit_latency(all, w);
  // Each key's units: those with a part under it (once each), and how many took time.
  const size_t keys = key_names.size();
  std::vector<std::vector<size_t>> key_rows(keys);
  std::vector<size_t> timed(keys, 0);
  for (size_t i = 0; i < xs.size(); ++i) {
    std::set<int> under;
    for (const SamplePart& p : xs[i].parts) under.insert(p.chain.begin(), p.chain.end());
    for (int k : under) {
      key_rows[static_cast<size_t>(k)].push_back(i);
      timed[static_cast<size_t>(k)] += xs[i].s->ms > 0;
    }
  }
  std::vector<LatencyFit> fit(keys);
  std::vector<char> fitted_key(keys, 0), none(keys, 0);
  for (size_t k = 0; k < keys; ++k) {
    if (timed[k] >= min_samples) fitted_key[k] = 1;
    if (timed[k] == 0 && key_rows[k].size() >= min_samples) fitted_key[k] = none[k] = 1;  // takes no time
  }
  auto first_fitted = [&](const std::vector<int>& chain) {
    for (int k : chain)
      if (fitted_key[static_cast<size_t>(k)]) return k;
    return -1;
  };
  bool coupled = false;  // a unit of two parts or more: the fits depend on each other
  for (Sample& x : xs) {
    x.top_key = first_fitted(x.top_chain);
    for (SamplePart& p : x.parts) p.key = first_fitted(p.chain);
    coupled = coupled || x.parts.size() > 1;
  }
  auto fit_of = [&](int k) -> const LatencyFit& { return k >= 0 ? fit[static_cast<size_t>(k)] : c.all; };
  // A unit's time as fitted: its parts' terms and its own key's fixed time.
  auto fitted_ms = [&](const Sample& x) {
    double ms = fit_of(x.top_key).per_unit_ms;
    for (const SamplePart& p : x.parts) ms += part_terms(fit_of(p.key), p);
    return ms;
  };
  // The fits, each in turn against the time the others leave (block coordinate descent on the joint least
  // squares; node by node the units are one part each and one round is the exact fit).
  std::vector<FitRow> rows;
  double last_sse = HUGE_VAL;
  for (int round = 0; round < 200; ++round) {
    c.rounds = round + 1;
    double change = 0;
    for (size_t k = 0; k < keys; ++k) {
      if (!fitted_key[k] || none[k]) continue;
      rows.clear();
      for (size_t i : key_rows[k]) {
        const Sample& x = xs[i];
        if (!(x.s->ms > 0)) continue;
        FitRow r;
        r.ms = x.s->ms;
        r.fixed = 0;
        for (const SamplePart& p : x.parts) {
          if (std::find(p.chain.begin(), p.chain.end(), static_cast<int>(k)) == p.chain.end()) {
            r.others += part_terms(fit_of(p.key), p);
            continue;
          }
          r.flops += p.flops;
          r.activation_bytes += p.bytes - p.param_bytes;
          r.param_bytes += p.param_bytes;
          r.calls += p.calls;
        }
        if (std::find(x.top_chain.begin(), x.top_chain.end(), static_cast<int>(k)) != x.top_chain.end())
          r.fixed = 1;
        else
          r.others += fit_of(x.top_key).per_unit_ms;
        r.target = r.ms - r.others;
        rows.push_back(r);
      }
      LatencyFit next;
      solve_rows(rows, w, &next);
      fit_stats(rows, &next);
      const LatencyFit& was = fit[k];
      for (auto [a, b] : {std::pair{was.per_gflop_ms, next.per_gflop_ms},
                          {was.per_mb_ms, next.per_mb_ms},
                          {was.per_call_ms, next.per_call_ms},
                          {was.per_unit_ms, next.per_unit_ms},
                          {was.per_param_mb_ms, next.per_param_mb_ms}})
        change = std::max(change, std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-30}));
      fit[k] = next;
    }
    if (!coupled || change < 1e-9) break;
    // The weighted squared error of the units' predictions: stop where a round lowers it by under 1e-6 of
    // itself (the coefficients may still drift along directions the data cannot tell apart).
    double sse = 0;
    for (const Sample& x : xs)
      if (x.s->ms > 0) {
        const double e = (fitted_ms(x) - x.s->ms) * pow_weight(x.s->ms, w);
        sse += e * e;
      }
    if (sse >= last_sse * (1 - 1e-6)) break;
    last_sse = sse;
  }
  for (size_t k = 0; k < keys; ++k)
    if (fitted_key[k]) {
      if (none[k]) fit[k].samples = key_rows[k].size();
      c.ops[key_names[k]] = fit[k];
    }
  // The local corrections: each timed unit's log residual against its fit, one point per model and
  // configuration (a model's identical layers and pooled repeats averaged).
  std::map<std::string, int> model_id;
  for (const TimedSample* s : measured) model_id.try_emplace(s->model, static_cast<int>(model_id.size()));
  if (local_bandwidth > 0) {
    std::map<std::tuple<int, int, double, double, double>, std::pair<double, int>> points;
    for (const Sample& x : xs) {
      const TimedSample* s = x.s;
      if (!(s->ms > 0) || (s->unit.flops == 0 && s->unit.bytes == 0) || x.top_key < 0 || x.parts.size() > 1)
        continue;
      const double fit_ms = fitted_ms(x);
      if (!(fit_ms > 0)) continue;
      auto& [sum, n] = points[{x.top_key, model_id[s->model], s->unit.flops, s->unit.bytes, s->unit.calls}];
      sum += std::log(s->ms / fit_ms);
      ++n;
    }
    for (const auto& [at, r] : points) {
      const auto& [key, model, flops, bytes, calls] = at;
      c.local[key_names[static_cast<size_t>(key)]].points.push_back(
          {std::log10(flops + 1), std::log10(bytes + 1), r.first / r.second, model});
    }
    for (auto& [key, l] : c.local) calib::sort_points(l);
  }
  // Each model's total as the calibration predicts it without its own points, against its measured total.
  std::map<std::string, CalibratedModel> models;
  for (const Sample& x : xs) {
    const TimedSample* s = x.s;
    CalibratedModel& m = models[s->model];
    m.name = s->model;
    m.measured_ms += s->ms;
    if (s->unit.flops == 0 && s->unit.bytes == 0) continue;  // as predict_latency: 0
    double ms = fitted_ms(x);
    if (x.top_key >= 0 && x.parts.size() == 1)
      if (auto l = c.local.find(key_names[static_cast<size_t>(x.top_key)]); l != c.local.end())
        ms *= local_factor(l->second, s->unit.flops, s->unit.bytes, c.local_bandwidth, c.local_prior,
                           model_id[s->model]);
    m.predicted_ms += ms;
  }
  double sq = 0;
  size_t timed_models = 0;  // a model none of whose units took time has no relative error
  for (auto& [name, m] : models) {
    if (m.measured_ms > 0) {
      sq += (m.predicted_ms / m.measured_ms - 1) * (m.predicted_ms / m.measured_ms - 1);
      ++timed_models;
    }
    c.models.push_back(m);
  }
  c.model_rel_rms = timed_models ? std::sqrt(sq / static_cast<double>(timed_models)) : 0.0;

  // The forward from the op sum, over the models whose forward was measured (rows weighted 1 / sqrt(wall)).
  if (walls) {
    std::map<std::string, double> units;  // a model's units with FLOPs or bytes
    for (const TimedSample* s : measured)
      if (s->unit.flops > 0 || s->unit.bytes > 0) units[s->model] += 1;
    std::vector<CalibratedModel*> timed;
    for (CalibratedModel& m : c.models) {
      auto it = walls->find(m.name);
      if (it != walls->end() && it->second > 0 && std::isfinite(it->second) && m.measured_ms > 0) {
        m.wall_ms = it->second;
        timed.push_back(&m);
      }
    }
    if (!timed.empty()) {
      const Eigen::Index n = static_cast<Eigen::Index>(timed.size());
      Eigen::MatrixXd a(n, 2);
      Eigen::VectorXd b(n);
      for (Eigen::Index i = 0; i < n; ++i) {
        const CalibratedModel& m = *timed[static_cast<size_t>(i)];
        const double wt = 1 / std::sqrt(m.wall_ms);
        a(i, 0) = m.measured_ms * wt;
        a(i, 1) = units[m.name] * wt;
        b(i) = m.wall_ms * wt;
      }
      const Eigen::VectorXd x = nnls(a, b);
      c.wall.per_op_ms = x(0);
      c.wall.per_unit_ms = x(1);
      c.wall.models = timed.size();
      double wsq = 0;
      for (const CalibratedModel* m : timed) {
        const double r = c.wall.predict(m->measured_ms, units[m->name]) / m->wall_ms - 1;
        wsq += r * r;
      }
      c.wall.rel_rms = std::sqrt(wsq / static_cast<double>(timed.size()));
    }
  }
  return c;
}

// Each model predicted by a calibration of the others alone (predict_latency's rule on its measured units):
// the root mean square of their relative errors; -1 where no model could be.
double held_out_error(const std::vector<TimedSample>& samples, const Calibration& c, Granularity g,
                      size_t min_samples, Weighting w, double local_bandwidth) {
  double sq = 0;
  size_t n = 0;
  auto levels = [](const Calibration& k, std::string_view op, std::string_view variant) {
    return calib::fitted_levels(k, op, variant);
  };
  for (const CalibratedModel& m : c.models) {
    if (!(m.measured_ms > 0)) continue;
    std::vector<TimedSample> others;
    for (const TimedSample& s : samples)
      if (s.model != m.name) others.push_back(s);
    Calibration k;
    try {
      k = calibrate_fits(others, g, min_samples, w, nullptr, local_bandwidth);
    } catch (const InputError&) {
      continue;  // the others took no time: nothing to predict it with
    }
    double predicted = 0;
    for (const TimedSample& s : samples) {
      if (s.model != m.name || !(s.ms >= 0) || !std::isfinite(s.ms)) continue;
      if (s.unit.flops == 0 && s.unit.bytes == 0) continue;  // as predict_latency: 0
      predicted += calib::predict_unit(
                       k, s.unit, [&](std::string_view op, std::string_view v) { return levels(k, op, v); },
                       [&](const LocalCorrection* l, double flops, double bytes) {
                         return local_factor(*l, flops, bytes, k.local_bandwidth, k.local_prior);
                       },
                       [](std::string_view) {})
                       .ms;
    }
    sq += (predicted / m.measured_ms - 1) * (predicted / m.measured_ms - 1);
    ++n;
  }
  return n ? std::sqrt(sq / static_cast<double>(n)) : -1;
}

}  // namespace

Calibration calibrate(const std::vector<TimedSample>& samples, Granularity g, size_t min_samples, Weighting w,
                      const std::map<std::string, double>* walls, double local_bandwidth) {
  Calibration c = calibrate_fits(samples, g, min_samples, w, walls, local_bandwidth);
  if (c.models.size() >= 2 && c.models.size() <= kHeldOutModels)
    c.held_out_rel_rms = held_out_error(samples, c, g, min_samples, w, local_bandwidth);
  return c;
}

}  // namespace flopwise
