// src/analysis/sweep.cc — evaluating a report's formulas over a grid of dims (flopwise/sweep.h). Its
// writers are src/writers/sweep_text.cc.
#include "flopwise/sweep.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>

#include "flopwise/errors.h"

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
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError("--sweep '" + text + "'" + usage);
  SweepAxis a;
  a.name = text.substr(0, eq);
  std::string spec = text.substr(eq + 1);
  if (size_t dots = spec.find(".."); dots != std::string::npos) {
    std::string lo_s = spec.substr(0, dots), rest = spec.substr(dots + 2), step_s;
    if (size_t colon = rest.find(':'); colon != std::string::npos)
      step_s = rest.substr(colon + 1), rest.resize(colon);
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
  for (const Count* c :
       {&report.totals.params, &report.totals.macs, &report.totals.flops, &report.totals.memory_bytes})
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
    throw UsageError("--sweep: the costs also depend on " + left +
                     ": bind them with --dim NAME=VALUE or sweep them");
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
    row.params = at(t.params), row.macs = at(t.macs), row.flops = at(t.flops),
    row.memory_bytes = at(t.memory_bytes);
    row.uncounted = t.uncounted;
    bool complete =
        by_formula && row.params.known && row.macs.known && row.flops.known && row.memory_bytes.known;
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

}  // namespace flopwise
