// src/measured/serving_steps.cc — what a serving engine's step annotation says (vLLM's and sglang's
// "execute_<n>_context_<c>(sq..sk..sqsq..sqsk..)_generation_<g>(sq..sk..sqsq..sqsk..)", as TraceLens's
// serving traces carry it): the tokens of the step and, summed over its sequences, the query tokens (sq), the
// KV tokens (sk) and the products sq*sk. Those sums are what attention over a KV cache costs and what its
// ops do not record (the lengths per sequence are tensor values): each attention op of the table below, run
// inside such a step, is priced from its recorded q and KV shapes and the step's sums
// (flopwise/torch_trace.h, tag_kv_attention and cost_kv_attention).
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string_view>

#include "flopwise/torch_trace.h"

namespace flopwise {

namespace {

constexpr std::string_view kKvAttention = "flopwise::kv_attention";

// The attention ops of serving engines: where their q [.., Hq, D] and their K (its last two dims Hkv, D) are.
struct KvAttentionOp {
  std::string_view prefix;  // the op's name, or its start (sglang numbers its profiler labels)
  size_t q, k;
};
constexpr KvAttentionOp kKvAttentionOps[] = {
    {"vllm::unified_attention_with_output", 0, 1},
    {"vllm::unified_attention", 0, 1},
    {"sglang_profiler::attention_paged_attention_ragged", 2, 3},
    {"aiter::mha_batch_prefill", 0, 1},
};

const KvAttentionOp* kv_attention_op(const std::string& name) {
  for (const auto& op : kKvAttentionOps)
    if (name.rfind(op.prefix, 0) == 0) return &op;
  return nullptr;
}

// The number after `key` in `s` from `from` on (sq, sk, sqsq, sqsk are each followed by digits).
bool number_after(std::string_view s, std::string_view key, size_t& from, int64_t& v) {
  size_t at = s.find(key, from);
  if (at == std::string_view::npos) return false;
  const char* b = s.data() + at + key.size();
  auto [end, ec] = std::from_chars(b, s.data() + s.size(), v);
  from = static_cast<size_t>(end - s.data());
  return ec == std::errc() && end != b;
}

// One "(sq..sk..sqsq..sqsk..)" group from `from` on, added to `st`.
bool add_group(std::string_view s, size_t& from, ServingStep& st) {
  int64_t sq = 0, sk = 0, sqsq = 0, sqsk = 0;
  if (!number_after(s, "(sq", from, sq) || !number_after(s, "sk", from, sk) ||
      !number_after(s, "sqsq", from, sqsq) || !number_after(s, "sqsk", from, sqsk))
    return false;
  st.query_tokens += sq, st.kv_tokens += sk, st.sq_sk += sqsk;
  return true;
}

std::optional<ServingStep> parse_step(std::string_view s) {
  if (s.rfind("execute_", 0) != 0) return std::nullopt;
  ServingStep st;
  size_t from = 0, ctx = s.find("_context_"), gen = s.find(")_generation_");
  if (ctx == std::string_view::npos || gen == std::string_view::npos) return std::nullopt;
  from = ctx;
  if (!add_group(s, from, st)) return std::nullopt;
  const int64_t context = st.query_tokens;
  from = gen;
  if (!add_group(s, from, st)) return std::nullopt;
  st.context_tokens = context;
  st.generated_tokens = st.query_tokens - context;
  return st;
}

std::optional<AtenCost> cost_kv_attention(const AtenCall& c) {
  if (c.op != kKvAttention || c.dims.size() != 4 || c.dims[0].empty() || c.dims[1].empty())
    return std::nullopt;
  const std::vector<int64_t>& q = c.dims[0][0];
  const std::vector<int64_t>& k = c.dims[1][0];
  if (q.size() < 3 || k.size() < 2 || q.back() != k.back()) return std::nullopt;
  const int64_t d = q.back(), hq = q[q.size() - 2], hkv = k[k.size() - 2];
  int64_t tokens = 1;
  for (size_t i = 0; i + 2 < q.size(); ++i) tokens *= q[i];
  const int64_t sq_sk = std::atoll(c.concrete[2].c_str()), sk = std::atoll(c.concrete[3].c_str());
  const DType t = trace_dtype(c.types[0]);
  AtenCost r;
  // QK^T and PV: each Hq * D * sum(sq * sk) MACs (the full rectangle, as flopwise counts a causal SDPA).
  if (__builtin_mul_overflow(2 * hq * d, sq_sk, &r.macs)) return std::nullopt;
  r.flops = 2 * r.macs;
  // q read and the output written, [tokens, Hq, D] each; K and V of every KV token read once.
  r.bytes = dtype_size(t) * (2 * tokens * hq * d + 2 * sk * hkv * d);
  r.dtype = dtype_name(t);
  r.costed = true;
  return r;
}

}  // namespace

void tag_kv_attention(TorchTrace& t) {
  std::vector<std::pair<const TraceEvent*, ServingStep>> steps;
  for (const TraceEvent& e : t.cpu)
    if (e.kind == TraceKind::Annotation)
      if (auto st = parse_step(t.names[e.name])) {
        st->name = t.names[e.name];
        steps.emplace_back(&e, *st);
      }
  if (steps.empty()) return;
  for (const auto& [e, st] : steps) t.serving_steps.push_back(st);
  std::map<std::pair<int32_t, size_t>, int32_t> tagged;  // (call, step) -> the tagged call
  for (TraceEvent& e : t.cpu) {
    if (e.kind != TraceKind::CpuOp || e.call < 0) continue;
    const KvAttentionOp* op = kv_attention_op(t.names[e.name]);
    if (!op) continue;
    auto replay = t.replay_thread_ts.find(e.thread);  // an op of a graph's capture: when the graph ran
    const double when = replay != t.replay_thread_ts.end() ? replay->second : e.ts;
    for (size_t s = 0; s < steps.size(); ++s) {
      const TraceEvent& a = *steps[s].first;
      if (when < a.ts || when > a.ts + a.dur) continue;
      auto [it, fresh] = tagged.try_emplace({e.call, s}, static_cast<int32_t>(t.calls.size()));
      if (fresh) {
        const AtenCall& c = t.calls[static_cast<size_t>(e.call)];
        if (c.dims.size() <= std::max(op->q, op->k) || c.dims[op->q].empty() || c.dims[op->k].empty()) {
          tagged.erase(it);
          break;
        }
        AtenCall k;
        k.op = std::string(kKvAttention);
        k.types = {c.types[op->q], c.types[op->k], "Scalar", "Scalar"};
        k.dims = {c.dims[op->q], c.dims[op->k], {}, {}};
        k.concrete = {"", "", std::to_string(steps[s].second.sq_sk),
                      std::to_string(steps[s].second.kv_tokens)};
        t.calls.push_back(std::move(k));
      }
      e.call = it->second;
      break;
    }
  }
}

std::optional<AtenCost> cost_measured_call(const AtenCall& call, const AtenCoster& cost) {
  if (auto k = cost_kv_attention(call)) return k;
  return cost_inductor_kernel(call, cost);
}

}  // namespace flopwise
