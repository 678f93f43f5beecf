// include/flopwise/run_diff.h — `flopwise diff A B` of two measured run reports (flopwise.run/1: `flopwise
// run ... --format json`, from LibTorch or from an ONNX Runtime profile): latency and FLOP/s deltas per
// module scope and per op type beside the static FLOP deltas, largest latency change first (in the spirit of
// HTA's TraceDiff).
#pragma once

#include <ostream>
#include <string>

#include "flopwise/run_report.h"

namespace flopwise {

struct RunDiffOptions {
  std::string format = "text";  // text | json | markdown
  int top = -1;                 // rows per section (-1: 20 in text and markdown, all in JSON)
};

// Writes the diff of two run reports. Throws InputError on a file that is not a readable run report.
void write_run_diff(std::ostream& os, const std::string& a, const std::string& b, const RunDiffOptions& o);

}  // namespace flopwise
