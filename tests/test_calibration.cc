// tests/test_calibration.cc — latency calibration (flopwise calibrate, --predict; flopwise/calibration.h):
// the fit recovers known coefficients from synthetic timings exactly, never goes negative, a calibration file
// round-trips, a bad file is a clear error, and a prediction is the sum of its units' predictions, by scope
// too. Accuracy on measured models: bench/README.md ("Predicted latency").
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_util.h"
#include "flopwise/analyse.h"
#include "flopwise/calibrate.h"
#include "flopwise/calibration.h"
#include "flopwise/convention.h"
#include "flopwise/errors.h"
#include "ort_util.h"

using namespace fwtest;
using json = nlohmann::json;

namespace {

// A unit of op `op` whose time is exactly a * GFLOPs + b * MB + c * calls.
flopwise::TimedSample synthetic(const std::string& op, double flops, double bytes, double calls, double a,
                                double b, double c, const std::string& model = "m") {
  flopwise::TimedSample s;
  s.unit.name = op + std::to_string(flops);
  s.unit.op = op;
  s.unit.flops = flops;
  s.unit.bytes = bytes;
  s.unit.calls = calls;
  s.ms = a * flops * 1e-9 + b * bytes * 1e-6 + c * calls;
  s.model = model;
  return s;
}

// An ONNX Runtime profile's kernel time per run, read from its events: each Node event's duration in the run
// (a model_run event) it falls in, per kernel name, the median (or the fastest) over the runs after the
// first, summed.
double profile_kernel_ms(const std::string& path, bool fastest = false) {
  json doc = json::parse(slurp(path));
  const std::vector<std::pair<double, double>> runs = ort_model_runs(doc);
  REQUIRE(runs.size() >= 2);
  std::map<std::string, std::vector<double>> us;  // kernel -> its time in each measured run
  for (const auto& e : doc) {
    if (e.value("cat", "") != "Node") continue;
    const double ts = e["ts"].get<double>();
    for (size_t r = 1; r < runs.size(); ++r)
      if (ts >= runs[r].first && ts <= runs[r].second) {
        auto& v = us[e["name"].get<std::string>()];
        v.resize(runs.size() - 1, 0.0);
        v[r - 1] += e["dur"].get<double>();
      }
  }
  double total = 0;
  for (auto& [name, v] : us) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    total += fastest ? v[0] : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  return total / 1000.0;
}

std::vector<const flopwise::TimedSample*> ptrs(const std::vector<flopwise::TimedSample>& v) {
  std::vector<const flopwise::TimedSample*> p;
  for (const auto& s : v) p.push_back(&s);
  return p;
}

}  // namespace

TEST_CASE("calibration fit: known coefficients from synthetic timings, recovered exactly") {
  std::vector<flopwise::TimedSample> v;
  // FLOPs, bytes and node counts varied independently over orders of magnitude
  for (int i = 0; i < 12; ++i)
    v.push_back(
        synthetic("Conv", 1e6 * (1 + i * i * 37 % 101), 1e4 * (3 + i * 7 % 13), 1 + i % 3, 9.5, 0.02, 0.004));
  const flopwise::LatencyFit f = flopwise::fit_latency(ptrs(v));
  CHECK(f.samples == 12);
  CHECK(f.per_gflop_ms == doctest::Approx(9.5).epsilon(1e-9));
  CHECK(f.per_mb_ms == doctest::Approx(0.02).epsilon(1e-9));
  CHECK(f.per_call_ms == doctest::Approx(0.004).epsilon(1e-9));
  CHECK(f.rel_rms < 1e-9);
  CHECK(f.predicted_ms == doctest::Approx(f.measured_ms).epsilon(1e-12));

  // A time that falls with bytes cannot be fitted with b < 0: b is 0 and the rest fits what it can.
  std::vector<flopwise::TimedSample> neg;
  for (int i = 0; i < 8; ++i)
    neg.push_back(synthetic("Add", 1e5 * (1 + i), 1e5 * (1 + i % 4), 1, 5, 0, 0.01));
  for (auto& s : neg) s.ms -= 1e-4 * s.unit.bytes * 1e-6;
  const flopwise::LatencyFit g = flopwise::fit_latency(ptrs(neg));
  CHECK(g.per_mb_ms == 0.0);
  CHECK(g.per_gflop_ms >= 0.0);
  CHECK(g.per_call_ms >= 0.0);

  // A fixed time per unit beside the calls' (a grouped convolution: one oneDNN call, `calls` its groups):
  // recovered too, where the calls differ between units.
  std::vector<flopwise::TimedSample> fixed;
  for (int i = 0; i < 10; ++i) {
    fixed.push_back(
        synthetic("Conv", 1e6 * (1 + i * i % 7), 1e4 * (2 + i % 5), 8 << (i % 4), 20, 0.05, 1e-4));
    fixed.back().ms += 0.03;
  }
  const flopwise::LatencyFit d = flopwise::fit_latency(ptrs(fixed));
  CHECK(d.per_gflop_ms == doctest::Approx(20).epsilon(1e-9));
  CHECK(d.per_call_ms == doctest::Approx(1e-4).epsilon(1e-9));
  CHECK(d.per_unit_ms == doctest::Approx(0.03).epsilon(1e-9));
  CHECK(d.predict(1e6, 1e4, 8) == doctest::Approx(20e-3 + 0.05e-2 + 8e-4 + 0.03).epsilon(1e-12));
  CHECK(f.per_unit_ms < 1e-12);  // none in the data: none fitted

  // Samples with no time (a node the runtime folded away) are left out.
  v.push_back(synthetic("Conv", 1e9, 1e6, 1, 0, 0, 0));
  CHECK(flopwise::fit_latency(ptrs(v)).samples == 12);
}

