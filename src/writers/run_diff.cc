// src/writers/run_diff.cc — diff of two measured run reports (flopwise/run_diff.h). Rows are aligned by scope
// path and by op type; a row only one side has is reported with the other side empty. Every delta is B - A
// of the two reports' own figures.
#include "flopwise/run_diff.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "flopwise/cost.h"
#include "flopwise/errors.h"
#include "flopwise/input_file.h"
#include "flopwise/json_text.h"
#include "flopwise/writers.h"

namespace flopwise {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

double value_of(const std::optional<int64_t>& v) { return v ? static_cast<double>(*v) : NAN; }
double value_of(const std::optional<double>& v) { return v ? *v : NAN; }

// The figures a diff compares, per row kind: (name, the row's value; NaN where not known).
template <class Row>
using Fields = std::vector<std::pair<const char*, double (*)(const Row&)>>;
const Fields<RunScopeRow>& scope_fields() {
  static const Fields<RunScopeRow> f = {
      {"latency_ms", [](const RunScopeRow& r) { return r.latency_ms; }},
      {"flops", [](const RunScopeRow& r) { return value_of(r.flops); }},
      {"flops_per_s", [](const RunScopeRow& r) { return value_of(r.flops_per_s); }},
      {"macs", [](const RunScopeRow& r) { return value_of(r.macs); }},
      {"params", [](const RunScopeRow& r) { return value_of(r.params); }}};
  return f;
}
const Fields<RunOpRow>& op_fields() {
  static const Fields<RunOpRow> f = {
      {"latency_ms", [](const RunOpRow& r) { return r.latency_ms; }},
      {"flops", [](const RunOpRow& r) { return value_of(r.flops); }},
      {"flops_per_s", [](const RunOpRow& r) { return value_of(r.flops_per_s); }}};
  return f;
}
const std::string& key_of(const RunScopeRow& r) { return r.name; }
const std::string& key_of(const RunOpRow& r) { return r.op; }

json opt(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

std::string describe(const RunReport& r) {
  const RunRuntime& rt = r.runtime;
  std::string what = (r.model.empty() ? "?" : r.model) + ", ";
  if (rt.engine == RunEngine::OnnxRuntime) {
    std::string prov;
    for (const auto& p : rt.providers) prov += (prov.empty() ? "" : ", ") + p;
    what += "ONNX Runtime profile " + rt.profile + " (" + prov + ")";
  } else {
    what +=
        "LibTorch " + (rt.torch_version.empty() ? std::string("?") : rt.torch_version) + " on " + rt.device;
  }
  return what;
}

// Rows keyed by their name, in A's order then B's new ones; each row: a, b, the deltas.
template <class Row>
ojson align(const std::vector<Row>& a, const std::vector<Row>& b, const char* key,
            const Fields<Row>& fields) {
  std::map<std::string, const Row*> in_b;
  for (const auto& r : b) in_b[key_of(r)] = &r;
  std::vector<std::pair<const Row*, const Row*>> pairs;
  std::map<std::string, bool> seen;
  for (const auto& r : a) {
    auto it = in_b.find(key_of(r));
    pairs.push_back({&r, it == in_b.end() ? nullptr : it->second});
    seen[key_of(r)] = true;
  }
  for (const auto& r : b)
    if (!seen.count(key_of(r))) pairs.push_back({nullptr, &r});
  ojson rows = ojson::array();
  for (const auto& [ra, rb] : pairs) {
    ojson row;
    row[key] = key_of(ra ? *ra : *rb);
    row["in"] = ra && rb ? "both" : ra ? "A only" : "B only";
    for (const auto& [f, get] : fields) {
      double va = ra ? get(*ra) : NAN, vb = rb ? get(*rb) : NAN;
      row[std::string("a_") + f] = opt(va);
      row[std::string("b_") + f] = opt(vb);
      // A side without the row counts as 0 for times and counts (nothing there), unknown for rates.
      bool additive = std::string(f) != "flops_per_s";
      double da = ra ? va : (additive ? 0.0 : NAN), db = rb ? vb : (additive ? 0.0 : NAN);
      row[std::string("d_") + f] = opt(db - da);
    }
    rows.push_back(row);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const ojson& x, const ojson& y) {
    double dx = x["d_latency_ms"].is_number() ? std::fabs(x["d_latency_ms"].get<double>()) : -1;
    double dy = y["d_latency_ms"].is_number() ? std::fabs(y["d_latency_ms"].get<double>()) : -1;
    return dx > dy;
  });
  return rows;
}

std::string json_fmt(const ojson& v, int prec = 3) {
  if (!v.is_number()) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v.get<double>();
  return os.str();
}

std::string signed_fmt(const ojson& v, int prec = 3) {
  if (!v.is_number()) return "-";
  std::string s = json_fmt(v, prec);
  return v.get<double>() > 0 ? "+" + s : s;
}

std::string rate(const ojson& v) { return v.is_number() ? human(v.get<double>()) : "-"; }
std::string count(const ojson& v) {
  return v.is_number() ? human(Count(static_cast<int64_t>(std::llround(v.get<double>())))) : "-";
}
std::string signed_count(const ojson& v) {
  if (!v.is_number()) return "-";
  double x = v.get<double>();
  std::string s = human(Count(static_cast<int64_t>(std::llround(std::fabs(x)))));
  return (x > 0 ? "+" : x < 0 ? "-" : "") + s;
}

std::string total_label(const std::string& t) {
  if (t == "fwd_latency_ms") return std::string("fwd latency (ms)");
  if (t == "node_time_ms") return std::string("node time (ms)");
  if (t == "fwd_flops_per_s") return std::string("FLOP/s");
  return t;
}

std::string total_cell(const std::string& t, const ojson& v, bool sign) {
  if (t == "fwd_latency_ms" || t == "node_time_ms") return sign ? signed_fmt(v) : json_fmt(v);
  if (t == "fwd_flops_per_s") return sign && v.is_number() && v.get<double>() > 0 ? "+" + rate(v) : rate(v);
  return sign ? signed_count(v) : count(v);
}

size_t rows_shown(int top) { return top >= 0 ? static_cast<size_t>(top) : 20; }

void write_run_diff_json(std::ostream& os, const RunDiff& d, int) {
  ojson doc = {{"schema", "flopwise.run-diff/1"},
               {"flopwise_version", flopwise_version()},
               {"a", {{"path", d.a_path}, {"what", d.a_what}}},
               {"b", {{"path", d.b_path}, {"what", d.b_what}}},
               {"totals", d.totals},
               {"scopes", d.scopes},
               {"op_types", d.op_types},
               {"notes", d.notes}};
  os << json_text(doc, 1) << "\n";
}

}  // namespace

