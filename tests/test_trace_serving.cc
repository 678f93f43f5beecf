// tests/test_trace_serving.cc — serving traces: the library ops of vLLM / sglang / aiter and the fused SDPA
// kernels priced from their recorded shapes (each checked by a hand formula written beside it), and kernels
// replayed from a HIP graph joined to the ops of its capture, kernel by kernel, on TraceLens's published
// pairs (models/traces/serving: cut by cut_tracelens.py from github.com/AMD-AGI/TraceLens, MIT).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "aten_call_util.h"
#include "flopwise/errors.h"
#include "flopwise/graph_replay.h"
#include "flopwise/torch_trace.h"

using namespace flopwise;

namespace {

using Dims = std::vector<std::vector<std::vector<int64_t>>>;

AtenCall call(const std::string& op, std::vector<std::string> types, Dims dims,
              std::vector<std::string> concrete) {
  return fwtest::recorded_call(op, std::move(types), std::move(dims), std::move(concrete));
}

const std::string kBf = "c10::BFloat16";

// Rows as the MI300X traces record them (Input Dims, Input type, Concrete Inputs of the cpu_op).
struct PricedRow {
  const char* label;
  AtenCall c;
  int64_t macs, flops;
};

std::vector<PricedRow> priced_rows() {
  return {
      // RMSNorm 4 per element (square, sum, normalise, scale; COUNTING.md's SimplifiedLayerNormalization):
      // 4 * 32 * 2880 = 368,640 (gpt-oss hidden 2880, 32 tokens)
      {"vllm::rocm_aiter_rms_norm",
       call("vllm::rocm_aiter_rms_norm", {kBf, kBf, "Scalar"}, {{{32, 2880}}, {{2880}}, {}},
            {"", "", "1e-05"}),
       0, 368640},
      // out, input, weight, eps: 4 * 32 * 4096 = 524,288 (Qwen3-8B hidden 4096)
      {"aiter::rmsnorm",
       call("aiter::rmsnorm", {kBf, kBf, kBf, "Scalar"}, {{{32, 4096}}, {{32, 4096}}, {{4096}}, {}},
            {"", "", "", "1e-06"}),
       0, 524288},
      // residual add 1 + RMSNorm 4 per element: 5 * 32 * 2880 = 460,800
      {"vllm::rocm_aiter_rmsnorm2d_fwd_with_add",
       call("vllm::rocm_aiter_rmsnorm2d_fwd_with_add", {kBf, kBf, kBf, "Scalar"},
            {{{32, 2880}}, {{32, 2880}}, {{2880}}, {}}, {"", "", "", "1e-05"}),
       0, 460800},
      // out, input, residual_in, residual_out, weight, eps: 5 * 32 * 4096 = 655,360
      {"aiter::add_rmsnorm",
       call("aiter::add_rmsnorm", {kBf, kBf, kBf, kBf, kBf, "Scalar"},
            {{{32, 4096}}, {{32, 4096}}, {{32, 4096}}, {{32, 4096}}, {{4096}}, {}},
            {"", "", "", "", "", "1e-06"}),
       0, 655360},
      // silu(gate) * up over [32, 12288]: sigmoid 1 + x*sigmoid 1 + *up 1 = 3 * 32 * 12288 = 1,179,648
      {"sgl_kernel::silu_and_mul",
       call("sgl_kernel::silu_and_mul", {kBf, kBf}, {{{32, 12288}}, {{32, 24576}}}, {"", ""}), 0, 1179648},
      // x*cos + rot(x)*sin on q [32, 4096] and k [32, 1024]: 3 * (131,072 + 32,768) = 491,520
      {"sgl_kernel::rotary_embedding",
       call("sgl_kernel::rotary_embedding", {"long int", kBf, kBf, "Scalar", kBf, "Scalar"},
            {{{32}}, {{32, 4096}}, {{32, 1024}}, {}, {{41216, 128}}, {}}, {"", "", "", "128", "", "True"}),
       0, 491520},
      // A [32, 4096] B[6144, 4096]^T: 32 * 6144 * 4096 = 805,306,368 MACs, 2x FLOPs
      {"aiter::gemm_a16w16",
       call("aiter::gemm_a16w16", {kBf, kBf, "", "Scalar", "", "", ""},
            {{{32, 4096}}, {{6144, 4096}}, {}, {}, {}, {}, {}}, {"", "", "", "15", "", "", ""}),
       805306368, 1610612736},
      // FP8 GEMM: [32, 4096] (e4m3) @ [4096, 6144] (e4m3), per-tensor scales, bf16 bias [6144]:
      // 32 * 4096 * 6144 = 805,306,368 MACs; FLOPs 2 * MACs + the bias add 32 * 6144 = 1,610,809,344
      {"aten::_scaled_mm",
       call("aten::_scaled_mm",
            {"c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", kBf, "", "Scalar", "Scalar"},
            {{{32, 4096}}, {{4096, 6144}}, {{}}, {{}}, {{6144}}, {}, {}, {}},
            {"", "", "", "", "", "", "15", "False"}),
       805306368, 1610809344},
  };
}

}  // namespace