TEST_CASE("calibration fit: parameter bytes apart from activation bytes, recovered exactly") {
  // t = a * GFLOPs + b * activation MB + e * parameter MB + c * calls: reference BLAS's GEMM runs an inner
  // loop per weight, so a weight byte costs other than an activation byte.
  std::vector<flopwise::TimedSample> v;
  for (int i = 0; i < 14; ++i) {
    const double params = 1e4 * (1 + i * 5 % 11), activations = 1e4 * (2 + i * 3 % 7);
    v.push_back(synthetic("MatMul", 1e6 * (1 + i * i * 13 % 29), activations + params, 1, 7, 0.03, 0.002));
    v.back().unit.param_bytes = params;
    v.back().ms += (0.4 - 0.03) * params * 1e-6;  // synthetic() charged them as activations
  }
  const flopwise::LatencyFit f = flopwise::fit_latency(ptrs(v));
  CHECK(f.per_gflop_ms == doctest::Approx(7).epsilon(1e-9));
  CHECK(f.per_mb_ms == doctest::Approx(0.03).epsilon(1e-9));
  CHECK(f.per_param_mb_ms == doctest::Approx(0.4).epsilon(1e-9));
  CHECK(f.per_call_ms == doctest::Approx(0.002).epsilon(1e-9));
  CHECK(f.rel_rms < 1e-9);
  // Reports without parameter bytes (before stop 49): parameters cost what activations cost.
  for (auto& s : v) s.unit.param_bytes = 0;
  const flopwise::LatencyFit g = flopwise::fit_latency(ptrs(v));
  CHECK(g.per_param_mb_ms == g.per_mb_ms);
}

TEST_CASE("calibrate: a module's unit of several op types, each part by its own op's fit, solved jointly") {
  // LibTorch times a module's own ops together: a Swin attention is its projections' MatMuls, its Softmax
  // and its Adds in one unit. Known coefficients per op type (a, b, c as synthetic(); the unit's fixed time
  // its top op's); Softmax never runs alone, so only the joint fit can find it.
  struct Coef {
    double a, b, c;
  };
  const std::map<std::string, Coef> coef = {
      {"MatMul", {8, 0.02, 0.003}}, {"Softmax", {0, 0.3, 0.002}}, {"Add", {0, 0.05, 0.001}}};
  auto part = [&](const std::string& op, double flops, double bytes) {
    flopwise::CostPart p{op, "", flops, bytes, 1, 0};
    const Coef& k = coef.at(op);
    return std::pair{p, k.a * flops * 1e-9 + k.b * bytes * 1e-6 + k.c};
  };
  std::vector<flopwise::TimedSample> v;
  for (int i = 0; i < 12; ++i)  // MatMuls alone
    v.push_back(synthetic("MatMul", 1e6 * (1 + i * i * 7 % 23), 1e4 * (1 + i * 5 % 9), 1, 8, 0.02, 0.003,
                          i % 2 ? "a" : "b"));
  for (int i = 0; i < 24; ++i) {  // attention: MatMuls, a Softmax, and in two of three an Add
    flopwise::TimedSample s;
    s.model = i % 3 ? "c" : "d";
    s.unit.name = s.unit.scope = "attn" + std::to_string(i);
    s.unit.op = "MatMul";
    std::vector<std::pair<flopwise::CostPart, double>> parts = {
        part("MatMul", 2e6 * (1 + i % 5), 3e4 * (1 + i * 3 % 7)), part("Softmax", 0, 1e4 * (1 + i * 7 % 11))};
    if (i % 3) parts.push_back(part("Add", 0, 2e4 * (1 + i % 4)));
    for (auto [p, ms] : parts) {
      s.unit.parts.push_back(p);
      s.unit.flops += p.flops;
      s.unit.bytes += p.bytes;
      s.unit.calls += p.calls;
      s.ms += ms;
    }
    s.unit.calls -= 1;  // synthetic's default 1 left out
    v.push_back(s);
  }
  const flopwise::Calibration c = flopwise::calibrate(v, flopwise::Granularity::Module, 10);
  for (const auto& entry : coef) {  // not a structured binding: clang 14 will not capture one in INFO
    const std::string& op = entry.first;
    const Coef& k = entry.second;
    INFO(op);
    REQUIRE(c.ops.count(op));
    const flopwise::LatencyFit& f = c.ops.at(op);
    CHECK(f.per_gflop_ms == doctest::Approx(k.a).epsilon(1e-6));
    CHECK(f.per_mb_ms == doctest::Approx(k.b).epsilon(1e-6));
    CHECK(f.per_call_ms + f.per_unit_ms == doctest::Approx(k.c).epsilon(1e-6));
  }
  // Every model's total predicted as measured (no local correction needed).
  for (const auto& m : c.models) CHECK(m.predicted_ms == doctest::Approx(m.measured_ms).epsilon(1e-6));
  // The file keeps it: read back, the same coefficients.
  const std::string path = (scratch_dir("calib_parts") / "c.json").string();
  std::ofstream(path) << flopwise::calibration_json(c);
  const flopwise::Calibration back = flopwise::read_calibration(path);
  CHECK(back.ops.at("Softmax").per_mb_ms == doctest::Approx(c.ops.at("Softmax").per_mb_ms).epsilon(1e-9));
  CHECK(back.ops.at("MatMul").per_param_mb_ms == doctest::Approx(c.ops.at("MatMul").per_param_mb_ms));
}

