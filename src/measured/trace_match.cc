// src/measured/trace_match.cc — a PyTorch trace matched to the static side (flopwise/torch_trace.h): its GPU
// name to a roofline device (match_trace_hardware), its module scopes to a model's static module tree
// (match_trace_scopes, flopwise run MODEL --profile TRACE).
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "flopwise/torch_trace.h"

namespace flopwise {

namespace {

// The GPU names of src/analysis/hardware.def's TRACE_GPU rows, in their order.
struct TraceGpu {
  const char* device;
  const char* name_has;
  const char* qualifier;       // "" for none
  int64_t or_memory_over_gib;  // 0 for none
};
constexpr TraceGpu kTraceGpus[] = {
#define TRACE_GPU(device, name_has, qualifier, gib) {device, name_has, qualifier, gib},
#include "../analysis/hardware.def"
};

}  // namespace

std::optional<Hardware> match_trace_hardware(const std::string& device, int64_t memory, std::string* note) {
  std::string d;
  for (char c : device) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto has = [&](const char* s) { return d.find(s) != std::string::npos; };
  std::string row;
  for (const TraceGpu& g : kTraceGpus) {
    const bool plain = !*g.qualifier && g.or_memory_over_gib == 0;
    if (has(g.name_has) && (plain || (*g.qualifier && has(g.qualifier)) ||
                            (g.or_memory_over_gib > 0 && memory > (g.or_memory_over_gib << 30)))) {
      row = g.device;
      break;
    }
  }
  if (row.empty()) {
    if (note)
      *note = "no roofline row for \"" + device + "\" (--hardware NAME or --hardware-file FILE gives one)";
    return std::nullopt;
  }
  if (note) *note = "\"" + device + "\" matched to the table's " + row;
  return find_hardware(row);
}

namespace {

bool same_module(const TraceScope& t, const ScopeNode& s) {
  return t.label == s.label || (!s.cls.empty() && trace_scope_class(t.label) == s.cls);
}

void match_level(const TraceReport& r, int t, const ScopeNode& s,
                 std::map<std::string, std::vector<int>>& out) {
  out[s.name].push_back(t);
  const auto& kids = r.scopes[static_cast<size_t>(t)].children;
  size_t cursor = 0;
  for (const auto& c : s.children) {
    for (size_t k = cursor; k < kids.size(); ++k)
      if (same_module(r.scopes[static_cast<size_t>(kids[k])], *c)) {
        match_level(r, kids[k], *c, out);
        cursor = k + 1;
        break;
      }
  }
}

}  // namespace

std::string trace_scope_class(const std::string& label) {
  size_t u = label.rfind('_');
  if (u == std::string::npos || u + 1 == label.size()) return "";
  for (size_t i = u + 1; i < label.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(label[i]))) return "";
  return label.substr(0, u);
}

std::map<std::string, std::vector<int>> match_trace_scopes(const TraceReport& r, const ScopeNode& root) {
  std::map<std::string, std::vector<int>> out;
  if (r.scopes.empty()) return out;
  int start = 0;
  if (!root.cls.empty())
    for (size_t i = 1; i < r.scopes.size(); ++i)
      if (r.scopes[i].label == root.cls || trace_scope_class(r.scopes[i].label) == root.cls) {
        start = static_cast<int>(i);
        break;
      }
  match_level(r, start, root, out);
  return out;
}

}  // namespace flopwise
