// src/analysis/llm.cc — language-model phases from the exported graph (flopwise/llm.h): the KV cache by
// structure, the phase bindings, bytes per cached token, a generation's totals.
#include "flopwise/llm.h"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <set>
#include <sstream>

#include "flopwise/errors.h"

namespace flopwise {
namespace {

// The one plain symbol a dim is, or "".
std::string plain_symbol(const Dim& d) {
  const auto& t = d.terms();
  if (t.size() != 1 || t[0].second != 1 || t[0].first.size() != 1 || Dim::atom(t[0].first[0])) return "";
  return t[0].first[0];
}

bool lower_contains(std::string s, const char* part) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
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
    if (n.op != "Concat" || !n.domain.empty() || n.inputs.size() != 2 || n.outputs.empty() ||
        n.outputs[0] < 0)
      continue;
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
      if (!past.shape.rank_known || !fresh.shape.rank_known || past.shape.rank() != fresh.shape.rank())
        continue;
      int64_t axis = n.attr_i("axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(past.shape.rank());
      if (axis < 0 || axis >= static_cast<int64_t>(past.shape.rank())) continue;
      const std::string p = plain_symbol(past.shape.dims[static_cast<size_t>(axis)]);
      const std::string q = plain_symbol(fresh.shape.dims[static_cast<size_t>(axis)]);
      if (p.empty() || q.empty() || p == q) continue;
      if (!kv.past_dim.empty() && (kv.past_dim != p || kv.seq_dim != q))
        continue;  // one cache, one pair of dims
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
      if (p.empty() || q.empty() || (!kv.past_dim.empty() && (kv.past_dim != p || kv.seq_dim != q)))
        return std::nullopt;
      kv.past_dim = p;
      kv.seq_dim = q;
      kv.pairs.push_back({a.name, b.name, axis});
    }
  }
  kv.bytes_per_token = Count{};
  for (const auto& pr : kv.pairs) {
    int idx = g.find(pr.present);
    kv.bytes_per_token +=
        idx < 0 ? Count::unknown() : bytes_per_position(g.values[static_cast<size_t>(idx)], pr.axis);
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
    return p == Phase::Prefill ? "prefill: the model has no KV cache (no past input concatenated into a "
                                 "present output): a forward over the prompt"
                               : "decode: the model has no KV cache, so each generated token is a forward "
                                 "over the whole prefix: bind its "
                                 "sequence length to the prefix length";
  std::string s = p == Phase::Prefill
                      ? "prefill (" + kv->past_dim + " = 0, " + kv->seq_dim + " = the prompt)"
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
  g.kv = kv;
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
  g.kv_bytes_end =
      cached ? kv.bytes_per_token * Count{prompt + std::max<int64_t>(generated, 1) - 1} : Count{0};
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
    if (pre_any.totals.uncounted || step.totals.uncounted || !pre_c.exact() || !step_c.exact())
      return RationalPoly{};
    return RationalPoly::of(pre_c.as_dim()).renamed(kv.seq_dim, S) +
           RationalPoly::of(step_c.as_dim()).sum_shifted(var, start, steps);
  };
  g.total_macs_formula = formula(pre_any.totals.macs, step.totals.macs);
  g.total_flops_formula = formula(pre_any.totals.flops, step.totals.flops);
  g.total_bytes_formula = formula(pre_any.totals.memory_bytes, step.totals.memory_bytes);
  return g;
}

RationalPoly kv_bytes_end_formula(const KvCache& kv, const Generation& g) {
  if (kv.past_dim.empty()) return RationalPoly{};
  return RationalPoly::of(kv.bytes_per_token.as_dim()) *
         (RationalPoly::symbol(g.prompt_symbol) + RationalPoly::symbol(g.generated_symbol) +
          RationalPoly::constant(-1));
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

}  // namespace flopwise
