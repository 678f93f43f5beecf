// src/report/sweep.cc — evaluating a report's formulas over a grid of dims (flopwise/sweep.h).
#include "flopwise/json_text.h"
#include "flopwise/sweep.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>

#include "flopwise/errors.h"
#include "flopwise/report.h"

namespace flopwise {

namespace {

constexpr size_t kMaxPoints = 100000;

int64_t parse_int(const std::string& s, const std::string& whole) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE || v < 0)
    throw UsageError("--sweep '" + whole + "': '" + s + "' is not a non-negative integer");
  return static_cast<int64_t>(v);
}

}  // namespace

SweepAxis parse_sweep(const std::string& text) {
  const std::string usage = " (expected NAME=V1,V2,..., NAME=A..B doubling, or NAME=A..B:STEP)";
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) throw UsageError("--sweep '" + text + "'" + usage);
  SweepAxis a;
  a.name = text.substr(0, eq);
  std::string spec = text.substr(eq + 1);
  if (size_t dots = spec.find(".."); dots != std::string::npos) {
    std::string lo_s = spec.substr(0, dots), rest = spec.substr(dots + 2), step_s;
    if (size_t colon = rest.find(':'); colon != std::string::npos) step_s = rest.substr(colon + 1), rest.resize(colon);
    int64_t lo = parse_int(lo_s, text), hi = parse_int(rest, text);
    if (hi < lo) throw UsageError("--sweep '" + text + "': the range ends before it starts");
    if (step_s.empty()) {  // doubling
      if (lo == 0) throw UsageError("--sweep '" + text + "': a doubling range starts at 1 or more");
      for (int64_t v = lo; v <= hi; v *= 2) {
        a.values.push_back(v);
        if (v > hi / 2) break;
      }
    } else {
      int64_t step = parse_int(step_s, text);
      if (step == 0) throw UsageError("--sweep '" + text + "': a step of 0");
      if ((hi - lo) / step + 1 > static_cast<int64_t>(kMaxPoints))
        throw UsageError("--sweep '" + text + "': more than 100,000 values");
      for (int64_t v = lo; v <= hi; v += step) {
        a.values.push_back(v);
        if (v > hi - step) break;
      }
    }
  } else {
    size_t pos = 0;
    for (size_t c; (c = spec.find(',', pos)) != std::string::npos; pos = c + 1)
      a.values.push_back(parse_int(spec.substr(pos, c - pos), text));
    a.values.push_back(parse_int(spec.substr(pos), text));
  }
  if (a.values.size() > kMaxPoints) throw UsageError("--sweep '" + text + "': more than 100,000 values");
  return a;
}

