// include/flopwise/calibration.h — predicted latency on a user's device, calibrated from their own
// measurements (--predict; the fit, flopwise calibrate, is flopwise/calibrate.h's, in the measured layer). A
// calibration fits, per op type, a node's measured time as
//     t = a * FLOPs + b * activation bytes + e * parameter bytes + c * calls + d
// (a, b, c, d, e >= 0: non-negative least squares) from units measured on one device and runtime (ONNX
// Runtime profiles node by node; LibTorch runs module by module). `calls`: the kernel calls a unit makes (a
// batched product's matrices). Parameter bytes apart from the activations': a GEMM's inner loops run once
// per weight (reference BLAS's axpy per column), not per activation. A module's unit holds nodes of several
// op types (a Swin attention: its projections, products, softmax, roll): its time is the sum of its parts'
// terms, each by its own op's fit, plus its top op's d, and the fits are solved jointly over every unit
// (block coordinate descent, each op's fit in turn against what the others leave). An op type whose kernels
// differ (a convolution's depthwise, grouped, pointwise and spatial kernels, a batched MatMul) is fitted at
// every level of its key with data ("Conv/depthwise/3x3", "Conv/depthwise", "Conv"); an op type with too
// few units, or none, takes the fit of all units together. The time fitted is by default each unit's
// fastest run (what a shared machine reproduces). The file is JSON a person can read: the device, the
// runtime, each fit with its residuals, and the models it saw.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flopwise/cost.h"

