// src/writers/text.cc — text, CSV and markdown writers. The text layout follows the DeepSpeed flops profiler:
// a summary, the top modules per depth, then the detailed module tree.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "flopwise/attention.h"
#include "flopwise/calibration.h"
#include "flopwise/llm.h"
#include "flopwise/moe.h"
#include "flopwise/ops.h"
#include "flopwise/peak_memory.h"
#include "flopwise/roofline.h"
#include "flopwise/training.h"
#include "flopwise/writers.h"
#include "poly_text.h"

namespace flopwise {

std::string human(double v) {
  static const char* units[] = {"", " K", " M", " G", " T", " P", " E"};
  int u = 0;
  double a = std::fabs(v);
  while (a >= 1000.0 && u < 6) {
    a /= 1000.0;
    v /= 1000.0;
    ++u;
  }
  char buf[64];
  if (u == 0 && std::floor(v) == v)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.2f%s", v, units[u]);
  return buf;
}

std::string human(const Count& c) {
  if (c.symbolic()) {
    // "1.77 M*batch*seq + 4.10 K*batch*seq*seq": coefficients in SI units.
    std::string out;
    for (const auto& [mono, coef] : c.sym.terms()) {
      std::string h = human(static_cast<double>(coef < 0 ? -coef : coef));
      out += out.empty() ? (coef < 0 ? "-" : "") : (coef < 0 ? " - " : " + ");
      if (mono.empty() || h != "1") out += h;
      for (size_t i = 0; i < mono.size(); ++i) out += (i || (!mono.empty() && h != "1") ? "*" : "") + mono[i];
    }
    return out;
  }
  if (!c.known) return c.overflowed ? "overflow" : "unknown";
  return human(static_cast<double>(c.v));
}

void summary_line(std::ostream& os, const std::string& k, const std::string& v) {
  std::string key = k + ":";
  key.resize(std::max<size_t>(key.size() + 1, 46), ' ');
  os << key << v << "\n";
}

// Key for "top modules at depth d": the class (as DeepSpeed groups), else the scope's full name.
std::string_view scope_key(const ScopeNode& s) {
  if (!s.cls.empty()) return s.cls;
  return s.name.empty() ? s.label : s.name;
}

// The scopes at each depth, each depth in tree (pre-)order, in one walk: by_depth[d] holds the scopes
// with depth d (a child's depth is its parent's + 1).
void collect_depths(const ScopeNode& s, std::vector<std::vector<const ScopeNode*>>& by_depth) {
  if (by_depth.size() <= static_cast<size_t>(s.depth)) by_depth.resize(s.depth + 1);
  by_depth[s.depth].push_back(&s);
  for (const auto& c : s.children) collect_depths(*c, by_depth);
}

namespace {

std::string pct(const Count& part, const Count& whole) {
  if (!part.known || !whole.known || whole.v == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%",
                100.0 * static_cast<double>(part.v) / static_cast<double>(whole.v));
  return buf;
}

// "4.09 G" or "≥ 4.09 G" when some nodes in the roll-up were not counted.
std::string total_str(const Count& c, const Totals& t) { return (t.uncounted > 0 ? ">= " : "") + human(c); }

// "Conv2d" when the model records the class; for a leaf without one, its op types ("[Conv]").
std::string scope_title(const ScopeNode& s) {
  if (!s.cls.empty()) return s.cls;
  if (!s.children.empty() || s.ops.empty()) return "";
  std::string t;
  for (const auto& o : s.ops) t += (t.empty() ? "" : "+") + o;
  return "[" + t + "]";
}

// human() of counts, symbolic ones formatted once per polynomial (PolyTextMemo).
class HumanText {
 public:
  std::string operator()(const Count& c) {
    if (!c.symbolic()) return human(c);
    return memo_.get(c.sym, [&c](const Dim&) { return human(c); });
  }

