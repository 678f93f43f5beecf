// include/flopwise/trace_census_report.h — the writers of flopwise/trace_census.h's views: the count-and-time
// diff of two traces or sets of traces (JSON "flopwise.trace_diff/1" with ops[] and kernels[], text, CSV,
// markdown, HTML with bar charts of the largest changes) and a distributed run's ranks (JSON
// "flopwise.trace_ranks/1", text, CSV).
#pragma once

#include <ostream>

#include "flopwise/trace_census.h"
#include "flopwise/trace_report.h"

namespace flopwise {

struct CountDiffOptions {
  int top = 20;                       // rows per table in text, markdown and the charts; -1: all
  const TraceDiff* priced = nullptr;  // two single traces: the priced diff by scope, op and kernel, beside
};
void write_count_diff_json(std::ostream& os, const CountDiff& d, const CountDiffOptions& o);
void write_count_diff_text(std::ostream& os, const CountDiff& d, const CountDiffOptions& o);
void write_count_diff_markdown(std::ostream& os, const CountDiff& d, const CountDiffOptions& o);
void write_count_diff_csv(std::ostream& os, const CountDiff& d);
void write_count_diff_html(std::ostream& os, const CountDiff& d, const CountDiffOptions& o);

void write_ranks_json(std::ostream& os, const RankRun& r);
void write_ranks_text(std::ostream& os, const RankRun& r, int top);
void write_ranks_csv(std::ostream& os, const RankRun& r);

}  // namespace flopwise