TEST_CASE("calibrate: an op type per fit, the all-ops fit for rare ones, models' totals, and the file") {
  std::vector<flopwise::TimedSample> v;
  for (int i = 0; i < 6; ++i)
    v.push_back(synthetic("MatMul", 1e7 * (1 + i), 1e5 * (2 + i % 3), 1, 6, 0.05, 0.001,
                          i % 2 ? "a.onnx" : "b.onnx"));
  v.push_back(synthetic("Relu", 1e5, 1e6, 1, 0, 0.1, 0.002, "a.onnx"));  // one sample: below min_samples
  const flopwise::Calibration c = flopwise::calibrate(v, flopwise::Granularity::Node, 3);
  REQUIRE(c.ops.count("MatMul"));
  CHECK(!c.ops.count("Relu"));
  CHECK(c.ops.at("MatMul").per_gflop_ms == doctest::Approx(6).epsilon(1e-9));
  CHECK(c.all.samples == 7);
  REQUIRE(c.models.size() == 2);
  double measured = 0;
  for (const auto& s : v)
    if (s.model == "a.onnx") measured += s.ms;
  CHECK(c.models[0].name == "a.onnx");
  CHECK(c.models[0].measured_ms == doctest::Approx(measured));
  CHECK_THROWS_AS(flopwise::calibrate({}, flopwise::Granularity::Node), flopwise::InputError);

  // The forward from the op sum: walls made exactly 1.25 x op sum + 0.05 ms per unit are recovered.
  {
    std::vector<flopwise::TimedSample> m;
    std::map<std::string, double> walls, sums, units;
    for (int i = 0; i < 12; ++i) {
      const std::string model = "m" + std::to_string(i % 4);
      m.push_back(synthetic("MatMul", 1e7 * (1 + i * i % 7), 1e5 * (1 + i % 5), 1, 6, 0.05, 0.001, model));
      sums[model] += m.back().ms;
      units[model] += 1;
    }
    m.push_back(synthetic("Relu", 1e5, 1e6, 1, 0, 0.1, 0.002, "m0"));
    sums["m0"] += m.back().ms;
    units["m0"] += 1;
    for (const auto& [model, sum] : sums) walls[model] = 1.25 * sum + 0.05 * units[model];
    const flopwise::Calibration wc =
        flopwise::calibrate(m, flopwise::Granularity::Node, 3, flopwise::Weighting::Sqrt, &walls);
    CHECK(wc.wall.models == 4);
    CHECK(wc.wall.per_op_ms == doctest::Approx(1.25).epsilon(1e-9));
    CHECK(wc.wall.per_unit_ms == doctest::Approx(0.05).epsilon(1e-9));
    CHECK(wc.wall.rel_rms < 1e-9);
    CHECK(flopwise::calibrate(m, flopwise::Granularity::Node, 3).wall.models == 0);  // no forwards: no fit
  }

  // Variants: each level of a key with enough samples is fitted ("Conv/depthwise/3x3", "Conv/depthwise",
  // "Conv"); a unit takes its longest fitted key. A key whose units all took no time (a runtime's folded
  // constants) is fitted as taking none; one with too few timed units among untimed ones is not fitted.
  {
    std::vector<flopwise::TimedSample> k;
    for (int i = 0; i < 4; ++i) {
      k.push_back(synthetic("Conv", 1e6 * (1 + i), 1e4 * (1 + i % 3), 1 + i % 2, 30, 0.1, 0.01));
      k.back().unit.variant = "depthwise/3x3";
      k.push_back(synthetic("Conv", 1e6 * (2 + i), 1e4 * (2 + i % 3), 1 + i % 2, 30, 0.1, 0.01));
      k.back().unit.variant = "depthwise/5x5";
      k.push_back(synthetic("Conv", 1e8 * (1 + i), 1e5 * (1 + i % 3), 1, 8, 0.02, 0.001));
      k.back().unit.variant = "pointwise";
      k.push_back(synthetic("Constant", 0, 4096 * (1 + i), 1, 0, 0, 0));
      k.push_back(synthetic("Shape", 0, 64, 1, 0, 0, 0));
    }
    k.push_back(synthetic("Shape", 0, 64, 1, 0, 0, 0.003));
    const flopwise::Calibration kc = flopwise::calibrate(k, flopwise::Granularity::Node, 4);
    CHECK(kc.ops.count("Conv/depthwise/3x3"));
    CHECK(kc.ops.count("Conv/depthwise/5x5"));
    REQUIRE(kc.ops.count("Conv/depthwise"));
    CHECK(kc.ops.at("Conv/depthwise").samples == 8);
    CHECK(kc.ops.at("Conv/depthwise").per_gflop_ms == doctest::Approx(30).epsilon(1e-9));
    CHECK(kc.ops.at("Conv").samples == 12);
    CHECK(kc.ops.at("Conv/pointwise").per_gflop_ms == doctest::Approx(8).epsilon(1e-9));
    REQUIRE(kc.ops.count("Constant"));
    CHECK(kc.ops.at("Constant").samples == 4);
    CHECK(kc.ops.at("Constant").predict(0, 1e6, 1) == 0.0);
    CHECK(!kc.ops.count("Shape"));  // 1 timed unit of 5: the all-ops fit
    CHECK(flopwise::calibration_fit(kc, "Conv", "depthwise/7x7") == &kc.ops.at("Conv/depthwise"));
    CHECK(flopwise::calibration_fit(kc, "Conv", "grouped") == &kc.ops.at("Conv"));
    CHECK(flopwise::calibration_fit(kc, "Conv", "") == &kc.ops.at("Conv"));
    CHECK(flopwise::calibration_fit(kc, "Relu", "") == nullptr);
    CHECK(flopwise::calibration_key("Conv", "pointwise") == "Conv/pointwise");
    using Keys = std::vector<std::string>;
    CHECK(flopwise::calibration_keys("Conv", "depthwise/3x3") ==
          Keys{"Conv/depthwise/3x3", "Conv/depthwise", "Conv"});
    CHECK(flopwise::calibration_keys("Gemm", "matrix") == Keys{"Gemm/matrix", "product/matrix", "Gemm"});
    CHECK(flopwise::calibration_keys("MatMul", "batched") == Keys{"MatMul/batched", "MatMul"});
    CHECK(flopwise::calibration_keys("Relu", "") == Keys{"Relu"});
  }

  auto dir = scratch_dir("calibration");
  const std::string path = (dir / "c.json").string();
  { std::ofstream(path) << flopwise::calibration_json(c); }
  const flopwise::Calibration r = flopwise::read_calibration(path);
  CHECK(r.granularity == c.granularity);
  CHECK(r.min_samples == c.min_samples);
  CHECK(r.model_rel_rms == doctest::Approx(c.model_rel_rms));
  REQUIRE(r.ops.size() == c.ops.size());
  for (const auto& [op, f] : c.ops) {
    const std::string& op_ = op;  // clang 14 cannot capture a structured binding
    CAPTURE(op_);
    CHECK(r.ops.at(op).per_gflop_ms == doctest::Approx(f.per_gflop_ms).epsilon(1e-9));
    CHECK(r.ops.at(op).per_mb_ms == doctest::Approx(f.per_mb_ms).epsilon(1e-9));
    CHECK(r.ops.at(op).per_call_ms == doctest::Approx(f.per_call_ms).epsilon(1e-9));
    CHECK(r.ops.at(op).per_unit_ms == doctest::Approx(f.per_unit_ms).epsilon(1e-9));
    CHECK(r.ops.at(op).per_param_mb_ms == doctest::Approx(f.per_param_mb_ms).epsilon(1e-9));
    CHECK(r.ops.at(op).max_param_per_flop == doctest::Approx(f.max_param_per_flop).epsilon(1e-9));
    CHECK(r.ops.at(op).samples == f.samples);
  }
  CHECK(r.all.per_call_ms == doctest::Approx(c.all.per_call_ms).epsilon(1e-9));
  CHECK(r.models.size() == 2);
  // A file written before stop 49 (no parameter bytes, coverage or rounds): parameter bytes cost what other
  // bytes cost, and every fit covers every unit.
  {
    json old = json::parse(flopwise::calibration_json(c));
    old.erase("rounds");
    for (auto& f : old["ops"]) {
      f.erase("per_param_mb_ms");
      f.erase("max_param_per_flop");
    }
    old["all_ops"].erase("per_param_mb_ms");
    old["all_ops"].erase("max_param_per_flop");
    std::ofstream(path, std::ios::trunc) << old.dump();
    const flopwise::Calibration o = flopwise::read_calibration(path);
    CHECK(o.rounds == 1);
    for (const auto& entry : o.ops) {
      CHECK(entry.second.per_param_mb_ms == entry.second.per_mb_ms);
      CHECK(entry.second.max_param_per_flop == -1);
    }
    CHECK(o.all.per_param_mb_ms == o.all.per_mb_ms);
  }

  // Bad files: one clear error each.
  std::string text = flopwise::calibration_json(c);
  for (const std::string& bad :
       {text.substr(0, text.size() / 2), std::string("{\"schema\": \"other\"}"), std::string("[1, 2]")}) {
    std::ofstream(path, std::ios::trunc) << bad;
    CHECK_THROWS_AS(flopwise::read_calibration(path), flopwise::InputError);
  }
  std::string negative = text;
  negative.replace(negative.find("\"per_mb_ms\": ") + 13, 1, "-");
  std::ofstream(path, std::ios::trunc) << negative;
  CHECK_THROWS_AS(flopwise::read_calibration(path), flopwise::InputError);
  CHECK_THROWS_AS(flopwise::read_calibration((dir / "absent.json").string()), flopwise::InputError);
}

