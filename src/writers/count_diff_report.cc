// src/writers/count_diff_report.cc — the count-and-time diff of two traces or sets of traces
// (flopwise/trace_census_report.h): JSON, text, markdown and CSV. Rows carry HTA's TraceDiff categories.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "flopwise/json_text.h"
#include "flopwise/trace_census_report.h"
#include "tables.h"

namespace flopwise {

namespace census_writers {

using ojson = nlohmann::ordered_json;

std::string fixed_text(double v, int prec) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}
std::string cell(const std::string& s, size_t w, bool left) {
  if (s.size() >= w) return s;
  return left ? s + std::string(w - s.size(), ' ') : std::string(w - s.size(), ' ') + s;
}
std::string cut(const std::string& s, size_t w) { return s.size() <= w ? s : s.substr(0, w - 3) + "..."; }

ojson side_json(const CensusSummary& s) {
  return {{"paths", s.paths}, {"ranks", s.ranks}, {"steps", s.steps}, {"devices", s.devices}};
}

ojson rows_json(const std::vector<CountDiffRow>& rows) {
  ojson out = ojson::array();
  for (const auto& r : rows)
    out.push_back({{"name", r.name},
                   {"count_a", r.a.count},
                   {"count_b", r.b.count},
                   {"time_a_us", r.a.time_us},
                   {"time_b_us", r.b.time_us},
                   {"delta_count", r.b.count - r.a.count},
                   {"delta_time_us", r.b.time_us - r.a.time_us},
                   {"change", count_change_name(r.change)},
                   {"time_change", count_change_name(r.time_change)}});
  return out;
}

ojson categories_json(const std::vector<CountDiffRow>& rows, bool by_time) {
  ojson out = ojson::object();
  for (CountChange c : {CountChange::Added, CountChange::Deleted, CountChange::Increased,
                        CountChange::Decreased, CountChange::Unchanged})
    out[count_change_name(c)] = std::count_if(
        rows.begin(), rows.end(), [&](const auto& r) { return (by_time ? r.time_change : r.change) == c; });
  return out;
}

// Rows by the size of their change: count first, then time.
std::vector<const CountDiffRow*> ranked(const std::vector<CountDiffRow>& rows, bool by_time) {
  std::vector<const CountDiffRow*> v;
  for (const auto& r : rows) v.push_back(&r);
  std::stable_sort(v.begin(), v.end(), [&](const CountDiffRow* x, const CountDiffRow* y) {
    double dx = by_time ? x->b.time_us - x->a.time_us : static_cast<double>(x->b.count - x->a.count);
    double dy = by_time ? y->b.time_us - y->a.time_us : static_cast<double>(y->b.count - y->a.count);
    return std::fabs(dx) > std::fabs(dy);
  });
  return v;
}

std::string side_line(const char* tag, const CensusSummary& s) {
  std::string out = std::string(tag) + ": ";
  for (size_t i = 0; i < s.paths.size(); ++i) out += (i ? ", " : "") + s.paths[i];
  out += " (ranks";
  for (int64_t r : s.ranks) out += " " + std::to_string(r);
  out += s.steps.empty() ? "; no steps" : "; steps";
  for (size_t i = 0; i < s.steps.size() && i < 8; ++i) out += " " + std::to_string(s.steps[i]);
  if (s.steps.size() > 8) out += " ...";
  return out + ")";
}

}  // namespace census_writers

void write_count_diff_json(std::ostream& os, const CountDiff& d, const CountDiffOptions& o) {
  using namespace census_writers;
  ojson j;
  if (o.priced) {  // the priced diff's document, these rows added to it
    std::ostringstream priced;
    write_trace_diff_json(priced, *o.priced);
    j = ojson::parse(priced.str());
  } else {
    j["schema"] = "flopwise.trace_diff/1";
    j["flopwise_version"] = flopwise_version();
  }
  j["count_a"] = side_json(d.a);
  j["count_b"] = side_json(d.b);
  j["categories"] = {{"ops", categories_json(d.ops, false)},
                     {"kernels", categories_json(d.kernels, false)},
                     {"ops_by_time", categories_json(d.ops, true)},
                     {"kernels_by_time", categories_json(d.kernels, true)}};
  j["ops"] = rows_json(d.ops);
  j["kernels"] = rows_json(d.kernels);
  os << j.dump(1) << "\n";
}

