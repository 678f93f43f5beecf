// Language-model phases from the exported graph (flopwise/llm.h): the KV cache by structure, the phase
// bindings, bytes per cached token, a generation's totals.
#include "flopwise/llm.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <set>
#include <sstream>

#include "flopwise/errors.h"
#include "flopwise/report.h"

namespace flopwise {

namespace {

// The one plain symbol a dim is, or "".
std::string plain_symbol(const Dim& d) {
  const auto& t = d.terms();
  if (t.size() != 1 || t[0].second != 1 || t[0].first.size() != 1 || Dim::atom(t[0].first[0])) return "";
  return t[0].first[0];
}

bool lower_contains(std::string s, const char* part) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s.find(part) != std::string::npos;
}

// Bytes per position along `axis` of a value: the product of its other dims times the element size.
Count bytes_per_position(const Value& v, int64_t axis) {
  if (!v.shape.rank_known || dtype_size(v.dtype) == 0) return Count::unknown();
  Dim p(dtype_size(v.dtype));
  for (size_t i = 0; i < v.shape.rank(); ++i)
    if (static_cast<int64_t>(i) != axis) p = p * v.shape.dims[i];
  return Count::of(p);
}

}  // namespace

std::optional<KvCache> find_kv_cache(const Model& model) {
  const Graph& g = model.graph;
  std::vector<bool> is_output(g.values.size(), false);
  for (int o : g.outputs)
    if (o >= 0) is_output[static_cast<size_t>(o)] = true;
  KvCache kv;
  kv.found_by = "structure";
  // A Concat whose one input is a graph input and whose output is a graph output (itself or through an
  // Identity): torch.cat((past_k, k), dim=2) as torch.onnx and Optimum export it.
  for (const Node& n : g.nodes) {
    if (n.op != "Concat" || !n.domain.empty() || n.inputs.size() != 2 || n.outputs.empty() || n.outputs[0] < 0) continue;
    int out = n.outputs[0];
    if (!is_output[static_cast<size_t>(out)]) {
      out = -1;
      for (const Node& m : g.nodes)  // an Identity onto the output (rare; a linear scan is fine per Concat)
        if (m.op == "Identity" && !m.inputs.empty() && m.inputs[0] == n.outputs[0] && !m.outputs.empty() &&
            m.outputs[0] >= 0 && is_output[static_cast<size_t>(m.outputs[0])])
          out = m.outputs[0];
      if (out < 0) continue;
    }
    for (int s = 0; s < 2; ++s) {
      const int pi = n.inputs[static_cast<size_t>(s)], ni = n.inputs[static_cast<size_t>(1 - s)];
      if (pi < 0 || ni < 0 || !g.values[static_cast<size_t>(pi)].is_input) continue;
      const Value& past = g.values[static_cast<size_t>(pi)];
      const Value& fresh = g.values[static_cast<size_t>(ni)];
      if (!past.shape.rank_known || !fresh.shape.rank_known || past.shape.rank() != fresh.shape.rank()) continue;
      int64_t axis = n.attr_i("axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(past.shape.rank());
      if (axis < 0 || axis >= static_cast<int64_t>(past.shape.rank())) continue;
      const std::string p = plain_symbol(past.shape.dims[static_cast<size_t>(axis)]);
      const std::string q = plain_symbol(fresh.shape.dims[static_cast<size_t>(axis)]);
      if (p.empty() || q.empty() || p == q) continue;
      if (!kv.past_dim.empty() && (kv.past_dim != p || kv.seq_dim != q)) continue;  // one cache, one pair of dims
      kv.past_dim = p;
      kv.seq_dim = q;
      kv.pairs.push_back({past.name, g.values[static_cast<size_t>(out)].name, axis});
    }
  }
  if (kv.pairs.empty()) {
    // By names: inputs "past*" and outputs "present*" in the same number, the cached axis the one whose
    // symbol differs between them. Exporters that build the cache some other way still name it so.
    std::vector<int> pasts, presents;
    for (int i : g.inputs)
      if (lower_contains(g.values[static_cast<size_t>(i)].name, "past")) pasts.push_back(i);
    for (int o : g.outputs)
      if (lower_contains(g.values[static_cast<size_t>(o)].name, "present")) presents.push_back(o);
    if (pasts.empty() || pasts.size() != presents.size()) return std::nullopt;
    kv.found_by = "names";
    for (size_t k = 0; k < pasts.size(); ++k) {
      const Value& a = g.values[static_cast<size_t>(pasts[k])];
      const Value& b = g.values[static_cast<size_t>(presents[k])];
      if (!a.shape.rank_known || !b.shape.rank_known || a.shape.rank() != b.shape.rank()) return std::nullopt;
      int64_t axis = -1;
      for (size_t i = 0; i < a.shape.rank(); ++i)
        if (!a.shape.dims[i].same_as(b.shape.dims[i])) axis = static_cast<int64_t>(i);
      if (axis < 0) return std::nullopt;
      const Dim& pd = a.shape.dims[static_cast<size_t>(axis)];
      const std::string p = plain_symbol(pd);
      const Dim rest = b.shape.dims[static_cast<size_t>(axis)] - pd;
      const std::string q = plain_symbol(rest);
      if (p.empty() || q.empty() || (!kv.past_dim.empty() && (kv.past_dim != p || kv.seq_dim != q))) return std::nullopt;
      kv.past_dim = p;
      kv.seq_dim = q;
      kv.pairs.push_back({a.name, b.name, axis});
    }
  }
  kv.bytes_per_token = Count{};
  for (const auto& pr : kv.pairs) {
    int idx = g.find(pr.present);
    kv.bytes_per_token += idx < 0 ? Count::unknown() : bytes_per_position(g.values[static_cast<size_t>(idx)], pr.axis);
  }
  return kv;
}

Phase parse_phase(const std::string& s) {
  if (s == "prefill") return Phase::Prefill;
  if (s == "decode") return Phase::Decode;
  throw UsageError("--phase must be prefill or decode, not '" + s + "'");
}

std::vector<std::pair<std::string, int64_t>> phase_bindings(const std::optional<KvCache>& kv, Phase p) {
  if (!kv || p == Phase::None) return {};
  if (p == Phase::Prefill) return {{kv->past_dim, 0}};
  return {{kv->seq_dim, 1}};
}

std::string describe_phase(const std::optional<KvCache>& kv, Phase p) {
  if (p == Phase::None) return "";
  if (!kv)
    return p == Phase::Prefill
               ? "prefill: the model has no KV cache (no past input concatenated into a present output): a forward over the prompt"
               : "decode: the model has no KV cache, so each generated token is a forward over the whole prefix: bind its "
                 "sequence length to the prefix length";
  std::string s = p == Phase::Prefill ? "prefill (" + kv->past_dim + " = 0, " + kv->seq_dim + " = the prompt)"
                                      : "decode (" + kv->seq_dim + " = 1, " + kv->past_dim + " = the cached tokens)";
  s += "; KV cache found by " + kv->found_by + ": " + std::to_string(kv->pairs.size()) + " tensors (" +
       kv->pairs.front().past + " -> " + kv->pairs.front().present + (kv->pairs.size() > 1 ? ", ..." : "") +
       ") along axis " + std::to_string(kv->pairs.front().axis);
  return s;
}

std::string sequence_dim(const Model& model) {
  const Graph& g = model.graph;
  for (int i : g.inputs) {
    const Value& v = g.values[static_cast<size_t>(i)];
    if ((v.dtype == DType::Int64 || v.dtype == DType::Int32) && v.shape.rank_known && v.shape.rank() == 2) {
      std::string s = plain_symbol(v.shape.dims[1]);
      if (!s.empty()) return s;
    }
  }
  return "";
}

// ---- rational polynomials (generation totals) ---------------------------------------------------------

namespace {

using I128 = __int128;
constexpr I128 kCoefLimit = static_cast<I128>(1) << 100;  // beyond it a product could overflow: give up

I128 gcd128(I128 a, I128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    I128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

bool make_coef(I128 num, I128 den, RationalPoly::Coef* c) {
  if (den < 0) num = -num, den = -den;
  I128 g = gcd128(num, den);
  if (g > 1) num /= g, den /= g;
  if (num > kCoefLimit || num < -kCoefLimit || den > kCoefLimit) return false;
  *c = {num, den};
  return true;
}

std::string i128_str(I128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  if (neg) v = -v;
  std::string s;
  while (v > 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  }
  return neg ? "-" + s : s;
}

}  // namespace

RationalPoly RationalPoly::of(const Dim& d) {
  RationalPoly p;
  if (d.is_unknown()) return p;
  if (d.is_known()) {
    if (d.value() != 0) p.terms[{}] = {d.value(), 1};
    p.valid = true;
    return p;
  }
  for (const auto& [m, c] : d.terms()) {
    for (const auto& sym : m)
      if (Dim::atom(sym)) return p;
    p.terms[m] = {c, 1};
  }
  p.valid = true;
  return p;
}

RationalPoly RationalPoly::symbol(const std::string& s) {
  RationalPoly p;
  p.valid = true;
  p.terms[{s}] = {1, 1};
  return p;
}

RationalPoly RationalPoly::constant(int64_t num, int64_t den) {
  RationalPoly p;
  p.valid = make_coef(num, den, &p.terms[{}]);
  if (p.terms[{}].num == 0) p.terms.clear();
  return p;
}

RationalPoly RationalPoly::operator+(const RationalPoly& o) const {
  RationalPoly r = *this;
  r.valid = valid && o.valid;
  if (!r.valid) return r;
  for (const auto& [m, c] : o.terms) {
    auto it = r.terms.find(m);
    if (it == r.terms.end()) {
      r.terms[m] = c;
      continue;
    }
    Coef sum;
    if (!make_coef(it->second.num * c.den + c.num * it->second.den, it->second.den * c.den, &sum)) return RationalPoly{};
    if (sum.num == 0)
      r.terms.erase(it);
    else
      it->second = sum;
  }
  return r;
}

RationalPoly RationalPoly::operator*(const RationalPoly& o) const {
  RationalPoly r;
  if (!valid || !o.valid) return r;
  r.valid = true;
  for (const auto& [ma, ca] : terms)
    for (const auto& [mb, cb] : o.terms) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      RationalPoly t;
      t.valid = make_coef(ca.num * cb.num, ca.den * cb.den, &t.terms[m]);
      r = r + t;
      if (!r.valid) return r;
    }
  return r;
}

RationalPoly RationalPoly::renamed(const std::string& from, const std::string& to) const {
  RationalPoly r;
  r.valid = valid;
  for (const auto& [m, c] : terms) {
    Monomial x = m;
    std::replace(x.begin(), x.end(), from, to);
    std::sort(x.begin(), x.end());
    RationalPoly t;
    t.valid = true;
    t.terms[x] = c;
    r = r + t;
  }
  return r;
}

RationalPoly RationalPoly::sum_shifted(const std::string& var, const RationalPoly& start, const RationalPoly& n) const {
  // sum_{j<n} (start + j)^k = sum_i C(k, i) start^(k-i) P_i(n), with P_i(n) = sum_{j<n} j^i (Faulhaber).
  const RationalPoly one = constant(1);
  const RationalPoly nm1 = n + constant(-1);
  const RationalPoly p1 = n * nm1 * constant(1, 2);
  const std::vector<RationalPoly> power_sums{n, p1, n * nm1 * (n * constant(2) + constant(-1)) * constant(1, 6), p1 * p1};
  RationalPoly r = constant(0);
  if (!valid) return RationalPoly{};
  for (const auto& [m, c] : terms) {
    const size_t k = static_cast<size_t>(std::count(m.begin(), m.end(), var));
    if (k >= power_sums.size()) return RationalPoly{};
    Monomial rest;
    for (const auto& x : m)
      if (x != var) rest.push_back(x);
    RationalPoly coef;
    coef.valid = true;
    coef.terms[rest] = c;
    RationalPoly sum = constant(0);
    int64_t binom = 1;  // C(k, i)
    for (size_t i = 0; i <= k; ++i) {
      RationalPoly sp = one;
      for (size_t e = 0; e < k - i; ++e) sp = sp * start;
      sum = sum + sp * power_sums[i] * constant(binom);
      binom = binom * static_cast<int64_t>(k - i) / static_cast<int64_t>(i + 1);
    }
    r = r + coef * sum;
  }
  return r;
}

std::optional<int64_t> RationalPoly::eval(const std::vector<std::pair<std::string, int64_t>>& at) const {
  if (!valid) return std::nullopt;
  Coef total{0, 1};
  for (const auto& [m, c] : terms) {
    I128 v = c.num;
    for (const auto& sym : m) {
      auto it = std::find_if(at.begin(), at.end(), [&](const auto& b) { return b.first == sym; });
      if (it == at.end()) return std::nullopt;
      v *= it->second;
      if (v > kCoefLimit || v < -kCoefLimit) return std::nullopt;
    }
    if (!make_coef(total.num * c.den + v * total.den, total.den * c.den, &total)) return std::nullopt;
  }
  if (total.den != 1 || total.num > INT64_MAX || total.num < INT64_MIN) return std::nullopt;
  return static_cast<int64_t>(total.num);
}

std::string RationalPoly::str() const {
  if (!valid) return "?";
  if (terms.empty()) return "0";
  // Highest degree first, as the report prints polynomials.
  std::vector<std::pair<Monomial, Coef>> ts(terms.begin(), terms.end());
  std::stable_sort(ts.begin(), ts.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  std::string out;
  for (const auto& [m, c] : ts) {
    const bool neg = c.num < 0;
    std::string coef = i128_str(neg ? -c.num : c.num) + (c.den != 1 ? "/" + i128_str(c.den) : "");
    std::string mono;
    for (size_t i = 0; i < m.size();) {
      size_t j = i;
      while (j < m.size() && m[j] == m[i]) ++j;
      mono += (mono.empty() ? "" : "*") + m[i] + (j - i > 1 ? "^" + std::to_string(j - i) : "");
      i = j;
    }
    std::string term = mono.empty() ? coef : coef == "1" ? mono : coef + "*" + mono;
    out += out.empty() ? (neg ? "-" : "") + term : (neg ? " - " : " + ") + term;
  }
  return out;
}

namespace {

// The generation's own symbols, renamed where the model already has a dim of that name.
std::pair<std::string, std::string> prompt_symbols(const Report& r) {
  std::string S = "S", G = "G";
  auto used = [&](const std::string& x) {
    for (const Count* c : {&r.totals.macs, &r.totals.flops, &r.totals.memory_bytes})
      for (const auto& sym : c->as_dim().symbols())
        if (sym == x) return true;
    return false;
  };
  if (used(S)) S = "S_prompt";
  if (used(G)) G = "G_generated";
  return {S, G};
}

}  // namespace

// With a cache: the prefill at past = 0, then step j (j = 1 .. G-1) one token at past = S + j - 1.
// Without one: a forward over the prompt, then step j a forward over S + j tokens.
Generation generation(const KvCache& kv, int64_t prompt, int64_t generated, const Reanalyse& at) {
  using Bindings = std::vector<std::pair<std::string, int64_t>>;
  const bool cached = !kv.past_dim.empty();
  Generation g;
  g.prompt = prompt;
  g.generated = generated;
  Bindings pre_at{{kv.seq_dim, prompt}};
  if (cached) pre_at.push_back({kv.past_dim, 0});
  const Report pre = at(pre_at);
  g.prefill_macs = pre.totals.macs;
  g.prefill_flops = pre.totals.flops;
  g.prefill_bytes = pre.totals.memory_bytes;
  if (pre.totals.uncounted) g.prefill_macs = g.prefill_flops = g.prefill_bytes = Count::unknown();
  // One decode step as a formula in `var` (the cached length, or the prefix), then its values summed.
  const std::string var = cached ? kv.past_dim : kv.seq_dim;
  const Report step = at(cached ? Bindings{{kv.seq_dim, 1}} : Bindings{});
  const int64_t first = cached ? prompt : prompt + 1;  // var at the first decode step
  g.step_dim = var;
  g.step_macs = step.totals.uncounted ? Count::unknown() : step.totals.macs;
  g.step_flops = step.totals.uncounted ? Count::unknown() : step.totals.flops;
  g.step_bytes = step.totals.uncounted ? Count::unknown() : step.totals.memory_bytes;
  auto sum_steps = [&](const Count& per_step) {
    if (step.totals.uncounted || !per_step.exact()) return Count::unknown();
    Count total;
    const Dim d = per_step.as_dim();
    for (int64_t j = 0; j + 1 < generated; ++j) total += Count::of(d.substitute({{var, first + j}}));
    return total;
  };
  g.decode_macs = sum_steps(step.totals.macs);
  g.decode_flops = sum_steps(step.totals.flops);
  g.decode_bytes = sum_steps(step.totals.memory_bytes);
  g.total_macs = g.prefill_macs + g.decode_macs;
  g.total_flops = g.prefill_flops + g.decode_flops;
  g.total_bytes = g.prefill_bytes + g.decode_bytes;
  g.kv_bytes_end = cached ? kv.bytes_per_token * Count{prompt + std::max<int64_t>(generated, 1) - 1} : Count{0};
  // For any S and G: the prefill as a formula in the prompt, plus the G - 1 steps summed in closed form.
  Report prefill_any;  // without a cache: the step's own formula
  if (cached) prefill_any = at(Bindings{{kv.past_dim, 0}});
  const Report& pre_any = cached ? prefill_any : step;
  const auto [S, G] = prompt_symbols(pre_any);
  g.prompt_symbol = S;
  g.generated_symbol = G;
  const RationalPoly start = RationalPoly::symbol(S) + RationalPoly::constant(cached ? 0 : 1);
  const RationalPoly steps = RationalPoly::symbol(G) + RationalPoly::constant(-1);
  auto formula = [&, S = S](const Count& pre_c, const Count& step_c) {
    if (pre_any.totals.uncounted || step.totals.uncounted || !pre_c.exact() || !step_c.exact()) return RationalPoly{};
    return RationalPoly::of(pre_c.as_dim()).renamed(kv.seq_dim, S) + RationalPoly::of(step_c.as_dim()).sum_shifted(var, start, steps);
  };
  g.total_macs_formula = formula(pre_any.totals.macs, step.totals.macs);
  g.total_flops_formula = formula(pre_any.totals.flops, step.totals.flops);
  g.total_bytes_formula = formula(pre_any.totals.memory_bytes, step.totals.memory_bytes);
  return g;
}

std::string format_generation(const KvCache& kv, const Generation& g) {
  std::string s;
  std::ostringstream os;
  auto line = [&os](const std::string& k, const std::string& v) { summary_line(os, k, v); };
  s += "----------------------------- Generation ------------------------------------\n";
  line("prompt / generated tokens", std::to_string(g.prompt) + " / " + std::to_string(g.generated) +
                                        " (prefill yields the first; " + std::to_string(std::max<int64_t>(g.generated - 1, 0)) +
                                        " decode steps)");
  if (kv.past_dim.empty()) {
    line("KV cache", "none: each decode step is a forward over the whole prefix (" + kv.seq_dim + " = " +
                         std::to_string(g.prompt + 1) + " .. " + std::to_string(g.prompt + g.generated - 1) + ")");
  } else {
    line("KV cache bytes per token", human(kv.bytes_per_token) + "B (" + kv.bytes_per_token.as_dim().str() + ")");
    line("KV cache bytes at the end", human(g.kv_bytes_end) + "B");
  }
  line("prefill MACs / FLOPs", human(g.prefill_macs) + " / " + human(g.prefill_flops));
  auto formula = [](const Count& c) { return c.known || c.symbolic() ? c.as_dim().str() : std::string("?"); };
  line("decode step MACs (" + (kv.past_dim.empty() ? kv.seq_dim + " = the prefix" : kv.past_dim + " cached") + ")",
       formula(g.step_macs));
  line("decode step FLOPs", formula(g.step_flops));
  line("decode MACs / FLOPs (all steps)", human(g.decode_macs) + " / " + human(g.decode_flops));
  line("total MACs / FLOPs", human(g.total_macs) + " / " + human(g.total_flops));
  line("total memory bytes (read + written)", human(g.total_bytes));
  // The same totals for any prompt S and any G generated tokens (G >= 1), summed in closed form.
  line("total MACs, any S and G", g.total_macs_formula.str());
  line("total FLOPs, any S and G", g.total_flops_formula.str());
  line("total bytes, any S and G", g.total_bytes_formula.str());
  if (!kv.past_dim.empty()) line("KV cache bytes at the end, any S and G", kv_bytes_end_formula(kv, g).str());
  return s + os.str();
}

RationalPoly kv_bytes_end_formula(const KvCache& kv, const Generation& g) {
  if (kv.past_dim.empty()) return RationalPoly{};
  return RationalPoly::of(kv.bytes_per_token.as_dim()) *
         (RationalPoly::symbol(g.prompt_symbol) + RationalPoly::symbol(g.generated_symbol) +
          RationalPoly::constant(-1));
}

std::vector<std::pair<std::string, std::string>> llm_summary_rows(const LlmSection& llm) {
  // "1.54 KB (1536)"; a polynomial as written ("512*batch bytes"); "unknown".
  auto bytes = [](const Count& c) {
    return c.known        ? human(c) + "B (" + std::to_string(c.v) + ")"
           : c.symbolic() ? c.as_dim().str() + " bytes"
                          : human(c);
  };
  std::vector<std::pair<std::string, std::string>> rows;
  if (llm.phase != Phase::None) rows.push_back({"LLM phase", phase_name(llm.phase)});
  if (llm.kv) rows.push_back({"KV cache bytes per token", bytes(llm.kv->bytes_per_token)});
  if (llm.generation) {
    const Generation& g = *llm.generation;
    rows.push_back({"generation: prompt / generated tokens",
                    std::to_string(g.prompt) + " / " + std::to_string(g.generated)});
    rows.push_back({"generation: total MACs / FLOPs", human(g.total_macs) + " / " + human(g.total_flops)});
    rows.push_back({"generation: total memory bytes", bytes(g.total_bytes)});
    if (llm.kv) rows.push_back({"generation: KV cache bytes at the end", bytes(g.kv_bytes_end)});
  }
  return rows;
}

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Prefill:
      return "prefill";
    case Phase::Decode:
      return "decode";
    case Phase::None:
      break;
  }
  return "";
}