TEST_CASE("local correction: the kernel formula by hand, a model never corrects itself, the file") {
  // Points at (log10 (FLOPs + 1), log10 (bytes + 1)); a unit of 1e6 - 1 FLOPs and 1e4 - 1 bytes sits at (6,
  // 4).
  flopwise::LocalCorrection l;
  l.points = {{6.0, 4.0, std::log(2.0), 0}, {6.1, 4.0, std::log(2.0), 1}, {9.0, 7.0, -1.0, 1}};
  const double k2 = std::exp(-1.0);  // d = 0.1 = the bandwidth; the third point is beyond 4 bandwidths
  CHECK(flopwise::local_factor(l, 1e6 - 1, 1e4 - 1, 0.1, 1) ==
        doctest::Approx(std::exp((1 + k2) * std::log(2.0) / (1 + k2 + 1))).epsilon(1e-12));
  CHECK(flopwise::local_factor(l, 1e6 - 1, 1e4 - 1, 0.1, 1, /*skip_model=*/0) ==
        doctest::Approx(std::exp(k2 * std::log(2.0) / (k2 + 1))).epsilon(1e-12));
  CHECK(flopwise::local_factor(l, 1e3, 1e2, 0.1, 1) == 1.0);          // no point near: the linear fit stands
  CHECK(flopwise::local_factor(l, 1e6 - 1, 1e4 - 1, 0.0, 1) == 1.0);  // switched off

  // Times of one op type exactly 10 ms/GFLOP, except the units of model "b" near 1e8 FLOPs, which take twice
  // that: the fit's residuals there become points; a new unit near them is priced up, one far from them is
  // not. Model "a" has no unit within 4 kernel widths of b's.
  std::vector<flopwise::TimedSample> v;
  for (double flops : {1e5, 3e5, 1e6, 3e6, 1e9, 3e9, 1e10, 3e10})
    v.push_back(synthetic("Conv", flops, 0, 0, 10, 0, 0, "a"));
  for (int i = 0; i < 4; ++i) {
    v.push_back(synthetic("Conv", 1e8 * (1 + 0.01 * i), 0, 0, 10, 0, 0, "b"));
    v.back().ms *= 2;
  }
  const flopwise::Calibration c = flopwise::calibrate(v, flopwise::Granularity::Node, 3);
  REQUIRE(c.local.count("Conv"));
  CHECK(c.local.at("Conv").points.size() == 12);  // one per model and configuration
  const flopwise::LatencyFit& f = c.ops.at("Conv");
  const double near =
      flopwise::local_factor(c.local.at("Conv"), 1.005e8, 0, c.local_bandwidth, c.local_prior);
  CHECK(near > 1.3);  // four points of residual ~ln 2 (less the fit's own tilt) around it
  CHECK(flopwise::local_factor(c.local.at("Conv"), 3e12, 0, c.local_bandwidth, c.local_prior) == 1.0);
  // Each model's total is predicted without its own points: "b" has no other model's point near its units,
  // so its prediction is the linear fit's alone.
  REQUIRE(c.models.size() == 2);
  CHECK(c.models[1].name == "b");
  double linear_b = 0;
  for (const auto& s : v)
    if (s.model == "b") linear_b += f.predict(s.unit.flops, s.unit.bytes, s.unit.calls);
  CHECK(c.models[1].predicted_ms == doctest::Approx(linear_b).epsilon(1e-9));
  CHECK(flopwise::calibrate(v, flopwise::Granularity::Node, 3, flopwise::Weighting::Sqrt, nullptr, 0)
            .local.empty());

  // The file keeps the points (4 decimals) and the kernel's settings; a bad point is a clear error.
  auto dir = scratch_dir("calibration_local");
  const std::string path = (dir / "c.json").string();
  const std::string text = flopwise::calibration_json(c);
  { std::ofstream(path) << text; }
  const flopwise::Calibration r = flopwise::read_calibration(path);
  CHECK(r.local_bandwidth == c.local_bandwidth);
  CHECK(r.local_prior == c.local_prior);
  REQUIRE(r.local.count("Conv"));
  CHECK(flopwise::local_factor(r.local.at("Conv"), 1.005e8, 0, r.local_bandwidth, r.local_prior) ==
        doctest::Approx(near).epsilon(1e-3));
  const size_t at = text.find("\"points\": {");
  REQUIRE(at != std::string::npos);
  for (const std::string& bad_point :
       {std::string("[1, 2]"), std::string("[6, 4, 1e9]"), std::string("\"x\"")}) {
    std::string bad = text;
    const size_t open = bad.find('[', bad.find('[', at) + 1);  // the first point of the first key
    bad.replace(open, bad.find(']', open) - open + 1, bad_point);
    std::ofstream(path, std::ios::trunc) << bad;
    CHECK_THROWS_AS(flopwise::read_calibration(path), flopwise::InputError);
  }
}