RunDiff diff_run_reports(const std::string& pa, const std::string& pb) {
  const RunReport a = read_run_report(pa), b = read_run_report(pb);
  auto total = [](const RunReport& r, const char* what) -> double {
    if (std::string(what) == "fwd_latency_ms") return r.summary.fwd_latency_ms.median;
    if (std::string(what) == "fwd_flops_per_s") return r.summary.fwd_flops_per_s;
    if (std::string(what) == "node_time_ms") return r.summary.profiled_op_sum_ms;
    const RunStaticTotals& t = r.static_totals;
    return static_cast<double>(std::string(what) == "flops"  ? t.flops
                               : std::string(what) == "macs" ? t.macs
                                                             : t.params);
  };
  ojson totals = ojson::array();
  for (const char* t : {"fwd_latency_ms", "node_time_ms", "fwd_flops_per_s", "flops", "macs", "params"}) {
    double va = total(a, t), vb = total(b, t);
    totals.push_back({{"quantity", t},
                      {"a", opt(va)},
                      {"b", opt(vb)},
                      {"delta", opt(vb - va)},
                      {"ratio", opt(va > 0 ? vb / va : NAN)}});
  }
  ojson scopes = align(a.scopes, b.scopes, "name", scope_fields());
  ojson ops =
      a.has_op_types && b.has_op_types ? align(a.op_types, b.op_types, "op", op_fields()) : ojson::array();
  std::vector<std::string> notes;
  if (a.runtime.engine != b.runtime.engine)
    notes.push_back("A and B were measured by different engines: their latencies compare the engines too");
  if (a.runtime.providers != b.runtime.providers || a.runtime.device != b.runtime.device)
    notes.push_back("A and B ran on different devices or execution providers");
  if (!a.has_op_types || !b.has_op_types)
    notes.push_back(
        "per-op-type times are in both reports only for ONNX Runtime profiles and newer LibTorch runs");
  RunDiff d;
  d.a_path = pa, d.b_path = pb, d.a_what = describe(a), d.b_what = describe(b);
  d.totals = std::move(totals), d.scopes = std::move(scopes), d.op_types = std::move(ops);
  d.notes = std::move(notes);
  return d;
}