TEST_CASE("serving: library ops priced by hand formulas from their recorded shapes") {
  for (const auto& row : priced_rows()) {
    CAPTURE(row.label);
    std::vector<AtenCost> c = cost_aten_calls({row.c});
    REQUIRE(c.size() == 1);
    INFO(c[0].why);
    REQUIRE(c[0].costed);
    CHECK(c[0].macs == row.macs);
    CHECK(c[0].flops == row.flops);
    CHECK(c[0].bytes > 0);
  }
  // A library op without a record: not priced, and says so (never a silent zero).
  std::vector<AtenCost> moe = cost_aten_calls(
      {call("vllm::moe_forward", {kBf, kBf, "", ""}, {{{32, 3072}}, {{32, 32}}, {}, {}}, {"", "", "", ""})});
  CHECK_FALSE(moe[0].costed);
  CHECK(moe[0].why == "no cost rule (library op vllm::moe_forward)");
}

TEST_CASE("serving: the fused SDPA kernels cost SDPA's two products") {
  // q, k, v [1, 24, 4096, 64] (SD 3.5's joint attention on 4096 tokens, 24 heads of 64):
  // QK^T and PV each B*H*L*S*D = 24 * 4096 * 4096 * 64 = 25,769,803,776 MACs; both 51,539,607,552
  const Dims qkv = {{{1, 24, 4096, 64}}, {{1, 24, 4096, 64}}, {{1, 24, 4096, 64}}};
  AtenCall flash =
      call("aten::_scaled_dot_product_flash_attention", {kBf, kBf, kBf, "Scalar", "Scalar", "Scalar"},
           {qkv[0], qkv[1], qkv[2], {}, {}, {}}, {"", "", "", "0.", "False", "False"});
  AtenCall eff =
      call("aten::_scaled_dot_product_efficient_attention", {kBf, kBf, kBf, "", "Scalar", "Scalar", "Scalar"},
           {qkv[0], qkv[1], qkv[2], {}, {}, {}, {}}, {"", "", "", "", "True", "0.", "False"});
  for (const AtenCall& c : {flash, eff}) {
    CAPTURE(c.op);
    std::vector<AtenCost> r = cost_aten_calls({c});
    INFO(r[0].why);
    REQUIRE(r[0].costed);
    CHECK(r[0].macs == 51539607552);
  }
}

namespace {

const std::string kServing = std::string(FLOPWISE_SOURCE_DIR) + "/models/traces/serving/";

// Joins a published pair and checks it kernel by kernel: every replayed kernel now names a launch whose
// recorded kernel (the runtime's "kernel" arg in the capture) is the kernel that ran.
GraphReplaySummary join_checked(TorchTrace& ex, const std::string& dir) {
  GraphReplaySummary s = join_graph_replays(ex, read_capture_traces(kServing + dir + "/capture_traces"));
  std::unordered_map<int64_t, const TraceLaunch*> launch_of;
  for (const TraceLaunch& l : ex.launches)
    if (l.kernel != UINT32_MAX) launch_of[l.corr] = &l;
  int64_t replayed = 0, differ = 0;
  for (const TraceEvent& g : ex.gpu) {
    auto it = launch_of.find(g.corr);
    if (it == launch_of.end()) continue;
    replayed += ex.replay_thread_ts.count(it->second->thread);  // a launch of a graph's capture
    if (ex.names[it->second->kernel] != ex.names[g.name]) ++differ;
  }
  CHECK(replayed == s.matched);
  CHECK(differ == 0);
  return s;
}

}  // namespace

TEST_CASE("serving: sglang Qwen3-8B decode replayed from its HIP graph takes the captured ops") {
  TorchTrace ex = read_torch_trace(kServing + "sglang_decode/sglang_Qwen3-8B_decode.json.gz");
  GraphReplaySummary s = join_checked(ex, "sglang_decode");
  // The trace: one hipGraphLaunch, whose correlation 544 kernels carry; the capture: 546 launches naming a
  // kernel, 2 of which ran (fills before hipStreamBeginCapture).
  CHECK(s.graph_launches == 1);
  CHECK(s.replayed == 544);
  CHECK(s.matched == 544);
  TraceReport r = analyse_trace(ex, cost_aten_calls);
  // Qwen3-8B (its config.json): 36 layers, hidden 4096, intermediate 12288; 32 sequences decoding.
  for (const TraceRow& op : r.ops)
    if (op.name == "sgl_kernel::silu_and_mul") {
      CHECK(op.calls == 36);
      CHECK(op.flops == 36 * 3 * 32 * 12288);  // 3 per output element (see above), per layer
      CHECK(op.kernels == 36);
    }
  CHECK(r.cpu_ops > 0);
}

