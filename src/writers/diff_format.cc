// src/writers/diff_format.cc — writers for a Diff: text (terminal), JSON ("flopwise.diff/1", documented in
// the README), markdown (a pull-request comment).
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string_view>

#include "flopwise/diff.h"
#include "flopwise/json_text.h"
#include "flopwise/writers.h"
#include "tables.h"

namespace flopwise {

namespace {
using json = nlohmann::ordered_json;

const char* const kMain[] = {"params", "macs", "flops", "memory_bytes"};

std::string signed_human(std::optional<int64_t> v) {
  if (!v) return "unknown";
  std::string h = human(static_cast<double>(*v));
  return *v > 0 ? "+" + h : h;
}
std::string plain_human(std::optional<int64_t> v) { return v ? human(static_cast<double>(*v)) : "unknown"; }

std::string pct_str(std::optional<double> p) {
  if (!p) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f%%", *p);
  return buf;
}

std::optional<double> entry_pct(const DiffEntry& e, const std::string& key) {
  if (!e.a || !e.b) return std::nullopt;
  return percent_change(e.a->get(key), e.b->get(key));
}

json figures_json(const Figures& f) {
  json j = json::object();
  for (const auto& [k, v] : f.items) j[k] = v ? json(*v) : json(nullptr);
  return j;
}

json pct_json(const std::optional<Figures>& a, const std::optional<Figures>& b, const Figures& keys) {
  json j = json::object();
  for (const auto& [k, v] : keys.items) {
    auto p = a && b ? percent_change(a->get(k), b->get(k)) : std::nullopt;
    j[k] = p ? json(*p) : json(nullptr);
  }
  return j;
}

json entry_json(const DiffEntry& e) {
  json j{{"name", e.name}, {"status", status_name(e.status)}};
  if (!e.a_name.empty()) j["a_name"] = e.a_name;
  j["a"] = e.a ? figures_json(*e.a) : json(nullptr);
  j["b"] = e.b ? figures_json(*e.b) : json(nullptr);
  j["delta"] = figures_json(e.delta);
  j["delta_pct"] = pct_json(e.a, e.b, e.delta);
  return j;
}

size_t limit(int top, size_t n, int dflt) {
  int t = top < 0 ? dflt : top;
  return t < 0 ? n : std::min(n, static_cast<size_t>(t));
}

struct Counts {
  int added = 0, removed = 0, changed = 0, same = 0, renamed = 0;
};
Counts count(const std::vector<DiffEntry>& v) {
  Counts c;
  for (const auto& e : v) {
    if (e.status == DiffStatus::Added) ++c.added;
    if (e.status == DiffStatus::Removed) ++c.removed;
    if (e.status == DiffStatus::Changed) ++c.changed;
    if (e.status == DiffStatus::Same) ++c.same;
    if (!e.a_name.empty()) ++c.renamed;
  }
  return c;
}

// What the text and markdown listings show: changed entries, and added/removed subtree roots only
// (their sub-scopes are in the JSON).
std::vector<const DiffEntry*> listed(const std::vector<DiffEntry>& v, bool scopes) {
  std::vector<const DiffEntry*> out;
  for (const auto& e : v) {
    if (e.status == DiffStatus::Same) continue;
    if (scopes && (e.status == DiffStatus::Added || e.status == DiffStatus::Removed) && !e.subtree_root)
      continue;
    out.push_back(&e);
  }
  return out;
}

// Display width of UTF-8 text (code points; "Δ" is one column).
size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Columns before `left` are left-aligned (names), the rest right-aligned (numbers).
void print_table(std::ostream& os, const Table& t, const std::string& indent, size_t left) {
  std::vector<size_t> w;
  for (const auto& row : t)
    for (size_t c = 0; c < row.size(); ++c) {
      if (w.size() <= c) w.push_back(0);
      w[c] = std::max(w[c], width(row[c]));
    }
  for (const auto& row : t) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string cell = row[c];
      std::string pad(w[c] - width(cell), ' ');
      line += c < left ? cell + pad : pad + cell;
      if (c + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
}

void print_md(std::ostream& os, const Table& t, size_t left) {
  std::vector<bool> right(t.empty() ? 0 : t[0].size());
  for (size_t c = left; c < right.size(); ++c) right[c] = true;
  write_markdown_table(os, t, right);
}

Table totals_table(const Diff& d) {
  Table t{{"total", "A", "B", "delta", "change"}};
  for (const char* k :
       {"params", "macs", "flops", "memory_bytes", "train_backward_macs", "train_backward_flops",
        "trainable_params", "saved_activation_bytes", "optimizer_state_bytes", "memory_estimate_bytes",
        "predicted_latency_us", "predicted_forward_us", "uncounted_nodes"}) {
    if (std::string(k) == "uncounted_nodes" && d.a.get(k).value_or(0) == 0 && d.b.get(k).value_or(0) == 0)
      continue;
    const bool forward = std::string(k) == "params" || std::string(k) == "macs" ||
                         std::string(k) == "flops" || std::string(k) == "memory_bytes" ||
                         std::string(k) == "uncounted_nodes";
    if (!forward && !d.a.get(k) && !d.b.get(k)) continue;  // --train's rows, when the diff has them
    if (std::string_view(k).substr(std::string_view(k).size() - 3) == "_us") {  // --predict: in ms
      auto ms = [](std::optional<int64_t> v, bool sign) {
        if (!v) return std::string("unknown");
        char buf[48];
        std::snprintf(buf, sizeof buf, sign ? "%+.3f ms" : "%.3f ms", static_cast<double>(*v) / 1e3);
        return std::string(buf);
      };
      t.push_back({std::string(k).substr(0, std::string(k).size() - 3), ms(d.a.get(k), false),
                   ms(d.b.get(k), false), ms(d.delta.get(k), true),
                   pct_str(percent_change(d.a.get(k), d.b.get(k)))});
      continue;
    }
    t.push_back({k, plain_human(d.a.get(k)), plain_human(d.b.get(k)), signed_human(d.delta.get(k)),
                 pct_str(percent_change(d.a.get(k), d.b.get(k)))});
  }
  return t;
}

std::string scope_label(const DiffEntry& e, bool md) {
  std::string n = e.name;
  if (!e.a_name.empty()) n = e.a_name + " -> " + e.name;
  return md ? "`" + n + "`" : n;
}

Table entries_table(const std::vector<const DiffEntry*>& v, size_t n, bool scopes, bool md) {
  Table t;
  if (scopes)
    t.push_back({"scope", "status", "params Δ", "MACs Δ", "FLOPs Δ", "memory Δ", "FLOPs %"});
  else
    t.push_back({"op type", "status", "count", "params Δ", "MACs Δ", "FLOPs Δ", "memory Δ", "FLOPs %"});
  for (size_t i = 0; i < n; ++i) {
    const DiffEntry& e = *v[i];
    std::vector<std::string> row{scopes ? scope_label(e, md) : (md ? "`" + e.name + "`" : e.name),
                                 status_name(e.status)};
    if (!scopes) {
      int64_t ca = e.a ? e.a->get("count").value_or(0) : 0, cb = e.b ? e.b->get("count").value_or(0) : 0;
      row.push_back(std::to_string(ca) + " -> " + std::to_string(cb));
    }
    for (const char* k : kMain) row.push_back(signed_human(e.delta.get(k)));
    row.push_back(pct_str(entry_pct(e, "flops")));
    t.push_back(row);
  }
  return t;
}

std::string subtree_list(const std::vector<DiffEntry>& v, DiffStatus st, bool md) {
  std::string s;
  int n = 0;
  for (const auto& e : v) {
    if (e.status != st || !e.subtree_root) continue;
    if (++n > 30) continue;
    s += (s.empty() ? "" : ", ") + (md ? "`" + e.name + "`" : e.name);
  }
  if (n > 30) s += ", ... (" + std::to_string(n - 30) + " more)";
  return s;
}

std::string op_list(const std::vector<DiffEntry>& v, DiffStatus st, bool md) {
  std::string s;
  for (const auto& e : v)
    if (e.status == st) s += (s.empty() ? "" : ", ") + (md ? "`" + e.name + "`" : e.name);
  return s;
}

void write_human(std::ostream& os, const Diff& d, const DiffFormatOptions& o, bool md) {
  auto heading = [&](const std::string& h) { os << (md ? "\n#### " + h + "\n\n" : "\n" + h + ":\n"); };
  auto table = [&](const Table& t, size_t left) {
    if (md)
      print_md(os, t, left);
    else
      print_table(os, t, "  ", left);
  };
  if (md)
    os << "### flopwise diff: `" << d.a_path << "` → `" << d.b_path << "`\n\n";
  else
    os << "flopwise diff\n  A: " << d.a_path << "\n  B: " << d.b_path << "\n\n";
  table(totals_table(d), 1);

  Counts sc = count(d.scopes);
  std::string summary = std::to_string(sc.changed) + " changed, " + std::to_string(sc.added) + " added, " +
                        std::to_string(sc.removed) + " removed, " + std::to_string(sc.same) + " same";
  if (sc.renamed) summary += ", " + std::to_string(sc.renamed) + " aligned under a new name";
  heading("Scopes (" + summary + ")");
  std::string added = subtree_list(d.scopes, DiffStatus::Added, md);
  std::string removed = subtree_list(d.scopes, DiffStatus::Removed, md);
  if (!added.empty()) os << (md ? "" : "  ") << "added: " << added << (md ? "\n\n" : "\n");
  if (!removed.empty()) os << (md ? "" : "  ") << "removed: " << removed << (md ? "\n\n" : "\n");
  auto sl = listed(d.scopes, true);
  size_t n = limit(o.top, sl.size(), 20);
  if (n > 0) {
    if (!md) os << "  largest changes (" << n << " of " << sl.size() << "):\n";
    table(entries_table(sl, n, true, md), 2);
  } else {
    os << (md ? "" : "  ") << "no scope changed\n";
  }

  Counts oc = count(d.op_types);
  heading("Op types (" + std::to_string(oc.changed) + " changed, " + std::to_string(oc.added) + " added, " +
          std::to_string(oc.removed) + " removed, " + std::to_string(oc.same) + " same)");
  std::string oa = op_list(d.op_types, DiffStatus::Added, md),
              orm = op_list(d.op_types, DiffStatus::Removed, md);
  if (!oa.empty()) os << (md ? "" : "  ") << "added: " << oa << (md ? "\n\n" : "\n");
  if (!orm.empty()) os << (md ? "" : "  ") << "removed: " << orm << (md ? "\n\n" : "\n");
  auto ol = listed(d.op_types, false);
  size_t m = limit(o.top, ol.size(), 20);
  if (m > 0) table(entries_table(ol, m, false, md), 2);

  if (!d.shape_changes.empty()) {
    heading("Shape changes (" + std::to_string(d.shape_changes.size()) + ")");
    Table t{{"value", "kind", "A", "B"}};
    size_t k = limit(o.top, d.shape_changes.size(), 20);
    for (size_t i = 0; i < k; ++i) {
      const auto& s = d.shape_changes[i];
      std::string name = md ? "`" + s.name + "`" : s.name;
      t.push_back({name, s.kind, s.a, s.b});
    }
    table(t, 2);
  }
  for (const auto& w : d.warnings) os << (md ? "\n> warning: " : "\nwarning: ") << w << "\n";
}

}  // namespace

void write_diff_text(std::ostream& os, const Diff& d, const DiffFormatOptions& o) {
  write_human(os, d, o, false);
}
void write_diff_markdown(std::ostream& os, const Diff& d, const DiffFormatOptions& o) {
  write_human(os, d, o, true);
}

void write_diff_json(std::ostream& os, const Diff& d, const DiffFormatOptions& o) {
  json j;
  j["schema"] = "flopwise.diff/1";
  j["flopwise_version"] = flopwise_version();
  j["models"] = {{"a", d.a_path}, {"b", d.b_path}};
  j["a"] = figures_json(d.a);
  j["b"] = figures_json(d.b);
  j["delta"] = figures_json(d.delta);
  json pct = json::object();
  for (const auto& [k, v] : d.delta.items) {
    auto p = percent_change(d.a.get(k), d.b.get(k));
    pct[k] = p ? json(*p) : json(nullptr);
  }
  j["delta_pct"] = pct;
  auto list = [&](const std::vector<DiffEntry>& v) {
    json a = json::array();
    size_t n = limit(o.top, v.size(), -1);
    for (size_t i = 0; i < n; ++i) a.push_back(entry_json(v[i]));
    return a;
  };
  j["scopes"] = list(d.scopes);
  j["op_types"] = list(d.op_types);
  json sc = json::array();
  for (const auto& s : d.shape_changes) {
    json e{{"kind", s.kind}, {"name", s.name}};
    if (!s.node.empty()) e["node"] = s.node;
    e["a"] = s.a;
    e["b"] = s.b;
    sc.push_back(e);
  }
  j["shape_changes"] = sc;
  j["warnings"] = d.warnings;
  os << json_text(j, 2) << "\n";
}

}  // namespace flopwise