 private:
  PolyTextMemo memo_;
};

// "1.81 GMACs", "0 MACs".
std::string with_unit(const Count& c, const char* unit, HumanText& human) {
  std::string h = human(c);
  if (c.symbolic() && *unit) return "(" + h + ") " + unit;
  if (!c.known || !*unit) return h;
  return h + (std::isdigit(static_cast<unsigned char>(h.back())) ? " " : "") + unit;
}

std::string shape_list(const std::vector<std::pair<std::string, std::pair<DType, Shape>>>& vs) {
  std::string out;
  for (const auto& [name, ts] : vs)
    out += (out.empty() ? "" : ", ") + name + ":" + ts.second.str() + ":" + dtype_name(ts.first);
  return out;
}

void line(std::ostream& os, const std::string& k, const std::string& v) { summary_line(os, k, v); }

// --train: the step's lines in the summary, in place of the 2 x forward estimate (flopwise/training.h).
void write_training_text(std::ostream& os, const TrainingReport& tr, const Totals& t) {
  auto bytes = [](const Count& c) { return human(c) + (c.known ? "B" : " bytes"); };
  std::string frozen;
  for (const auto& f : tr.freeze) frozen += (frozen.empty() ? "" : ", ") + f;
  std::string ckpt;
  for (const auto& c : tr.checkpoint) ckpt += (ckpt.empty() ? "" : ", ") + c;
  line(os, "training step (--train)",
       std::string("optimizer ") + optimizer_name(tr.optimizer) +
           (tr.precision == Precision::Fp32 ? "" : std::string(", ") + precision_name(tr.precision)) +
           (tr.device == Device::Cuda ? "" : std::string(", ") + device_name(tr.device)) +
           (frozen.empty() ? "" : "; frozen: " + frozen) + (ckpt.empty() ? "" : "; checkpointed: " + ckpt));
  line(os, "trainable params",
       human(tr.total.trainable_params) +
           (tr.frozen_params == Count{} ? "" : " (" + human(tr.frozen_params) + " frozen)"));
  if (tr.total.forward_extra_flops != Count{})
    line(os, "fwd FLOPs in train mode",
         total_str(tr.forward_flops, t) + " (dropout masks, batch statistics: +" +
             human(tr.total.forward_extra_flops) + ")");
  line(os, "bwd MACs", total_str(tr.total.backward_macs, t));
  line(os, "bwd FLOPs",
       total_str(tr.total.backward_flops, t) + " (the 2 x fwd rule: " + human(tr.estimate_backward_flops) +
           ")");
  line(os, "optimizer FLOPs", human(tr.optimizer_flops));
  line(os, "fwd+bwd+optimizer FLOPs",
       total_str(tr.forward_flops + tr.total.backward_flops + tr.optimizer_flops, t));
  line(os, "gradients / optimizer state", bytes(tr.gradient_bytes) + " / " + bytes(tr.optimizer_state_bytes));
  if (tr.per_token)
    line(os, "fwd+bwd FLOPs per trained token",
         human(tr.flops_per_token) + " (the 6 x params rule: " + human(tr.six_params) +
             (tr.attention_flops_per_token.exact() ? "; attention " + human(tr.attention_flops_per_token)
                                                   : "") +
             ")");
  line(os, "kept for backward (activations)", bytes(tr.total.saved_bytes));
  line(os, "training memory estimate",
       bytes(tr.memory_estimate_bytes) + " (params " + bytes(tr.param_bytes) + ", bwd transient " +
           bytes(tr.backward_transient_bytes) +
           (tr.transient_scope.empty() ? "" : " at " + tr.transient_scope) + ")");
  if (tr.fit_limit >= 0) {
    const std::string key = "fits " + human(Count{tr.fit_limit}) + "B (--fit)";
    if (tr.fit_dim.empty() && tr.fit_bytes.known)
      line(os, key, tr.fit_bytes.v <= tr.fit_limit ? "yes" : "no");
    else if (tr.fit_max == 0)
      line(os, key, "no, not at " + tr.fit_dim + " = 1 (" + bytes(tr.fit_bytes) + ")");
    else if (tr.fit_max > 0)
      line(os, key,
           tr.fit_dim + " <= " + std::to_string(tr.fit_max) + " (" + bytes(tr.fit_bytes) + " at " +
               std::to_string(tr.fit_max) + ")");
  }
}

void write_tree(std::ostream& os, const ScopeNode& s, const Totals& total, int max_d,
                const std::string& indent, HumanText& human) {
  // The scope's two lines made as one string, one write to the stream.
  std::string text = indent;
  if (s.depth == 0)
    text += s.label + (s.cls.empty() ? "" : ": " + s.cls);
  else
    text += "(" + s.label + "): " + scope_title(s);
  text += "(\n";
  text += indent;
  text += "  ";
  text += human(s.cost.params);
  // A module holding more than is counted in it (a tied weight first used elsewhere): what it holds, too.
  if (s.params_held.known && s.cost.params.known && s.params_held.v != s.cost.params.v)
    text += " (holds " + human(s.params_held) + ")";
  for (const std::string& part :
       {", " + pct(s.cost.params, total.params) + " Params, ", with_unit(s.cost.macs, "MACs", human),
        ", " + pct(s.cost.macs, total.macs) + " MACs, ", with_unit(s.cost.flops, "FLOPs", human),
        ", " + pct(s.cost.flops, total.flops) + " FLOPs, ", with_unit(s.cost.memory_bytes, "B", human)})
    text += part;
  if (s.cost.uncounted) text += ", " + std::to_string(s.cost.uncounted) + " nodes not counted";
  text += s.children.empty() ? "\n" : ",\n";
  os << text;
  if (max_d < 0 || s.depth < max_d) {
    for (const auto& c : s.children) write_tree(os, *c, total, max_d, indent + "  ", human);
  } else if (!s.children.empty()) {
    os << indent << "  ...\n";
  }
  os << indent << ")\n";
}

}  // namespace

namespace {

// The static profile: summary, aggregated profile by depth, detailed module tree, op types.
void write_profile_text(std::ostream& os, const AnalysedReport& r, const TextOptions& opts) {
  HumanText text;
  const Totals& t = r.totals;
  os << "-------------------------- flopwise static profile --------------------------\n";
  os << "Notations: params (number of parameters), MACs (multiply-accumulate operations),\n"
     << "FLOPs (floating-point operations, convention '" << r.convention
     << "'), memory (bytes read + written)\n\n";
  line(os, "model", r.path + " (" + r.format + (r.producer.empty() ? "" : ", " + r.producer) + ")");
  for (const auto& n : r.notes) line(os, "note", n);
  line(os, "inputs", shape_list(r.inputs));
  line(os, "outputs", shape_list(r.outputs));
  if (!r.aliases.empty()) {
    std::string a;
    for (const auto& x : r.aliases) a += (a.empty() ? "" : ", ") + x.text();
    line(os, "dim aliases (either name binds)", a);
  }
  // Data-dependent sizes, bound with --dim or left in the formulas: the first few (a mixture of experts
  // routes each expert's tokens through its own), the rest counted (JSON `symbols` lists them all).
  constexpr size_t kShownSymbols = 8;
  for (size_t i = 0; i < r.symbols.size() && i < kShownSymbols; ++i) {
    const DataDepSymbol& s = r.symbols[i];
    line(os, "data-dependent size",
         s.bounds_text() + (s.value ? " = " + std::to_string(*s.value) + " (--dim)" : "") + " (" + s.op +
             " '" + s.node + "'" + (s.scope.empty() ? "" : " in " + s.scope) + ")");
  }
  if (r.symbols.size() > kShownSymbols)
    line(os, "data-dependent size",
         "and " + std::to_string(r.symbols.size() - kShownSymbols) + " more (JSON: symbols)");
  line(os, "params", human(t.params));  // initializer dims are always known: params are exact
  if (!r.by_dtype.empty()) {
    std::string w, m;
    size_t mac_types = 0;
    bool float32_only = true;
    for (const auto& d : r.by_dtype) {
      if (d.params != Count{})
        w += (w.empty() ? "" : ", ") + std::string(dtype_name(d.dtype)) + " " + human(d.params) + " (" +
             human(d.weight_bytes) + "B)";
      if (d.macs != Count{}) {
        m += (m.empty() ? "" : ", ") + std::string(dtype_name(d.dtype)) + " " + human(d.macs);
        ++mac_types;
        float32_only = float32_only && d.dtype == DType::Float32;
      }
    }
    if (!w.empty()) line(os, "params by dtype (weight bytes)", w);
    if (!r.branch_params.empty()) {
      std::string b;
      for (const auto& x : r.branch_params)
        b += (b.empty() ? "" : ", ") + x.node + " " + x.branch + " " + human(x.params);
      line(os, "params inside control flow", b);
    }
    if (mac_types > 1 || !float32_only) line(os, "fwd MACs by precision", m);
  }
  if (t.buffers.known && t.buffers.v) line(os, "buffers", human(t.buffers));
  line(os, "fwd MACs", total_str(t.macs, t));
  line(os, "fwd FLOPs", total_str(t.flops, t));
  if (r.training) {
    write_training_text(os, *r.training, t);
  } else if (r.joint) {
    line(os, "bwd MACs (the program's backward)", total_str(t.backward_macs, t));
    line(os, "bwd FLOPs (the program's backward)", total_str(t.backward_flops, t));
    line(os, "fwd+bwd FLOPs", total_str(t.flops + t.backward_flops, t));
  } else {
    line(os, "bwd FLOPs (estimate: 2 x fwd)", total_str(t.backward_flops, t));
    line(os, "fwd+bwd FLOPs", total_str(t.flops + t.backward_flops, t));
  }
  line(os, "memory bytes (read + written)", total_str(t.memory_bytes, t));
  if (r.peak_memory) {
    const PeakMemory& pm = *r.peak_memory;
    std::string at;
    for (const auto& a : pm.at) at += (at.empty() ? "" : "; ") + a;
    auto bytes = [](const Count& c) { return human(c) + (c.known ? "B" : " bytes"); };
    line(os, "peak activation memory",
         (pm.unknown_tensors ? ">= " : "") + bytes(pm.peak) + (at.empty() ? "" : " (" + at + ")") +
             (pm.unknown_tensors ? ", " + std::to_string(pm.unknown_tensors) + " tensors of unknown size"
                                 : ""));
    line(os, "weights / KV cache (apart)", bytes(pm.weights) + " / " + bytes(pm.kv_cache));
    line(os, "activations saved for training (estimate)", bytes(pm.saved_for_training));
  }
  if (r.prediction) line(os, "predicted latency (--predict)", prediction_summary(*r.prediction));
  if (r.causal)
    line(os, "causal attention (--causal)",
         std::to_string(r.causal->products) +
             " attention products counted without the masked upper triangle: " +
             human(r.causal->macs_skipped) + " MACs skipped");
  if (r.moe) write_moe_text(os, *r.moe);
  if (t.flops.known && t.memory_bytes.known && t.memory_bytes.v > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f FLOPs/byte", static_cast<double>(t.flops.v) / t.memory_bytes.v);
    line(os, "arithmetic intensity", buf);
  }

  os << "\n----------------------------- Aggregated Profile -----------------------------\n";
  os << "Top " << opts.top << " modules in terms of params, MACs or FLOPs at different model depths:\n";
  std::vector<std::vector<const ScopeNode*>> by_depth;
  collect_depths(*r.scopes, by_depth);
  int md = static_cast<int>(by_depth.size()) - 1;
  if (opts.depth >= 0) md = std::min(md, opts.depth);
  for (int d = 0; d <= md; ++d) {
    const std::vector<const ScopeNode*>& at = by_depth[d];
    os << "depth " << d << ":\n";
    // Aggregate by class (as DeepSpeed does), falling back to the scope's label: each scope's key slot,
    // found once per depth (keys are views of the report's own strings).
    std::unordered_map<std::string_view, size_t> slot_of_key;
    std::vector<size_t> slot(at.size());
    for (size_t i = 0; i < at.size(); ++i)
      slot[i] = slot_of_key.try_emplace(scope_key(*at[i]), slot_of_key.size()).first->second;
    std::vector<std::string_view> key_of(slot_of_key.size());
    for (const auto& [k, i] : slot_of_key) key_of[i] = k;
    auto top_by = [&](const char* what, auto f, const char* unit) {
      // Per key, in first-seen order among the scopes whose count is exact (so the partial sort below,
      // which breaks ties by that order, ranks as a stable sort would).
      std::vector<std::pair<size_t, Count>> agg;         // (key slot, sum)
      std::vector<size_t> pos(key_of.size(), SIZE_MAX);  // key slot -> its position in agg
      for (size_t i = 0; i < at.size(); ++i) {
        const Count& c = f(*at[i]);
        if (!c.exact()) continue;
        size_t& p = pos[slot[i]];
        if (p == SIZE_MAX) {
          p = agg.size();
          agg.push_back({slot[i], c});
        } else {
          agg[p].second += c;
        }
      }
      // The first `top` by rank_value, descending; ties in first-seen order (as a stable sort leaves them).
      std::vector<std::pair<int64_t, size_t>> order;  // (rank value, position in agg)
      order.reserve(agg.size());
      for (size_t i = 0; i < agg.size(); ++i) order.emplace_back(rank_value(agg[i].second), i);
      const size_t n = std::min<size_t>(std::max(opts.top, 0), order.size());
      std::partial_sort(order.begin(), order.begin() + n, order.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      });
      os << "    " << what << " - {";
      for (size_t i = 0; i < n; ++i) {
        const auto& [k, c] = agg[order[i].second];
        os << (i ? ", " : "") << "'" << key_of[k] << "': '" << with_unit(c, unit, text) << "'";
      }
      os << "}\n";
    };
    top_by(
        "params", [](const ScopeNode& s) -> const Count& { return s.cost.params; }, "");
    top_by(
        "MACs  ", [](const ScopeNode& s) -> const Count& { return s.cost.macs; }, "MACs");
    top_by(
        "FLOPs ", [](const ScopeNode& s) -> const Count& { return s.cost.flops; }, "FLOPs");
  }

