// tests/test_parallel.cc — --parallel (flopwise/parallel.h): the ZeRO paper's and DeepSpeed's model states,
// the spec's checks, Megatron's tensor-parallel plan on the bundled GPT-2 (params and MACs per rank by
// Megatron's formulas), every collective's size by hand, pipeline stages, GQA, a plan file, the CLI.
//
// models/gpt2.onnx (models/generate.py): hidden h = 128, 4 layers, 4 heads of 32, MLP 4h, vocab V = 1000,
// 64 positions, LM head tied to wte. Megatron's count per layer: 12h^2 + 13h params (q/k/v 3h^2 + 3h, out h^2
// + h, MLP 8h^2 + 5h, two layer norms 4h).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_util.h"
#include "flopwise/analyse.h"
#include "flopwise/errors.h"
#include "flopwise/parallel.h"
#include "flopwise/training.h"

namespace {

namespace fw = flopwise;

constexpr int64_t h = 128, L = 4, V = 1000, P = 64, b = 2, s = 64;
constexpr int64_t layer_params = 12 * h * h + 13 * h;  // 198,272

struct Run {
  fw::ParallelReport p;
  fw::TrainingReport t;
};

Run parallel_of(const std::string& model, const std::string& spec,
                fw::Precision prec = fw::Precision::Bf16Master, const std::vector<fw::PlanRule>& rules = {},
                std::vector<std::pair<std::string, int64_t>> dims = {{"batch", b}, {"seq", s}}) {
  fw::Pins pins;
  pins.dims = dims;
  fw::Analysis a = fw::analyse(fwtest::model_path(model), pins, fw::default_convention());
  fw::TrainOptions to;
  to.precision = prec;
  Run r;
  r.t = fw::analyse_training(*a.model, a.report, to);
  r.p = fw::analyse_parallel(*a.model, a.report, r.t, fw::parse_parallel(spec), rules);
  return r;
}

const fw::Collective* find(const fw::ParallelReport& p, const std::string& coll, const std::string& where) {
  for (const fw::Collective& c : p.comm)
    if (c.collective == coll && c.where == where) return &c;
  return nullptr;
}

fw::TpRole role_of(const fw::ParallelReport& p, const std::string& scope) {
  for (const auto& [sc, r] : p.plan.modules)
    if (sc == scope) return r;
  return fw::TpRole::Sharded;  // not a weighted product's scope
}

}  // namespace