TEST_CASE("--predict: the total and every scope are the sums of their units' predictions") {
  flopwise::Pins pins;
  pins.dims.emplace_back("batch", 1);
  flopwise::Analysis a =
      flopwise::analyse(model_path("resnet18.onnx"), pins, flopwise::find_convention("default"));
  flopwise::Calibration c;
  c.device = "test";
  c.runtime = "synthetic";
  c.model_rel_rms = 0.1;
  c.all = {1, 0.5, 0.01, 0, 10, 0, 0, 0, 0.25};  // the last: ms per MB of parameters
  c.ops["Conv"] = {10, 0.02, 0.004, 0, 10, 0, 0, 0, 0.03};
  c.ops["Conv/spatial/large/3x3"] = {20, 0.01, 0.002, 0, 10, 0, 0, 0, 0.005};  // 3x3 convolutions apart
  const flopwise::LatencyPrediction p = flopwise::predict_latency(a.report, c, "c.json");
  CHECK(p.unpredicted == 0);
  REQUIRE(p.units.size() == a.report.nodes.size());
  double sum = 0, layer1 = 0;
  int three_by_three = 0;
  for (size_t i = 0; i < p.units.size(); ++i) {
    const flopwise::PredictedUnit& u = p.units[i];
    const double ms = u.ms;
    const flopwise::NodeReport& n = a.report.nodes[i];
    CHECK(u.name == n.name);
    three_by_three += u.variant == "spatial/large/3x3";
    const auto& f = u.op != "Conv"                     ? c.all
                    : u.variant == "spatial/large/3x3" ? c.ops["Conv/spatial/large/3x3"]
                                                       : c.ops["Conv"];
    // float32 parameters: 4 bytes each of the node's memory bytes
    const double want =
        u.flops > 0 || u.bytes > 0
            ? f.predict(static_cast<double>(n.cost.flops.v), static_cast<double>(n.cost.memory_bytes.v),
                        static_cast<double>(n.calls), 4.0 * static_cast<double>(n.cost.params.v))
            : 0.0;
    CHECK(ms == doctest::Approx(want));
    sum += ms;
    if (u.scope.rfind("layer1", 0) == 0) layer1 += ms;
  }
  CHECK(three_by_three == 16);  // ResNet-18's blocks: 8 x 2 3x3 convolutions; its stem is 7x7
  CHECK(p.total_ms == doctest::Approx(sum));
  CHECK(p.band_ms == doctest::Approx(0.1 * sum));
  REQUIRE(!p.scopes.empty());
  CHECK(p.scopes[0].first.empty());
  CHECK(p.scopes[0].second == doctest::Approx(sum));
  bool found = false;
  for (const auto& [name, ms] : p.scopes)
    if (name == "layer1") {
      found = true;
      CHECK(ms == doctest::Approx(layer1));
    }
  CHECK(found);
  // Every op type but Conv took the all-ops fit, and says so.
  CHECK(std::find(p.unseen.begin(), p.unseen.end(), "Relu") != p.unseen.end());
  CHECK(std::find(p.unseen.begin(), p.unseen.end(), "Conv") == p.unseen.end());

  // Module granularity: one unit per scope holding nodes, its time each node's terms by the node's own fit
  // (a block's residual Add and its Relu by theirs) plus the fixed time of its top node's fit (the most
  // FLOPs, then bytes).
  c.granularity = flopwise::Granularity::Module;
  c.all.per_unit_ms = 0.002;
  c.ops["Conv"].per_unit_ms = 0.005;
  c.ops["MatMul"] = {30, 0.01, 0.003, 0.004, 10, 0, 0, 0, 0.02};
  flopwise::Pins bert_pins;
  bert_pins.dims = {{"batch", 1}, {"seq", 16}};
  const flopwise::Analysis bert =
      flopwise::analyse(model_path("bert.onnx"), bert_pins, flopwise::find_convention("default"));
  int with_parts = 0;
  for (const flopwise::Report* r : std::vector<const flopwise::Report*>{&a.report, &bert.report}) {
    const flopwise::LatencyPrediction m = flopwise::predict_latency(*r, c, "c.json");
    std::map<std::string, double> by_scope;
    std::map<std::string, std::pair<double, double>> top;  // scope -> the top node's FLOPs, bytes
    std::map<std::string, const flopwise::LatencyFit*> top_fit;
    for (const auto& n : r->nodes) {
      const auto& f = n.op == "MatMul"                   ? c.ops["MatMul"]
                      : n.op != "Conv"                   ? c.all
                      : n.variant == "spatial/large/3x3" ? c.ops["Conv/spatial/large/3x3"]
                                                         : c.ops["Conv"];
      const double fl = static_cast<double>(n.cost.flops.v), by = static_cast<double>(n.cost.memory_bytes.v);
      const std::string scope(n.scope);
      auto [t, fresh] = top.try_emplace(scope, -1.0, -1.0);
      if (fresh || fl > t->second.first || (fl == t->second.first && by > t->second.second)) {
        t->second = {fl, by};
        top_fit[scope] = &f;
      }
      if (fl > 0 || by > 0)
        by_scope[scope] +=
            f.terms(fl, by, static_cast<double>(n.calls), 4.0 * static_cast<double>(n.cost.params.v));
    }
    CHECK(m.units.size() == top.size());
    double msum = 0, flops = 0;
    for (const auto& u : m.units) {
      const std::string scope(u.scope);
      CHECK(u.ms == doctest::Approx(by_scope[scope] + top_fit[scope]->per_unit_ms));
      with_parts += !u.parts.empty();
      msum += u.ms, flops += u.flops;
    }
    CHECK(m.total_ms == doctest::Approx(msum));
    CHECK(flops == doctest::Approx(static_cast<double>(r->totals.flops.v)));
  }
  CHECK(with_parts > 0);  // BERT's attention: MatMuls, Softmax, Add, Div in one scope
}