TEST_CASE("serving: vLLM full-graph decode (gpt-oss, 24 layers) and a capture that does not match") {
  TorchTrace ex = read_torch_trace(kServing + "vllm_decode_full/graph_execution.json.gz");
  TorchTrace bare = ex;
  GraphReplaySummary s = join_checked(ex, "vllm_decode_full");
  CHECK(s.replayed == 421);
  CHECK(s.matched == 421);
  TraceReport r = analyse_trace(ex, cost_aten_calls);
  for (const TraceRow& op : r.ops)
    if (op.name == "vllm::moe_forward") CHECK(op.calls == 24);  // one per layer
  // The sglang capture for vLLM's replay: nothing matches by name, and the kernels stay unattributed.
  GraphReplaySummary wrong =
      join_graph_replays(bare, read_capture_traces(kServing + "sglang_decode/capture_traces"));
  CHECK(wrong.replayed == 421);
  CHECK(wrong.matched < 10);
  CHECK_FALSE(wrong.notes.empty());
}

TEST_CASE("serving: inductor's triton kernels priced from their launch's arguments and name") {
  // torch_compile_triton/trace.json.gz (TraceLens): the launch records its pointers and xnumel [, rnumel].
  // _unsafe_view (layout, 0) + mul (1) + silu (sigmoid 1 + product 1) per element over 8*4096*8192 =
  // 268,435,456 elements: 3 * 268,435,456 = 805,306,368; bytes: two bf16 buffers of 268,435,456 read or
  // written once: 2 * 2 * 268,435,456 = 1,073,741,824
  AtenCall silu = call("triton_poi_fused__unsafe_view_mul_silu_2", {kBf, kBf, "Scalar"},
                       {{{8, 4096, 8192}}, {{32768, 8192}}, {}}, {"", "", "268435456"});
  std::vector<AtenCost> c = cost_aten_calls({silu});
  INFO(c[0].why);
  REQUIRE(c[0].costed);
  CHECK(c[0].flops == 805306368);
  CHECK(c[0].bytes == 1073741824);
  CHECK(c[0].dtype == "bfloat16");
  // Ops that would make one value per element on a flat tensor (split(1), unbind) are layout here: 0 FLOPs,
  // not 2^30 outputs (bytes: two bf16 buffers of 2^30 elements, 4 GiB).
  AtenCall split = call("triton_poi_fused_split_unbind_0", {kBf, kBf, "Scalar"},
                        {{{int64_t{1} << 30}}, {{int64_t{1} << 30}}, {}}, {"", "", "1073741824"});
  c = cost_aten_calls({split});
  REQUIRE(c[0].costed);
  CHECK(c[0].flops == 0);
  CHECK(c[0].bytes == int64_t{4} << 30);
  // SageAttention's sage_fwd (xDiT FLUX at 256x256: 768 tokens, 24 heads of 128; q, k int8, v fp8, as its
  // launch records them): QK^T and PV each 24 * 768 * 768 * 128 = 1,811,939,328 MACs; 3,623,878,656 both
  AtenCall sage =
      call("sage_fwd_1", {"signed char", "signed char", "c10::Float8_e4m3fnuz", "Scalar"},
           {{{1, 24, 768, 128}}, {{1, 24, 768, 128}}, {{1, 24, 768, 128}}, {}}, {"", "", "", "-1"});
  c = cost_aten_calls({sage});
  INFO(c[0].why);
  REQUIRE(c[0].costed);
  CHECK(c[0].macs == 3623878656);
  // No element count recorded: not priced, and the reason stays.
  AtenCall bare = call("triton_poi_fused_add_0", {kBf, kBf}, {{{8, 8}}, {{8, 8}}}, {"", ""});
  c = cost_aten_calls({bare});
  CHECK_FALSE(c[0].costed);
  CHECK(c[0].why == "not an aten op");
}

