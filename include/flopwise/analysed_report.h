// include/flopwise/analysed_report.h — the report a command writes: the cost pass's Report (flopwise/cost.h)
// with the results of the analyses it asked for. What the pipeline returns (Analysis::report), the writers
// write, the JSON reader reads back, and diff, check and the parallel step take.
// Owns: which analysis results a report may carry. Each is computed in its own file of src/analysis/ (or
// src/pipeline/) and declared in the header named beside it; a writer includes the headers of those it
// prints.
#pragma once

#include <memory>
#include <utility>

#include "flopwise/cost.h"

namespace flopwise {

struct RooflineReport;
struct PeakMemory;
struct MoeSummary;
struct LlmSection;
struct TrainingReport;
struct LatencyPrediction;
struct ParallelReport;

// A Report and its analyses. The Report is a base, not a member: every writer reads the costs and the
// analyses side by side (r.totals beside r.roofline), and a function that needs only the costs takes the
// `const Report&` this converts to. Null where the command did not ask for the analysis.
struct AnalysedReport : Report {
  AnalysedReport() = default;
  explicit AnalysedReport(Report&& costs) : Report(std::move(costs)) {}

  std::shared_ptr<const RooflineReport> roofline;  // with --hardware (flopwise/roofline.h)
  std::shared_ptr<const PeakMemory> peak_memory;   // with --peak-memory (flopwise/peak_memory.h)
  std::shared_ptr<const MoeSummary> moe;  // a mixture-of-experts model's activated counts (flopwise/moe.h)
  std::shared_ptr<const LlmSection> llm;  // with --phase or --prompt/--generate (flopwise/llm.h)
  std::shared_ptr<const TrainingReport> training;       // with --train (flopwise/training.h)
  std::shared_ptr<const LatencyPrediction> prediction;  // with --predict (flopwise/calibration.h)
  std::shared_ptr<const ParallelReport> parallel;       // with --parallel (flopwise/parallel.h)
};

}  // namespace flopwise
