// src/analysis/check.cc — evaluating a budget on a model's reports (flopwise/budget.h). Its writers (text,
// markdown, JUnit) are src/writers/check_text.cc.
#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "flopwise/budget.h"
#include "flopwise/errors.h"
#include "flopwise/llm.h"

namespace flopwise {

std::map<std::string, ActivationFigure> activation_bytes(const Model& model) {
  std::map<std::string, ActivationFigure> out;
  const Graph& g = model.graph;
  out[""];
  for (const auto& n : g.nodes) {
    Count bytes;
    bool known = true;
    for (int o : n.outputs) {
      if (o < 0) continue;
      const Value& v = g.values[o];
      int64_t sz = dtype_size(v.dtype);
      Count numel = v.shape.numel_count();
      if (!numel.known || (sz == 0 && numel.v != 0)) {
        known = false;
        continue;
      }
      bytes += numel * Count{sz};
      known = known && bytes.known;
    }
    std::vector<std::string> scopes{""};
    scopes.insert(scopes.end(), n.scope.begin(), n.scope.end());
    for (const auto& s : scopes) {
      ActivationFigure& f = out[s];
      if (known)
        f.bytes += bytes;
      else
        ++f.uncounted;
    }
  }
  return out;
}

std::string CheckRow::name() const { return check + " " + quantity + " <= " + limit; }

int CheckResult::failures() const {
  int n = 0;
  for (const auto& r : rows) n += !r.pass;
  return n;
}

namespace {

std::string fmt_pct(double p, bool sign) {
  char buf[48];
  std::snprintf(buf, sizeof buf, sign ? "%+.2f%%" : "%.2f%%", p);
  return buf;
}

// A figure that may be a lower bound (uncounted nodes) or unknown.
struct Figure {
  std::optional<int64_t> value;
  int64_t uncounted = 0;
  std::string missing;  // why there is no figure at all
};

Figure of(const Count& c, int64_t uncounted) {
  return Figure{c.known ? std::optional<int64_t>(c.v) : std::nullopt, uncounted, ""};
}

Figure total_figure(const CheckSubject& s, const std::string& q) {
  const Totals& t = s.report.totals;
  if (q == "params") return of(t.params, t.uncounted);
  if (q == "buffers") return of(t.buffers, t.uncounted);
  if (q == "macs") return of(t.macs, t.uncounted);
  if (q == "flops") return of(t.flops, t.uncounted);
  if (q == "memory_bytes") return of(t.memory_bytes, t.uncounted);
  if (!s.activation)
    return Figure{std::nullopt, 0, "activation_bytes is not in a saved report (check the model)"};
  const ActivationFigure& a = s.activation->at("");
  return of(a.bytes, a.uncounted);
}

Figure scope_figure(const CheckSubject& s, const ScopeNode& sc, const std::string& q) {
  const Totals& t = sc.cost;
  if (q == "params") return of(t.params, t.uncounted);
  if (q == "macs") return of(t.macs, t.uncounted);
  if (q == "flops") return of(t.flops, t.uncounted);
  if (q == "memory_bytes") return of(t.memory_bytes, t.uncounted);
  if (!s.activation)
    return Figure{std::nullopt, 0, "activation_bytes is not in a saved report (check the model)"};
  auto it = s.activation->find(sc.name);
  if (it == s.activation->end()) return Figure{int64_t{0}, 0, ""};
  return of(it->second.bytes, it->second.uncounted);
}

// An LLM figure (kLlmQuantities) of the report's LLM section.
Figure llm_figure(const CheckSubject& s, const std::string& q) {
  const LlmSection* llm = s.report.llm.get();
  if (!llm)
    return Figure{std::nullopt, 0,
                  s.activation
                      ? "the report has no LLM section"
                      : "not in the saved report: save it with the budget's [llm] options (--phase, or "
                        "--prompt and --generate)"};
  if (!llm->kv && (q == "kv_bytes_per_token" || q == "kv_bytes_end"))
    return Figure{std::nullopt, 0,
                  "the model has no KV cache (no past input concatenated into a present output, none named "
                  "past*/present*)"};
  Count c;
  if (q == "kv_bytes_per_token") {
    c = llm->kv->bytes_per_token;
  } else {
    if (!llm->generation)
      return Figure{std::nullopt, 0, "the report has no generation (give [llm] prompt and generate)"};
    const Generation& g = *llm->generation;
    c = q == "kv_bytes_end"       ? g.kv_bytes_end
        : q == "generation_macs"  ? g.total_macs
        : q == "generation_flops" ? g.total_flops
                                  : g.total_bytes;
  }
  if (c.known) return Figure{c.v, 0, ""};
  if (c.symbolic())
    return Figure{std::nullopt, 0,
                  "a formula in dims left unbound, " + c.as_dim().str() + ": bind them in [dims]"};
  return Figure{std::nullopt, 0, "unknown: a node, or a cache tensor's dims or dtype, not known"};
}

// A training figure (kTrainQuantities) of the report's training step.
Figure train_figure(const CheckSubject& s, const std::string& q) {
  const TrainingReport* t = s.report.training.get();
  if (!t)
    return Figure{std::nullopt, 0,
                  s.activation
                      ? "the report has no training step"
                      : "not in the saved report: check the model (a saved report has no training step)"};
  const Count& c = q == "train_backward_macs"      ? t->total.backward_macs
                   : q == "train_backward_flops"   ? t->total.backward_flops
                   : q == "trainable_params"       ? t->total.trainable_params
                   : q == "saved_activation_bytes" ? t->total.saved_bytes
                   : q == "optimizer_state_bytes"  ? t->optimizer_state_bytes
                                                   : t->memory_estimate_bytes;
  if (c.known) return Figure{c.v, s.report.totals.uncounted, ""};
  if (c.symbolic())
    return Figure{std::nullopt, 0,
                  "a formula in dims left unbound, " + c.as_dim().str() + ": bind them in [dims]"};
  return Figure{std::nullopt, 0, "unknown: a count overflowed or a node's shapes are not known"};
}

// A figure of the cost per GPU at scale (kParallelQuantities): the largest over the ranks.
Figure parallel_figure(const CheckSubject& s, const std::string& q) {
  const ParallelReport* p = s.report.parallel.get();
  if (!p)
    return Figure{std::nullopt, 0, "the report has no parallel section: give the budget a [parallel] table"};
  int64_t most = 0;
  for (const RankRole& r : p->ranks)
    most = std::max(most, q == "parallel_peak_bytes"           ? r.peak_bytes
                          : q == "parallel_model_states_bytes" ? r.model_states_bytes
                          : q == "parallel_activation_bytes"   ? r.activation_bytes
                                                               : r.params);
  if (q == "parallel_comm_bytes") {
    most = 0;
    for (const Collective& c : p->comm) most += c.sent_per_call() * c.count;
  }
  return Figure{most, s.report.totals.uncounted, ""};
}

// A limit holds when the figure is fully counted and within it. A lower bound already over the
// limit fails as exceeded; otherwise an incomplete figure fails as unknown (it cannot be shown to hold).
void judge_size(CheckRow& row, const Figure& f, const SizeLimit& lim) {
  row.limit = lim.text;
  row.actual = f.value;
  if (f.value && lim.value > 0)
    row.used = fmt_pct(100.0 * static_cast<double>(*f.value) / static_cast<double>(lim.value), false);
  if (!f.missing.empty()) {
    row.pass = false;
    row.detail = f.missing;
    return;
  }
  bool over = f.value && *f.value > lim.value;
  if (over) {
    row.pass = false;
    row.detail =
        (f.uncounted ? "at least " : "") + std::to_string(*f.value) + " > " + std::to_string(lim.value);
  } else if (!f.value || f.uncounted) {
    row.pass = false;
    row.detail = "unknown: " + std::to_string(f.uncounted) + " node(s) not counted (bind symbolic dims)";
  } else {
    row.pass = true;
    row.detail = std::to_string(*f.value) + " <= " + std::to_string(lim.value);
  }
}

InputPin pin_of(const std::string& name, const std::string& shape) {
  return parse_input_pin(name + ":" + shape);
}

void overlay(InferOptions& io, const InputPin& p) {
  if (!p.name.empty())
    for (auto it = io.inputs.begin(); it != io.inputs.end(); ++it)
      if (it->name == p.name) {
        *it = p;
        return;
      }
  io.inputs.push_back(p);
}
void overlay_dim(InferOptions& io, const std::pair<std::string, int64_t>& d) {
  for (auto& e : io.dims)
    if (e.first == d.first) {
      e.second = d.second;
      return;
    }
  io.dims.push_back(d);
}
void overlay_variant(InferOptions& io, const VariantBudget& v) {
  for (const auto& [n, s] : v.inputs) overlay(io, pin_of(n, s));
  for (const auto& d : v.dims) overlay_dim(io, d);
  for (const auto& [n, vals] : v.values) io.values[n] = vals;
}

CheckRow make_row(const std::string& variant, const std::string& check, const std::string& quantity) {
  CheckRow r;
  r.variant = variant;
  r.check = check;
  r.quantity = quantity;
  return r;
}

const char* const kBaselineAll[] = {"params", "macs", "flops", "memory_bytes"};

}  // namespace

CheckResult check_budget(const Budget& b, const InferOptions& cli, const Analyse& analyse,
                         const ReadSaved& read_saved) {
  CheckResult res;
  res.budget = b.path;
  std::vector<const VariantBudget*> variants;
  VariantBudget dflt;
  dflt.name = "default";
  if (b.variants.empty())
    variants.push_back(&dflt);
  else
    for (const auto& v : b.variants) variants.push_back(&v);

  for (const VariantBudget* v : variants) {
    res.variants.push_back(v->name);
    InferOptions pins;
    overlay_variant(pins, b.top);
    for (const auto& p : cli.inputs) overlay(pins, p);
    for (const auto& d : cli.dims) overlay_dim(pins, d);
    for (const auto& [n, vals] : cli.values) pins.values[n] = vals;
    overlay_variant(pins, *v);
    std::map<std::string, SizeLimit> limits = b.top.limits;
    for (const auto& [k, l] : v->limits) limits[k] = l;
    // An LLM section where [llm] asks for a phase or a generation, or a limit reads one.
    std::optional<LlmRequest> llm = v->llm ? v->llm : b.top.llm;
    for (const char* q : kLlmQuantities)
      if (limits.count(q) && !llm) llm = LlmRequest{};
    CheckSubject subj = analyse(pins, llm ? &*llm : nullptr);
    if (res.model.empty()) res.model = subj.report.path;

    for (const char* q : kTotalQuantities) {
      auto it = limits.find(q);
      if (it == limits.end()) continue;
      CheckRow row = make_row(v->name, "total", q);
      judge_size(row, total_figure(subj, q), it->second);
      res.rows.push_back(row);
    }
    for (const char* q : kLlmQuantities) {
      auto it = limits.find(q);
      if (it == limits.end()) continue;
      CheckRow row = make_row(v->name, "llm", q);
      judge_size(row, llm_figure(subj, q), it->second);
      res.rows.push_back(row);
    }
    for (const char* q : kTrainQuantities) {
      auto it = limits.find(q);
      if (it == limits.end()) continue;
      CheckRow row = make_row(v->name, "train", q);
      judge_size(row, train_figure(subj, q), it->second);
      res.rows.push_back(row);
    }
    for (const char* q : kParallelQuantities) {
      auto it = limits.find(q);
      if (it == limits.end()) continue;
      CheckRow row = make_row(v->name, "parallel", q);
      judge_size(row, parallel_figure(subj, q), it->second);
      res.rows.push_back(row);
    }

    std::vector<ScopeBudget> scopes = b.top.scopes;
    scopes.insert(scopes.end(), v->scopes.begin(), v->scopes.end());
    std::vector<const ScopeNode*> all;
    std::function<void(const ScopeNode&)> walk = [&](const ScopeNode& s) {
      if (!s.name.empty()) all.push_back(&s);
      for (const auto& c : s.children) walk(*c);
    };
    if (subj.report.scopes) walk(*subj.report.scopes);
    for (const auto& sb : scopes) {
      std::vector<const ScopeNode*> hits;
      for (const ScopeNode* s : all)
        if (scope_glob_match(sb.pattern, s->name)) hits.push_back(s);
      for (const char* q : kScopeQuantities) {
        auto it = sb.limits.find(q);
        if (it == sb.limits.end()) continue;
        if (hits.empty()) {
          CheckRow row = make_row(v->name, "scope " + sb.pattern, q);
          row.limit = it->second.text;
          row.detail = "the pattern matches no scope (scopes are e.g. '" +
                       (all.empty() ? std::string() : all.front()->name) + "')";
          res.rows.push_back(row);
        }
        for (const ScopeNode* s : hits) {
          CheckRow row = make_row(v->name, "scope " + s->name, q);
          judge_size(row, scope_figure(subj, *s, q), it->second);
          res.rows.push_back(row);
        }
      }
    }

    const std::optional<BaselineBudget>& bl = v->baseline ? v->baseline : b.top.baseline;
    if (bl) {
      std::optional<CheckSubject> loaded;
      try {
        loaded = CheckSubject{read_saved(bl->report), std::nullopt};
      } catch (const InputError& e) {
        throw InputError(b.path + ": [baseline] report: " + e.what());
      }
      const CheckSubject& base = *loaded;
      if (base.report.convention != subj.report.convention)
        throw UsageError(b.path + ": [baseline] report " + bl->report + " counts FLOPs in convention '" +
                         base.report.convention + "', this check in '" + subj.report.convention +
                         "': save the baseline with the same --convention");
      std::vector<std::pair<std::string, Percent>> checks;
      if (bl->max_increase.count("*"))
        for (const char* q : kBaselineAll) checks.push_back({q, bl->max_increase.at("*")});
      for (const auto& [q, p] : bl->max_increase)
        if (q != "*") {
          bool replaced = false;
          for (auto& c : checks)
            if (c.first == q) c.second = p, replaced = true;
          if (!replaced) checks.push_back({q, p});
        }
      for (const auto& [q, p] : checks) {
        Figure cur = total_figure(subj, q);
        Figure was = total_figure(base, q);
        if (!was.value) continue;  // only totals present in both
        CheckRow row = make_row(v->name, "baseline", q);
        row.limit =
            "+" + p.text.substr(p.text.find_first_not_of(" +")) + " over " + std::to_string(*was.value);
        row.actual = cur.value;
        if (cur.value && *was.value != 0)
          row.used = fmt_pct(
              100.0 * (static_cast<double>(*cur.value) - *was.value) / static_cast<double>(*was.value), true);
        // increase% <= num/den  <=>  (cur - was) * 100 * den <= num * was   (exact, 128-bit)
        auto within = [&, &p = p](int64_t c) {  // a structured binding is captured by name (C++17)
          __int128 lhs = (__int128(c) - *was.value) * 100 * p.den;
          __int128 rhs = __int128(p.num) * *was.value;
          return *was.value == 0 ? c <= 0 : lhs <= rhs;
        };
        if (cur.value && !within(*cur.value)) {
          row.pass = false;
          row.detail = (cur.uncounted ? "at least " : "") + row.used + " > +" + p.text;
        } else if (!cur.value || cur.uncounted) {
          row.pass = false;
          row.detail = "unknown: " + std::to_string(cur.uncounted) + " node(s) not counted";
        } else {
          row.pass = true;
          row.detail = std::to_string(*cur.value) + " vs baseline " + std::to_string(*was.value);
        }
        res.rows.push_back(row);
      }
    }
  }
  return res;
}

}  // namespace flopwise
