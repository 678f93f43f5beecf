// include/flopwise/run_diff.h — `flopwise diff A B` of two measured run reports (flopwise.run/1: `flopwise
// run ... --format json`, from LibTorch or from an ONNX Runtime profile): latency and FLOP/s deltas per
// module scope and per op type beside the static FLOP deltas, largest latency change first (in the spirit of
// HTA's TraceDiff).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "flopwise/formats.h"
#include "flopwise/run_report.h"

namespace flopwise {

// Two run reports aligned: the rows of flopwise.run-diff/1 (docs/json-report.md).
struct RunDiff {
  std::string a_path, b_path, a_what, b_what;  // what: the engine, device and model of each side
  nlohmann::ordered_json totals, scopes, op_types;
  std::vector<std::string> notes;
};
// Throws InputError on a file that is not a readable run report.
RunDiff diff_run_reports(const std::string& a, const std::string& b);

// The diff's writers: text, json, markdown. `top`: rows per section (-1: 20 in text and markdown, all in
// JSON).
using RunDiffWriter = void (*)(std::ostream& os, const RunDiff& d, int top);
const FormatTable<RunDiffWriter>& run_diff_writers();

}  // namespace flopwise