LlmPlan plan_llm(const Model& unbound, const LlmRequest& req,
                 const std::vector<std::pair<std::string, int64_t>>& dims) {
  LlmPlan plan;
  plan.request = req;
  std::optional<KvCache>& kv = plan.kv;
  kv = find_kv_cache(unbound);
  const std::string seq_dim =
      kv ? std::string() : sequence_dim(unbound);  // a decoder without a cache: its token axis
  if (kv && kv->bytes_per_token.exact())
    kv->bytes_per_token = Count::of(kv->bytes_per_token.as_dim().substitute(dims));
  if (!req.any()) return plan;
  const bool generation = req.generation();
  plan.note = describe_phase(kv, req.phase);
  // What the phase (or the generation, both phases) binds: a --dim of the same name contradicts it.
  plan.bindings = phase_bindings(kv, req.phase);
  for (const auto& d : dims)
    if (kv && (std::any_of(plan.bindings.begin(), plan.bindings.end(),
                           [&](const auto& b) { return b.first == d.first; }) ||
               (generation && (d.first == kv->past_dim || d.first == kv->seq_dim))))
      throw UsageError("--dim " + d.first + " conflicts with what --" + (generation ? "generate" : "phase") +
                       " binds: leave it out");
  if (!generation) return plan;
  if (req.prompt < 1 || req.generate < 1)
    throw UsageError("--prompt and --generate go together, each at least 1");
  if (!kv) {  // a decoder without a cache: every step a forward over the prefix, along its token axis
    if (seq_dim.empty())
      throw UsageError(
          "--generate needs a decoder: a KV cache (past inputs concatenated into present outputs) "
          "or a token input [batch, seq] with a dynamic seq; this model has neither");
    for (const auto& d : dims)
      if (d.first == seq_dim)
        throw UsageError("--dim " + d.first + " conflicts with what --generate binds: leave it out");
    kv = KvCache{};
    kv->seq_dim = seq_dim;
    kv->found_by = "none";
  }
  if (req.phase != Phase::None) throw UsageError("--generate sums both phases itself: leave out --phase");
  return plan;
}

