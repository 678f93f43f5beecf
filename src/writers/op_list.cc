// src/writers/op_list.cc — `--list-ops` (the op registry with each op's formula in a convention) and
// `--explain A B` (a model's FLOPs under two conventions, reconciled per op type); flopwise/writers.h.
#include <algorithm>
#include <iomanip>
#include <map>
#include <tuple>

#include "flopwise/convention.h"
#include "flopwise/ops.h"
#include "flopwise/writers.h"

namespace flopwise {

void write_op_list(std::ostream& os, const Convention& conv) {
  auto recs = OpRegistry::instance().records();
  std::sort(recs.begin(), recs.end(), [](const OpRecord& a, const OpRecord& b) {
    return std::tie(a.domain, a.name, a.since_version) < std::tie(b.domain, b.name, b.since_version);
  });
  os << "# convention '" << conv.name << "': " << conv.reproduces << "\n";
  os << "op\topset\tFLOPs formula (convention '" << conv.name << "')\n";
  for (const auto& r : recs) {
    std::string name =
        r.domain.empty() ? std::string(r.name) : std::string(r.domain) + "::" + std::string(r.name);
    std::string range =
        std::to_string(r.since_version) + "-" + (r.until_version ? std::to_string(r.until_version) : "");
    os << name << "\t" << range << "\t" << convention_formula(conv, r) << "\n";
  }
  // Torch functions the .pt importer decomposes, where this convention counts them apart from their ops.
  for (const auto* c : convention_calls(conv)) os << c->call << "\t(.pt call)\t" << c->formula << "\n";
}

// --explain A B: the model's FLOPs under two conventions, reconciled per op type: where they differ, by how
// much, and why (the MAC factor, or the op's non-contraction work counted by one side only).
void write_explain(std::ostream& os, const Model& model, const Report& a, const Report& b,
                   const Convention& ca, const Convention& cb) {
  struct Row {
    int64_t nodes = 0;
    Count macs, fa, fb;
    std::string why;
  };
  std::map<std::string, Row> rows;
  const auto& g = model.graph;
  for (size_t i = 0; i < a.nodes.size() && i < b.nodes.size() && i < g.nodes.size(); ++i) {
    const auto& n = a.nodes[i];
    WorkKind kind = node_work_kind(g, g.nodes[i]);
    std::string key = op_key(g.nodes[i]) + (kind == WorkKind::bias ? " (bias)" : "");
    Row& r = rows[key];
    r.nodes++;
    r.macs += n.cost.macs;
    r.fa += n.cost.flops;
    r.fb += b.nodes[i].cost.flops;
    if (r.why.empty())
      if (const auto* rec = OpRegistry::instance().find(g.nodes[i].domain, g.nodes[i].op, g.nodes[i].opset))
        r.why = std::string(ca.name) + ": " + convention_formula(ca, *rec, kind) + "; " +
                std::string(cb.name) + ": " + convention_formula(cb, *rec, kind);
  }
  std::string an(ca.name), bn(cb.name);
  os << "FLOPs of " << model.path << " in convention '" << an << "' vs '" << bn << "'\n";
  os << "  " << an << ": " << human(a.totals.flops) << ca.unit << "   " << bn << ": " << human(b.totals.flops)
     << cb.unit << "   (MACs " << human(a.totals.macs) << " in both)\n";
  os << "  " << an << ": " << ca.flop_means << "\n  " << bn << ": " << cb.flop_means << "\n\n";
  std::vector<std::pair<std::string, Row>> diff;
  for (auto& [k, r] : rows)
    if (!(r.fa == r.fb)) diff.emplace_back(k, r);
  std::stable_sort(diff.begin(), diff.end(), [](const auto& x, const auto& y) {
    return rank_value(x.second.fa) + rank_value(x.second.fb) >
           rank_value(y.second.fa) + rank_value(y.second.fb);
  });
  if (diff.empty()) {
    os << "  every op type counts the same in both\n";
    return;
  }
  os << "  op type                nodes  " << std::setw(12) << an << std::setw(12) << bn << "  why\n";
  for (const auto& [k, r] : diff) {
    std::string name = k.size() > 22 ? k.substr(0, 21) + "~" : k;
    os << "  " << std::left << std::setw(22) << name << std::right << std::setw(6) << r.nodes << "  "
       << std::setw(12) << human(r.fa) << std::setw(12) << human(r.fb) << "  " << r.why << "\n";
  }
}

}  // namespace flopwise