  os << "\n------------------------------ Detailed Profile ------------------------------\n";
  os << "Each module is listed after its name in the following order:\n"
     << "params, percentage of total params, MACs, percentage of total MACs, FLOPs, percentage of total "
        "FLOPs, "
        "memory bytes\n\n";
  write_tree(os, *r.scopes, t, opts.depth, "", text);

  os << "\n---------------------------------- Op types ----------------------------------\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-28s %7s %14s %14s %14s\n", "op", "count", "MACs", "FLOPs", "params");
  os << buf;
  for (const auto& o : r.op_types) {
    std::snprintf(buf, sizeof buf, "%-28s %7lld %14s %14s %14s\n", o.op.c_str(),
                  static_cast<long long>(o.count), human(o.macs).c_str(), human(o.flops).c_str(),
                  human(o.params).c_str());
    os << buf;
  }
  if (!r.unsupported.empty()) {
    os << "\n------------------------ Unsupported ops (not counted) ------------------------\n";
    for (const auto& [op, nodes] : r.unsupported) {
      os << op << " x" << nodes.size() << ":";
      for (size_t i = 0; i < nodes.size() && i < 5; ++i)
        os << " " << (nodes[i].empty() ? "<unnamed>" : nodes[i]);
      if (nodes.size() > 5) os << " ...";
      os << "\n";
    }
  }
  if (!r.warnings.empty() || (r.training && !r.training->warnings.empty())) {
    os << "\n---------------------------------- Warnings ----------------------------------\n";
    for (const auto& w : r.warnings) os << "warning: " << w << "\n";
    if (r.training)
      for (const auto& w : r.training->warnings) os << "warning: " << w << "\n";
  }
  os << "------------------------------------------------------------------------------\n";
}

}  // namespace

