// src/writers/trace_serving.cc — what serving traces add to a trace's report (trace_serving.h): how many
// kernels replayed from CUDA/HIP graphs took their captured op, and from which capture traces.
#include "trace_serving.h"

#include <cstdio>
#include <string>

namespace flopwise {

namespace {

std::string pct(double part, double whole) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %%", whole > 0 ? 100.0 * part / whole : 0.0);
  return b;
}

}  // namespace

void write_graph_replay_text(std::ostream& os, const TraceReport& r) {
  if (!r.graph_replay) return;
  const GraphReplaySummary& g = *r.graph_replay;
  os << "graph replay:   " << g.replayed << " GPU events replayed by " << g.graph_launches
     << " graph launch(es); " << g.matched << " matched to their captured op ("
     << pct(g.matched_us, g.replayed_us) << " of their time)";
  if (g.captures.empty()) os << "; no capture trace (--capture DIR): unpriced";
  os << "\n";
  for (const auto& c : g.captures) os << "  capture:      " << c << "\n";
  for (const auto& n : g.notes) os << "  not matched:  " << n << "\n";
}

nlohmann::ordered_json graph_replay_json(const TraceReport& r) {
  if (!r.graph_replay) return nullptr;
  const GraphReplaySummary& g = *r.graph_replay;
  return {{"graph_launches", g.graph_launches},
          {"replayed", g.replayed},
          {"matched", g.matched},
          {"replayed_us", g.replayed_us},
          {"matched_us", g.matched_us},
          {"graphs_captured", g.graphs_captured},
          {"captures", g.captures},
          {"notes", g.notes}};
}

}  // namespace flopwise
