// JSON writer: schema "flopwise.report/1" (documented in the README). Exact integers; null = unknown.
#include <functional>
#include <nlohmann/json.hpp>

#include "flopwise/report.h"

namespace flopwise {

namespace {
using json = nlohmann::ordered_json;

// An integer; a polynomial in the dynamic dims as a string ("2359296*batch*seq"); null when unknown.
json count(const Count& c) {
  if (c.known) return json(c.v);
  return c.symbolic() ? json(c.sym.str()) : json(nullptr);
}

json shape_json(const Shape& s) {
  if (!s.rank_known) return nullptr;
  json a = json::array();
  for (const auto& d : s.dims) {
    if (d.is_known())
      a.push_back(d.value());
    else if (d.is_symbolic())
      a.push_back(d.str());
    else
      a.push_back(nullptr);
  }
  return a;
}

json totals_json(const Totals& t) {
  return json{{"params", count(t.params)},
              {"buffers", count(t.buffers)},
              {"macs", count(t.macs)},
              {"flops", count(t.flops)},
              {"memory_bytes", count(t.memory_bytes)},
              {"backward_flops", count(t.backward_flops)},
              {"uncounted_nodes", t.uncounted}};
}

json scope_json(const ScopeNode& s) {
  json j{{"name", s.name},
         {"label", s.label},
         {"class", s.cls.empty() ? json(nullptr) : json(s.cls)},
         {"params", count(s.cost.params)},
         {"macs", count(s.cost.macs)},
         {"flops", count(s.cost.flops)},
         {"memory_bytes", count(s.cost.memory_bytes)},
         {"uncounted_nodes", s.cost.uncounted}};
  json ch = json::array();
  for (const auto& c : s.children) ch.push_back(scope_json(*c));
  j["children"] = ch;
  return j;
}
}  // namespace

void write_json(std::ostream& os, const Report& r) {
  json j;
  j["schema"] = "flopwise.report/1";
  json opsets = json::object();
  for (const auto& [d, v] : r.opsets) opsets[d.empty() ? "ai.onnx" : d] = v;
  j["model"] = {{"path", r.path}, {"format", r.format}, {"producer", r.producer}, {"opset", opsets}};
  j["convention"] = r.convention;
  auto io = [](const auto& vs) {
    json a = json::array();
    for (const auto& [name, ts] : vs)
      a.push_back({{"name", name}, {"dtype", dtype_name(ts.first)}, {"shape", shape_json(ts.second)}});
    return a;
  };
  j["inputs"] = io(r.inputs);
  j["outputs"] = io(r.outputs);
  j["totals"] = totals_json(r.totals);
  j["totals_complete"] = r.totals.complete();
  j["scopes"] = scope_json(*r.scopes);
  json ops = json::array();
  for (const auto& o : r.op_types)
    ops.push_back({{"op", o.op},
                   {"count", o.count},
                   {"macs", count(o.macs)},
                   {"flops", count(o.flops)},
                   {"params", count(o.params)},
                   {"memory_bytes", count(o.memory_bytes)}});
  j["op_types"] = ops;
  json nodes = json::array();
  for (const auto& n : r.nodes) {
    json outs = json::array();
    for (const auto& [name, s] : n.outputs) outs.push_back({{"name", name}, {"shape", shape_json(s)}});
    nodes.push_back({{"name", n.name},
                     {"op", n.domain.empty() ? n.op : n.domain + "::" + n.op},
                     {"scope", n.scope},
                     {"outputs", outs},
                     {"params", count(n.cost.params)},
                     {"macs", count(n.cost.macs)},
                     {"flops", count(n.cost.flops)},
                     {"memory_bytes", count(n.cost.memory_bytes)}});
  }
  j["nodes"] = nodes;
  json uns = json::array();
  for (const auto& [op, names] : r.unsupported)
    uns.push_back({{"op", op}, {"count", names.size()}, {"nodes", names}});
  j["unsupported"] = uns;
  j["warnings"] = r.warnings;
  os << j.dump(2) << "\n";
}

}  // namespace flopwise
