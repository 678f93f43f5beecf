// src/writers/roofline_text.cc — the roofline section of the text report (flopwise/roofline.h).
#include <algorithm>
#include <cstdio>

#include "flopwise/roofline.h"
#include "flopwise/writers.h"

namespace flopwise {

namespace {

std::string seconds_text(double s) {
  char buf[32];
  if (s >= 1)
    std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3)
    std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  return buf;
}

}  // namespace

void write_roofline_text(std::ostream& os, const RooflineReport& rf, int top) {
  const Hardware& hw = rf.hw;
  auto line = [&os](const std::string& k, const std::string& v) { summary_line(os, k, v); };
  os << "------------------------------ Roofline -------------------------------------\n";
  char buf[160];
  std::string peaks;
  for (size_t t = 0; t < hw.peak.size(); ++t)
    if (hw.peak[t] > 0) {
      std::snprintf(buf, sizeof buf, "%s%s %.1f", peaks.empty() ? "" : ", ",
                    peak_type_name(static_cast<PeakType>(t)), hw.peak[t] / 1e12);
      peaks += buf;
    }
  std::snprintf(buf, sizeof buf, "%.0f GB/s, %.0f MB on chip", hw.bandwidth / 1e9, hw.onchip_mb);
  line("hardware", hw.name + (hw.tf32 ? " (float32 products as TF32)" : "") + ": " + buf);
  line("dense peaks (TFLOP/s; int8 TOP/s)", peaks);
  std::snprintf(buf, sizeof buf, "%.1f FLOPs/byte (float32)", hw.peak[0] / hw.bandwidth);
  line("ridge point", buf);
  line("latency lower bound",
       seconds_text(rf.total.seconds) + " (each node at max(FLOPs/peak, bytes/bandwidth), summed)");
  std::snprintf(buf, sizeof buf, "%lld compute-bound (%s), %lld memory-bound (%s)",
                static_cast<long long>(rf.total.compute_bound),
                seconds_text(rf.total.compute_seconds).c_str(), static_cast<long long>(rf.total.memory_bound),
                seconds_text(rf.total.memory_seconds).c_str());
  line("nodes", buf);
  if (rf.unbounded_nodes)
    line("not bounded",
         std::to_string(rf.unbounded_nodes) +
             " node(s): counts not known (bind the dims with --dim) or no peak for their type");
  std::vector<const RooflineEntry*> order;
  for (const auto& e : rf.scopes)
    if (!e.scope.empty() && e.nodes) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const RooflineEntry* a, const RooflineEntry* b) {
    return a->seconds != b->seconds ? a->seconds > b->seconds : a->scope < b->scope;
  });
  if (order.size() > static_cast<size_t>(std::max(top, 0)))
    order.resize(static_cast<size_t>(std::max(top, 0)));
  if (!order.empty()) os << "slowest scopes by bound (time, FLOPs/byte, bound by):\n";
  for (const auto* e : order) {
    std::snprintf(buf, sizeof buf, "%.2f", e->intensity());
    os << "    " << e->scope << ": " << seconds_text(e->seconds) << ", " << buf << ", "
       << (e->compute_seconds > e->memory_seconds ? "compute" : "memory") << "\n";
  }
}

}  // namespace flopwise