Sweep run_sweep(const Report& report, const std::vector<SweepAxis>& axes,
                const std::function<Report(const Bindings&)>& reanalyse) {
  std::set<std::string> symbols;
  auto collect = [&](const Count& c) {
    if (c.symbolic())
      for (const auto& s : c.sym.symbols()) symbols.insert(s);
  };
  for (const Count* c : {&report.totals.params, &report.totals.macs, &report.totals.flops, &report.totals.memory_bytes})
    collect(*c);
  std::set<std::string> in_shapes;
  for (const auto& io : {&report.inputs, &report.outputs})
    for (const auto& [name, typed] : *io)
      for (const auto& d : typed.second.dims)
        for (const auto& s : d.symbols()) in_shapes.insert(s);
  Sweep sw;
  std::set<std::string> swept;
  for (const auto& a : axes) {
    if (!symbols.count(a.name) && !in_shapes.count(a.name)) {
      std::string have;
      for (const auto& s : in_shapes) have += (have.empty() ? "" : ", ") + s;
      for (const auto& s : symbols)
        if (!in_shapes.count(s)) have += (have.empty() ? "" : ", ") + s;
      throw UsageError("--sweep " + a.name + ": the model has no dim named " + a.name +
                       (have.empty() ? " (all its dims are known)" : " (its dims: " + have + ")"));
    }
    if (!swept.insert(a.name).second) throw UsageError("--sweep " + a.name + " given twice");
    sw.names.push_back(a.name);
  }
  std::string left;
  for (const auto& s : symbols)
    if (!swept.count(s)) left += (left.empty() ? "" : ", ") + s;
  if (!left.empty())
    throw UsageError("--sweep: the costs also depend on " + left + ": bind them with --dim NAME=VALUE or sweep them");
  size_t total = 1;
  for (const auto& a : axes) {
    if (a.values.empty()) throw UsageError("--sweep " + a.name + ": no values");
    if (total > kMaxPoints / a.values.size()) throw UsageError("--sweep: a grid of more than 100,000 points");
    total *= a.values.size();
  }
  const bool by_formula = report.totals.uncounted == 0 && report.unsupported.empty();
  std::vector<size_t> idx(axes.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    Bindings b;
    SweepRow row;
    for (size_t i = 0; i < axes.size(); ++i) {
      b.emplace_back(axes[i].name, axes[i].values[idx[i]]);
      row.point.push_back(axes[i].values[idx[i]]);
    }
    auto at = [&b](const Count& c) { return c.symbolic() ? Count::of(c.sym.substitute(b)) : c; };
    const Totals& t = report.totals;
    row.params = at(t.params), row.macs = at(t.macs), row.flops = at(t.flops), row.memory_bytes = at(t.memory_bytes);
    row.uncounted = t.uncounted;
    bool complete = by_formula && row.params.known && row.macs.known && row.flops.known && row.memory_bytes.known;
    if (!complete) {  // no formula for some node (or an overflow): the model at this point
      Report r = reanalyse(b);
      row.params = r.totals.params, row.macs = r.totals.macs, row.flops = r.totals.flops;
      row.memory_bytes = r.totals.memory_bytes, row.uncounted = r.totals.uncounted;
      row.reanalysed = true;
      ++sw.reanalysed;
    }
    for (const auto& a : report.assumptions) {
      Dim l = a.lhs.substitute(b), r = a.rhs.substitute(b);
      if (l.is_known() && r.is_known() && l.value() > r.value()) row.violated.push_back(a.text());
    }
    for (const auto& x : report.symbols) {  // a data-dependent size past its op's bounds: no input gives it
      auto v = std::find_if(b.begin(), b.end(), [&](const auto& p) { return p.first == x.name; });
      if (v == b.end()) continue;
      Dim lo = x.lo.substitute(b), hi = x.hi.substitute(b);
      if ((lo.is_known() && v->second < lo.value()) || (hi.is_known() && v->second > hi.value()))
        row.violated.push_back(x.bounds_text());
    }
    if (!row.violated.empty()) ++sw.violating;
    sw.rows.push_back(std::move(row));
    for (size_t i = axes.size(); i-- > 0;) {  // the last axis fastest
      if (++idx[i] < axes[i].values.size()) break;
      idx[i] = 0;
    }
  }
  return sw;
}

namespace {

std::string exact(const Count& c) {
  if (c.known) return std::to_string(c.v);
  return c.overflowed ? "overflow" : "unknown";
}

}  // namespace