namespace {

void write_run_diff_markdown(std::ostream& os, const RunDiff& d, int top_rows) {
  const size_t top = rows_shown(top_rows);
  const ojson &totals = d.totals, &scopes = d.scopes, &ops = d.op_types;
  os << "## flopwise diff (measured)\n\n- A: " << d.a_what << "\n- B: " << d.b_what << "\n\n";
  os << "| | A | B | B - A | B / A |\n|---|---:|---:|---:|---:|\n";
  for (const auto& t : totals) {
    std::string q = t["quantity"].get<std::string>();
    os << "| " << total_label(q) << " | " << total_cell(q, t["a"], false) << " | "
       << total_cell(q, t["b"], false) << " | " << total_cell(q, t["delta"], true) << " | "
       << json_fmt(t["ratio"], 3) << " |\n";
  }
  os << "\n### Scopes by largest latency change\n\n| scope | A ms | B ms | B - A ms | A FLOP/s | B FLOP/s "
        "| B - A FLOPs |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < scopes.size() && i < top; ++i) {
    const auto& r = scopes[i];
    std::string name = r["name"].get<std::string>();
    os << "| " << (name.empty() ? "(model)" : name)
       << (r["in"] == "both" ? "" : " (" + r["in"].get<std::string>() + ")") << " | "
       << json_fmt(r["a_latency_ms"]) << " | " << json_fmt(r["b_latency_ms"]) << " | "
       << signed_fmt(r["d_latency_ms"]) << " | " << rate(r["a_flops_per_s"]) << " | "
       << rate(r["b_flops_per_s"]) << " | " << signed_count(r["d_flops"]) << " |\n";
  }
  if (!ops.empty()) {
    os << "\n### Op types by largest latency change\n\n| op type | A ms | B ms | B - A ms | A FLOP/s | B "
          "FLOP/s |\n"
          "|---|---:|---:|---:|---:|---:|\n";
    for (size_t i = 0; i < ops.size() && i < top; ++i) {
      const auto& r = ops[i];
      os << "| " << r["op"].get<std::string>() << " | " << json_fmt(r["a_latency_ms"]) << " | "
         << json_fmt(r["b_latency_ms"]) << " | " << signed_fmt(r["d_latency_ms"]) << " | "
         << rate(r["a_flops_per_s"]) << " | " << rate(r["b_flops_per_s"]) << " |\n";
    }
  }
  for (const auto& n : d.notes) os << "\n> note: " << n << "\n";
}