TEST_CASE("serving: attention over a KV cache priced from the step annotation's sums") {
  // vLLM decode (vllm_decode_full): "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32
  // sqsk55086)"; unified_attention's q [32, 64, 64], k [32, 8, 64] (64 query heads, 8 KV heads of 64).
  // QK^T and PV: 2 * Hq * D * sum(sq*sk) = 2 * 64 * 64 * 55,086 = 451,264,512 MACs, 902,529,024 FLOPs per
  // layer; bytes (bf16): q and output 2 * 32*64*64 = 262,144 elements, K and V 2 * 55,086*8*64 =
  // 56,408,064: 2 * 56,670,208 = 113,340,416
  AtenCall kv = call("flopwise::kv_attention", {kBf, kBf, "Scalar", "Scalar"},
                     {{{32, 64, 64}}, {{32, 8, 64}}, {}, {}}, {"", "", "55086", "55086"});
  std::vector<AtenCost> c = cost_aten_calls({kv});
  REQUIRE(c[0].costed);
  CHECK(c[0].macs == 451264512);
  CHECK(c[0].flops == 902529024);
  CHECK(c[0].bytes == 113340416);

  TorchTrace ex = read_torch_trace(kServing + "vllm_decode_full/graph_execution.json.gz");
  join_graph_replays(ex, read_capture_traces(kServing + "vllm_decode_full/capture_traces"));
  tag_kv_attention(ex);
  REQUIRE(ex.serving_steps.size() == 1);
  CHECK(ex.serving_steps[0].query_tokens == 32);
  CHECK(ex.serving_steps[0].generated_tokens == 32);
  CHECK(ex.serving_steps[0].sq_sk == 55086);
  TraceReport r = analyse_trace(ex, cost_aten_calls);
  bool seen = false;
  for (const TraceRow& op : r.ops)
    if (op.name == "vllm::unified_attention_with_output") {
      seen = true;
      CHECK(op.calls == 24);  // 24 layers
      CHECK(op.flops == int64_t{24} * 902529024);
      CHECK(op.uncosted == 0);
    }
  CHECK(seen);
}

TEST_CASE(
    "serving: a capture folder beside the trace that cannot be read is a warning; --capture's an error") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "flopwise_serving_bad_capture";
  fs::remove_all(dir);
  fs::create_directories(dir / "capture_traces");
  fs::copy_file(kServing + "sglang_decode/sglang_Qwen3-8B_decode.json.gz", dir / "decode.json.gz");
  std::ofstream(dir / "capture_traces" / "execution_details.json") << "[{\"file\": 3}]";
  TorchTrace t = read_torch_trace((dir / "decode.json.gz").string());
  join_capture_traces(t, "");
  REQUIRE(t.graph_replay.has_value());
  CHECK(t.graph_replay->replayed == 544);
  CHECK(t.graph_replay->matched == 0);
  bool warned = false;
  for (const auto& w : t.warnings) warned = warned || w.find("capture traces beside the trace not read") == 0;
  CHECK(warned);
  TorchTrace u = read_torch_trace((dir / "decode.json.gz").string());
  CHECK_THROWS_AS(join_capture_traces(u, (dir / "capture_traces").string()), InputError);
  CHECK_THROWS_AS(join_capture_traces(u, (dir / "missing").string()), InputError);
  fs::remove_all(dir);
}

TEST_CASE("serving: vLLM piecewise graphs (25 of them) each matched to its own captured graph, in order") {
  TorchTrace ex = read_torch_trace(kServing + "vllm_prefilldecode_piecewise/graph_execution.json.gz");
  GraphReplaySummary s = join_checked(ex, "vllm_prefilldecode_piecewise");
  // The capture: 25 hipStreamBeginCapture/EndCapture pairs; the execution: 25 hipGraphLaunch, whose
  // correlations 361 kernels carry (4 + 23 * 15 + 12).
  CHECK(s.graphs_captured == 25);
  CHECK(s.graph_launches == 25);
  CHECK(s.replayed == 361);
  CHECK(s.matched == 361);
  CHECK(s.notes.empty());
  // Attention runs eagerly between the pieces; the step: "execute_8192_context_9(sq8155sk8430sqsq7475785
  // sqsk7671310)_generation_37(sq37sk34489sqsq37sqsk34489)": sum sq*sk = 7,671,310 + 34,489 = 7,705,799;
  // q [8192, 64, 64]: 2 * 64 * 64 * 7,705,799 = 63,125,905,408 MACs per layer, twice that in FLOPs.
  tag_kv_attention(ex);
  REQUIRE(ex.serving_steps.size() == 1);
  CHECK(ex.serving_steps[0].query_tokens == 8192);
  CHECK(ex.serving_steps[0].context_tokens == 8155);
  CHECK(ex.serving_steps[0].sq_sk == 7705799);
  TraceReport r = analyse_trace(ex, cost_aten_calls);
  bool seen = false;
  for (const TraceRow& op : r.ops)
    if (op.name == "vllm::unified_attention_with_output") {
      seen = true;
      CHECK(op.calls == 24);
      CHECK(op.macs == int64_t{24} * 63125905408);
      CHECK(op.uncosted == 0);
    }
  CHECK(seen);
}
