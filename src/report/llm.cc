// Language-model phases from the exported graph (flopwise/llm.h): the KV cache by structure, the phase
// bindings, bytes per cached token, a generation's totals.
#include "flopwise/llm.h"

#include <algorithm>
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

Generation generation(const KvCache& kv, int64_t prompt, int64_t generated, const Reanalyse& at) {
  Generation g;
  g.prompt = prompt;
  g.generated = generated;
  const Report pre = at(std::vector<std::pair<std::string, int64_t>>{{kv.past_dim, 0}, {kv.seq_dim, prompt}});
  g.prefill_macs = pre.totals.macs;
  g.prefill_flops = pre.totals.flops;
  g.prefill_bytes = pre.totals.memory_bytes;
  if (pre.totals.uncounted) g.prefill_macs = g.prefill_flops = g.prefill_bytes = Count::unknown();
  // One decode step as a formula in the cached length, then its values at each past length, summed.
  const Report step = at(std::vector<std::pair<std::string, int64_t>>{{kv.seq_dim, 1}});
  g.decode_step_macs = step.totals.uncounted ? "?" : step.totals.macs.as_dim().str();
  g.decode_step_flops = step.totals.uncounted ? "?" : step.totals.flops.as_dim().str();
  auto sum_steps = [&](const Count& per_step) {
    if (step.totals.uncounted || !per_step.exact()) return Count::unknown();
    Count total;
    const Dim d = per_step.as_dim();
    for (int64_t j = 0; j + 1 < generated; ++j) total += Count::of(d.substitute({{kv.past_dim, prompt + j}}));
    return total;
  };
  g.decode_macs = sum_steps(step.totals.macs);
  g.decode_flops = sum_steps(step.totals.flops);
  g.decode_bytes = sum_steps(step.totals.memory_bytes);
  g.total_macs = g.prefill_macs + g.decode_macs;
  g.total_flops = g.prefill_flops + g.decode_flops;
  g.total_bytes = g.prefill_bytes + g.decode_bytes;
  g.kv_bytes_end = kv.bytes_per_token * Count{prompt + std::max<int64_t>(generated, 1) - 1};
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
  line("KV cache bytes per token", human(kv.bytes_per_token) + "B (" + kv.bytes_per_token.as_dim().str() + ")");
  line("KV cache bytes at the end", human(g.kv_bytes_end) + "B");
  line("prefill MACs / FLOPs", human(g.prefill_macs) + " / " + human(g.prefill_flops));
  line("decode step MACs (" + kv.past_dim + " cached)", g.decode_step_macs);
  line("decode step FLOPs", g.decode_step_flops);
  line("decode MACs / FLOPs (all steps)", human(g.decode_macs) + " / " + human(g.decode_flops));
  line("total MACs / FLOPs", human(g.total_macs) + " / " + human(g.total_flops));
  line("total memory bytes (read + written)", human(g.total_bytes));
  return s + os.str();
}

}  // namespace flopwise