std::shared_ptr<const LlmSection> llm_section(const LlmPlan& plan, const Reanalyse& at) {
  auto s = std::make_shared<LlmSection>();
  s->phase = plan.request.phase;
  if (plan.kv && !plan.kv->pairs.empty()) s->kv = plan.kv;
  if (plan.request.generation() && plan.kv)
    s->generation = generation(*plan.kv, plan.request.prompt, plan.request.generate, at);
  return s;
}

// ---- attention products -----------------------------------------------------------------------------

namespace {

bool is_op(const Node& n, const char* op) { return n.op == op && (n.domain.empty() || n.domain == "ai.onnx"); }

// A Softmax over its input's last axis.
bool softmax_last_axis(const Graph& g, const Node& n) {
  if (!is_op(n, "Softmax") || n.inputs.empty() || n.inputs[0] < 0) return false;
  const Shape& s = g.values[static_cast<size_t>(n.inputs[0])].shape;
  int64_t axis = n.attr_i("axis", n.opset >= 13 ? -1 : 1);
  if (axis == -1) return true;
  return s.rank_known && axis == static_cast<int64_t>(s.rank()) - 1;
}

// A product of two activations (x @ y), not a layer (x @ W): neither operand is stored in the model.
bool activation_product(const Graph& g, const Node& n) {
  if (!is_op(n, "MatMul") || n.inputs.size() != 2) return false;
  for (int v : n.inputs) {
    if (v < 0) return false;
    const Value& x = g.values[static_cast<size_t>(v)];
    if (x.is_initializer || (x.producer >= 0 && g.nodes[static_cast<size_t>(x.producer)].op == "Constant")) return false;
  }
  return true;
}

}  // namespace