TEST_CASE(
    "flopwise calibrate on the bundled models' ONNX Runtime profiles, then --predict and diff --predict") {
  auto dir = scratch_dir("calibrate_cli");
  const std::string ort = std::string(FLOPWISE_SOURCE_DIR) + "/models/ort/";
  struct M {
    std::string name, dims;
  };
  const std::vector<M> models = {{"resnet18", "--dim batch=1"},
                                 {"mobilenet_v2", "--dim batch=1"},
                                 {"bert", "--dim batch=1 --dim seq=64"},
                                 {"gpt2", "--dim batch=1 --dim seq=64"}};
  std::string runs;
  for (const auto& m : models) {
    const std::string run = (dir / (m.name + ".run.json")).string();
    CliRun r = run_cli("run " + model_path(m.name + ".onnx") + " --profile " + ort + m.name +
                           ".disabled.json --format json -o " + run,
                       dir);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    json doc = json::parse(slurp(run));
    // Every kernel's time is on the units: their sum is, from the profile itself, each kernel's median over
    // the measured runs (the first is ORT's warm-up), summed.
    double ms = 0, min_ms = 0;
    for (const auto& u : doc["measured_units"]["units"]) {
      ms += u["ms"].get<double>();
      min_ms += u["min_ms"].get<double>();
    }
    CHECK(doc["measured_units"]["granularity"] == "node");
    CHECK(ms == doctest::Approx(profile_kernel_ms(ort + m.name + ".disabled.json")).epsilon(1e-9));
    CHECK(min_ms == doctest::Approx(profile_kernel_ms(ort + m.name + ".disabled.json", true)).epsilon(1e-9));
    runs += " " + run;
  }
  const std::string calib = (dir / "cpu.calib.json").string();
  CliRun c = run_cli("calibrate" + runs + " -o " + calib, dir);
  REQUIRE_MESSAGE(c.code == 0, c.err);
  CHECK(c.out.find("Conv") != std::string::npos);
  json cj = json::parse(slurp(calib));
  CHECK(cj["schema"] == "flopwise.calibration/1");
  CHECK(cj["runtime"] == "onnxruntime");
  CHECK(cj["models"].size() == models.size());
  CHECK(cj["statistic"] == "fastest");
  // Each model's forward: its fastest measured model_run in the ORT profile itself.
  for (const auto& mj : cj["models"]) {
    const std::string name = mj["name"].get<std::string>();
    const std::string stem = name.substr(name.rfind('/') + 1, name.size() - name.rfind('/') - 6);
    CAPTURE(stem);
    json prof = json::parse(slurp(ort + stem + ".disabled.json"));
    const auto runs = ort_model_runs(prof);
    double fastest = 1e300;  // of the measured runs (the first is ORT's warm-up)
    for (size_t r = 1; r < runs.size(); ++r)
      fastest = std::min(fastest, (runs[r].second - runs[r].first) / 1000.0);
    CHECK(mj["wall_ms"].get<double>() == doctest::Approx(fastest).epsilon(1e-9));
  }
  REQUIRE(cj.contains("wall"));
  CHECK(cj["wall"]["models"] == models.size());
  // Convolutions are fitted by kind where there are 10 samples or more. By the architectures (torchvision):
  // MobileNetV2 has 17 depthwise 3x3 convolutions (one per inverted residual block), 34 pointwise (16
  // expansions, 17 projections, the last 1x1 to 1280) and a 3x3 stem; ResNet-18 has 16 3x3 convolutions in
  // its blocks, 3 1x1 downsamples and a 7x7 stem.
  CHECK(cj["ops"]["Conv/depthwise/3x3"]["samples"] == 17);
  CHECK(cj["ops"]["Conv/depthwise"]["samples"] == 17);
  CHECK(cj["ops"]["Conv/pointwise"]["samples"] == 37);
  CHECK(cj["ops"]["Conv/spatial/large/3x3"]["samples"] == 17);
  CHECK(cj["ops"]["Conv/spatial"]["samples"] == 18);
  CHECK(cj["ops"]["Conv"]["samples"] == 72);
  CHECK_FALSE(cj["ops"].contains("Conv/spatial/7x7"));  // one sample: it takes Conv/spatial's fit

  // Repeated reports of one model are pooled: each unit's fastest time over them (here a second report of
  // ResNet-18 with every unit twice as fast), or with --statistic median the median of the reports' medians.
  {
    json twice = json::parse(slurp(dir / "resnet18.run.json"));
    double half = 0, whole = 0;
    for (auto& u : twice["measured_units"]["units"]) {
      whole += u["ms"].get<double>();
      u["min_ms"] = u["min_ms"].get<double>() / 2;
      u["ms"] = u["ms"].get<double>() / 2;
      half += u["min_ms"].get<double>();
    }
    std::ofstream(dir / "resnet18.fast.run.json") << twice.dump();
    const std::string pair =
        (dir / "resnet18.run.json").string() + " " + (dir / "resnet18.fast.run.json").string();
    REQUIRE(run_cli("calibrate " + pair + " -o " + (dir / "pooled.json").string(), dir).code == 0);
    json pooled = json::parse(slurp(dir / "pooled.json"));
    REQUIRE(pooled["models"].size() == 1);
    CHECK(pooled["models"][0]["measured_ms"].get<double>() == doctest::Approx(half));
    REQUIRE(run_cli("calibrate " + pair + " " + (dir / "resnet18.run.json").string() +
                        " --statistic median -o " + (dir / "pooled.json").string(),
                    dir)
                .code == 0);
    pooled = json::parse(slurp(dir / "pooled.json"));
    CHECK(pooled["statistic"] == "median");
    CHECK(pooled["models"][0]["measured_ms"].get<double>() == doctest::Approx(whole));
  }

  CliRun p =
      run_cli(model_path("resnet18.onnx") + " --dim batch=1 --predict " + calib + " --format json", dir);
  REQUIRE_MESSAGE(p.code == 0, p.err);
  const json predicted_report = json::parse(p.out);
  json pr = predicted_report["prediction"];
  // node granularity (ORT): each node's prediction is its `predicted_ms` in `nodes`, no units array
  CHECK(pr["granularity"] == "node");
  CHECK_FALSE(pr.contains("units"));
  double sum = 0;
  int predicted_nodes = 0, depthwise = 0;
  for (const auto& n : predicted_report["nodes"])
    if (n.contains("predicted_ms")) {
      sum += n["predicted_ms"].get<double>();
      ++predicted_nodes;
    }
  CHECK(predicted_nodes > 0);
  CHECK(pr["total_ms"].get<double>() == doctest::Approx(sum));
  CHECK(pr["total_ms"].get<double>() > 0);
  const std::string mobilenet_cmd = model_path("mobilenet_v2.onnx") + " --dim batch=1 --predict " + calib;
  const json mobilenet = json::parse(run_cli(mobilenet_cmd + " --format json", dir).out);
  for (const auto& n : mobilenet["nodes"]) depthwise += n.value("variant", "") == "depthwise/3x3";
  // torchvision's MobileNetV2: one depthwise 3x3 convolution per inverted residual block
  CHECK(depthwise == 17);
  // module granularity (a LibTorch calibration): one unit per scope, in prediction.units
  {
    json mod = json::parse(slurp(calib));
    mod["granularity"] = "module";
    std::ofstream(dir / "module.json") << mod.dump();
    CliRun pm = run_cli(model_path("resnet18.onnx") + " --dim batch=1 --predict " +
                            (dir / "module.json").string() + " --format json",
                        dir);
    REQUIRE_MESSAGE(pm.code == 0, pm.err);
    const json module_report = json::parse(pm.out);
    const json& prm = module_report["prediction"];
    CHECK(prm["granularity"] == "module");
    REQUIRE(prm.contains("units"));
    double msum = 0;
    std::set<std::string> names;
    for (const auto& u : prm["units"]) {
      msum += u["ms"].get<double>();
      names.insert(u["name"].get<std::string>());
    }
    CHECK(names.size() == prm["units"].size());  // one per scope
    CHECK(names.count("layer1.0"));
    CHECK(prm["total_ms"].get<double>() == doctest::Approx(msum));
    for (const auto& n : module_report["nodes"]) CHECK_FALSE(n.contains("predicted_ms"));
  }
  {  // the forward: the wall fit of the file, on the total and the units with FLOPs or bytes
    json nodes =
        json::parse(run_cli(model_path("resnet18.onnx") + " --dim batch=1 --format json", dir).out)["nodes"];
    double timed = 0;
    for (const auto& n : nodes)
      timed += (n["flops"].is_number() && n["flops"].get<double>() > 0) ||
               (n["memory_bytes"].is_number() && n["memory_bytes"].get<double>() > 0);
    CHECK(timed > 0);
    CHECK(pr["wall_ms"].get<double>() ==
          doctest::Approx(cj["wall"]["per_op_ms"].get<double>() * pr["total_ms"].get<double>() +
                          cj["wall"]["per_unit_ms"].get<double>() * timed)
              .epsilon(1e-6));
  }
  CHECK(pr["scopes"][0]["ms"].get<double>() == doctest::Approx(sum));
  CHECK(run_cli(model_path("resnet18.onnx") + " --dim batch=1 --predict " + calib, dir)
            .out.find("predicted latency") != std::string::npos);

  CliRun d = run_cli("diff " + model_path("resnet18.onnx") + " " + model_path("resnet34.onnx") +
                         " --dim batch=1 --predict " + calib + " --format json",
                     dir);
  REQUIRE_MESSAGE(d.code == 0, d.err);
  json dj = json::parse(d.out);
  CHECK(dj["delta"]["predicted_latency_us"].get<int64_t>() ==
        dj["b"]["predicted_latency_us"].get<int64_t>() - dj["a"]["predicted_latency_us"].get<int64_t>());
  CHECK(dj["b"]["predicted_latency_us"].get<int64_t>() > dj["a"]["predicted_latency_us"].get<int64_t>());
  CHECK(dj["delta"]["predicted_forward_us"].get<int64_t>() ==
        dj["b"]["predicted_forward_us"].get<int64_t>() - dj["a"]["predicted_forward_us"].get<int64_t>());
  CHECK(dj["b"]["predicted_forward_us"].get<int64_t>() > 0);
  {  // the text diff: both rows in ms, the delta B - A
    CliRun dt = run_cli("diff " + model_path("resnet18.onnx") + " " + model_path("resnet34.onnx") +
                            " --dim batch=1 --predict " + calib,
                        dir);
    REQUIRE_MESSAGE(dt.code == 0, dt.err);
    char want[64];
    std::snprintf(want, sizeof want, "%+.3f ms", dj["delta"]["predicted_latency_us"].get<double>() / 1e3);
    CHECK(dt.out.find("predicted_latency") != std::string::npos);
    CHECK(dt.out.find("predicted_forward") != std::string::npos);
    CHECK(dt.out.find(want) != std::string::npos);
  }

  // --sweep: each point's prediction from the units' formulas, as --predict gives it with the dims bound.
  CliRun sw = run_cli(
      model_path("bert.onnx") + " --dim batch=1 --sweep seq=16,64 --predict " + calib + " --format json",
      dir);
  REQUIRE_MESSAGE(sw.code == 0, sw.err);
  json rows = json::parse(sw.out)["rows"];
  REQUIRE(rows.size() == 2);
  for (const auto& row : rows) {
    const int64_t seq = row["point"]["seq"].get<int64_t>();
    CAPTURE(seq);
    json at =
        json::parse(run_cli(model_path("bert.onnx") + " --dim batch=1 --dim seq=" + std::to_string(seq) +
                                " --predict " + calib + " --format json",
                            dir)
                        .out);
    CHECK(row["predicted_ms"].get<double>() ==
          doctest::Approx(at["prediction"]["total_ms"].get<double>()).epsilon(1e-6));  // JSON: 9 digits
  }
  CHECK(rows[1]["predicted_ms"].get<double>() > rows[0]["predicted_ms"].get<double>());

  // Bad input: one line, exit 2.
  const std::string report = (dir / "report.json").string();
  REQUIRE(run_cli(model_path("resnet18.onnx") + " --dim batch=1 --format json -o " + report, dir).code == 0);
  CliRun bad = run_cli("calibrate " + report, dir);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("not a run report") != std::string::npos);
  CHECK(run_cli(model_path("resnet18.onnx") + " --predict " + report, dir).code == 2);
  std::ofstream(dir / "cut.json") << slurp(calib).substr(0, 100);
  CHECK(run_cli(model_path("resnet18.onnx") + " --predict " + (dir / "cut.json").string(), dir).code == 2);
  CHECK(run_cli("calibrate " + (dir / "cut.json").string(), dir).code == 2);
  // A run report whose members have the wrong types: one line, exit 2, never an internal error.
  json hostile = json::parse(slurp(dir / "resnet18.run.json"));
  hostile["measured_units"]["units"][0]["name"] = 5;
  std::ofstream(dir / "hostile.json") << hostile.dump();
  CliRun h = run_cli("calibrate " + (dir / "hostile.json").string(), dir);
  CHECK(h.code == 2);
  CHECK(h.err.find("not a run report") != std::string::npos);
  for (const char* key : {"min_ms", "ms"}) {
    hostile = json::parse(slurp(dir / "resnet18.run.json"));
    hostile["measured_units"]["units"][0][key] = -1;
    std::ofstream(dir / "hostile.json", std::ios::trunc) << hostile.dump();
    CliRun neg = run_cli("calibrate " + (dir / "hostile.json").string() +
                             (std::string(key) == "ms" ? " --statistic median" : ""),
                         dir);
    CHECK(neg.code == 2);
    CHECK(neg.err.find("negative") != std::string::npos);
  }
  // A unit's parts that do not sum to it, or are not a list: the file was edited; one line, exit 2.
  for (int bad_parts = 0; bad_parts < 2; ++bad_parts) {
    hostile = json::parse(slurp(dir / "resnet18.run.json"));
    json& u0 = hostile["measured_units"]["units"][0];
    u0["parts"] = bad_parts ? json("Conv")
                            : json::array({{{"op", "Conv"}, {"flops", 1}, {"bytes", 1}, {"calls", 1}},
                                           {{"op", "Relu"}, {"flops", 1}, {"bytes", 1}, {"calls", 1}}});
    std::ofstream(dir / "hostile.json", std::ios::trunc) << hostile.dump();
    CliRun parts = run_cli("calibrate " + (dir / "hostile.json").string(), dir);
    CHECK(parts.code == 2);
    CHECK(parts.err.find(bad_parts ? "not an array" : "do not sum") != std::string::npos);
  }
  hostile = json::parse(slurp(dir / "resnet18.run.json"));
  for (auto& u : hostile["measured_units"]["units"]) u.erase("min_ms");
  std::ofstream(dir / "hostile.json", std::ios::trunc) << hostile.dump();
  CliRun old = run_cli("calibrate " + (dir / "hostile.json").string(), dir);
  CHECK(old.code == 2);
  CHECK(old.err.find("--statistic median") != std::string::npos);
  json bad_calib = json::parse(slurp(calib));
  bad_calib["models"][0]["name"] = json::array();
  std::ofstream(dir / "bad_calib.json") << bad_calib.dump();
  CHECK(run_cli(model_path("resnet18.onnx") + " --dim batch=1 --predict " + (dir / "bad_calib.json").string(),
                dir)
            .code == 2);
}