void write_sweep(std::ostream& os, const Sweep& s, const Report& report, const std::string& format) {
  using json = nlohmann::ordered_json;
  if (format == "json") {
    json rows = json::array();
    for (const auto& r : s.rows) {
      json point = json::object();
      for (size_t i = 0; i < s.names.size(); ++i) point[s.names[i]] = r.point[i];
      auto num = [](const Count& c) { return c.known ? json(c.v) : json(nullptr); };
      rows.push_back({{"point", point}, {"params", num(r.params)}, {"macs", num(r.macs)}, {"flops", num(r.flops)},
                      {"memory_bytes", num(r.memory_bytes)}, {"uncounted_nodes", r.uncounted},
                      {"method", r.reanalysed ? "re-analysed" : "formula"}, {"violates", r.violated}});
    }
    auto formula = [](const Count& c) { return c.symbolic() ? json(c.sym.str()) : c.known ? json(c.v) : json(nullptr); };
    json doc = {{"schema", "flopwise.sweep/1"},
                {"model", report.path},
                {"convention", report.convention},
                {"axes", s.names},
                {"formulas", {{"params", formula(report.totals.params)}, {"macs", formula(report.totals.macs)},
                              {"flops", formula(report.totals.flops)},
                              {"memory_bytes", formula(report.totals.memory_bytes)}}},
                {"reanalysed_points", s.reanalysed},
                {"assumptions", [&] {
                   json a = json::array();
                   for (const auto& x : report.assumptions) a.push_back({{"holds", x.text()}, {"node", x.node}});
                   return a;
                 }()},
                {"rows", rows}};
    os << json_text(doc, 1) << "\n";
    return;
  }
  if (format == "csv") {
    for (const auto& n : s.names) os << n << ",";
    os << "params,macs,flops,memory_bytes,uncounted_nodes,method,violates\n";
    for (const auto& r : s.rows) {
      for (int64_t v : r.point) os << v << ",";
      std::string v;
      for (const auto& x : r.violated) v += (v.empty() ? "" : "; ") + x;
      os << exact(r.params) << "," << exact(r.macs) << "," << exact(r.flops) << "," << exact(r.memory_bytes) << ","
         << r.uncounted << "," << (r.reanalysed ? "re-analysed" : "formula") << "," << v << "\n";
    }
    return;
  }
  auto cell = [](const SweepRow& r, const Count& c) { return (r.uncounted > 0 ? ">= " : "") + human(c); };
  if (format == "markdown" || format == "md") {
    os << "## flopwise sweep: " << report.path << "\n\n";
    os << "FLOPs = `" << human(report.totals.flops) << "`\n\n|";
    for (const auto& n : s.names) os << " " << n << " |";
    os << " params | MACs | FLOPs | memory bytes |\n|";
    for (size_t i = 0; i < s.names.size(); ++i) os << "---:|";
    os << "---:|---:|---:|---:|\n";
    for (const auto& r : s.rows) {
      os << "|";
      for (int64_t v : r.point) os << " " << v << " |";
      os << " " << cell(r, r.params) << " | " << cell(r, r.macs) << " | " << cell(r, r.flops) << " | "
         << cell(r, r.memory_bytes) << (r.reanalysed ? " (re-analysed)" : "")
         << (r.violated.empty() ? "" : " (violates " + r.violated[0] + ")") << " |\n";
    }
    return;
  }
  os << "------------------------------ flopwise sweep -------------------------------\n";
  os << "model:   " << report.path << "\n";
  os << "MACs:    " << human(report.totals.macs) << "\n";
  os << "FLOPs:   " << human(report.totals.flops) << " (convention '" << report.convention << "')\n";
  os << "memory:  " << human(report.totals.memory_bytes) << "\n";
  for (const auto& a : report.assumptions)
    os << "assumed: " << a.text() << " (node '" << a.node << "')\n";
  os << "Each row is the formulas above evaluated exactly at the point"
     << (s.reanalysed ? "; rows marked * were re-analysed (a node's cost has no formula)" : "")
     << (s.violating ? "; rows marked ! break an assumption: the model cannot run there" : "") << ".\n\n";
  for (const auto& n : s.names) os << std::setw(std::max<int>(8, static_cast<int>(n.size()) + 1)) << n;
  os << std::setw(12) << "params" << std::setw(14) << "MACs" << std::setw(14) << "FLOPs" << std::setw(14) << "memory"
     << "\n";
  for (const auto& r : s.rows) {
    for (size_t i = 0; i < r.point.size(); ++i)
      os << std::setw(std::max<int>(8, static_cast<int>(s.names[i].size()) + 1)) << r.point[i];
    os << std::setw(12) << cell(r, r.params) << std::setw(14) << cell(r, r.macs) << std::setw(14) << cell(r, r.flops)
       << std::setw(14) << cell(r, r.memory_bytes) << (r.reanalysed ? " *" : "") << (r.violated.empty() ? "" : " !")
       << "\n";
  }
}

}  // namespace flopwise
