// src/writers/trace_cpu_report.cc — the text of a trace recorded on the CPU alone (flopwise/trace_report.h;
// torch 2.x's profiler without CUDA): time per op and module scope on the CPU, with FLOPs from the recorded
// shapes and the achieved GFLOP/s over the ops' CPU time (inclusive: an op's children run inside it).
#include <algorithm>
#include <cstdio>

#include "flopwise/run_report.h"
#include "flopwise/trace_report.h"
#include "flopwise/writers.h"

namespace flopwise {

namespace cpu_trace_text {

std::string lpad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}
std::string rpad(const std::string& s, size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}
std::string clipped(const std::string& s, size_t w) { return s.size() <= w ? s : s.substr(0, w - 3) + "..."; }

void header(std::ostream& os, const std::string& first, size_t w) {
  os << lpad(first, w) << rpad("calls", 8) << rpad("CPU ms", 11) << rpad("FLOPs", 11) << rpad("GFLOP/s", 10)
     << "\n";
}
void row(std::ostream& os, const std::string& first, size_t w, const TraceRow& r, double steps) {
  const bool priced = r.calls > r.uncosted && !r.overflow;
  os << lpad(clipped(first, w - 1), w)
     << rpad(r.calls % static_cast<int64_t>(steps) ? fmt(static_cast<double>(r.calls) / steps, 2)
                                                   : std::to_string(r.calls / static_cast<int64_t>(steps)),
             8)
     << rpad(fmt(r.cpu_us / steps / 1000, 3), 11)
     << rpad(priced ? human(static_cast<double>(r.flops) / steps) : "-", 11)
     << rpad(priced && r.cpu_us > 0 && r.flops > 0 ? fmt(trace_cpu_gflops(r), 2) : "-", 10) << "\n";
}

}  // namespace cpu_trace_text

double trace_cpu_gflops(const TraceRow& r) {
  return r.cpu_us > 0 && !r.overflow ? static_cast<double>(r.flops) / r.cpu_us / 1e3 : 0;
}

void write_trace_cpu_text(std::ostream& os, const TraceReport& r, const TraceTextOptions& opts) {
  using namespace cpu_trace_text;
  const double steps = static_cast<double>(std::max<size_t>(1, r.steps.size()));
  os << "PyTorch trace:  " << r.path << " (CPU only: no GPU events)\n";
  os << "steps:          " << r.steps.size() << "; events " << r.events << " read; " << r.cpu_ops
     << " ops priced or listed; " << (r.total.calls - r.total.uncosted) << " of " << r.total.calls
     << " outermost ops costed\n";
  os << "\nper step (mean of " << r.steps.size()
     << "); FLOPs from the recorded shapes; GFLOP/s over the ops' "
     << "CPU time\n";
  header(os, "scope", 48);
  for (const auto& s : r.scopes) {
    if (opts.depth >= 0 && s.depth > opts.depth) continue;
    row(os, std::string(static_cast<size_t>(2 * s.depth), ' ') + (s.depth == 0 ? "(trace)" : s.label), 48,
        s.row, steps);
  }
  std::vector<const TraceRow*> ops;
  for (const auto& o : r.ops) ops.push_back(&o);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const TraceRow* a, const TraceRow* b) { return a->cpu_us > b->cpu_us; });
  os << "\ntop ops by CPU time\n";
  header(os, "op", 48);
  int k = 0;
  for (const TraceRow* o : ops) {
    if (opts.top >= 0 && k++ >= opts.top) break;
    row(os, o->name, 48, *o, steps);
  }
  if (!r.uncosted.empty()) {
    os << "\nnot costed (" << r.uncosted.size() << " op names)\n";
    k = 0;
    for (const auto& o : r.uncosted) {
      if (opts.top >= 0 && k++ >= opts.top) break;
      os << lpad(clipped(o.name, 47), 48) << rpad(std::to_string(o.calls), 8) << "  " << o.why << "\n";
    }
  }
  for (const auto& w : r.warnings) os << "warning: " << w << "\n";
}

}  // namespace flopwise