// A user with only a few profiles of their own (issue 52 item 6; bench/README.md "Predicted latency with few
// models"): the bundled ONNX Runtime profiles of BERT-6 and GPT-2 calibrate, BERT and ResNet-18 are
// predicted. The measured figures are each profile's own (its kernels' fastest runs, summed).
TEST_CASE("--predict with few models: the band from models held out, weak where no fit timed the kinds") {
  auto dir = scratch_dir("calibrate_few");
  const std::string ort = std::string(FLOPWISE_SOURCE_DIR) + "/models/ort/";
  auto run_report = [&](const std::string& name) {
    const std::string run = (dir / (name + ".run.json")).string();
    CliRun r = run_cli("run " + model_path(name + ".onnx") + " --profile " + ort + name +
                           ".disabled.json --format json -o " + run,
                       dir);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    return run;
  };
  auto calibrate = [&](const std::string& runs, const std::string& out) {
    CliRun c = run_cli("calibrate " + runs + " -o " + (dir / out).string(), dir);
    REQUIRE_MESSAGE(c.code == 0, c.err);
    return json::parse(slurp(dir / out));
  };
  auto predict = [&](const std::string& model, const std::string& dims, const std::string& calib) {
    CliRun p = run_cli(
        model_path(model + ".onnx") + " " + dims + " --predict " + (dir / calib).string() + " --format json",
        dir);
    REQUIRE_MESSAGE(p.code == 0, p.err);
    return json::parse(p.out)["prediction"];
  };
  const std::string text = "--dim batch=1 --dim seq=64";  // the profiles' inputs (models/NAME.expect.json)
  const std::string bert6 = run_report("bert6"), gpt2 = run_report("gpt2");
  const json two = calibrate(bert6 + " " + gpt2, "two.json");
  calibrate(bert6, "bert6.json");
  calibrate(gpt2, "gpt2.json");
  // Held out: each of the two predicted by a calibration of the other alone (to 0.1 %: calibrate prices the
  // units as the run reports recorded them, --predict as the static analysis gives them).
  const double e_gpt2 = predict("gpt2", text, "bert6.json")["total_ms"].get<double>() /
                            profile_kernel_ms(ort + "gpt2.disabled.json", true) -
                        1;
  const double e_bert6 = predict("bert6", text, "gpt2.json")["total_ms"].get<double>() /
                             profile_kernel_ms(ort + "bert6.disabled.json", true) -
                         1;
  REQUIRE(two.contains("held_out_rel_rms"));
  CHECK(two["held_out_rel_rms"].get<double>() ==
        doctest::Approx(std::sqrt((e_gpt2 * e_gpt2 + e_bert6 * e_bert6) / 2)).epsilon(1e-3));
  // BERT, of the kinds the two timed: not weak, and its measured time inside the band.
  const json bert = predict("bert", text, "two.json");
  const double measured = profile_kernel_ms(ort + "bert.disabled.json", true);
  CHECK(bert["weak"].is_null());
  CHECK(bert["extrapolated_ms"].get<double>() < 0.25 * bert["total_ms"].get<double>());
  CHECK(std::abs(bert["total_ms"].get<double>() - measured) <= bert["band_ms"].get<double>());
  // ResNet-18: convolutions neither language model ran, priced by the all-ops fit: weak, and it says why.
  const json resnet = predict("resnet18", "--dim batch=1", "two.json");
  REQUIRE(resnet["weak"].is_string());
  CHECK(resnet["weak"].get<std::string>().find("never timed") != std::string::npos);
  CHECK(resnet["extrapolated_ms"].get<double>() > 0.25 * resnet["total_ms"].get<double>());
  // One model: its error on another is not known, so neither is the band.
  const json one = predict("bert", text, "gpt2.json");
  CHECK(one["band_ms"].is_null());
  CHECK(one["weak"].get<std::string>().find("one model") != std::string::npos);
  CliRun t =
      run_cli(model_path("bert.onnx") + " " + text + " --predict " + (dir / "gpt2.json").string(), dir);
  CHECK(t.out.find("band not known") != std::string::npos);
}