std::vector<AttentionProduct> find_attention_products(const Graph& g) {
  std::vector<AttentionProduct> out;
  std::vector<uint8_t> taken(g.nodes.size(), 0);
  auto producer = [&](int v) -> const Node* {
    if (v < 0 || g.values[static_cast<size_t>(v)].producer < 0) return nullptr;
    return &g.nodes[static_cast<size_t>(g.values[static_cast<size_t>(v)].producer)];
  };
  // Consumers of each value, for the AV side.
  std::vector<std::vector<int>> users(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs)
      if (v >= 0) users[static_cast<size_t>(v)].push_back(static_cast<int>(i));
  for (const Node& sm : g.nodes) {
    if (!softmax_last_axis(g, sm)) continue;
    // Scores: up from the Softmax through scale (Mul, Div) and mask (Add, Sub, Where) ops and casts, a few
    // steps, to a MatMul; on Where (masked_fill), the scores are its second or third input.
    const Node* qk = nullptr;
    bool masked = false;
    std::vector<std::pair<int, bool>> frontier{{sm.inputs[0], false}};
    for (int step = 0; step < 6 && !qk && !frontier.empty(); ++step) {
      std::vector<std::pair<int, bool>> next;
      for (const auto& [v, m] : frontier) {
        const Node* p = producer(v);
        if (!p) continue;
        if (activation_product(g, *p)) {
          qk = p;
          masked = m;
          break;
        }
        const bool mask_op = is_op(*p, "Add") || is_op(*p, "Sub") || is_op(*p, "Where");
        if (!(mask_op || is_op(*p, "Mul") || is_op(*p, "Div") || is_op(*p, "Cast"))) continue;
        for (size_t i = is_op(*p, "Where") ? 1 : 0; i < p->inputs.size(); ++i) next.push_back({p->inputs[i], m || mask_op});
      }
      frontier = std::move(next);
    }
    if (!qk) continue;
    const size_t qi = static_cast<size_t>(qk - g.nodes.data());
    if (!taken[qi]) {
      taken[qi] = 1;
      out.push_back({qi, true, masked});
    }
    // AV: a MatMul taking the Softmax's output (through Cast or Dropout) as its first operand.
    std::deque<int> vals{sm.outputs.empty() ? -1 : sm.outputs[0]};
    for (int step = 0; step < 3 && !vals.empty(); ++step) {
      std::deque<int> next;
      for (int v : vals) {
        if (v < 0) continue;
        for (int u : users[static_cast<size_t>(v)]) {
          const Node& c = g.nodes[static_cast<size_t>(u)];
          if (activation_product(g, c) && c.inputs[0] == v && !taken[static_cast<size_t>(u)]) {
            taken[static_cast<size_t>(u)] = 1;
            out.push_back({static_cast<size_t>(u), false, false});
          } else if ((is_op(c, "Cast") || is_op(c, "Dropout")) && !c.outputs.empty()) {
            next.push_back(c.outputs[0]);
          }
        }
      }
      vals = std::move(next);
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return out;
}

Count causal_skipped_macs(const Graph& g, const Node& n, bool scores) {
  if (n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() || n.outputs[0] < 0) return Count::unknown();
  const Shape& a = g.values[static_cast<size_t>(n.inputs[0])].shape;
  const Shape& y = g.values[static_cast<size_t>(n.outputs[0])].shape;
  if (!a.rank_known || !y.rank_known || a.rank() < 2 || y.rank() < 2) return Count::unknown();
  // Per (batch, head): S(S-1)/2 skipped pairs times the contraction length d.
  const Dim& s = y.dims[y.rank() - 2];
  const Dim& d = scores ? a.dims[a.rank() - 1] : y.dims[y.rank() - 1];
  Dim prod = d * s * (s - Dim(1));
  for (size_t i = 0; i + 2 < y.rank(); ++i) prod = prod * y.dims[i];
  if (prod.is_unknown()) return Count::unknown();
  return Count::of(Dim::floor_div(prod, Dim(2)));  // S(S-1) is even: the quotient is exact
}

// ---- mixture of experts -----------------------------------------------------------------------------

namespace {

// A label's stem: "experts.3" -> "experts", "3" -> "" (a ModuleList's own children), else the label.
std::string label_stem(const std::string& label, bool* numbered) {
  size_t dot = label.rfind('.');
  std::string tail = dot == std::string::npos ? label : label.substr(dot + 1);
  *numbered = !tail.empty() && std::all_of(tail.begin(), tail.end(), [](unsigned char c) { return std::isdigit(c); });
  return !*numbered ? label : dot == std::string::npos ? std::string() : label.substr(0, dot);
}

// The first scope, breadth first under `root`, with exactly `e` numbered children of one stem.
const ScopeNode* experts_under(const ScopeNode* root, int64_t e, std::vector<const ScopeNode*>* experts,
                               const std::set<const ScopeNode*>& used) {
  std::deque<const ScopeNode*> q{root};
  while (!q.empty()) {
    const ScopeNode* s = q.front();
    q.pop_front();
    std::map<std::string, std::vector<const ScopeNode*>> groups;
    for (const auto& c : s->children) {
      bool numbered = false;
      std::string stem = label_stem(c->label, &numbered);
      if (numbered) groups[stem].push_back(c.get());
      q.push_back(c.get());
    }
    for (auto& [stem, list] : groups)
      if (static_cast<int64_t>(list.size()) == e && !used.count(list.front())) {
        *experts = list;
        return s;
      }
  }
  return nullptr;
}

const ScopeNode* find_scope(const ScopeNode* root, const std::string& name) {
  if (name.empty()) return root;
  const ScopeNode* s = root;
  while (s && s->name != name) {
    const ScopeNode* next = nullptr;
    for (const auto& c : s->children)
      if (name == c->name || name.rfind(c->name + ".", 0) == 0) next = c.get();
    s = next;
  }
  return s;
}

}  // namespace

std::shared_ptr<const MoeSummary> find_moe(const Model& model, const Report& report) {
  const Graph& g = model.graph;
  if (!report.scopes) return nullptr;
  auto moe = std::make_shared<MoeSummary>();
  std::set<const ScopeNode*> used;
  for (const Node& n : g.nodes) {
    const bool topk = is_op(n, "TopK"), argmax = is_op(n, "ArgMax");
    if ((!topk && !argmax) || n.inputs.empty() || n.inputs[0] < 0) continue;
    const Shape& in = g.values[static_cast<size_t>(n.inputs[0])].shape;
    if (!in.rank_known || in.rank() == 0) continue;
    int64_t axis = n.attr_i("axis", topk ? -1 : 0);
    if (axis < 0) axis += static_cast<int64_t>(in.rank());
    if (axis != static_cast<int64_t>(in.rank()) - 1 || !in.dims[static_cast<size_t>(axis)].is_known()) continue;
    const int64_t e = in.dims[static_cast<size_t>(axis)].value();
    int64_t k = 1;
    if (topk) {
      k = n.attr_i("k", 0);
      if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
        const auto& data = g.values[static_cast<size_t>(n.inputs[1])].data;
        k = data && !data->is_float && data->ints.size() == 1 && data->ints[0].is_known() ? data->ints[0].value() : 0;
      }
    }
    if (k < 1 || e < 2 || k >= e) continue;
    // The experts: E numbered sibling scopes under the router's scope or one of its two parents.
    std::vector<const ScopeNode*> experts;
    const ScopeNode* parent = nullptr;
    for (size_t up = 0; up < 3 && !parent && n.scope.size() + 1 >= up + 1; ++up) {  // the root last
      const size_t depth = n.scope.size() - up;  // scope levels kept: 0 is the root
      const ScopeNode* s = find_scope(report.scopes.get(), depth == 0 ? std::string() : n.scope[depth - 1]);
      if (s) parent = experts_under(s, e, &experts, used);
    }
    if (!parent) continue;
    used.insert(experts.front());
    MoeLayer layer;
    layer.router = n.name;
    layer.scope = parent->name;
    layer.top_k = k;
    layer.one_params = experts.front()->cost.params;
    layer.one_macs = experts.front()->cost.macs;
    layer.one_flops = experts.front()->cost.flops;
    for (const ScopeNode* x : experts) {
      layer.experts.push_back(x->name);
      layer.params += x->cost.params;
      layer.macs += x->cost.macs;
      layer.flops += x->cost.flops;
      if (x->cost.uncounted) layer.macs = layer.flops = Count::unknown();
      if (!(x->cost.params == layer.one_params)) layer.one_params = Count::unknown();
      if (!(x->cost.macs == layer.one_macs) || !(x->cost.flops == layer.one_flops) || x->cost.uncounted)
        layer.one_macs = layer.one_flops = Count::unknown();
    }
    moe->layers.push_back(std::move(layer));
  }
  if (moe->layers.empty()) return nullptr;
  moe->experts = static_cast<int64_t>(moe->layers.front().experts.size());
  moe->top_k = moe->layers.front().top_k;
  moe->total_params = report.totals.params;
  moe->total_macs = report.totals.uncounted ? Count::unknown() : report.totals.macs;
  moe->total_flops = report.totals.uncounted ? Count::unknown() : report.totals.flops;
  moe->activated_params = moe->total_params;
  moe->activated_macs = moe->total_macs;
  moe->activated_flops = moe->total_flops;
  for (const auto& l : moe->layers) {
    if (static_cast<int64_t>(l.experts.size()) != moe->experts || l.top_k != moe->top_k) moe->experts = moe->top_k = 0;
    // All experts but k of them: minus the layer's experts, plus k times one expert.
    const Count k{l.top_k};
    moe->activated_params = moe->activated_params - l.params + k * l.one_params;
    moe->activated_macs = moe->activated_macs - l.macs + k * l.one_macs;
    moe->activated_flops = moe->activated_flops - l.flops + k * l.one_flops;
    if (!l.one_macs.exact()) moe->dense = false;
  }
  return moe;
}

void write_moe_text(std::ostream& os, const MoeSummary& moe) {
  os << "\n------------------------------ Mixture of experts ----------------------------\n";
  std::string what = std::to_string(moe.layers.size()) + " layer(s), " +
                     (moe.experts ? "top-" + std::to_string(moe.top_k) + " of " + std::to_string(moe.experts) + " experts"
                                  : std::string("varying experts / top-k"));
  summary_line(os, "MoE layers", what + " (router '" + moe.layers.front().router + "', experts under '" +
                                     moe.layers.front().scope + "')");
  summary_line(os, "params: total / activated per token", human(moe.total_params) + " / " + human(moe.activated_params));
  summary_line(os, "fwd MACs: total / at activated experts",
               human(moe.total_macs) + " / " + (moe.dense ? human(moe.activated_macs) : "?"));
  summary_line(os, "fwd FLOPs: total / at activated experts",
               human(moe.total_flops) + " / " + (moe.dense ? human(moe.activated_flops) : "?"));
  os << (moe.dense ? "  the graph runs every expert on every token (the total); activated counts the router's top-k\n"
                   : "  the experts run on the tokens the router picks at run time (data-dependent sizes, or experts of "
                     "different costs): MACs and FLOPs at the activated experts are not known statically\n");
}

}  // namespace flopwise
