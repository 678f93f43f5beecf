// src/writers/trace_report.cc — a PyTorch trace's report and the diff of two (flopwise/trace_report.h): text,
// JSON, CSV.
#include "flopwise/trace_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "flopwise/json_text.h"
#include "flopwise/run_report.h"
#include "flopwise/writers.h"
#include "trace_serving.h"

namespace flopwise {

namespace {

using json = nlohmann::ordered_json;

std::string pad(const std::string& s, size_t w, bool left = false) {
  if (s.size() >= w) return s;
  return left ? s + std::string(w - s.size(), ' ') : std::string(w - s.size(), ' ') + s;
}
std::string clip(const std::string& s, size_t w) { return s.size() <= w ? s : s.substr(0, w - 3) + "..."; }
double costed_us(const TraceRow& r) { return std::max(0.0, r.gpu_us - r.uncosted_gpu_us); }
// Achieved rates over the GPU time of the priced ops (an uncosted op's time is no one's FLOPs).
double tflops(const TraceRow& r) { return costed_us(r) > 0 ? r.flops / costed_us(r) / 1e6 : 0; }
double gbs(const TraceRow& r) { return costed_us(r) > 0 ? r.bytes / costed_us(r) / 1e3 : 0; }
double roofline_pct(const TraceRow& r) { return costed_us(r) > 0 ? 100.0 * r.bound_us / costed_us(r) : 0; }
const char* bound_kind(const TraceRow& r) {
  if (r.bound_us <= 0) return "";
  return r.compute_bound_us * 2 > r.bound_us ? "compute" : "memory";
}
std::string count_text(const TraceRow& r, int64_t v) {
  return r.overflow ? "overflow" : human(static_cast<double>(v));
}

json row_json(const TraceRow& r, bool has_hw) {
  json j;
  j["name"] = r.name;
  j["calls"] = r.calls;
  j["cpu_us"] = r.cpu_us;
  j["gpu_us"] = r.gpu_us;
  j["kernels"] = r.kernels;
  if (r.overflow) {
    j["macs"] = nullptr, j["flops"] = nullptr, j["bytes"] = nullptr;
  } else {
    j["macs"] = r.macs, j["flops"] = r.flops, j["bytes"] = r.bytes;
  }
  j["uncosted_calls"] = r.uncosted;
  j["uncosted_gpu_us"] = r.uncosted_gpu_us;
  j["achieved_tflops"] = tflops(r);
  j["achieved_gbs"] = gbs(r);
  j["achieved_cpu_gflops"] = trace_cpu_gflops(r);
  if (has_hw) {
    j["bound_us"] = r.bound_us;
    j["roofline_pct"] = roofline_pct(r);
    j["bound_by"] = bound_kind(r);
  }
  if (!r.dtype.empty()) j["dtype"] = r.dtype;
  if (!r.why.empty()) j["why"] = r.why;
  return j;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

void table_header(std::ostream& os, const std::string& first, size_t w, bool hw) {
  os << pad(first, w, true) << pad("calls", 8) << pad("CPU ms", 10) << pad("GPU ms", 10) << pad("FLOPs", 11)
     << pad("TFLOP/s", 9) << pad("GB/s", 8);
  if (hw) os << pad("roofline", 10) << "  bound";
  os << "\n";
}
void table_row(std::ostream& os, const std::string& first, size_t w, const TraceRow& r, double steps,
               bool hw) {
  os << pad(clip(first, w - 1), w, true)
     << pad(fmt(r.calls / steps, r.calls % static_cast<int64_t>(steps) ? 1 : 0), 8)
     << pad(fmt(r.cpu_us / steps / 1000, 3), 10) << pad(fmt(r.gpu_us / steps / 1000, 3), 10)
     << pad(r.uncosted == r.calls && r.calls > 0 ? "-" : count_text(r, static_cast<int64_t>(r.flops / steps)),
            11)
     << pad(costed_us(r) > 0 && r.flops > 0 ? fmt(tflops(r), 2) : "-", 9)
     << pad(costed_us(r) > 0 && r.bytes > 0 ? fmt(gbs(r), 0) : "-", 8);
  if (hw)
    os << pad(r.bound_us > 0 && costed_us(r) > 0 ? fmt(roofline_pct(r), 1) + " %" : "-", 10) << "  "
       << bound_kind(r);
  os << "\n";
}

}  // namespace

void write_trace_text(std::ostream& os, const TraceReport& r, const TraceTextOptions& opts) {
  if (r.gpu_events == 0 && r.cpu_ops > 0) return write_trace_cpu_text(os, r, opts);  // a CPU-only trace
  const double steps = static_cast<double>(std::max<size_t>(1, r.steps.size()));
  const bool hw = r.hw.has_value();
  os << "PyTorch trace:  " << r.path << "\n";
  os << "device:         " << (r.device.empty() ? "(not named)" : r.device);
  os << "; roofline: " << (hw ? r.hw->name : "none") << " (" << r.hw_note << ")\n";
  std::vector<double> cpu, busy, span;
  for (const auto& s : r.steps)
    cpu.push_back(s.cpu_us), busy.push_back(s.gpu_busy_us), span.push_back(s.gpu_span_us);
  os << "steps:          " << r.steps.size();
  if (r.steps.size() > 1 || (r.steps.size() == 1 && r.steps[0].name != "whole trace"))
    os << " (" << r.steps.front().name << (r.steps.size() > 1 ? " .. " + r.steps.back().name : "") << ")";
  os << "; per step, median: CPU " << fmt(median(cpu) / 1000, 3) << " ms, GPU busy "
     << fmt(median(busy) / 1000, 3) << " ms of a " << fmt(median(span) / 1000, 3) << " ms span ("
     << fmt(median(span) > 0 ? 100.0 * median(busy) / median(span) : 0.0, 1) << " % busy)\n";
  os << "events:         " << r.events << " read; " << r.cpu_ops << " ops priced or listed, " << r.gpu_events
     << " GPU events (" << fmt(r.gpu_kernel_us / 1000, 3) << " ms); " << r.distinct_calls
     << " distinct recorded calls\n";
  write_graph_replay_text(os, r);
  int64_t uncosted_calls = r.total.uncosted;
  os << "costed:         " << (r.total.calls - uncosted_calls) << " of " << r.total.calls
     << " ops; uncosted GPU time " << fmt(r.total.uncosted_gpu_us / 1000, 3) << " ms ("
     << fmt(r.total.gpu_us > 0 ? 100.0 * r.total.uncosted_gpu_us / r.total.gpu_us : 0.0, 1) << " %)\n";
  write_serving_kinds_text(os, r);
  for (const auto& [dev, bytes] : r.memory_peak)
    if (bytes > 0)
      os << "memory peak:    " << (dev < 0 ? std::string("cpu") : "device " + std::to_string(dev)) << " "
         << fmt(bytes / 1048576.0, 1) << " MiB allocated\n";
  os << "\nper step (mean of " << r.steps.size()
     << "); FLOPs and MACs from the recorded shapes; TFLOP/s and GB/s "
     << "over the priced ops' GPU time\n";
  table_header(os, "phase", 34, hw);
  for (const char* p : {"forward", "backward", "optimizer"}) {
    auto it = r.phases.find(p);
    if (it != r.phases.end()) table_row(os, p, 34, it->second, steps, hw);
  }
  table_row(os, "total", 34, r.total, steps, hw);

  os << "\nby module scope\n";
  table_header(os, "scope", 48, hw);
  for (const auto& s : r.scopes) {
    if (opts.depth >= 0 && s.depth > opts.depth) continue;
    table_row(os, std::string(static_cast<size_t>(2 * s.depth), ' ') + s.label, 48, s.row, steps, hw);
  }

  os << "\ntop ops by GPU time\n";
  table_header(os, "op", 48, hw);
  int k = 0;
  for (const auto& o : r.ops) {
    if (opts.top >= 0 && k++ >= opts.top) break;
    table_row(os, o.name, 48, o, steps, hw);
  }
  os << "\ntop kernels by GPU time\n";
  os << pad("kernel", 72, true) << pad("calls", 8) << pad("GPU ms", 10) << pad("share", 8) << "\n";
  k = 0;
  for (const auto& o : r.kernels) {
    if (opts.top >= 0 && k++ >= opts.top) break;
    os << pad(clip(o.name, 71), 72, true)
       << pad(fmt(o.calls / steps, o.calls % static_cast<int64_t>(steps) ? 1 : 0), 8)
       << pad(fmt(o.gpu_us / steps / 1000, 3), 10)
       << pad(fmt(r.gpu_kernel_us > 0 ? 100.0 * o.gpu_us / r.gpu_kernel_us : 0.0, 1) + " %", 8) << "\n";
  }
  if (!r.uncosted.empty()) {
    os << "\nnot costed (" << r.uncosted.size() << " op names; by GPU time)\n";
    os << pad("op", 48, true) << pad("calls", 8) << pad("GPU ms", 10) << "  why\n";
    k = 0;
    for (const auto& o : r.uncosted) {
      if (opts.top >= 0 && k++ >= opts.top) {
        os << "  ... " << (r.uncosted.size() - static_cast<size_t>(opts.top))
           << " more (--top, or --format json)\n";
        break;
      }
      os << pad(clip(o.name, 47), 48, true)
         << pad(fmt(o.calls / steps, o.calls % static_cast<int64_t>(steps) ? 1 : 0), 8)
         << pad(fmt(o.gpu_us / steps / 1000, 3), 10) << "  " << o.why << "\n";
    }
  }
  for (const auto& w : r.warnings) os << "warning: " << w << "\n";
}

void write_trace_json(std::ostream& os, const TraceReport& r) {
  const bool hw = r.hw.has_value();
  json j;
  j["schema"] = "flopwise.trace/1";
  j["flopwise_version"] = flopwise_version();
  j["path"] = r.path;
  j["device"] = r.device;
  j["hardware"] = {{"name", hw ? json(r.hw->name) : json(nullptr)}, {"note", r.hw_note}};
  j["events"] = {
      {"read", r.events}, {"ops", r.cpu_ops}, {"gpu", r.gpu_events}, {"distinct_calls", r.distinct_calls}};
  j["gpu"] = {{"event_us", r.gpu_kernel_us},
              {"busy_us", r.gpu_busy_us},
              {"span_us", r.gpu_span_us},
              {"unattributed_us", r.unattributed_gpu_us},
              {"unattributed_events", r.unattributed_kernels}};
  json steps = json::array();
  for (const auto& s : r.steps)
    steps.push_back({{"name", s.name},
                     {"cpu_us", s.cpu_us},
                     {"gpu_busy_us", s.gpu_busy_us},
                     {"gpu_span_us", s.gpu_span_us}});
  j["steps"] = steps;
  if (r.graph_replay) j["graph_replay"] = graph_replay_json(r);
  if (auto sj = serving_json(r); !sj.is_null()) j["serving"] = sj;
  j["totals"] = row_json(r.total, hw);
  json phases = json::object();
  for (const auto& [k, v] : r.phases) phases[k] = row_json(v, hw);
  j["phases"] = phases;
  json scopes = json::array();
  for (const auto& s : r.scopes) {
    json sj = row_json(s.row, hw);
    sj.erase("name");
    json out = {{"path", s.path}, {"label", s.label}, {"depth", s.depth}, {"self_gpu_us", s.self_gpu_us}};
    out.update(sj);
    scopes.push_back(out);
  }
  j["scopes"] = scopes;
  json ops = json::array(), kernels = json::array(), unc = json::array();
  for (const auto& o : r.ops) ops.push_back(row_json(o, hw));
  for (const auto& o : r.kernels)
    kernels.push_back({{"name", o.name}, {"calls", o.calls}, {"gpu_us", o.gpu_us}});
  for (const auto& o : r.uncosted)
    unc.push_back({{"name", o.name}, {"calls", o.calls}, {"gpu_us", o.gpu_us}, {"why", o.why}});
  j["ops"] = ops;
  j["kernels"] = kernels;
  j["uncosted"] = unc;
  json mem = json::object();
  for (const auto& [d, b] : r.memory_peak) mem[d < 0 ? "cpu" : std::to_string(d)] = b;
  j["memory_peak_bytes"] = mem;
  j["warnings"] = r.warnings;
  os << j.dump(1) << "\n";
}

void write_trace_csv(std::ostream& os, const TraceReport& r) {
  os << "level,name,calls,cpu_us,gpu_us,kernels,macs,flops,bytes,uncosted_calls,uncosted_gpu_us,achieved_"
        "tflops,"
        "bound_us\n";
  auto q = [](const std::string& s) {
    std::string o = "\"";
    for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
  };
  auto line = [&](const char* level, const std::string& name, const TraceRow& x) {
    os << level << "," << q(name) << "," << x.calls << "," << fmt(x.cpu_us, 3) << "," << fmt(x.gpu_us, 3)
       << "," << x.kernels << ",";
    if (x.overflow)
      os << ",,,";
    else
      os << x.macs << "," << x.flops << "," << x.bytes << ",";
    os << x.uncosted << "," << fmt(x.uncosted_gpu_us, 3) << "," << fmt(tflops(x), 4) << ","
       << fmt(x.bound_us, 3) << "\n";
  };
  for (const auto& s : r.scopes) line("scope", s.path, s.row);
  for (const auto& o : r.ops) line("op", o.name, o);
  for (const auto& o : r.kernels) line("kernel", o.name, o);
}

// ---- diff ----

TraceDiff diff_traces(const TraceReport& a, const TraceReport& b) {
  TraceDiff d;
  d.a = &a;
  d.b = &b;
  auto pair_up = [&](const char* level, const std::vector<std::pair<std::string, const TraceRow*>>& ra,
                     const std::vector<std::pair<std::string, const TraceRow*>>& rb) {
    std::map<std::string, const TraceRow*> mb(rb.begin(), rb.end());
    std::set<std::string> seen;
    for (const auto& [name, row] : ra) {
      auto it = mb.find(name);
      d.rows.push_back({level, name, row, it == mb.end() ? nullptr : it->second});
      seen.insert(name);
    }
    for (const auto& [name, row] : rb)
      if (!seen.count(name)) d.rows.push_back({level, name, nullptr, row});
  };
  auto scopes = [](const TraceReport& r) {
    std::vector<std::pair<std::string, const TraceRow*>> v;
    for (const auto& s : r.scopes) v.emplace_back(s.path, &s.row);
    return v;
  };
  auto rows = [](const std::vector<TraceRow>& rs) {
    std::vector<std::pair<std::string, const TraceRow*>> v;
    for (const auto& x : rs) v.emplace_back(x.name, &x);
    return v;
  };
  pair_up("scope", scopes(a), scopes(b));
  pair_up("op", rows(a.ops), rows(b.ops));
  pair_up("kernel", rows(a.kernels), rows(b.kernels));
  return d;
}

namespace {
double per_step_ms(const TraceRow* r, const TraceReport* t) {
  return r ? r->gpu_us / static_cast<double>(std::max<size_t>(1, t->steps.size())) / 1000 : 0;
}
}  // namespace

void write_trace_diff_text(std::ostream& os, const TraceDiff& d, const TraceTextOptions& opts) {
  const TraceReport& a = *d.a;
  const TraceReport& b = *d.b;
  double sa = static_cast<double>(std::max<size_t>(1, a.steps.size())),
         sb = static_cast<double>(std::max<size_t>(1, b.steps.size()));
  os << "A: " << a.path << " (" << (a.device.empty() ? "device not named" : a.device) << ", "
     << a.steps.size() << " steps)\n";
  os << "B: " << b.path << " (" << (b.device.empty() ? "device not named" : b.device) << ", "
     << b.steps.size() << " steps)\n";
  os << "per step: GPU ms of the events attributed, calls, FLOPs from the recorded shapes, TFLOP/s over the "
        "priced ops' GPU time\n";
  auto hdr = [&](const char* what, size_t w) {
    os << "\n"
       << pad(what, w, true) << pad("A ms", 10) << pad("B ms", 10) << pad("delta", 10) << pad("change", 9)
       << pad("A calls", 9) << pad("B calls", 9) << pad("A FLOPs", 11) << pad("B FLOPs", 11)
       << pad("A TFLOP/s", 11) << pad("B TFLOP/s", 11) << "\n";
  };
  auto line = [&](const TraceDiffRow& r, const std::string& label, size_t w) {
    double ma = per_step_ms(r.a, &a), mb = per_step_ms(r.b, &b);
    std::string change = !r.a     ? "added"
                         : !r.b   ? "removed"
                         : ma > 0 ? fmt(100.0 * (mb - ma) / ma, 1) + " %"
                                  : "-";
    const bool kernel = r.level == "kernel";  // kernels carry no FLOPs of their own
    auto fl = [&](const TraceRow* x, double s) {
      return !x || kernel ? std::string("-") : x->overflow ? std::string("overflow") : human(x->flops / s);
    };
    auto calls = [](const TraceRow* x, double s) {  // per step, as the times are
      return x ? fmt(static_cast<double>(x->calls) / s, x->calls % static_cast<int64_t>(s) ? 1 : 0)
               : std::string("-");
    };
    auto tf = [](const TraceRow* x) {
      return x && costed_us(*x) > 0 && x->flops > 0 ? fmt(tflops(*x), 2) : std::string("-");
    };
    os << pad(clip(label, w - 1), w, true) << pad(fmt(ma, 3), 10) << pad(fmt(mb, 3), 10)
       << pad((mb >= ma ? "+" : "") + fmt(mb - ma, 3), 10) << pad(change, 9) << pad(calls(r.a, sa), 9)
       << pad(calls(r.b, sb), 9) << pad(fl(r.a, sa), 11) << pad(fl(r.b, sb), 11) << pad(tf(r.a), 11)
       << pad(tf(r.b), 11) << "\n";
  };
  for (const char* level : {"scope", "op", "kernel"}) {
    std::vector<const TraceDiffRow*> rows;
    for (const auto& r : d.rows)
      if (r.level == level) rows.push_back(&r);
    size_t w = std::string(level) == "kernel" ? 60 : 48;
    hdr(std::string(level) == "scope" ? "scope"
        : std::string(level) == "op"  ? "op (by |delta|)"
                                      : "kernel (by |delta|)",
        w);
    if (std::string(level) != "scope")
      std::stable_sort(rows.begin(), rows.end(), [&](const TraceDiffRow* x, const TraceDiffRow* y) {
        return std::fabs(per_step_ms(x->b, &b) - per_step_ms(x->a, &a)) >
               std::fabs(per_step_ms(y->b, &b) - per_step_ms(y->a, &a));
      });
    int k = 0;
    for (const auto* r : rows) {
      if (std::string(level) == "scope") {
        int depth =
            static_cast<int>(std::count(r->name.begin(), r->name.end(), '.')) + (r->name.empty() ? 0 : 1);
        if (opts.depth >= 0 && depth > opts.depth) continue;
        std::string label =
            r->name.empty()
                ? "(trace)"
                : r->name.substr(r->name.rfind('.') == std::string::npos ? 0 : r->name.rfind('.') + 1);
        line(*r, std::string(static_cast<size_t>(2 * depth), ' ') + label, w);
      } else {
        if (opts.top >= 0 && k++ >= opts.top) break;
        line(*r, r->name, w);
      }
    }
  }
}

void write_trace_diff_json(std::ostream& os, const TraceDiff& d) {
  json j;
  j["schema"] = "flopwise.trace_diff/1";
  j["flopwise_version"] = flopwise_version();
  j["a"] = {{"path", d.a->path}, {"device", d.a->device}, {"steps", d.a->steps.size()}};
  j["b"] = {{"path", d.b->path}, {"device", d.b->device}, {"steps", d.b->steps.size()}};
  json rows = json::array();
  for (const auto& r : d.rows) {
    json x = {{"level", r.level}, {"name", r.name}};
    x["a"] = r.a ? row_json(*r.a, d.a->hw.has_value()) : json(nullptr);
    x["b"] = r.b ? row_json(*r.b, d.b->hw.has_value()) : json(nullptr);
    if (x["a"].is_object()) x["a"].erase("name");
    if (x["b"].is_object()) x["b"].erase("name");
    x["delta_gpu_us"] = (r.b ? r.b->gpu_us : 0.0) - (r.a ? r.a->gpu_us : 0.0);
    x["delta_gpu_us_per_step"] = per_step_ms(r.b, d.b) * 1000 - per_step_ms(r.a, d.a) * 1000;
    x["delta_calls"] = (r.b ? r.b->calls : 0) - (r.a ? r.a->calls : 0);
    x["status"] = !r.a                        ? "added"
                  : !r.b                      ? "removed"
                  : r.b->gpu_us > r.a->gpu_us ? "increased"
                  : r.b->gpu_us < r.a->gpu_us ? "decreased"
                                              : "same";
    rows.push_back(x);
  }
  j["rows"] = rows;
  os << j.dump(1) << "\n";
}

// ---- HTML: the report page of the writers (write_html), its tree the trace's scopes, drawn by measured time
// ----

namespace {

Count count_of(const TraceRow& r, int64_t v, double steps) {
  if (r.overflow) return Count::unknown();
  return Count(static_cast<int64_t>(static_cast<double>(v) / steps));
}

std::unique_ptr<ScopeNode> scope_node(const TraceReport& r, int i, double steps) {
  const TraceScope& s = r.scopes[static_cast<size_t>(i)];
  auto n = std::make_unique<ScopeNode>();
  n->name = s.path;
  n->label = i == 0 ? "(trace)" : s.label;
  n->cls = trace_scope_class(s.label);
  n->cost.params = Count(0);
  n->cost.macs = count_of(s.row, s.row.macs, steps);
  n->cost.flops = count_of(s.row, s.row.flops, steps);
  n->cost.memory_bytes = count_of(s.row, s.row.bytes, steps);
  for (int c : s.children) n->children.push_back(scope_node(r, c, steps));
  return n;
}

}  // namespace

void write_trace_html(std::ostream& os, const TraceReport& r) {
  const double steps = static_cast<double>(std::max<size_t>(1, r.steps.size()));
  AnalysedReport rep;  // with no analyses: the page's costs only
  rep.path = r.path;
  rep.format = model_format_name(ModelFormat::PytorchTrace);
  rep.producer = r.device.empty() ? "" : r.device;
  rep.scopes = scope_node(r, 0, steps);
  rep.totals.params = Count(0);
  rep.totals.macs = count_of(r.total, r.total.macs, steps);
  rep.totals.flops = count_of(r.total, r.total.flops, steps);
  rep.totals.memory_bytes = count_of(r.total, r.total.bytes, steps);
  rep.totals.uncounted = r.total.uncosted;
  for (const auto& o : r.ops) {
    OpTypeReport t;
    t.op = o.name;
    t.count = static_cast<int64_t>(std::llround(static_cast<double>(o.calls) / steps));
    t.macs = count_of(o, o.macs, steps);
    t.flops = count_of(o, o.flops, steps);
    t.memory_bytes = count_of(o, o.bytes, steps);
    rep.op_types.push_back(t);
  }
  rep.warnings.push_back(
      "per profiler step (the mean of " + std::to_string(r.steps.size()) +
      "): FLOPs, MACs and bytes of the priced ops; measured latency = GPU time attributed");
  for (const auto& u : r.uncosted)
    if (rep.warnings.size() < 12) rep.warnings.push_back("not costed: " + u.name + " (" + u.why + ")");
  for (const auto& w : r.warnings) rep.warnings.push_back(w);
  std::map<std::string, double> latency;
  for (const auto& s : r.scopes) latency[s.path] = s.row.gpu_us / steps / 1000.0;
  write_html(os, rep, nullptr, &latency);
}

}  // namespace flopwise