void write_count_diff_text(std::ostream& os, const CountDiff& d, const CountDiffOptions& o) {
  using namespace census_writers;
  if (o.priced) {
    write_trace_diff_text(os, *o.priced, TraceTextOptions{3, o.top});
    os << "\n";
  }
  os << side_line("A", d.a) << "\n" << side_line("B", d.b) << "\n";
  os << "counts and total time (us) of every event by name, as HTA's TraceDiff counts them\n";
  for (int k = 0; k < 2; ++k) {
    const auto& rows = k == 0 ? d.ops : d.kernels;
    const ojson cats = categories_json(rows, false);
    os << "\n"
       << (k == 0 ? "CPU ops, annotations and runtime calls" : "GPU kernels, memcpy and memset") << ":";
    for (const auto& [name, n] : cats.items()) os << " " << n.get<int64_t>() << " " << name;
    os << "\n";
    const size_t w = k == 0 ? 48 : 60;
    os << cell("name (by |count change|)", w, true) << cell("A count", 9, false) << cell("B count", 9, false)
       << cell("A us", 12, false) << cell("B us", 12, false) << cell("delta us", 12, false) << "  change\n";
    int shown = 0;
    for (const CountDiffRow* r : ranked(rows, false)) {
      if (o.top >= 0 && shown++ >= o.top) break;
      os << cell(cut(r->name, w - 1), w, true) << cell(std::to_string(r->a.count), 9, false)
         << cell(std::to_string(r->b.count), 9, false) << cell(fixed_text(r->a.time_us, 1), 12, false)
         << cell(fixed_text(r->b.time_us, 1), 12, false)
         << cell(fixed_text(r->b.time_us - r->a.time_us, 1), 12, false) << "  "
         << count_change_name(r->change) << "\n";
    }
  }
}

void write_count_diff_markdown(std::ostream& os, const CountDiff& d, const CountDiffOptions& o) {
  using namespace census_writers;
  os << "# Trace diff: counts and time\n\n- " << side_line("A", d.a) << "\n- " << side_line("B", d.b) << "\n";
  for (int k = 0; k < 2; ++k) {
    const auto& rows = k == 0 ? d.ops : d.kernels;
    os << "\n## " << (k == 0 ? "Ops (CPU side)" : "Kernels (GPU side)") << "\n\n";
    Table t{{"name", "A count", "B count", "A us", "B us", "delta us", "change"}};
    int shown = 0;
    for (const CountDiffRow* r : ranked(rows, false)) {
      if (o.top >= 0 && shown++ >= o.top) break;
      std::string name = r->name;
      std::replace(name.begin(), name.end(), '|', '/');
      t.push_back({"`" + cut(name, 80) + "`", std::to_string(r->a.count), std::to_string(r->b.count),
                   fixed_text(r->a.time_us, 1), fixed_text(r->b.time_us, 1),
                   fixed_text(r->b.time_us - r->a.time_us, 1), count_change_name(r->change)});
    }
    write_markdown_table(os, t, {false, true, true, true, true, true, false});
  }
}

void write_count_diff_csv(std::ostream& os, const CountDiff& d) {
  using namespace census_writers;
  auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  os << "level,name,count_a,count_b,time_a_us,time_b_us,change,time_change\n";
  for (int k = 0; k < 2; ++k)
    for (const auto& r : k == 0 ? d.ops : d.kernels)
      os << (k == 0 ? "op" : "kernel") << "," << quoted(r.name) << "," << r.a.count << "," << r.b.count << ","
         << fixed_text(r.a.time_us, 3) << "," << fixed_text(r.b.time_us, 3) << ","
         << count_change_name(r.change) << "," << count_change_name(r.time_change) << "\n";
}

}  // namespace flopwise
