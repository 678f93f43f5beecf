// include/flopwise/parallel.h — the cost per GPU of a training step at scale (--parallel): data, tensor,
// sequence, context, pipeline and expert parallelism, ZeRO and FSDP, found on the analysed graph. Each
// distinct kind of rank (a pipeline stage's tensor-parallel shard) gets its params, MACs and FLOPs, model
// states, kept activations and peak memory; the step gets its collectives (group, count, message bytes) and,
// on a device, a time. The rules, with their published sources, are in docs/parallel.md. Owns: the --parallel
// spec (parallel_config.cc), the tensor-parallel plan found from the graph (parallel_plan.cc), the per-rank
// figures and traffic (parallel.cc), the step time (parallel_time.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flopwise/analysed_report.h"
#include "flopwise/cost.h"
#include "flopwise/ir.h"
#include "flopwise/roofline.h"
#include "flopwise/training.h"

namespace flopwise {

enum class Fsdp { Off, Full, Hybrid };
enum class Recompute { None, Selective, Full };

// --parallel dp=D,tp=T,pp=P,ep=E,cp=C,sp=on|off,zero=0..3,fsdp=on|hybrid|off,shard=S,microbatches=M,
// recompute=none|selective|full. World size = dp * tp * pp * cp; expert parallelism splits the experts over
// ep ranks of the data-parallel group (ep divides dp).
struct ParallelConfig {
  int64_t dp = 1, tp = 1, pp = 1, ep = 1, cp = 1;
  bool sp = false;  // sequence parallelism (Megatron's, with tp): norms, dropout and residuals split by seq
  int zero = 0;     // ZeRO stage: 1 optimizer state, 2 + gradients, 3 + parameters sharded over dp
  Fsdp fsdp =
      Fsdp::Off;      // FSDP: parameters, gradients, optimizer state sharded (ZeRO-3); hybrid within `shard`
  int64_t shard = 8;  // fsdp=hybrid: the ranks a shard group spans (one node), replicated across groups
  int64_t microbatches = 1;
  Recompute recompute = Recompute::None;
  std::vector<std::string> stage_starts;  // pp: scopes that start stages 1..P-1 (stages=a|b), else balanced
  int64_t world() const;
  // The ZeRO stage model states follow: zero, or 3 under FSDP.
  int stage() const;
  // The data-parallel ranks model states are sharded over: dp (hybrid: min(shard, dp)), 1 at stage 0.
  int64_t state_shards() const;
};

// Parses the spec; throws UsageError naming the key or value: an unknown key, a value that is not a positive
// integer or one of the key's words, ep not dividing dp, zero with fsdp, sp without tp > 1, shard not
// dividing dp, stages naming other than pp - 1 scopes, a world size past 2^24.
ParallelConfig parse_parallel(const std::string& spec);
// The spec back as text, every key: "dp=64,tp=1,...".
std::string parallel_spec(const ParallelConfig& c);

// Model states per rank in bytes, the ZeRO paper's accounting (Rajbhandari et al. 2020, section 5): Ψ params
// held by a rank, 16-bit weights and gradients (`weight_bytes`, `grad_bytes` a param), an optimizer of K
// bytes a param (12: Adam's fp32 master weights, momentum and variance), N data-parallel ranks. Stage 0: (2 +
// 2 + K)Ψ; 1: 2Ψ + 2Ψ + KΨ/N; 2: 2Ψ + (2 + K)Ψ/N; 3: (2 + 2 + K)Ψ/N (each share rounded up).
struct ModelStates {
  int64_t weights = 0, grads = 0, optimizer = 0;
  int64_t total() const { return weights + grads + optimizer; }
};
ModelStates zero_model_states(int64_t params, int stage, int64_t n, int64_t weight_bytes, int64_t grad_bytes,
                              int64_t k);

// DeepSpeed's own estimators, GPU bytes without offload (deepspeed/runtime/zero/stage_1_and_2.py
// estimate_zero2_model_states_mem_needs: 4Ψ + 16Ψ/N; stage3.py estimate_zero3_model_states_mem_needs:
// 4L + 18Ψ/N with L the largest layer's params). Stage 0 and 1 take stage 2's formula, as DeepSpeed has none.
int64_t deepspeed_estimate(int64_t params, int64_t largest_layer, int stage, int64_t n);

// How tensor parallelism splits a node (Megatron's plan, Shoeybi et al. 2019).
enum class TpRole {
  Replicated,  // every tp rank runs it whole (norms, residuals, position embeddings)
  Colwise,     // a weighted product split by output features (q/k/v, MLP up/gate, the LM head by vocab)
  Rowwise,     // split by input features: partial sums all-reduced (attention out, MLP down)
  Vocab,       // an embedding table split by rows (vocab-parallel), its output all-reduced
  Sharded,     // between a colwise and a rowwise product: heads or features split, 1/tp of its work
};
const char* tp_role_name(TpRole r);
// "colwise" | "rowwise" | "sequence" | "replicate" (a plan file's words, torch's parallelize_module styles;
// sequence is replicate with sequence parallelism's split); throws UsageError for another.
TpRole parse_tp_role(const std::string& word);

// A plan file (--parallel-plan): one rule a line, `GLOB STYLE` (a scope glob as --freeze takes them, then
// colwise | rowwise | sequence | replicate); '#' starts a comment. A weighted product in a matched scope
// takes the style, overriding what the graph's structure gives it.
struct PlanRule {
  std::string glob;
  TpRole role = TpRole::Replicated;
};
std::vector<PlanRule> read_plan_file(const std::string& path);

// The role of each report node (index as Report::nodes), and why.
struct TpPlan {
  std::vector<TpRole> roles;
  std::vector<std::string> reasons;  // per node, "" for a replicated node with nothing to say
  // Per scope holding weighted products: the role its products took ("h.0.attn.c_attn colwise").
  std::vector<std::pair<std::string, TpRole>> modules;
  std::vector<std::string> module_reasons;  // why, beside each of `modules`
  int64_t vocab_rows = 0;  // the vocab-parallel embedding's rows (the vocabulary), 0 without one
  std::vector<std::string> warnings;
};
// The plan for `tp` ranks: weighted products (MatMul, Gemm with a weight operand) whose activation is whole
// are colwise, whose activation is split rowwise; what reads a split tensor is split (Sharded) until a
// rowwise product joins it; the embedding table with the most rows fed by a graph input is vocab-parallel; a
// colwise product whose heads (the next 4-d reshape's second-to-last dim) tp does not divide stays replicated
// (GQA's few kv heads); an MoE router (AnalysedReport::moe) stays replicated. `rules` override by scope.
TpPlan plan_tensor_parallel(const Model& model, const AnalysedReport& report, int64_t tp,
                            const std::vector<PlanRule>& rules = {});

// One collective of the step, per rank.
struct Collective {
  std::string collective;  // all-reduce | all-gather | reduce-scatter | send/recv | all-to-all
  std::string group;       // tp | dp | pp | ep | cp
  std::string where;       // what it carries ("h.0.attn.c_proj output, forward")
  int64_t count = 0;       // times per step (micro-batches included)
  int64_t bytes = 0;       // one message: the full tensor's bytes (what NCCL's size argument names)
  int64_t group_size = 1;
  // Bytes each rank sends per call on a ring (NCCL's busbw factors): all-reduce 2(n-1)/n, all-gather and
  // reduce-scatter (n-1)/n, send/recv 1, all-to-all (n-1)/n of the message.
  int64_t sent_per_call() const;
};

// A kind of rank: one pipeline stage (its tensor-parallel shards alike).
struct RankRole {
  std::string name;             // "stage 0"
  std::string first, last;      // the scopes it starts and ends at
  int64_t params = 0;           // parameters this rank holds (its tp share; before ZeRO sharding)
  int64_t macs = 0, flops = 0;  // forward + backward of one micro-batch, recompute included
  int64_t fwd_macs = 0, fwd_flops = 0;
  int64_t weights_bytes = 0, grads_bytes = 0, optimizer_bytes = 0, model_states_bytes = 0;
  int64_t activation_bytes = 0;  // kept for backward, per micro-batch
  int64_t in_flight = 1;         // micro-batches 1F1B keeps in flight on this stage
  int64_t peak_bytes = 0;        // model states + activations x in_flight + the backward's transient
  double compute_seconds = 0;    // roofline, one micro-batch's forward and backward (with --hardware)
};

struct StepTime {
  bool known = false;
  double compute_s = 0, comm_s = 0, exposed_comm_s = 0, bubble_s = 0, step_s = 0;
  double mfu = 0, tokens_per_s = 0;
  int64_t max_microbatch = -1;  // the largest micro-batch whose peak fits the device's memory (-1: unknown)
  std::string overlap;          // the assumption stated
};

struct ParallelReport {
  ParallelConfig cfg;
  Precision precision = Precision::Fp32;
  int64_t model_params = 0;  // the whole model's
  int64_t model_flops = 0;   // the whole model's forward and backward FLOPs per micro-batch (MFU's numerator)
  int64_t tokens = 0;        // per micro-batch per dp rank (graph's batch x seq), 0 when not token ids
  TpPlan plan;
  std::vector<RankRole> ranks;
  std::vector<Collective> comm;
  double bubble = 0;  // (P - 1) / (M + P - 1)
  int64_t deepspeed_bytes = 0, largest_layer = 0;
  StepTime time;
  std::vector<std::string> notes, warnings;
};

// The parallel analysis of `model` as `report` and `training` (analyse_training's) counted it (`report`'s MoE
// summary names the experts expert parallelism places); every dim must be bound. `hw`: a device for the step
// time (nullptr: none).
ParallelReport analyse_parallel(const Model& model, const AnalysedReport& report,
                                const TrainingReport& training, const ParallelConfig& cfg,
                                const std::vector<PlanRule>& rules = {}, const Hardware* hw = nullptr);

}  // namespace flopwise