void write_text(std::ostream& os, const AnalysedReport& r, const TextOptions& opts) {
  if (r.convention == "deepspeed_legacy")
    write_deepspeed_text(os, r, opts);
  else
    write_profile_text(os, r, opts);
  // The sections after the profile, each where the report has it.
  if (r.roofline) write_roofline_text(os, *r.roofline, opts.top < 5 ? 5 : opts.top);
  if (r.llm && r.llm->generation) os << format_generation(*r.llm->generation);
  if (r.parallel) write_parallel_text(os, *r.parallel);
}

namespace {
// Appends s as one CSV field: quoted, its quotes doubled, when it holds a comma, a quote or a newline.
// (Not string_view::find_first_of: it calls memchr over the three characters once per byte of s, and names
// are most of a CSV report.)
bool csv_plain(std::string_view s) {
  bool special = false;
  for (char c : s) special |= c == ',' || c == '"' || c == '\n';
  return !special;
}
void append_csv_field(std::string& out, std::string_view s) {
  if (csv_plain(s)) {
    out += s;
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}
void append_param_dtypes(std::string& out, const NodeReport& n) {  // "uint8;int32"
  bool first = true;
  for (int t = 0; t < 32; ++t)
    if (n.param_dtypes & (1u << t)) {
      if (!first) out += ';';
      out += dtype_name(static_cast<DType>(t));
      first = false;
    }
}
// A control-flow node whose bodies run products in several types: each type once, in DType order, joined by
// '+' ("float16+float32"); nothing for any other node.
void append_body_mac_dtypes(std::string& out, const Report& r, size_t node) {
  auto it = r.body_work.find(node);
  if (it == r.body_work.end() || !it->second) return;
  uint32_t types = 0;
  for (const BodyWork& w : *it->second)
    if (w.mac_dtype != DType::Undefined && !(w.macs.known && w.macs.v == 0) &&
        static_cast<size_t>(w.mac_dtype) < 32)
      types |= 1u << static_cast<size_t>(w.mac_dtype);
  bool first = true;
  for (size_t t = 0; t < 32; ++t)
    if (types & (1u << t)) {
      if (!first) out += '+';
      out += dtype_name(static_cast<DType>(t));
      first = false;
    }
}

}  // namespace

void write_csv(std::ostream& os, const AnalysedReport& r) {
  // With --hardware: each node's roofline bound and which side bounds it (empty where it has none).
  // Rows are built in one string and written 64 KiB at a time (a row of stream insertions each costs more
  // than the row's text).
  std::string out = "name,op,scope,output_shapes,params,macs,flops,memory_bytes,mac_dtype,param_dtypes";
  out += r.roofline ? ",bound_seconds,bound_by\n" : "\n";
  std::string shapes;
  PolyTextMemo poly_text;
  for (const auto& n : r.nodes) {
    shapes.clear();
    for (const auto& [name, s] : n.outputs) {
      if (!shapes.empty()) shapes += ';';
      poly_text.append_shape(shapes, s);
    }
    append_csv_field(out, n.name);
    out += ',';
    append_csv_field(out, op_key(n));
    out += ',';
    append_csv_field(out, n.scope);
    out += ',';
    append_csv_field(out, shapes);
    for (const Count* c : {&n.cost.params, &n.cost.macs, &n.cost.flops, &n.cost.memory_bytes}) {
      out += ',';
      if (c->known)
        append_int(out, c->v);
      else if (c->symbolic())
        out += poly_text.dim_text(c->sym);
    }
    out += ',';
    const size_t index = static_cast<size_t>(&n - r.nodes.data());
    if (n.mac_dtype != DType::Undefined)
      out += dtype_name(n.mac_dtype);
    else if (!r.body_work.empty())
      append_body_mac_dtypes(out, r, index);
    out += ',';
    append_param_dtypes(out, n);
    if (r.roofline) {
      NodeBound b;
      if (node_bound(r, index, r.roofline->hw, &b)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.6g", b.seconds);
        out += ',';
        out += buf;
        out += b.compute_bound() ? ",compute" : ",memory";
      } else {
        out += ",,";
      }
    }
    out += '\n';
    if (out.size() >= (1u << 16)) {
      os.write(out.data(), static_cast<std::streamsize>(out.size()));
      out.clear();
    }
  }
  os.write(out.data(), static_cast<std::streamsize>(out.size()));
}

void write_markdown(std::ostream& os, const AnalysedReport& r, const TextOptions& opts) {
  const Totals& t = r.totals;
  os << "### flopwise: `" << r.path << "`\n\n";
  os << "| quantity | value |\n|---|---:|\n";
  os << "| params | " << total_str(t.params, t) << " |\n";
  for (const auto& d : r.by_dtype)
    if (d.params != Count{})
      os << "| params " << dtype_name(d.dtype) << " | " << human(d.params) << " (" << human(d.weight_bytes)
         << "B) |\n";
  os << "| MACs | " << total_str(t.macs, t) << " |\n";
  for (const auto& d : r.by_dtype)
    if (d.macs != Count{}) os << "| MACs " << dtype_name(d.dtype) << " | " << human(d.macs) << " |\n";
  os << "| FLOPs (" << r.convention << ") | " << total_str(t.flops, t) << " |\n";
  os << "| memory bytes | " << total_str(t.memory_bytes, t) << " |\n";
  if (r.peak_memory) {
    const PeakMemory& pm = *r.peak_memory;
    os << "| peak activation memory | " << (pm.unknown_tensors ? ">= " : "") << human(pm.peak) << "B |\n";
    os << "| weights / KV cache | " << human(pm.weights) << "B / " << human(pm.kv_cache) << "B |\n";
    os << "| activations saved for training (estimate) | " << human(pm.saved_for_training) << "B |\n";
  }
  if (r.training) {
    const TrainingReport& tr = *r.training;
    os << "| training step (--train), optimizer | " << optimizer_name(tr.optimizer) << " |\n";
    os << "| precision | " << precision_name(tr.precision) << " |\n";
    if (tr.device != Device::Cuda) os << "| device | " << device_name(tr.device) << " |\n";
    os << "| trainable params | " << human(tr.total.trainable_params) << " |\n";
    os << "| fwd FLOPs in train mode | " << total_str(tr.forward_flops, t) << " |\n";
    os << "| bwd MACs | " << total_str(tr.total.backward_macs, t) << " |\n";
    os << "| bwd FLOPs (2 x fwd rule: " << human(tr.estimate_backward_flops) << ") | "
       << total_str(tr.total.backward_flops, t) << " |\n";
    os << "| optimizer FLOPs | " << human(tr.optimizer_flops) << " |\n";
    os << "| gradients / optimizer state | " << human(tr.gradient_bytes) << "B / "
       << human(tr.optimizer_state_bytes) << "B |\n";
    os << "| kept for backward | " << human(tr.total.saved_bytes) << "B |\n";
    os << "| training memory estimate | " << human(tr.memory_estimate_bytes) << "B |\n";
  }

  if (r.causal)
    os << "| causal attention (--causal) | " << r.causal->products << " products, "
       << human(r.causal->macs_skipped) << " MACs skipped |\n";
  if (r.moe)
    os << "| MoE: top-" << r.moe->top_k << " of " << r.moe->experts << " experts, activated params | "
       << human(r.moe->activated_params) << " |\n| MoE: activated MACs | "
       << (r.moe->dense ? human(r.moe->activated_macs) : std::string("?")) << " |\n";
  if (r.llm)
    for (const auto& [k, v] : llm_summary_rows(*r.llm)) os << "| " << k << " | " << v << " |\n";
  if (r.prediction) os << "| predicted latency (--predict) | " << prediction_summary(*r.prediction) << " |\n";
  if (r.roofline) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g ms", r.roofline->total.seconds * 1e3);
    os << "| latency lower bound (" << r.roofline->hw.name << ") | " << buf
       << (r.roofline->unbounded_nodes
               ? " (" + std::to_string(r.roofline->unbounded_nodes) + " nodes not bounded)"
               : "")
       << " |\n";
  }
  os << "\n";
  os << "| module | class | params | MACs | % MACs | FLOPs |\n|---|---|---:|---:|---:|---:|\n";
  std::function<void(const ScopeNode&)> walk = [&](const ScopeNode& s) {
    if (opts.depth >= 0 && s.depth > opts.depth) return;
    os << "| " << std::string(s.depth * 2, ' ') << (s.depth == 0 ? s.label : s.name) << " | " << s.cls
       << " | " << human(s.cost.params) << " | " << human(s.cost.macs) << " | " << pct(s.cost.macs, t.macs)
       << " | " << human(s.cost.flops) << " |\n";
    for (const auto& c : s.children) walk(*c);
  };
  walk(*r.scopes);
  os << "\n| op | count | MACs | FLOPs |\n|---|---:|---:|---:|\n";
  for (const auto& o : r.op_types)
    os << "| " << o.op << " | " << o.count << " | " << human(o.macs) << " | " << human(o.flops) << " |\n";
  if (!r.unsupported.empty()) {
    os << "\n**Unsupported ops (not counted):**";
    for (const auto& [op, nodes] : r.unsupported) os << " `" << op << "` x" << nodes.size();
    os << "\n";
  }
  if (r.parallel) write_parallel_markdown(os, *r.parallel);
}

}  // namespace flopwise