namespace flopwise {

// What a runtime's measurements time: ONNX Runtime's profile each node (a kernel's time split over the nodes
// it covers), a LibTorch run each module scope's own ops (its `self_ms`, children apart).
enum class Granularity { Node, Module };
const char* granularity_name(Granularity g);

// A unit of the report a measurement times: one node, or the nodes directly in one module scope, with their
// static FLOPs and memory bytes summed; `op` its op type (a scope's: that of its node with the most FLOPs,
// then bytes), `calls` the kernel calls its working nodes make (NodeReport::calls: a batched product's
// matrices, a grouped convolution's groups; 1 for other nodes); `param_bytes` the part of `bytes` its nodes'
// parameters take.
// A unit's nodes of one op type and variant: a module's unit of several (its `parts`) is predicted part by
// part.
struct CostPart {
  std::string op, variant;
  double flops = 0, bytes = 0, calls = 0, param_bytes = 0;
};
struct CostUnit {
  std::string name, op, scope;  // name: the node's, or the scope path
  std::string variant;          // NodeReport::variant of the node that named its op ("" for most)
  double flops = 0, bytes = 0, calls = 1, param_bytes = 0;
  // Module granularity: its nodes with FLOPs or bytes by (op, variant), first-seen order, where there are
  // two or more kinds; empty: the unit is one part, itself.
  std::vector<CostPart> parts;
};

// The report's units at granularity g; nodes whose counts are not numbers are left out, counted in
// *unknown. `at`: symbolic counts evaluated with these dims bound (a sweep's point).
using DimValues = std::vector<std::pair<std::string, int64_t>>;
std::vector<CostUnit> cost_units(const Report& r, Granularity g, int64_t* unknown,
                                 const DimValues* at = nullptr);

// t_ms = per_gflop_ms * FLOPs / 1e9 + per_mb_ms * (bytes - param bytes) / 1e6 + per_param_mb_ms * param
// bytes / 1e6 + per_call_ms * calls + per_unit_ms.
// per_unit_ms: a unit's fixed time apart from its calls (one oneDNN grouped convolution is one call, not one
// per group); fitted only where the units' calls differ (else it is per_call_ms). `terms` is the sum without
// per_unit_ms: what a part of a module's unit adds.
struct LatencyFit {
  double per_gflop_ms = 0, per_mb_ms = 0, per_call_ms = 0, per_unit_ms = 0;
  size_t samples = 0;
  double rel_rms = 0;  // root mean square of the samples' relative residuals, prediction / measured - 1
  double measured_ms = 0, predicted_ms = 0;  // the samples' sums
  double per_param_mb_ms = 0;
  // The most parameter bytes per FLOP of its data (-1: none, or not known): a unit with more than twice as
  // many (a GEMM's inner loop much shorter than any it timed) takes the next level of its key that covers it.
  double max_param_per_flop = -1;
  double terms(double flops, double bytes, double calls, double param_bytes = 0) const {
    return per_gflop_ms * flops * 1e-9 + per_mb_ms * (bytes - param_bytes) * 1e-6 +
           per_param_mb_ms * param_bytes * 1e-6 + per_call_ms * calls;
  }
  double predict(double flops, double bytes, double calls, double param_bytes = 0) const {
    return terms(flops, bytes, calls, param_bytes) + per_unit_ms;
  }
};

// How the residuals are weighted: each sample's relative error alike (`relative`: 1 / t), absolute time
// (`absolute`: the long units dominate, as they dominate a model's total), or between (`sqrt`: 1 / sqrt(t),
// the default: the best held-out totals on both runtimes of bench/README.md, "Predicted latency").
enum class Weighting { Relative, Sqrt, Absolute };
const char* weighting_name(Weighting w);
Weighting parse_weighting(const std::string& name);  // throws UsageError

struct CalibratedModel {  // a model the calibration saw, and how well the fit predicts its total
  std::string name;
  double measured_ms = 0, predicted_ms = 0;
  double wall_ms = 0;  // its measured forward (fastest or median, as the statistic); 0: not known
};

// A model's forward latency from its op sum: the runtime's own time between and around the units,
//     wall = per_op_ms * op sum + per_unit_ms * units      (>= 0; units: those with FLOPs or bytes)
// fitted over the calibration models' measured forwards (non-negative least squares, sqrt weighting).
struct WallFit {
  double per_op_ms = 0, per_unit_ms = 0;  // per_op_ms: a ratio (ms of forward per ms of op sum)
  size_t models = 0;                      // 0: no fit (the reports had no forward times)
  double rel_rms = 0;
  double predict(double op_sum_ms, double units) const { return per_op_ms * op_sum_ms + per_unit_ms * units; }
};

// A fit's local correction: where the calibration's units of one key ran faster or slower than the key's
// linear fit at some sizes (narrow convolutions, attention over few tokens), a unit near them takes their
// mean log residual, by Gaussian kernel regression in (log10 (FLOPs + 1), log10 (bytes + 1)):
//     t = fit(u) * exp(sum_i k_i r_i / (sum_i k_i + prior)),   k_i = exp(-d_i^2 / bandwidth^2)
// r_i = ln(measured / fitted) of point i (one per calibration model and configuration: a model's identical
// layers averaged), d_i its distance to u. Far from every point the sum is ~0 and the linear fit stands.
struct LocalPoint {
  double log_flops = 0, log_bytes = 0, residual = 0;
  int model = -1;  // the calibration model it came from, while calibrating (-1: read from a file)
};
struct LocalCorrection {
  std::vector<LocalPoint> points;  // sorted by log_flops
};
// The factor exp(...) above for a unit of `flops` and `bytes`; points of `skip_model` left out (>= 0: the
// calibration's own models, each predicted as if it had not been measured).
double local_factor(const LocalCorrection& l, double flops, double bytes, double bandwidth, double prior,
                    int skip_model = -1);

struct Calibration {
  std::string device, runtime, threads;  // as the measured reports say
  // Which of a unit's measured times was fitted: "fastest" (its fastest run: what a shared machine
  // reproduces, within a few % where medians move by 20 %) or "median".
  std::string statistic = "fastest";
  Granularity granularity = Granularity::Node;
  Weighting weighting = Weighting::Sqrt;
  size_t min_samples = 10;  // fewer samples of an op type: it takes the all-ops fit
  LatencyFit all;           // every sample: for an op type not fitted on its own
  std::map<std::string, LatencyFit> ops;
  int rounds = 1;  // of the joint fit (module granularity: a unit's parts depend on several fits)
  std::vector<CalibratedModel> models;
  double model_rel_rms = 0;  // root mean square of the models' relative errors (local corrections held out)
  // Where the calibration holds few models (2 to kHeldOutModels): each predicted by a calibration of the
  // others alone, its fits included (model_rel_rms holds out only the local corrections: with few models
  // the fits themselves have seen every model); the root mean square of those errors. -1: not computed.
  double held_out_rel_rms = -1;
  WallFit wall;  // the forward latency from the op sum
  // The local corrections, by the key of the fit they correct (empty: none; local_bandwidth 0: switched off).
  double local_bandwidth = 0.1, local_prior = 1;
  std::map<std::string, LocalCorrection> local;
  std::vector<std::string> sources;  // the measured files
};

std::string calibration_json(const Calibration& c);
// Reads calibration_json's output; throws InputError naming the file and what is wrong.
Calibration read_calibration(const std::string& path);

// The key of `op` with `variant` ("Conv/depthwise/3x3"); the keys a unit of it is fitted under, longest
// first: the key's prefixes down to the op ("Conv/depthwise/3x3", "Conv/depthwise", "Conv"), where a
// MatMul's or Gemm's matrix or vector products also share "product/matrix" or "product/vector" before their
// op's own key (both are one GEMM kernel: a Gemm of a kind no calibration model had takes MatMul's);
// and the fit a unit takes: its first key the calibration fitted, nullptr where none.
std::string calibration_key(std::string_view op, std::string_view variant);
std::vector<std::string> calibration_keys(std::string_view op, std::string_view variant);
const LatencyFit* calibration_fit(const Calibration& c, std::string_view op, std::string_view variant);

// --predict: each unit's time (the calibration's granularity) by its op type's fit (calibration_fit; the next
// level of its key where that fit does not cover the unit's parameter bytes per FLOP) times that key's local
// correction, or by the all-ops fit where the calibration has none for the type (listed in `unseen`); a
// module's unit of parts: each part's terms by its own op's fit, plus the unit's top op's fixed time. Summed
// per scope and for the model. Units whose counts are not numbers are not predicted
// (counted in `unpredicted`). A unit of no FLOPs and no bytes (a shape computation a runtime folds) is
// predicted at 0. A predicted unit: views of the report's strings (the prediction lives in the report it is
// of).
struct PredictedPart {
  std::string_view op, variant;
  double flops = 0, bytes = 0, calls = 0, param_bytes = 0;
};
struct PredictedUnit {
  std::string_view name, op, scope, variant;
  double flops = 0, bytes = 0, calls = 0, ms = 0, param_bytes = 0;
  std::vector<PredictedPart> parts;  // as CostUnit::parts
  int64_t node = -1;  // its node's index in Report::nodes (node granularity; -1: a scope's unit)
};

struct LatencyPrediction {
  std::string calibration;  // the file
  std::string device, runtime, statistic;
  Granularity granularity = Granularity::Node;  // the calibration's: what a unit is
  // band: total x the calibration's error on a model it did not see (held_out_rel_rms where computed, else
  // model_rel_rms), plus each extrapolated unit's time x its fit's rms residual; -1: not known (a
  // calibration of one model cannot say how far off it is on another).
  double total_ms = 0, band_ms = 0;
  // Predicted by a fit that never timed the unit's kind: the all-ops fit (an op type the calibration lacks),
  // or a shorter key than the unit's own ("Conv" for a "Conv/depthwise/3x3" unit).
  double extrapolated_ms = 0;
  std::string weak;         // why the prediction is weak, in a sentence; "": it is not
  double wall_ms = -1;      // the forward latency (WallFit); -1: the calibration has no wall fit
  int64_t timed_units = 0;  // units with FLOPs or bytes
  std::vector<PredictedUnit> units;
  std::vector<std::pair<std::string, double>> scopes;  // scope path ("" the model) -> ms, tree order
  std::vector<std::string> unseen;                     // op types predicted with the all-ops fit
  int64_t unpredicted = 0;
};

LatencyPrediction predict_latency(const Report& r, const Calibration& c, const std::string& path,
                                  const DimValues* at = nullptr);

// "3.21 ms +- 0.18 ms (each op's fastest run; calibrated on cpu, onnxruntime)": the summary line of every
// report format.
std::string prediction_summary(const LatencyPrediction& p);

}  // namespace flopwise