TEST_CASE("parallel: the ZeRO paper's model states per device (7.5 B params, 64 GPUs, K = 12)") {
  // Rajbhandari et al. 2020, Figure 1: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB for baseline, P_os, P_os+g, P_os+g+p.
  const int64_t psi = 7'500'000'000;
  const double paper[] = {120, 31.4, 16.6, 1.9};
  for (int stage = 0; stage <= 3; ++stage) {
    const fw::ModelStates m = fw::zero_model_states(psi, stage, 64, 2, 2, 12);
    CAPTURE(stage);
    CHECK(std::round(static_cast<double>(m.total()) / 1e8) / 10 == doctest::Approx(paper[stage]));
  }
  // exact: 16 psi; 4 psi + 12 psi / 64; 2 psi + 14 psi / 64; 16 psi / 64
  CHECK(fw::zero_model_states(psi, 0, 64, 2, 2, 12).total() == 120'000'000'000);
  CHECK(fw::zero_model_states(psi, 1, 64, 2, 2, 12).total() == 30'000'000'000 + 1'406'250'000);
  CHECK(fw::zero_model_states(psi, 2, 64, 2, 2, 12).total() == 15'000'000'000 + 1'640'625'000);
  CHECK(fw::zero_model_states(psi, 3, 64, 2, 2, 12).total() == 1'875'000'000);
}

TEST_CASE("parallel: DeepSpeed's estimators") {
  // DeepSpeed's estimate_zero3_model_states_mem_needs_all_live on t5-small (60,506,624 params, largest layer
  // the shared embedding 32128 x 512 = 16,449,536), 1 node, 1 GPU, as DeepSpeed prints it: "1.08GB | per GPU
  // | offload_param=none, offload_optimizer=none" (GB = 2^30 bytes in DeepSpeed's format): 4L + 18 psi / N.
  const int64_t z3 = fw::deepspeed_estimate(60'506'624, 16'449'536, 3, 1);
  CHECK(z3 == 4 * 16'449'536 + 18 * 60'506'624);
  CHECK(std::round(static_cast<double>(z3) / (1 << 30) * 100) / 100 == doctest::Approx(1.08));
  // estimate_zero2_model_states_mem_needs: 4 psi + int(16 psi / N)
  CHECK(fw::deepspeed_estimate(1'000'000, 0, 2, 8) == 4'000'000 + 2'000'000);
}

TEST_CASE("parallel: the spec, and what it refuses") {
  const fw::ParallelConfig c =
      fw::parse_parallel("dp=8,tp=4,pp=2,sp=on,zero=1,microbatches=16,recompute=selective");
  CHECK(c.world() == 64);
  CHECK(c.state_shards() == 8);
  CHECK(fw::parallel_spec(c) ==
        "dp=8,tp=4,pp=2,ep=1,cp=1,sp=on,zero=1,fsdp=off,microbatches=16,recompute=selective");
  CHECK(fw::parse_parallel("dp=16,fsdp=hybrid,shard=8").state_shards() == 8);
  CHECK(fw::parse_parallel("dp=16,fsdp=on").stage() == 3);
  const std::pair<const char*, const char*> bad[] = {
      {"", "empty"},
      {"dp=0", "dp='0' is not a positive integer"},
      {"tp=two", "tp='two' is not a positive integer"},
      {"dp", "'dp' is not KEY=VALUE"},
      {"xp=2", "unknown key 'xp'"},
      {"zero=4", "zero='4' is not one of 0 | 1 | 2 | 3"},
      {"sp=yes", "sp='yes' is not one of off | on"},
      {"sp=on", "sp=on needs tp > 1"},
      {"dp=6,ep=4", "ep=4 does not divide dp=6"},
      {"dp=4,zero=2,fsdp=on", "zero and fsdp both given"},
      {"dp=12,fsdp=hybrid,shard=8", "shard=8 does not divide dp=12"},
      {"pp=3,stages=h.2", "stages names 1 scope(s); pp=3 needs 2"},
      {"dp=65536,tp=65536", "world size"},
  };
  for (const auto& item : bad) {  // not a structured binding: CAPTURE is a lambda (clang 14)
    const std::string spec = item.first;
    CAPTURE(spec);
    CHECK_THROWS_WITH_AS(fw::parse_parallel(spec), doctest::Contains(item.second), fw::UsageError);
  }
}

TEST_CASE("parallel: Megatron's plan on GPT-2, params and MACs per tensor-parallel rank") {
  const Run r = parallel_of("gpt2.onnx", "tp=2");
  const fw::ParallelReport& p = r.p;
  CHECK(role_of(p, "wte") == fw::TpRole::Vocab);
  CHECK(role_of(p, "h.0.attn.c_attn") == fw::TpRole::Colwise);
  CHECK(role_of(p, "h.0.attn.c_proj") == fw::TpRole::Rowwise);
  CHECK(role_of(p, "h.3.mlp.c_fc") == fw::TpRole::Colwise);
  CHECK(role_of(p, "h.3.mlp.c_proj") == fw::TpRole::Rowwise);
  CHECK(role_of(p, "lm_head") == fw::TpRole::Colwise);  // W @ x^T of the tied table, split by vocab
  REQUIRE(p.ranks.size() == 1);
  CHECK(p.model_params ==
        L * layer_params + V * h + P * h + 2 * h);  // 929,536 (Megatron's 12lh^2(1 + 13/12h) + Vh)
  // Per rank: column-parallel weights and biases / 2 (3h^2 + 3h, 4h^2 + 4h), row-parallel weights / 2 and
  // their biases whole (h^2, 4h^2; h, h), norms whole (4h), the vocab table / 2, positions and the final norm
  // whole.
  CHECK(p.ranks[0].params == L * ((12 * h * h + 7 * h) / 2 + 6 * h) + V * h / 2 + P * h + 2 * h);  // 470,528
  // Forward MACs per rank: per layer b s (3h^2 + h^2 + 8h^2) / 2 for the products, b s s h / 2 each for QK^T
  // and AV (heads split); the LM head b s h V / 2.
  CHECK(p.ranks[0].fwd_macs == L * b * s * (12 * h * h + 2 * s * h) / 2 + b * s * h * V / 2);  // 62,717,952
}

TEST_CASE("parallel: tensor-parallel collectives on GPT-2, with and without sequence parallelism") {
  const int64_t m = 4, act = b * s * h * 2;  // one [b, s, h] activation in bf16: 32,768 bytes
  const fw::ParallelReport p = parallel_of("gpt2.onnx", "tp=2,microbatches=4").p;
  // Megatron's g: an all-reduce after each row-parallel product (2 a layer), and the vocab-parallel
  // embedding's
  const fw::Collective* row = find(p, "all-reduce", "rowwise product output, forward");
  REQUIRE(row);
  CHECK(row->count == 2 * L * m);
  CHECK(row->bytes == act);
  CHECK(row->sent_per_call() == act);  // ring all-reduce on 2 ranks: 2 (n - 1) / n = 1 message
  CHECK(find(p, "all-reduce", "embedding output, forward")->count == m);
  // f: the gradient of each column-parallel product's input all-reduced in the backward, once for the fused
  // c_attn and once for c_fc a layer, and for the LM head's input
  const fw::Collective* col = find(p, "all-reduce", "colwise product input's gradient, backward");
  REQUIRE(col);
  CHECK(col->count == (2 * L + 1) * m);
  CHECK(col->bytes == act);
  // vocab-parallel cross entropy: 3 all-reduces of one fp32 per token
  CHECK(find(p, "all-reduce", "vocab-parallel cross entropy")->bytes == b * s * 4);
  CHECK(find(p, "all-reduce", "vocab-parallel cross entropy")->count == 3 * m);

  // Sequence parallelism (Korthikanti et al. 2022, section 4.2.2): g is a reduce-scatter forward and an
  // all-gather backward, f an all-gather forward and a reduce-scatter backward; the gathered input is
  // gathered again in the backward for the weight's gradient.
  const fw::ParallelReport q = parallel_of("gpt2.onnx", "tp=2,sp=on,microbatches=4").p;
  CHECK(find(q, "reduce-scatter", "rowwise product output, forward")->count == 2 * L * m);
  CHECK(find(q, "all-gather", "rowwise product output's gradient, backward")->count == 2 * L * m);
  CHECK(find(q, "all-gather", "colwise product input, forward")->count == (2 * L + 1) * m);
  CHECK(find(q, "reduce-scatter", "colwise product input's gradient, backward")->bytes == act);
  CHECK(find(q, "reduce-scatter", "embedding output, forward")->count == m);
  CHECK_FALSE(find(q, "all-reduce", "rowwise product output, forward"));
  // sequence parallelism splits what tensor parallelism replicates: no more kept than half of tp=1's
  const fw::ParallelReport one = parallel_of("gpt2.onnx", "tp=1").p;
  CHECK(q.ranks[0].activation_bytes < p.ranks[0].activation_bytes);
  CHECK(q.ranks[0].activation_bytes <= one.ranks[0].activation_bytes / 2 + 200);  // + rounding per node
}

TEST_CASE("parallel: data-parallel model states and traffic on GPT-2 by ZeRO stage") {
  const int64_t psi = L * layer_params + V * h + P * h + 2 * h;  // 929,536
  const int64_t tensors = 12 * L + 4;                            // Adam's step scalar per tensor
  const Run r0 = parallel_of("gpt2.onnx", "dp=8");
  // bf16-master: 2-byte weights and gradients, Adam keeping fp32 master weights, momentum and variance
  CHECK(r0.t.param_bytes.v == 2 * psi);
  CHECK(r0.t.gradient_bytes.v == 2 * psi);
  CHECK(r0.t.optimizer_state_bytes.v == 12 * psi + 4 * tensors);
  for (int stage = 0; stage <= 3; ++stage) {
    CAPTURE(stage);
    const fw::ParallelReport p = parallel_of("gpt2.onnx", "dp=8,zero=" + std::to_string(stage)).p;
    const fw::ModelStates want = fw::zero_model_states(psi, stage, 8, 2, 2, 12);
    CHECK(p.ranks[0].model_states_bytes == want.total());
    // the ZeRO paper's traffic per rank: 2 psi elements for stages 0-2, 3 psi for stage 3 (a ring moves
    // (n - 1) / n of each message per rank and call: all-reduce twice that)
    int64_t sent = 0;
    for (const fw::Collective& c : p.comm) sent += c.sent_per_call() * c.count;
    // (stage 3 as FSDP2 runs it: the root module's own weights are gathered once, not again for the backward)
    const int64_t root = (V * h + P * h + 2 * h) * 2 / 8 * 7;
    CHECK(sent == (stage == 3 ? 3 * psi * 2 / 8 * 7 - root : 2 * psi * 2 / 8 * 7));
  }
  // FSDP: each layer all-gathered forward and backward and its gradients reduce-scattered, every micro-batch;
  // the root module's own parameters (embeddings, final norm) are one unit
  const fw::ParallelReport f = parallel_of("gpt2.onnx", "dp=8,fsdp=on,microbatches=2").p;
  const fw::Collective* ag = find(f, "all-gather", "layer weights, forward");
  REQUIRE(ag);
  CHECK(ag->bytes == layer_params * 2);
  CHECK(ag->count == L * 2);
  CHECK(find(f, "all-gather", "root module's weights, forward")->bytes == (V * h + P * h + 2 * h) * 2);
  CHECK_FALSE(find(f, "all-gather", "root module's weights, backward"));
  CHECK(find(f, "reduce-scatter", "layer gradients, backward")->count == L * 2);
  // hybrid: sharded within 4 ranks, the gradient shard all-reduced across the 2 replicas
  const fw::ParallelReport hy = parallel_of("gpt2.onnx", "dp=8,fsdp=hybrid,shard=4").p;
  CHECK(hy.ranks[0].model_states_bytes == fw::zero_model_states(psi, 3, 4, 2, 2, 12).total());
  CHECK(find(hy, "all-reduce", "gradient shard")->bytes == psi * 2 / 4);
  CHECK(find(hy, "all-reduce", "gradient shard")->group_size == 2);
}

TEST_CASE("parallel: pipeline stages on GPT-2: given boundaries, sends, bubble, 1F1B in flight") {
  const fw::ParallelReport p = parallel_of("gpt2.onnx", "pp=2,stages=h.2,microbatches=4").p;
  REQUIRE(p.ranks.size() == 2);
  CHECK(p.ranks[0].params == V * h + P * h + 2 * layer_params);  // embeddings, h.0, h.1: 532,736
  CHECK(p.ranks[1].params == 2 * layer_params + 2 * h);  // h.2, h.3, ln_f (the head is the tied table)
  CHECK(p.ranks[0].in_flight == 2);                      // 1F1B: stage i holds min(P - i, M)
  CHECK(p.ranks[1].in_flight == 1);
  CHECK(p.bubble == doctest::Approx(1.0 / 5));  // (P - 1) / (M + P - 1)
  // the residual stream [b, s, h] crosses, in bf16, forward and its gradient back, each micro-batch
  const fw::Collective* fwd = find(p, "send/recv", "stage 0 -> 1 activations, forward");
  REQUIRE(fwd);
  CHECK(fwd->bytes == b * s * h * 2);
  CHECK(fwd->count == 4);
  CHECK(find(p, "send/recv", "stage 0 -> 1 gradients, backward")->count == 4);
  // balanced by forward FLOPs: every layer placed, two stages
  const fw::ParallelReport q = parallel_of("gpt2.onnx", "pp=2").p;
  REQUIRE(q.ranks.size() == 2);
  CHECK(q.ranks[0].params + q.ranks[1].params == p.model_params);
}

TEST_CASE("parallel: GQA's kv heads split while tp divides them, else replicated") {
  // models/shipped/llama_gqa.onnx: 4 query heads, 2 kv heads of 16, hidden 64, 2 layers
  const std::vector<std::pair<std::string, int64_t>> dims = {{"batch", 1}, {"seq", 8}, {"past", 0}};
  const fw::ParallelReport t2 =
      parallel_of("shipped/llama_gqa.onnx", "tp=2", fw::Precision::Fp32, {}, dims).p;
  CHECK(role_of(t2, "layers.0.self_attn.k_proj") == fw::TpRole::Colwise);
  CHECK(role_of(t2, "layers.0.self_attn.o_proj") == fw::TpRole::Rowwise);
  const fw::ParallelReport t4 =
      parallel_of("shipped/llama_gqa.onnx", "tp=4", fw::Precision::Fp32, {}, dims).p;
  CHECK(role_of(t4, "layers.0.self_attn.q_proj") == fw::TpRole::Colwise);
  CHECK(role_of(t4, "layers.0.self_attn.k_proj") == fw::TpRole::Replicated);
  CHECK(role_of(t4, "layers.1.self_attn.v_proj") == fw::TpRole::Replicated);
  CHECK(role_of(t4, "layers.1.self_attn.o_proj") == fw::TpRole::Rowwise);
}

TEST_CASE("parallel: a plan file overrides the structure's choice") {
  const std::filesystem::path dir = fwtest::scratch_dir("parallel_plan");
  const std::filesystem::path plan = dir / "plan.txt";
  std::ofstream(plan) << "# keep the LM head whole\nlm_head replicate\n";
  const std::vector<fw::PlanRule> rules = fw::read_plan_file(plan.string());
  const fw::ParallelReport p = parallel_of("gpt2.onnx", "tp=2", fw::Precision::Bf16Master, rules).p;
  CHECK(role_of(p, "lm_head") == fw::TpRole::Replicated);
  CHECK(p.ranks[0].fwd_macs == L * b * s * (12 * h * h + 2 * s * h) / 2 + b * s * h * V);
  CHECK_FALSE(find(p, "all-reduce", "vocab-parallel cross entropy"));
  std::ofstream(dir / "bad.txt") << "lm_head sideways\n";
  CHECK_THROWS_WITH_AS(fw::read_plan_file((dir / "bad.txt").string()), doctest::Contains("'sideways'"),
                       fw::UsageError);
}

TEST_CASE("parallel: the CLI's section, JSON and errors") {
  const std::filesystem::path dir = fwtest::scratch_dir("parallel_cli");
  const std::string m = "\"" + fwtest::model_path("gpt2.onnx") + "\" --dim batch=2 --dim seq=64 ";
  fwtest::CliRun bad = fwtest::run_cli(m + "--parallel tp=2,zero=5", dir);
  CHECK(bad.code == 2);
  CHECK(bad.err == "flopwise: error: --parallel: zero='5' is not one of 0 | 1 | 2 | 3\n");
  fwtest::CliRun unbound =
      fwtest::run_cli("\"" + fwtest::model_path("gpt2.onnx") + "\" --parallel tp=2", dir);
  CHECK(unbound.code == 2);
  CHECK(unbound.err.find("bind every dim") != std::string::npos);
  fwtest::CliRun text = fwtest::run_cli(m + "--parallel dp=8,tp=2,zero=1 --precision bf16-master", dir);
  CHECK(text.code == 0);
  CHECK(text.out.find("world size:                                   16\n") != std::string::npos);
  CHECK(text.out.find("data parallel size:                           8\n") != std::string::npos);
  fwtest::CliRun json = fwtest::run_cli(m + "--parallel tp=2 --precision bf16-master --format json", dir);
  REQUIRE(json.code == 0);
  const auto doc = nlohmann::json::parse(json.out);
  CHECK(doc["parallel"]["ranks"][0]["params"] == 470'528);
  CHECK(doc["parallel"]["comm"][0]["collective"] == "all-reduce");
  CHECK(doc["parallel"]["comm"][0]["group"] == "tp");
}

// models/pt2/parallel_gpt.pt2 (models/parallel_oracle.py): a GPT built to Korthikanti et al. 2022's
// assumptions, pre-LN, fused qkv, GELU, dropout on the attention probabilities and after each block's two
// products, no mask; hidden 64, 4 heads, 2 layers, vocab 128, exported in train mode at batch 2, seq 16.
// Under bf16-master every activation is 2 bytes and a dropout mask 1 (CUDA's fused kernel), the paper's
// accounting.
TEST_CASE("parallel: kept activations against Korthikanti et al. 2022, Table 2") {
  const double s_ = 16, b_ = 2, h_ = 64, a_ = 4, t2 = 2, t4 = 4, layers = 2;
  const double sbh = s_ * b_ * h_;  // 2,048
  // Per layer, Table 2: no parallelism sbh(34 + 5as/h); tensor parallel sbh(10 + 24/t + 5as/(ht)); with
  // sequence parallelism sbh/t (34 + 5as/h); selective recompute and SP 34 sbh/t. Beside the layers: the
  // final norm's input and the LM head's input (2sbh each; the head is column-parallel: whole under TP, split
  // with SP). Each layer norm also keeps its rows' mean and inverse std in fp32 (2 x 4 bytes per row: 256
  // bytes here), which the paper leaves out: 2 a layer and the final one.
  const double stats = s_ * b_ * 2 * 4;
  auto total = [&](double per_layer, double outside, double stats_div) {
    return static_cast<int64_t>(layers * per_layer + outside + (2 * layers + 1) * stats / stats_div);
  };
  const std::string m = "pt2/parallel_gpt.pt2";
  auto act = [&](const std::string& spec) {
    return parallel_of(m, spec, fw::Precision::Bf16Master, {}, {}).p.ranks[0].activation_bytes;
  };
  CHECK(act("tp=1") == total(sbh * (34 + 5 * a_ * s_ / h_), 4 * sbh, 1));                   // 169,216
  CHECK(act("tp=2") == total(sbh * (10 + 24 / t2 + 5 * a_ * s_ / (h_ * t2)), 4 * sbh, 1));  // 109,824
  CHECK(act("tp=4") == total(sbh * (10 + 24 / t4 + 5 * a_ * s_ / (h_ * t4)), 4 * sbh, 1));  // 80,128
  CHECK(act("tp=2,sp=on") == total(sbh / t2 * (34 + 5 * a_ * s_ / h_), 4 * sbh / t2, t2));  // 84,608
  CHECK(act("tp=2,sp=on,recompute=selective") == total(34 * sbh / t2, 4 * sbh / t2, t2));   // 74,368
  CHECK(act("tp=4,sp=on,recompute=selective") == total(34 * sbh / t4, 4 * sbh / t4, t4));
}

// models/parallel_oracle.json: torch 2.14 running the same GPT without dropout
// (models/pt2/parallel_gpt_nodrop.pt2) in float32 on the CPU, 2 processes over gloo: DTensor tensor
// parallelism with Megatron's plan through parallelize_module (the embedding RowwiseParallel, qkv and fc1
// ColwiseParallel, proj and fc2 RowwiseParallel, the head ColwiseParallel), and FSDP2 (fully_shard on each
// block and on the model); the loss is the logits' sum.
TEST_CASE(
    "parallel: collectives, shards and kept bytes per rank against torch running DTensor TP and FSDP2") {
  std::ifstream in(fwtest::model_path("parallel_oracle.json"));
  REQUIRE(in);
  const nlohmann::json o = nlohmann::json::parse(in);
  const std::string m = "pt2/parallel_gpt_nodrop.pt2";
  // tensor parallel 2: each rank's parameters, its kept bytes, and its all-reduces (count and bytes)
  const fw::ParallelReport tp = parallel_of(m, "tp=2", fw::Precision::Fp32, {}, {}).p;
  for (const auto& rank : o["tp"]) {
    CHECK(tp.ranks[0].params == rank["local_params"].get<int64_t>());
    CHECK(tp.ranks[0].activation_bytes == rank["saved_bytes"].get<int64_t>());
    std::map<std::string, int64_t> ours;  // the logits' sum needs no vocab-parallel cross entropy: left out
    for (const fw::Collective& c : tp.comm)
      if (c.where != "vocab-parallel cross entropy") ours["all_reduce " + std::to_string(c.bytes)] += c.count;
    CHECK(ours == rank["collectives"].get<std::map<std::string, int64_t>>());
  }
  // FSDP 2: shards, kept bytes (the unsharded model's), all-gathers and reduce-scatters per unit
  const fw::ParallelReport fs = parallel_of(m, "dp=2,fsdp=on", fw::Precision::Fp32, {}, {}).p;
  for (const auto& rank : o["fsdp"]) {
    const fw::ModelStates states = fw::zero_model_states(o["params"].get<int64_t>(), 3, 2, 4, 4, 8);
    CHECK(fs.ranks[0].weights_bytes == states.weights);
    CHECK(fs.ranks[0].weights_bytes == rank["local_params"].get<int64_t>() * 4);
    CHECK(fs.ranks[0].activation_bytes == rank["saved_bytes"].get<int64_t>());
    std::map<std::string, int64_t> ours;
    for (const fw::Collective& c : fs.comm)
      ours[(c.collective == "all-gather" ? "_allgather_base_ " : "_reduce_scatter_base_ ") +
           std::to_string(c.bytes)] += c.count;
    CHECK(ours == rank["collectives"].get<std::map<std::string, int64_t>>());
  }
  // FSDP 2 on the mixture of experts (models/pt2/parallel_moe.pt2: 4 experts, top 2, Mixtral's dense router)
  const fw::ParallelReport moe =
      parallel_of("pt2/parallel_moe.pt2", "dp=2,fsdp=on", fw::Precision::Fp32, {}, {}).p;
  for (const auto& rank : o["moe_fsdp"]) {
    CHECK(moe.ranks[0].weights_bytes == rank["local_params"].get<int64_t>() * 4);
    CHECK(moe.ranks[0].activation_bytes == rank["saved_bytes"].get<int64_t>());
    std::map<std::string, int64_t> ours;
    for (const fw::Collective& c : moe.comm)
      ours[(c.collective == "all-gather" ? "_allgather_base_ " : "_reduce_scatter_base_ ") +
           std::to_string(c.bytes)] += c.count;
    CHECK(ours == rank["collectives"].get<std::map<std::string, int64_t>>());
  }
}

TEST_CASE("parallel: [parallel] in a budget, its limits in flopwise check") {
  const std::filesystem::path dir = fwtest::scratch_dir("parallel_check");
  // GPT-2 at dp 8, tp 2, ZeRO-1, 4 micro-batches, bf16-master. The bytes one rank sends in a step: the tensor
  // parallel all-reduces (4 embedding + 32 row-parallel + 36 column-parallel, 32,768 bytes each, all sent on
  // 2 ranks) and the cross entropy's (12 of 512), ZeRO-1's reduce-scatter and all-gather of the rank's
  // 470,528 bf16 parameters (7/8 of 941,056 bytes each).
  const int64_t comm = 72 * 32'768 + 12 * 512 + 2 * (941'056 / 8 * 7);  // 4,012,288
  std::ofstream(dir / "budget.toml") << "[dims]\nbatch = 2\nseq = 64\n[train]\nprecision = \"bf16-master\"\n"
                                     << "[parallel]\ndp = 8\ntp = 2\nzero = 1\nmicrobatches = 4\n"
                                     << "[limits]\nparallel_params = \"470528\"\nparallel_comm_bytes = \""
                                     << comm << "\"\n";
  const std::string m =
      "check \"" + fwtest::model_path("gpt2.onnx") + "\" --budget \"" + (dir / "budget.toml").string() + "\"";
  fwtest::CliRun ok = fwtest::run_cli(m, dir);
  CHECK(ok.code == 0);
  CHECK(ok.out.find("parallel parallel_comm_bytes") != std::string::npos);
  std::ofstream(dir / "budget.toml", std::ios::app) << "parallel_peak_bytes = \"1MB\"\n";
  CHECK(fwtest::run_cli(m, dir).code == 1);
  std::ofstream(dir / "bad.toml") << "[parallel]\nzero = 9\n";
  fwtest::CliRun bad = fwtest::run_cli(
      "check \"" + fwtest::model_path("gpt2.onnx") + "\" --budget \"" + (dir / "bad.toml").string() + "\"",
      dir);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("[parallel]: zero='9' is not one of 0 | 1 | 2 | 3") != std::string::npos);
}

TEST_CASE(
    "parallel: step time on an H100: roofline compute, traffic over NVLink, MFU, the micro-batch that fits") {
  fw::Pins pins;
  pins.dims = {{"batch", b}, {"seq", s}};
  fw::Analysis a = fw::analyse(fwtest::model_path("gpt2.onnx"), pins, fw::default_convention());
  fw::TrainOptions to;
  to.precision = fw::Precision::Fp32;  // the graph's own dtypes: the roofline as --hardware gives it
  const fw::TrainingReport t = fw::analyse_training(*a.model, a.report, to);
  const fw::Hardware hw = fw::find_hardware("h100-sxm");
  // one rank, no traffic: the forward's roofline bound (flopwise/roofline.h) and a backward of twice it
  const fw::ParallelReport one =
      fw::analyse_parallel(*a.model, a.report, t, fw::parse_parallel("tp=1"), {}, &hw);
  const double fwd = fw::roofline(a.report, hw).total.seconds;
  REQUIRE(one.time.known);
  CHECK(one.time.compute_s == doctest::Approx(3 * fwd));
  CHECK(one.time.step_s == doctest::Approx(3 * fwd));
  // MFU: the step's model FLOPs over the step at the H100's FP32 peak, 67 TFLOP/s
  const double model_flops = static_cast<double>(t.forward_flops.v + t.total.backward_flops.v);
  CHECK(one.time.mfu == doctest::Approx(model_flops / (3 * fwd * 67e12)));
  CHECK(one.time.tokens_per_s == doctest::Approx(b * s / (3 * fwd)));
  // the largest multiple of the analysed micro-batch whose peak fits 80 GB
  const fw::RankRole& r = one.ranks[0];
  CHECK(one.time.max_microbatch ==
        static_cast<int64_t>((80e9 - static_cast<double>(r.model_states_bytes)) /
                             static_cast<double>(r.peak_bytes - r.model_states_bytes)));
  // tp 2 within a node: every call 5 us + the bytes a rank sends over NVLink's 450 GB/s a direction; 18
  // all-reduces of a [2, 64, 128] fp32 activation (65,536 bytes sent each on 2 ranks) and the cross entropy's
  // 3 of 512 bytes, all on the critical path
  const fw::ParallelReport two =
      fw::analyse_parallel(*a.model, a.report, t, fw::parse_parallel("tp=2"), {}, &hw);
  const double comm = 18 * (5e-6 + 65'536 / 450e9) + 3 * (5e-6 + 512 / 450e9);
  CHECK(two.time.comm_s == doctest::Approx(comm));
  CHECK(two.time.exposed_comm_s == doctest::Approx(comm));
  CHECK(two.time.step_s == doctest::Approx(two.time.compute_s + comm));
  // bf16-master: the graph's float32 nodes timed as 16-bit ones, at the BF16 tensor rate with half their
  // bytes
  to.precision = fw::Precision::Bf16Master;
  const fw::TrainingReport t16 = fw::analyse_training(*a.model, a.report, to);
  const fw::ParallelReport half =
      fw::analyse_parallel(*a.model, a.report, t16, fw::parse_parallel("tp=1"), {}, &hw);
  fw::Hardware h16 = hw;
  h16.peak[static_cast<size_t>(fw::PeakType::Float32)] = 989.5e12;
  h16.bandwidth = 2 * 3.35e12;
  CHECK(half.time.compute_s == doctest::Approx(3 * fw::roofline(a.report, h16).total.seconds));
}

TEST_CASE("parallel: flopwise diff --parallel puts each rank's figures side by side") {
  // models/bert.onnx and bert6.onnx: hidden 128, FFN 512, 4 and 6 layers. Two more layers at tp 2 hold
  // 2 ((12h^2 + 7h)/2 + 6h) = 199,040 more params per rank (Megatron's split of 12h^2 + 13h).
  const std::filesystem::path dir = fwtest::scratch_dir("parallel_diff");
  fwtest::CliRun r = fwtest::run_cli("diff \"" + fwtest::model_path("bert.onnx") + "\" \"" +
                                         fwtest::model_path("bert6.onnx") +
                                         "\" --dim batch=2 --dim seq=64 --parallel tp=2 --format markdown",
                                     dir);
  REQUIRE(r.code == 0);
  const size_t at = r.out.find("| stage 0 | params | ");
  REQUIRE(at != std::string::npos);
  std::istringstream row(r.out.substr(at + 21));
  int64_t a = 0, b6 = 0;
  char bar = 0;
  row >> a >> bar >> b6;
  CHECK(b6 - a == 2 * ((12 * h * h + 7 * h) / 2 + 6 * h));
}

TEST_CASE("parallel: context parallelism, full recompute, expert parallelism") {
  // cp 2 on GPT-2: each attention layer gathers its keys [2, 4, 32, 64] and values [2, 4, 64, 32] in bf16
  // (2 x 4 x 64 x 32 x 2 = 32,768 bytes each) forward and reduce-scatters their gradients backward
  const fw::ParallelReport cp = parallel_of("gpt2.onnx", "cp=2,microbatches=2").p;
  const int64_t kv = b * 4 * s * 32 * 2;
  CHECK(find(cp, "all-gather", "keys, forward")->bytes == kv);
  CHECK(find(cp, "all-gather", "keys, forward")->count == L * 2);
  CHECK(find(cp, "all-gather", "values, forward")->bytes == kv);
  CHECK(find(cp, "reduce-scatter", "values' gradient, backward")->count == L * 2);
  const fw::ParallelReport one = parallel_of("gpt2.onnx", "tp=1").p;
  CHECK(cp.ranks[0].activation_bytes <= one.ranks[0].activation_bytes / 2 + 200);  // the sequence halved
  CHECK(cp.ranks[0].params == one.ranks[0].params);

  // Narayanan et al. 2021 (Megatron-LM at scale), the FLOPs of an iteration with full recompute:
  // 96 B s l h^2 (1 + s/(6h) + V/(16 l h)): a forward, a backward of two and the recomputed forward of every
  // layer's products, the LM head's three times; on GPT-2 (B 2, s 64, l 4, h 128, V 1000) its products' FLOPs
  const fw::ParallelReport nar = parallel_of("gpt2.onnx", "recompute=full").p;
  CHECK(2 * nar.ranks[0].macs ==
        96 * b * s * L * h * h + 96 * b * s * L * h * h * s / (6 * h) + 6 * b * s * h * V);

  // Full recompute on the Korthikanti GPT (tp 1, bf16-master): each layer keeps its input (2sbh), the largest
  // layer's own activations come back in its backward (sbh(34 + 5as/h) and its two norms' statistics), and
  // the final norm and the head keep theirs (4sbh and one norm's statistics).
  const double sbh = 16 * 2 * 64, stats = 16 * 2 * 2 * 4;
  const fw::ParallelReport full =
      parallel_of("pt2/parallel_gpt.pt2", "recompute=full", fw::Precision::Bf16Master, {}, {}).p;
  CHECK(full.ranks[0].activation_bytes ==
        static_cast<int64_t>(2 * 2 * sbh + (sbh * (34 + 5 * 4 * 16 / 64.0) + 2 * stats) + 4 * sbh + stats));

  // ep 2 on models/shipped/llama_moe.onnx (hidden 64, 8 experts, top 2, 2 layers), batch 1, seq 8, fp32: each
  // MoE layer sends top_k copies of the tokens' hidden states, 2 x 8 x 64 x 4 = 4,096 bytes, twice forward
  // (dispatch, combine) and twice backward; each rank holds half the experts
  const std::vector<std::pair<std::string, int64_t>> dims = {{"batch", 1}, {"seq", 8}, {"past", 0}};
  const fw::ParallelReport ep =
      parallel_of("shipped/llama_moe.onnx", "dp=2,ep=2", fw::Precision::Fp32, {}, dims).p;
  const fw::ParallelReport dp =
      parallel_of("shipped/llama_moe.onnx", "dp=2", fw::Precision::Fp32, {}, dims).p;
  CHECK(find(ep, "all-to-all", "expert dispatch and combine, forward")->bytes == 2 * 8 * 64 * 4);
  CHECK(find(ep, "all-to-all", "expert dispatch and combine, forward")->count == 2 * 2);
  REQUIRE(dp.ranks.size() == 1);
  // expert params: 2 layers x 8 experts x 3 x hidden 64 x ffn 160 (models/shipped.py); half leave each rank
  const int64_t experts = dp.ranks[0].params - ep.ranks[0].params;
  CHECK(experts * 2 == 2 * 8 * 3 * 64 * 160);
}
