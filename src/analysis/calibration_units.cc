// src/analysis/calibration_units.cc — what a calibration's fits apply to (flopwise/calibration.h): the units
// a runtime times in a report, the keys of an op's fits and the fitted level a unit takes, the local
// correction, the weightings' names. Shared by the fit (src/measured/calibrate.cc), the calibration file
// and --predict (latency_prediction.cc).
#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "calibration_fit.h"
#include "flopwise/calibration.h"
#include "flopwise/errors.h"

namespace flopwise {

const char* granularity_name(Granularity g) { return g == Granularity::Node ? "node" : "module"; }

namespace {

// A count's value, with `at`'s dims bound where it is a formula; nullopt where it is not a number.
std::optional<double> count_value(const Count& c, const DimValues* at) {
  if (c.known) return static_cast<double>(c.v);
  if (at && c.symbolic())
    if (auto v = c.sym.substitute(*at).maybe_value()) return static_cast<double>(*v);
  return std::nullopt;
}

// A node's variant, where `at` (a sweep's point) binds the dims a product's kind depends on (cost.cc leaves
// it empty where they are formulas).
std::string_view variant_at(const NodeReport& n, const DimValues* at) {
  if (!n.variant.empty() || !at || n.calls != 1 || (n.op != "MatMul" && n.op != "Gemm") ||
      !(n.domain.empty() || n.domain == "ai.onnx") || n.outputs.empty())
    return n.variant;
  return product_kind(n.outputs[0].second, at);
}

// The bytes of a node's parameters: its params at the size of their element type (the widest, where a node
// holds several); 0 where the count is not a number.
double param_bytes_of(const NodeReport& n, const DimValues* at, double bytes) {
  if (!n.param_dtypes) return 0;
  const std::optional<double> p = count_value(n.cost.params, at);
  if (!p) return 0;
  int64_t size = 0;
  for (int t = 0; t < 32; ++t)
    if (n.param_dtypes >> t & 1) size = std::max(size, dtype_size(static_cast<DType>(t)));
  return std::min(*p * static_cast<double>(size), bytes);
}

}  // namespace

namespace calib {

// The report's units at granularity g as views of its strings, in node order (a scope's unit where its
// first node is); nodes whose counts are not numbers are counted in *unknown. A module's unit keeps its
// nodes by (op, variant) as parts where it has two kinds or more.
std::vector<PredictedUnit> units_of(const Report& r, Granularity g, int64_t* unknown, const DimValues* at) {
  std::vector<PredictedUnit> out;
  if (g == Granularity::Node) out.reserve(r.nodes.size());
  std::unordered_map<std::string_view, size_t> unit_of;  // scope -> its unit (module granularity)
  std::vector<std::pair<double, double>> top;            // the FLOPs and bytes of the node that named its op
  *unknown = 0;
  for (const NodeReport& n : r.nodes) {
    const std::optional<double> f = count_value(n.cost.flops, at), b = count_value(n.cost.memory_bytes, at);
    if (!f || !b || !n.supported) {
      ++*unknown;
      continue;
    }
    const double flops = *f, bytes = *b;
    const double calls = static_cast<double>(n.calls);
    const double params = param_bytes_of(n, at, bytes);
    const std::string_view variant = variant_at(n, at);
    if (g == Granularity::Node) {
      PredictedUnit& u = out.emplace_back();
      u.name = n.name;
      u.op = n.op;
      u.scope = n.scope;
      u.variant = variant;
      u.flops = flops;
      u.bytes = bytes;
      u.calls = calls;
      u.param_bytes = params;
      u.node = &n - r.nodes.data();
      continue;
    }
    auto [it, fresh] = unit_of.try_emplace(n.scope, out.size());
    if (fresh) {
      PredictedUnit& u = out.emplace_back();
      u.name = u.scope = n.scope;
      u.op = n.op;
      u.variant = variant;
      top.emplace_back(-1, -1);
    }
    PredictedUnit& u = out[it->second];
    u.flops += flops;
    u.bytes += bytes;
    u.param_bytes += params;
    if (flops > 0 || bytes > 0) {
      u.calls += calls;
      auto part = std::find_if(u.parts.begin(), u.parts.end(),
                               [&](const PredictedPart& p) { return p.op == n.op && p.variant == variant; });
      if (part == u.parts.end()) part = u.parts.insert(u.parts.end(), PredictedPart{n.op, variant});
      part->flops += flops;
      part->bytes += bytes;
      part->calls += calls;
      part->param_bytes += params;
    }
    auto& [tf, tb] = top[it->second];
    if (flops > tf || (flops == tf && bytes > tb)) {
      tf = flops;
      tb = bytes;
      u.op = n.op;
      u.variant = variant;
    }
  }
  for (PredictedUnit& u : out)
    if (u.parts.size() < 2) u.parts.clear();  // one kind: the unit itself
  return out;
}

}  // namespace calib

std::vector<CostUnit> cost_units(const Report& r, Granularity g, int64_t* unknown, const DimValues* at) {
  std::vector<CostUnit> out;
  for (const PredictedUnit& u : calib::units_of(r, g, unknown, at)) {
    CostUnit& c = out.emplace_back();
    c.name = u.name;
    c.op = u.op;
    c.scope = u.scope;
    c.variant = u.variant;
    c.flops = u.flops;
    c.bytes = u.bytes;
    c.calls = u.calls;
    c.param_bytes = u.param_bytes;
    for (const PredictedPart& p : u.parts)
      c.parts.push_back(
          {std::string(p.op), std::string(p.variant), p.flops, p.bytes, p.calls, p.param_bytes});
  }
  return out;
}

const char* weighting_name(Weighting w) {
  switch (w) {
    case Weighting::Relative:
      return "relative";
    case Weighting::Sqrt:
      return "sqrt";
    case Weighting::Absolute:
      return "absolute";
  }
  return "?";
}

Weighting parse_weighting(const std::string& name) {
  if (name == "relative") return Weighting::Relative;
  if (name == "sqrt") return Weighting::Sqrt;
  if (name == "absolute") return Weighting::Absolute;
  throw UsageError("--weighting: '" + name + "' is not one of relative, sqrt, absolute");
}

std::string calibration_key(std::string_view op, std::string_view variant) {
  std::string k(op);
  if (!variant.empty()) k.append("/").append(variant);
  return k;
}

std::vector<std::string> calibration_keys(std::string_view op, std::string_view variant) {
  std::vector<std::string> keys{calibration_key(op, variant)};
  while (keys.back().size() > op.size()) {
    const size_t slash = keys.back().rfind('/');
    if (slash == std::string::npos || slash < op.size()) break;
    keys.push_back(keys.back().substr(0, slash));
  }
  if ((op == "MatMul" || op == "Gemm") && (variant == "matrix" || variant == "vector"))
    keys.insert(keys.end() - 1, "product/" + std::string(variant));
  return keys;
}

namespace calib {

// A fit covers a unit whose parameter bytes per FLOP are at most twice the most its data had (a GEMM's inner
// loop no shorter than half the shortest it timed: reference BLAS's per-weight loop overhead grows as the
// loop shortens, which a fit that never saw it cannot price); a fit whose data had none covers every unit.
static bool covers(const LatencyFit& f, double param_per_flop) {
  return !(f.max_param_per_flop >= 0) || param_per_flop <= 2 * f.max_param_per_flop;
}

double param_per_flop(double flops, double param_bytes) { return flops > 0 ? param_bytes / flops : 0; }

std::vector<Fitted> fitted_levels(const Calibration& c, std::string_view op, std::string_view variant) {
  std::vector<Fitted> levels;
  const std::vector<std::string> keys = calibration_keys(op, variant);
  for (const std::string& k : keys)
    if (auto it = c.ops.find(k); it != c.ops.end()) {
      auto l = c.local.find(k);
      const bool own = k == keys.front() || k.rfind("product/", 0) == 0;
      levels.push_back({&it->first, &it->second, l != c.local.end() ? &l->second : nullptr, own});
    }
  return levels;
}

Fitted pick(const Calibration& c, const std::vector<Fitted>& levels, double param_per_flop) {
  for (const Fitted& f : levels)
    if (covers(*f.fit, param_per_flop)) return f;
  return levels.empty() ? Fitted{nullptr, &c.all, nullptr, false} : levels.front();
}

void sort_points(LocalCorrection& l) {
  std::stable_sort(l.points.begin(), l.points.end(),
                   [](const LocalPoint& a, const LocalPoint& b) { return a.log_flops < b.log_flops; });
}

}  // namespace calib

const LatencyFit* calibration_fit(const Calibration& c, std::string_view op, std::string_view variant) {
  const calib::Fitted f =
      calib::pick(c, calib::fitted_levels(c, op, variant), 0);  // no parameters per FLOP: the first level
  return f.key ? f.fit : nullptr;
}

double local_factor(const LocalCorrection& l, double flops, double bytes, double bandwidth, double prior,
                    int skip_model) {
  if (!(bandwidth > 0) || l.points.empty()) return 1;
  const double lf = std::log10(flops + 1), lb = std::log10(bytes + 1);
  const double reach = 4 * bandwidth;  // exp(-16): beyond it a point weighs nothing
  auto it = std::lower_bound(l.points.begin(), l.points.end(), lf - reach,
                             [](const LocalPoint& p, double v) { return p.log_flops < v; });
  double wsum = 0, rsum = 0;
  for (; it != l.points.end() && it->log_flops <= lf + reach; ++it) {
    if (skip_model >= 0 && it->model == skip_model) continue;
    const double df = it->log_flops - lf, db = it->log_bytes - lb;
    const double d2 = df * df + db * db;
    if (d2 > reach * reach) continue;
    const double k = std::exp(-d2 / (bandwidth * bandwidth));
    wsum += k;
    rsum += k * it->residual;
  }
  return std::exp(rsum / (wsum + prior));
}

}  // namespace flopwise