void write_run_diff_text(std::ostream& os, const RunDiff& d, int top_rows) {
  const size_t top = rows_shown(top_rows);
  const ojson &totals = d.totals, &scopes = d.scopes, &ops = d.op_types;
  os << "------------------------- flopwise diff (measured) -------------------------\n";
  os << "A: " << d.a_what << "\nB: " << d.b_what << "\n\n";
  os << std::left << std::setw(20) << "" << std::right << std::setw(14) << "A" << std::setw(14) << "B"
     << std::setw(14) << "B - A" << std::setw(9) << "B / A"
     << "\n";
  for (const auto& t : totals) {
    std::string q = t["quantity"].get<std::string>();
    os << std::left << std::setw(20) << total_label(q) << std::right << std::setw(14)
       << total_cell(q, t["a"], false) << std::setw(14) << total_cell(q, t["b"], false) << std::setw(14)
       << total_cell(q, t["delta"], true) << std::setw(9) << json_fmt(t["ratio"], 3) << "\n";
  }
  size_t width = 8;
  for (size_t i = 0; i < scopes.size() && i < top; ++i)
    width = std::max(width, scopes[i]["name"].get<std::string>().size() + 10);
  width = std::min<size_t>(width, 60);
  os << "\nScopes by largest latency change (ms per forward; FLOP/s = static FLOPs / latency):\n";
  os << std::left << std::setw(static_cast<int>(width)) << "scope" << std::right << std::setw(10) << "A ms"
     << std::setw(10) << "B ms" << std::setw(10) << "B - A" << std::setw(11) << "A FLOP/s" << std::setw(11)
     << "B FLOP/s" << std::setw(11) << "B-A FLOPs"
     << "\n";
  for (size_t i = 0; i < scopes.size() && i < top; ++i) {
    const auto& r = scopes[i];
    std::string name = r["name"].get<std::string>();
    name = (name.empty() ? "(model)" : name) +
           (r["in"] == "both" ? "" : " [" + r["in"].get<std::string>() + "]");
    if (name.size() >= width) name = name.substr(0, width - 4) + "...";
    os << std::left << std::setw(static_cast<int>(width)) << name << std::right << std::setw(10)
       << json_fmt(r["a_latency_ms"]) << std::setw(10) << json_fmt(r["b_latency_ms"]) << std::setw(10)
       << signed_fmt(r["d_latency_ms"]) << std::setw(11) << rate(r["a_flops_per_s"]) << std::setw(11)
       << rate(r["b_flops_per_s"]) << std::setw(11) << signed_count(r["d_flops"]) << "\n";
  }
  if (scopes.size() > top)
    os << "  ... " << scopes.size() - top << " more (--top N, or --format json for all)\n";
  if (!ops.empty()) {
    os << "\nOp types by largest latency change:\n";
    os << std::left << std::setw(28) << "op type" << std::right << std::setw(10) << "A ms" << std::setw(10)
       << "B ms" << std::setw(10) << "B - A" << std::setw(11) << "A FLOP/s" << std::setw(11) << "B FLOP/s"
       << "\n";
    for (size_t i = 0; i < ops.size() && i < top; ++i) {
      const auto& r = ops[i];
      std::string name =
          r["op"].get<std::string>() + (r["in"] == "both" ? "" : " [" + r["in"].get<std::string>() + "]");
      os << std::left << std::setw(28) << name.substr(0, 27) << std::right << std::setw(10)
         << json_fmt(r["a_latency_ms"]) << std::setw(10) << json_fmt(r["b_latency_ms"]) << std::setw(10)
         << signed_fmt(r["d_latency_ms"]) << std::setw(11) << rate(r["a_flops_per_s"]) << std::setw(11)
         << rate(r["b_flops_per_s"]) << "\n";
    }
  }
  for (const auto& n : d.notes) os << "\nnote: " << n << "\n";
}

}  // namespace

const FormatTable<RunDiffWriter>& run_diff_writers() {
  using F = OutputFormat;
  static const FormatTable<RunDiffWriter> table("a diff of run reports",
                                                {
                                                    {F::Text, write_run_diff_text},
                                                    {F::Json, write_run_diff_json},
                                                    {F::Markdown, write_run_diff_markdown},
                                                });
  return table;
}

}  // namespace flopwise
