// tests/ort_util.h — what an ONNX Runtime profile (Chrome-trace JSON) says, read straight from its events,
// for tests that check flopwise's reading of it.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace fwtest {

// The profile's model runs (its "model_run" Session events) as (start, end) in microseconds, in time order:
// the first is ORT's warm-up.
inline std::vector<std::pair<double, double>> ort_model_runs(const nlohmann::json& doc) {
  std::vector<std::pair<double, double>> runs;
  for (const auto& e : doc)
    if (e.value("cat", "") == "Session" && e.value("name", "") == "model_run")
      runs.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
  std::sort(runs.begin(), runs.end());
  return runs;
}

}  // namespace fwtest
