// src/writers/sweep_text.cc — a sweep as text, CSV, markdown or JSON (flopwise/sweep.h).
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>

#include "flopwise/errors.h"
#include "flopwise/json_text.h"
#include "flopwise/sweep.h"
#include "flopwise/writers.h"

namespace flopwise {

namespace {

std::string exact(const Count& c) {
  if (c.known) return std::to_string(c.v);
  return c.overflowed ? "overflow" : "unknown";
}

// --predict: a column of the predicted latency.
bool has_prediction(const Sweep& s) {
  bool predicted = false;
  for (const auto& r : s.rows) predicted = predicted || r.predicted_ms >= 0;
  return predicted;
}

std::string predicted_ms(const SweepRow& r) {
  if (r.predicted_ms < 0) return std::string("?");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", r.predicted_ms);
  return std::string(buf);
}

// A table cell: at least the count where a node of the point is not counted.
std::string sweep_cell(const SweepRow& r, const Count& c) {
  return (r.uncounted > 0 ? ">= " : "") + human(c);
}

}  // namespace

void write_sweep_json(std::ostream& os, const Sweep& s, const Report& report) {
  using json = nlohmann::ordered_json;
  const bool predicted = has_prediction(s);
  json rows = json::array();
  for (const auto& r : s.rows) {
    json point = json::object();
    for (size_t i = 0; i < s.names.size(); ++i) point[s.names[i]] = r.point[i];
    auto num = [](const Count& c) { return c.known ? json(c.v) : json(nullptr); };
    rows.push_back({{"point", point},
                    {"params", num(r.params)},
                    {"macs", num(r.macs)},
                    {"flops", num(r.flops)},
                    {"memory_bytes", num(r.memory_bytes)},
                    {"uncounted_nodes", r.uncounted},
                    {"method", r.reanalysed ? "re-analysed" : "formula"},
                    {"violates", r.violated}});
    if (predicted) rows.back()["predicted_ms"] = r.predicted_ms >= 0 ? json(r.predicted_ms) : json(nullptr);
  }
  auto formula = [](const Count& c) {
    return c.symbolic() ? json(c.sym.str()) : c.known ? json(c.v) : json(nullptr);
  };
  json doc = {{"schema", "flopwise.sweep/1"},
              {"flopwise_version", flopwise_version()},
              {"model", report.path},
              {"convention", report.convention},
              {"axes", s.names},
              {"formulas",
               {{"params", formula(report.totals.params)},
                {"macs", formula(report.totals.macs)},
                {"flops", formula(report.totals.flops)},
                {"memory_bytes", formula(report.totals.memory_bytes)}}},
              {"reanalysed_points", s.reanalysed},
              {"assumptions",
               [&] {
                 json a = json::array();
                 for (const auto& x : report.assumptions)
                   a.push_back({{"holds", x.text()}, {"node", x.node}});
                 return a;
               }()},
              {"rows", rows}};
  os << json_text(doc, 1) << "\n";
}

void write_sweep_csv(std::ostream& os, const Sweep& s, const Report&) {
  const bool predicted = has_prediction(s);
  for (const auto& n : s.names) os << n << ",";
  os << "params,macs,flops,memory_bytes,uncounted_nodes,method,violates" << (predicted ? ",predicted_ms" : "")
     << "\n";
  for (const auto& r : s.rows) {
    for (int64_t v : r.point) os << v << ",";
    std::string v;
    for (const auto& x : r.violated) v += (v.empty() ? "" : "; ") + x;
    os << exact(r.params) << "," << exact(r.macs) << "," << exact(r.flops) << "," << exact(r.memory_bytes)
       << "," << r.uncounted << "," << (r.reanalysed ? "re-analysed" : "formula") << "," << v
       << (predicted ? "," + (r.predicted_ms >= 0 ? predicted_ms(r) : std::string()) : std::string()) << "\n";
  }
}

void write_sweep_markdown(std::ostream& os, const Sweep& s, const Report& report) {
  const bool predicted = has_prediction(s);
  auto cell = sweep_cell;
  os << "## flopwise sweep: " << report.path << "\n\n";
  os << "FLOPs = `" << human(report.totals.flops) << "`\n\n|";
  for (const auto& n : s.names) os << " " << n << " |";
  os << " params | MACs | FLOPs | memory bytes |" << (predicted ? " predicted ms |" : "") << "\n|";
  for (size_t i = 0; i < s.names.size(); ++i) os << "---:|";
  os << "---:|---:|---:|---:|" << (predicted ? "---:|" : "") << "\n";
  for (const auto& r : s.rows) {
    os << "|";
    for (int64_t v : r.point) os << " " << v << " |";
    os << " " << cell(r, r.params) << " | " << cell(r, r.macs) << " | " << cell(r, r.flops) << " | "
       << cell(r, r.memory_bytes) << (r.reanalysed ? " (re-analysed)" : "")
       << (r.violated.empty() ? "" : " (violates " + r.violated[0] + ")") << " |"
       << (predicted ? " " + predicted_ms(r) + " |" : "") << "\n";
  }
}

void write_sweep_text(std::ostream& os, const Sweep& s, const Report& report) {
  const bool predicted = has_prediction(s);
  auto cell = sweep_cell;
  os << "------------------------------ flopwise sweep -------------------------------\n";
  os << "model:   " << report.path << "\n";
  os << "MACs:    " << human(report.totals.macs) << "\n";
  os << "FLOPs:   " << human(report.totals.flops) << " (convention '" << report.convention << "')\n";
  os << "memory:  " << human(report.totals.memory_bytes) << "\n";
  for (const auto& a : report.assumptions) os << "assumed: " << a.text() << " (node '" << a.node << "')\n";
  os << "Each row is the formulas above evaluated exactly at the point"
     << (s.reanalysed ? "; rows marked * were re-analysed (a node's cost has no formula)" : "")
     << (s.violating ? "; rows marked ! break an assumption: the model cannot run there" : "") << ".\n\n";
  for (const auto& n : s.names) os << std::setw(std::max<int>(8, static_cast<int>(n.size()) + 1)) << n;
  os << std::setw(12) << "params" << std::setw(14) << "MACs" << std::setw(14) << "FLOPs" << std::setw(14)
     << "memory" << (predicted ? "  predicted ms" : "") << "\n";
  for (const auto& r : s.rows) {
    for (size_t i = 0; i < r.point.size(); ++i)
      os << std::setw(std::max<int>(8, static_cast<int>(s.names[i].size()) + 1)) << r.point[i];
    os << std::setw(12) << cell(r, r.params) << std::setw(14) << cell(r, r.macs) << std::setw(14)
       << cell(r, r.flops) << std::setw(14) << cell(r, r.memory_bytes);
    if (predicted) os << std::setw(14) << predicted_ms(r);
    os << (r.reanalysed ? " *" : "") << (r.violated.empty() ? "" : " !") << "\n";
  }
}

}  // namespace flopwise
