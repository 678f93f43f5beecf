// src/writers/netron.cc — `--format netron`: a Netron attachment (netron:attachment JSON) carrying each
// node's params, MACs, FLOPs and memory bytes, shown in Netron's sidebar under "Metrics" when opened beside
// the model. Format as Netron's own reader takes it (source/view.js, metadata.Attachment): an object with
// "signature": "netron:attachment" and a "metrics" array of {kind, target, name, value[, type]}, matched to a
// node by kind "node" and its name.
#include <nlohmann/json.hpp>

#include "flopwise/json_text.h"
#include "flopwise/writers.h"

namespace flopwise {

void write_netron(std::ostream& os, const Report& r) {
  using json = nlohmann::ordered_json;
  // Values as in the JSON report: an integer, the polynomial's text for a symbolic count, null if unknown.
  auto value = [](const Count& c) {
    return c.known ? json(c.v) : c.symbolic() ? json(c.sym.str()) : json(nullptr);
  };
  // Written one metric at a time (a document of every node's metrics at once took 16x the output's size in
  // memory), as nlohmann's dump with indent 1 lays out the whole: each entry two levels in.
  std::string entry;
  bool first = true;
  auto add = [&](const char* kind, std::string_view target, const char* name, json v) {
    const std::string text = json_text(
        json{{"kind", kind}, {"target", std::string(target)}, {"name", name}, {"value", std::move(v)}}, 1);
    entry.assign(first ? "\n  " : ",\n  ");
    first = false;
    for (char ch : text) {
      entry += ch;
      if (ch == '\n') entry += "  ";
    }
    os << entry;
  };
  os << "{\n \"signature\": \"netron:attachment\",\n \"producer\": \"flopwise\",\n \"convention\": "
     << json_text(json(r.convention)) << ",\n \"metadata\": [],\n \"metrics\": [";
  for (const auto& n : r.nodes) {
    add("node", n.name, "params", value(n.cost.params));
    add("node", n.name, "MACs", value(n.cost.macs));
    add("node", n.name, "FLOPs", value(n.cost.flops));
    add("node", n.name, "memory bytes", value(n.cost.memory_bytes));
  }
  for (const char* kind : {"model", "graph"}) {  // Netron keys the model and main graph by their names, or ""
    add(kind, "", "params", value(r.totals.params));
    add(kind, "", "MACs", value(r.totals.macs));
    add(kind, "", "FLOPs", value(r.totals.flops));
    add(kind, "", "memory bytes", value(r.totals.memory_bytes));
  }
  os << "\n ]\n}\n";
}

}  // namespace flopwise
