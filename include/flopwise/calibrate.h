// include/flopwise/calibrate.h — the calibration fit (flopwise calibrate): measured units in, a Calibration
// (flopwise/calibration.h: what it is, its file, and the prediction --predict makes with it) out.
// Implemented in src/measured/calibrate.cc.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flopwise/calibration.h"

namespace flopwise {

// One measured unit: its counts and the time it took, of a model.
struct TimedSample {
  CostUnit unit;
  double ms = 0;
  std::string model;
};

// The fit of `samples`: weighted non-negative least squares, exact (every support of the three coefficients
// is solved with Eigen and the best feasible one kept). Samples with no time are left out.
LatencyFit fit_latency(const std::vector<const TimedSample*>& samples, Weighting w = Weighting::Sqrt);

// Up to this many models, calibrate() predicts each from the others alone (Calibration::held_out_rel_rms).
constexpr size_t kHeldOutModels = 12;

// Fits every op type with at least `min_samples` samples, and all samples together; the models' totals
// (every sample of a model) give model_rel_rms. Throws InputError when no sample has a time.
// Op types with variants (NodeReport::variant) are fitted at every level the data allows: "Conv",
// "Conv/depthwise", "Conv/depthwise/3x3"; a unit takes the fit of its longest key fitted.
// `walls`: each model's measured forward (ms), for the WallFit; models without one are left out of it.
// `local_bandwidth`: the local corrections' kernel width in decades (0: none). The models' predicted totals
// (and so model_rel_rms, the band) use each model's corrections without its own points: held out.
Calibration calibrate(const std::vector<TimedSample>& samples, Granularity g, size_t min_samples = 10,
                      Weighting w = Weighting::Sqrt, const std::map<std::string, double>* walls = nullptr,
                      double local_bandwidth = 0.1);

}  // namespace flopwise
