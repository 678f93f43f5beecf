// src/writers/deepspeed_text.cc — the text report in the layout of DeepSpeed's flops profiler as its early
// releases printed it (the layout of ../shared/reference/deepspeed_flops_profiler_output.txt): summary,
// aggregated profile per depth, detailed profile, with its number formats. flopwise counts without running,
// so the latency rows are left out. Used for --convention deepspeed_legacy (report.cc's write_text).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "flopwise/infer.h"
#include "flopwise/writers.h"

namespace flopwise {

namespace {

// Python's str(round(x, 2)): two decimals at most, trailing zeros dropped, one kept ("12.6", "4.0",
// "1031.3").
std::string py_round2(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", std::nearbyint(x * 100.0) / 100.0);
  std::string s = buf;
  while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}

// DeepSpeed's number formats: params_to_string ("336.23 M", "49.15 k", "2"), macs_to_string ("3139.93 GMACs",
// "0 MACs"), num_to_string ("6279.86 G"). A count flopwise cannot give as a number (a formula in a
// data-dependent size, an unknown) is printed as flopwise prints it.
std::string ds_number(const Count& c, const char* const units[4], const char* plain_suffix) {
  if (!c.known) return human(c) + (c.symbolic() && *units[3] ? std::string(" ") + units[3] : "");
  const int64_t v = c.v;
  if (v / 1000000000 > 0 && units[0]) return py_round2(static_cast<double>(v) / 1e9) + units[0];
  if (v / 1000000 > 0) return py_round2(static_cast<double>(v) / 1e6) + units[1];
  if (v / 1000 > 0) return py_round2(static_cast<double>(v) / 1e3) + units[2];
  return std::to_string(v) + plain_suffix;
}
std::string ds_params(const Count& c) {
  static const char* const u[4] = {nullptr, " M", " k", "params"};
  return ds_number(c, u, "");
}
std::string ds_macs(const Count& c) {
  static const char* const u[4] = {" GMACs", " MMACs", " KMACs", "MACs"};
  return ds_number(c, u, " MACs");
}
std::string ds_num(const Count& c) {
  static const char* const u[4] = {" G", " M", " K", ""};
  return ds_number(c, u, "");
}
// "{:.2%}"; "-%" where a figure is a formula or unknown.
std::string ds_pct(const Count& part, const Count& whole) {
  if (!part.known || !whole.known) return "-%";
  char buf[32];
  double f = whole.v != 0 ? static_cast<double>(part.v) / static_cast<double>(whole.v) : 0.0;
  std::snprintf(buf, sizeof buf, "%.2f%%", 100.0 * f);
  return buf;
}

void ds_line(std::ostream& os, const std::string& k, const std::string& v) {
  std::string key = k;
  key.resize(std::max<size_t>(key.size(), 60), ' ');
  os << key << "  " << v << "\n";
}

void ds_tree(std::ostream& os, const ScopeNode& s, const Totals& total, int max_d,
             const std::string& indent) {
  const std::string figures =
      ds_params(s.cost.params) + ", " + ds_pct(s.cost.params, total.params) + " Params, " +
      ds_macs(s.cost.macs) + ", " + ds_pct(s.cost.macs, total.macs) + " MACs" +
      (s.cost.uncounted ? ", " + std::to_string(s.cost.uncounted) + " nodes not counted" : "");
  const std::string head = std::string(s.depth == 0 ? "" : "(" + s.label + "): ") + std::string(scope_key(s));
  if (s.children.empty()) {
    os << indent << head << "(" << figures << ")\n";
    return;
  }
  os << indent << head << "(\n" << indent << "  " << figures << ",\n";
  if (max_d < 0 || s.depth < max_d) {
    for (const auto& c : s.children) ds_tree(os, *c, total, max_d, indent + "  ");
  } else {
    os << indent << "  ...\n";
  }
  os << indent << ")\n";
}

}  // namespace

void write_deepspeed_text(std::ostream& os, const Report& r, const TextOptions& opts) {
  const Totals& t = r.totals;
  os << "-------------------------- DeepSpeed Flops Profiler --------------------------\n";
  os << "Profile Summary (flopwise: counted from " << r.path
     << " without running it, as DeepSpeed's early flops profiler counted):\n";
  os << "Notations:\n"
        "data parallel size (dp_size), model parallel size(mp_size),\n"
        "number of parameters (params), number of multiply-accumulate operations(MACs),\n"
        "number of floating-point operations (flops), floating-point operations per second (FLOPS),\n"
        "fwd latency (forward propagation latency), bwd latency (backward propagation latency),\n"
        "step (weights update latency), iter latency (sum of fwd, bwd and step latency)\n\n";
  ds_line(os, "params per gpu:", ds_params(t.params));
  ds_line(os, "params of model = params per GPU * mp_size:", ds_params(t.params));
  ds_line(os, "fwd MACs per GPU:", ds_num(t.macs));
  ds_line(os, "fwd flops per GPU:", ds_num(t.flops));
  ds_line(os, "fwd flops of model = fwd flops per GPU * mp_size:", ds_num(t.flops));
  os << "Note: MACs are the profiler's own figure, not flopwise's (docs/conventions.md): F.linear "
        "and "
        "F.conv products plus the input elements of F.softmax, activations, norms and pools; torch.matmul 0; "
        "flops = 2 x MACs.\n";
  for (const DataDepSymbol& d : r.symbols)
    os << "Note: data-dependent size " << d.bounds_text()
       << (d.value ? " = " + std::to_string(*d.value) + " (--dim)"
                   : std::string(": bind it with --dim ") + d.name + "=N")
       << " (" << d.op << (d.scope.empty() ? "" : " in " + d.scope) << ")\n";
  if (t.uncounted)
    os << "Note: " << t.uncounted
       << " node(s) not counted: the figures are lower bounds (see the warnings).\n";

  os << "\n----------------------------- Aggregated Profile per GPU -----------------------------\n";
  os << "Top " << opts.top << " modules in terms of params, MACs or fwd latency at different model depths:\n";
  std::vector<std::vector<const ScopeNode*>> by_depth;
  collect_depths(*r.scopes, by_depth);
  // As the profiler: depths 0 to the deepest but one, unless --depth says otherwise.
  int last = static_cast<int>(by_depth.size()) - 2;
  if (opts.depth >= 0) last = std::min(static_cast<int>(by_depth.size()) - 1, opts.depth);
  for (int d = 0; d <= std::max(last, 0) && d < static_cast<int>(by_depth.size()); ++d) {
    // Per class in first-seen (declaration) order; sorted by value, descending, ties in that order.
    std::vector<std::string> keys;
    std::unordered_map<std::string, size_t> slot;
    std::vector<Count> params, macs;
    for (const ScopeNode* s : by_depth[d]) {
      auto [it, fresh] = slot.try_emplace(std::string(scope_key(*s)), keys.size());
      if (fresh) {
        keys.push_back(it->first);
        params.emplace_back();
        macs.emplace_back();
      }
      params[it->second] += s->cost.params;
      macs[it->second] += s->cost.macs;
    }
    auto top = [&](const char* what, const std::vector<Count>& v, std::string (*fmt)(const Count&)) {
      std::vector<size_t> order(keys.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return rank_value(v[a]) > rank_value(v[b]); });
      order.resize(std::min<size_t>(order.size(), static_cast<size_t>(std::max(opts.top, 0))));
      os << "    " << what << " - {";
      for (size_t i = 0; i < order.size(); ++i)
        os << (i ? ", " : "") << "'" << keys[order[i]] << "': '" << fmt(v[order[i]]) << "'";
      os << "}\n";
    };
    os << "depth " << d << ":\n";
    top("params     ", params, ds_params);
    top("MACs       ", macs, ds_macs);
  }

  os << "\n------------------------------ Detailed Profile per GPU ------------------------------\n";
  os << "Each module profile is listed after its name in the following order:\n"
        "params, percentage of total params, MACs, percentage of total MACs\n\n";
  ds_tree(os, *r.scopes, t, opts.depth, "");
  if (!r.warnings.empty()) {
    os << "\n---------------------------------- Warnings ----------------------------------\n";
    for (const auto& w : r.warnings) os << "warning: " << w << "\n";
  }
  os << "------------------------------------------------------------------------------\n";
}

}  // namespace flopwise
