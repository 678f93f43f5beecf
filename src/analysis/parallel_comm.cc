// src/analysis/parallel_comm.cc — the collectives of one training step, per rank (flopwise/parallel.h):
// tensor parallelism's all-reduces (or sequence parallelism's all-gathers and reduce-scatters), data
// parallelism's gradient all-reduce or ZeRO's reduce-scatter and all-gather, FSDP's per-layer gathers,
// pipeline sends, context parallelism's key/value gathers, expert parallelism's all-to-alls.
#include <algorithm>
#include <map>
#include <set>

#include "flopwise/attention.h"
#include "flopwise/moe.h"
#include "parallel_detail.h"

namespace flopwise {

int64_t Collective::sent_per_call() const {
  const int64_t n = group_size;
  if (n <= 1) return collective == "send/recv" ? bytes : 0;
  if (collective == "all-reduce") return bytes / n * 2 * (n - 1);
  if (collective == "send/recv") return bytes;
  return bytes / n * (n - 1);  // all-gather, reduce-scatter, all-to-all
}

namespace parallel_detail {

Bytes bytes_per_param(const TrainingReport& t, const Report& r) {
  Bytes b;
  const Count& p = r.totals.params;
  const Count& tp = t.total.trainable_params;
  if (p.known && p.v > 0 && t.param_bytes.known) b.weight = t.param_bytes.v / p.v;
  if (tp.known && tp.v > 0 && t.gradient_bytes.known) b.grad = t.gradient_bytes.v / tp.v;
  if (tp.known && tp.v > 0 && t.optimizer_state_bytes.known) b.k = t.optimizer_state_bytes.v / tp.v;
  return b;
}

int64_t largest_unit_params(const std::vector<NodeShare>& shares) {
  std::map<std::string, int64_t> by_unit;
  for (const NodeShare& s : shares) by_unit[s.unit] += s.params;
  int64_t most = 0;
  for (const auto& kv : by_unit) most = std::max(most, kv.second);
  return most;
}

namespace {

// The step's collectives, merged where one kind carries the same bytes (each layer's alike).
struct CommList {
  std::vector<Collective> items;
  void add(const char* coll, const char* group, int64_t size, const std::string& where, int64_t count,
           int64_t bytes) {
    if (size <= 1 || count <= 0 || bytes <= 0) return;
    for (Collective& c : items)
      if (c.collective == coll && c.group == group && c.where == where && c.bytes == bytes) {
        c.count += count;
        return;
      }
    items.push_back({coll, group, where, count, bytes, size});
  }
};

int64_t value_bytes(const Graph& g, int vi, Precision p) {
  if (vi < 0) return 0;
  const Value& v = g.values[static_cast<size_t>(vi)];
  const Count n = v.shape.numel_count();
  return n.known ? n.v * act_bytes(v, p) : 0;
}

// Tensor parallelism, per micro-batch (Megatron: the f and g operators; with SP, all-gather and
// reduce-scatter in their place, the gathered input gathered again in the backward for the weight's
// gradient). With pipeline stages, each stage's own (`where` names it).
struct TensorParallel {
  CommList& c;
  const Graph& g;
  const ParallelConfig& cfg;
  Precision p;
  std::string at;  // "stage k: " with pipeline stages

