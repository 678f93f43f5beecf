// include/flopwise/trace_report.h — the writers of a PyTorch trace's report (flopwise/torch_trace.h) and of
// the diff of two: text, JSON (schema "flopwise.trace/1", "flopwise.trace_diff/1"; README: Traces) and CSV.
// Times in the JSON and CSV are totals over the trace in microseconds; the text shows them per profiler step.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "flopwise/torch_trace.h"

namespace flopwise {

struct TraceTextOptions {
  int depth = 3;  // scope tree levels shown; -1: all
  int top = 10;   // rows of the op, kernel and uncosted tables
};

void write_trace_text(std::ostream& os, const TraceReport& r, const TraceTextOptions& opts);
// A trace with no GPU events (trace_cpu_report.cc): time per op and scope on the CPU with GFLOP/s over it.
void write_trace_cpu_text(std::ostream& os, const TraceReport& r, const TraceTextOptions& opts);
double trace_cpu_gflops(const TraceRow& r);  // FLOPs over the row's CPU time, in GFLOP/s
void write_trace_json(std::ostream& os, const TraceReport& r);
void write_trace_csv(std::ostream& os, const TraceReport& r);  // one row per scope, op and kernel
// The report page of the writers (flopwise/writers.h, write_html): the trace's scope tree as the treemap,
// sized by measured GPU time first (FLOPs, MACs, memory selectable), per step.
void write_trace_html(std::ostream& os, const TraceReport& r);

// Two traces side by side, matched by op name, kernel name and scope path.
struct TraceDiffRow {
  std::string level;  // "scope", "op", "kernel"
  std::string name;
  const TraceRow* a = nullptr;  // absent on that side: nullptr
  const TraceRow* b = nullptr;
};
struct TraceDiff {
  const TraceReport* a = nullptr;
  const TraceReport* b = nullptr;
  std::vector<TraceDiffRow> rows;  // scopes in A's tree order then B's new ones; ops; kernels
};
TraceDiff diff_traces(const TraceReport& a, const TraceReport& b);
void write_trace_diff_text(std::ostream& os, const TraceDiff& d, const TraceTextOptions& opts);
void write_trace_diff_json(std::ostream& os, const TraceDiff& d);

}  // namespace flopwise