  void add(const char* coll, const std::string& what, int64_t count, int64_t bytes) {
    c.add(coll, "tp", cfg.tp, at + what, count, bytes);
  }
  // After a row-parallel product or the vocab-parallel embedding: its partial output summed.
  void joined(const Node& n, bool embedding) {
    const int64_t b = value_bytes(g, n.outputs.empty() ? -1 : n.outputs[0], p) / cfg.cp;
    const std::string what = embedding ? "embedding output" : "rowwise product output";
    if (!cfg.sp) return add("all-reduce", what + ", forward", cfg.microbatches, b);
    add("reduce-scatter", what + ", forward", cfg.microbatches, b);
    if (!embedding) add("all-gather", what + "'s gradient, backward", cfg.microbatches, b);
  }
  // Before a column-parallel product: its whole input (once for the products sharing it, q, k and v).
  void split(int act) {
    const int64_t b = value_bytes(g, act, p) / cfg.cp;
    if (!cfg.sp) return add("all-reduce", "colwise product input's gradient, backward", cfg.microbatches, b);
    add("all-gather", "colwise product input, forward", cfg.microbatches, b);
    add("all-gather", "colwise product input, backward (gathered again)", cfg.microbatches, b);
    add("reduce-scatter", "colwise product input's gradient, backward", cfg.microbatches, b);
  }
  // A split graph output of the vocabulary's width (the LM head's logits): Megatron's vocab-parallel cross
  // entropy, three all-reduces of one fp32 per token (the max, the target's logit, the sum of exponentials).
  void cross_entropy(const Value& v, int64_t vocab_rows) {
    const Count n = v.shape.numel_count();
    const int64_t vocab = v.shape.rank_known && !v.shape.dims.empty() && v.shape.dims.back().is_known()
                              ? v.shape.dims.back().value()
                              : 0;
    if (n.known && vocab > 0 && vocab == vocab_rows)
      add("all-reduce", "vocab-parallel cross entropy", 3 * cfg.microbatches, n.v / vocab / cfg.cp * 4);
  }
};

// A column-parallel product's activation operand: its float input that is neither stored nor a graph input.
int activation_of(const Graph& g, const Node& n) {
  for (int vi : n.inputs)
    if (vi >= 0 && !g.values[static_cast<size_t>(vi)].is_initializer &&
        g.values[static_cast<size_t>(vi)].producer >= 0 && is_float(g.values[static_cast<size_t>(vi)].dtype))
      return vi;
  return -1;
}

void tensor_parallel(CommList& c, const Graph& g, const ParallelConfig& cfg, const TpPlan& plan,
                     const std::vector<Stage>& stages, Precision p) {
  std::set<int> col_inputs;
  for (size_t k = 0; k < stages.size(); ++k) {
    TensorParallel tp{c, g, cfg, p, stages.size() > 1 ? "stage " + std::to_string(k) + ": " : ""};
    for (size_t i = stages[k].begin; i < stages[k].end; ++i) {
      const TpRole r = plan.roles[i];
      if (r == TpRole::Rowwise || r == TpRole::Vocab) tp.joined(g.nodes[i], r == TpRole::Vocab);
      const int act = r == TpRole::Colwise ? activation_of(g, g.nodes[i]) : -1;
      if (act >= 0 && col_inputs.insert(act).second) tp.split(act);
    }
    for (int o : g.outputs) {
      const Value& v = g.values[static_cast<size_t>(o)];
      if (v.producer < static_cast<int>(stages[k].begin) || v.producer >= static_cast<int>(stages[k].end))
        continue;
      const TpRole r = plan.roles[static_cast<size_t>(v.producer)];
      if (r == TpRole::Colwise || r == TpRole::Sharded) tp.cross_entropy(v, plan.vocab_rows);
    }
  }
}

// Data parallelism per stage: DDP's all-reduce once a step, ZeRO-1/2's reduce-scatter and all-gather once a
// step, ZeRO-3 and FSDP each layer's all-gather in the forward and backward and its gradients'
// reduce-scatter, every micro-batch; hybrid FSDP all-reduces its shard across the replicas too.
void data_parallel(CommList& c, const ParallelConfig& cfg, const std::vector<NodeShare>& shares,
                   const std::vector<Stage>& stages, const Bytes& per) {
  const int64_t m = cfg.microbatches;
  for (size_t k = 0; k < stages.size(); ++k) {
    const std::string at = stages.size() > 1 ? "stage " + std::to_string(k) + ": " : "";
    // FSDP's units: each layer, and the root's own parameters (fully_shard on the model) as one
    std::map<std::string, int64_t> units;
    std::vector<std::string> order;  // in order of first use
    int64_t params = 0;
    for (size_t i = stages[k].begin; i < stages[k].end; ++i) {
      const std::string& u = shares[i].layer ? shares[i].unit : std::string();
      if (!units.count(u)) order.push_back(u);
      units[u] += shares[i].params;
      params += shares[i].params;
    }
    const int stage = cfg.stage();
    const int64_t shard = cfg.state_shards();
    if (stage == 0) {
      c.add("all-reduce", "dp", cfg.dp, at + "gradients", 1, params * per.grad);
    } else if (stage <= 2) {
      c.add("reduce-scatter", "dp", cfg.dp, at + "gradients", 1, params * per.grad);
      c.add("all-gather", "dp", cfg.dp, at + "updated weights", 1, params * per.weight);
    } else {
      const char* group = cfg.fsdp == Fsdp::Hybrid ? "dp-shard" : "dp";
      // FSDP2: the root keeps its gathered weights from its forward to its backward (not resharded after
      // forward)
      for (const std::string& u : order) {
        const std::string what = at + (u.empty() ? "root module's " : "layer ");
        c.add("all-gather", group, shard, what + "weights, forward", m, units[u] * per.weight);
        if (!u.empty())
          c.add("all-gather", group, shard, what + "weights, backward", m, units[u] * per.weight);
        c.add("reduce-scatter", group, shard, what + "gradients, backward", m, units[u] * per.grad);
      }
      if (cfg.fsdp == Fsdp::Hybrid)
        c.add("all-reduce", "dp-replicate", cfg.dp / shard, at + "gradient shard", 1,
              ceil_div(params * per.grad, shard));
    }
  }
}

// Pipeline parallelism: the activations crossing each stage boundary (what later stages read of earlier
// ones), sent forward and their gradients back, every micro-batch.
void pipeline(CommList& c, const Graph& g, const ParallelConfig& cfg, const std::vector<Stage>& stages,
              Precision p) {
  std::vector<size_t> stage_of(g.nodes.size(), 0);
  for (size_t k = 0; k < stages.size(); ++k)
    for (size_t i = stages[k].begin; i < stages[k].end; ++i) stage_of[i] = k;
  const int64_t div = (cfg.sp ? cfg.tp : 1) * cfg.cp;
  for (size_t k = 1; k < stages.size(); ++k) {
    std::set<int> crossing;
    for (size_t i = stages[k].begin; i < g.nodes.size(); ++i)
      for (int vi : g.nodes[i].inputs) {
        if (vi < 0) continue;
        const Value& v = g.values[static_cast<size_t>(vi)];
        if (v.producer < 0 || stage_of[static_cast<size_t>(v.producer)] >= k || !is_float(v.dtype)) continue;
        // a constant (its contents known, a Constant's output) is in every stage's program: not sent
        if (v.data || g.nodes[static_cast<size_t>(v.producer)].op == "Constant") continue;
        crossing.insert(vi);
      }
    int64_t b = 0;
    for (int vi : crossing) b += value_bytes(g, vi, p);
    const std::string at = "stage " + std::to_string(k - 1) + " -> " + std::to_string(k);
    c.add("send/recv", "pp", cfg.pp, at + " activations, forward", cfg.microbatches, b / div);
    c.add("send/recv", "pp", cfg.pp, at + " gradients, backward", cfg.microbatches, b / div);
  }
}

// Context parallelism: each attention layer gathers the keys and values of the whole sequence in the forward
// (all-gather, as Llama 3's context parallelism) and reduce-scatters their gradients in the backward.
void context_parallel(CommList& c, const Graph& g, const ParallelConfig& cfg, const TpPlan& plan,
                      Precision p) {
  const std::vector<AttentionProduct> ap = find_attention_products(g);
  for (size_t a = 0; a < ap.size(); ++a) {
    const Node& n = g.nodes[ap[a].node];
    if (n.inputs.size() < 2) continue;
    const int64_t t = plan.roles[ap[a].node] == TpRole::Replicated ? 1 : cfg.tp;
    const int64_t b = value_bytes(g, n.inputs[1], p) / t;  // K (scores) or V (AV)
    const char* what = ap[a].scores ? "keys" : "values";
    c.add("all-gather", "cp", cfg.cp, std::string(what) + ", forward", cfg.microbatches, b);
    c.add("reduce-scatter", "cp", cfg.cp, std::string(what) + "' gradient, backward", cfg.microbatches, b);
  }
}

// Expert parallelism: each mixture-of-experts layer sends its tokens to their experts' ranks and back
// (dispatch and combine) in the forward, and their gradients in the backward: top_k copies of the tokens'
// hidden states (the first expert's activation) each.
void expert_parallel(CommList& c, const Model& model, const AnalysedReport& report, const ParallelConfig& cfg,
                     Precision p) {
  if (!report.moe) return;
  const Graph& g = model.graph;
  for (const MoeLayer& l : report.moe->layers) {
    if (l.experts.empty()) continue;
    int64_t b = 0;
    for (size_t i = 0; i < g.nodes.size() && b == 0; ++i) {
      const Node& n = g.nodes[i];
      if (std::find(n.scope.begin(), n.scope.end(), l.experts[0]) == n.scope.end() || n.inputs.empty())
        continue;
      if (n.op == "MatMul" || n.op == "Gemm") b = value_bytes(g, n.inputs[0], p);
    }
    b = b / cfg.cp / (cfg.sp ? cfg.tp : 1) * std::max<int64_t>(l.top_k, 1);
    c.add("all-to-all", "ep", cfg.ep, "expert dispatch and combine, forward", 2 * cfg.microbatches, b);
    c.add("all-to-all", "ep", cfg.ep, "expert dispatch and combine, backward", 2 * cfg.microbatches, b);
  }
}

}  // namespace

std::vector<Collective> collectives(const Model& model, const AnalysedReport& report,
                                    const ParallelConfig& cfg, const TpPlan& plan,
                                    const std::vector<NodeShare>& shares, const std::vector<Stage>& stages,
                                    Precision p, const Bytes& per) {
  CommList c;
  if (cfg.tp > 1) tensor_parallel(c, model.graph, cfg, plan, stages, p);
  if (cfg.cp > 1) context_parallel(c, model.graph, cfg, plan, p);
  if (cfg.ep > 1) expert_parallel(c, model, report, cfg, p);
  if (cfg.pp > 1) pipeline(c, model.graph, cfg, stages, p);
  if (cfg.dp > 1) data_parallel(c, cfg, shares, stages, per);
  return c.items;
}

}  // namespace parallel_detail

}  // namespace flopwise
