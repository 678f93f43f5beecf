// tests/test_llm.cc — LLM phases from the exported graph (issue 13): the KV cache found by structure, prefill
// and decode, KV bytes per token, a generation's totals. Expected figures are hand formulas written here.
#include <doctest/doctest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "flopwise/analyse.h"
#include "flopwise/attention.h"
#include "flopwise/convention.h"
#include "flopwise/llm.h"
#include "flopwise/moe.h"

namespace {

using Bindings = std::vector<std::pair<std::string, int64_t>>;

flopwise::Report report_at(const std::string& path, const Bindings& dims) {
  flopwise::Pins pins;
  pins.dims = dims;
  return flopwise::analyse(path, pins, flopwise::default_convention()).report;
}

// models/shipped.py's decoders: hidden 64, 4 query heads of 16, kv heads 4 (MHA) or 2 (GQA), 2 layers,
// SwiGLU 160, vocab 256. MACs per token: q,o 64*64 each, k,v 64*kv*16 each, MLP 3*64*160, per layer; LM
// head 64*256; attention 2*heads*16 per query-key pair per layer; rotary outer product seq*8.
int64_t macs(int64_t kv, int64_t b, int64_t s, int64_t p) {
  const int64_t per_token = 2 * (2 * 64 * 64 + 2 * 64 * kv * 16 + 3 * 64 * 160) + 64 * 256;
  return b * s * per_token + b * s * (p + s) * 2 * 2 * 4 * 16 + s * 8;
}

}  // namespace

TEST_CASE(
    "the KV cache is found by structure; bytes per token = 2 * layers * kv_heads * head_dim * 4 * batch") {
  for (auto [name, kv, past, seq] :
       {std::tuple<const char*, int64_t, const char*, const char*>{"llama_mha", 4, "past", "seq"},
        {"llama_gqa", 2, "past", "seq"},
        {"llama_hf", 2, "past_sequence_length", "sequence_length"}}) {
    const auto& name_ = name;  // clang 14 cannot capture a structured binding
    CAPTURE(name_);
    const std::string path = fwtest::model_path(std::string("shipped/") + name + ".onnx");
    flopwise::Analysis a = flopwise::analyse(path, {}, flopwise::default_convention());
    auto cache = flopwise::find_kv_cache(*a.model);
    REQUIRE(cache);
    CHECK(cache->found_by == "structure");
    CHECK(cache->pairs.size() == 4);  // 2 layers x (key, value)
    CHECK(cache->past_dim == past);
    CHECK(cache->seq_dim == seq);
    for (const auto& p : cache->pairs) {
      CHECK(p.axis == 2);
      CHECK(p.past.find("past_key_values.") == 0);
      CHECK(p.present.find("present.") == 0);
    }
    // GQA: the cache holds kv_heads, not query heads (the formula bug peer tools have).
    const std::string batch = std::string(name) == "llama_hf" ? "batch_size" : "batch";
    flopwise::Dim per_token = cache->bytes_per_token.as_dim();
    CHECK(per_token.same_as(flopwise::Dim(2 * 2 * kv * 16 * 4) * flopwise::Dim::symbol(batch)));
  }
  // A decoder without a cache (the bundled GPT-2 recomputes the prefix) has none.
  flopwise::Analysis g =
      flopwise::analyse(fwtest::model_path("gpt2.onnx"), {}, flopwise::default_convention());
  CHECK_FALSE(flopwise::find_kv_cache(*g.model));
}

TEST_CASE("prefill and decode bindings give the hand formula; a generation sums its steps") {
  for (auto [name, kv] : {std::pair<const char*, int64_t>{"llama_mha", 4}, {"llama_gqa", 2}}) {
    const auto& name_ = name;  // clang 14 cannot capture a structured binding
    CAPTURE(name_);
    const std::string path = fwtest::model_path(std::string("shipped/") + name + ".onnx");
    flopwise::Analysis a = flopwise::analyse(path, {}, flopwise::default_convention());
    auto cache = flopwise::find_kv_cache(*a.model);
    REQUIRE(cache);
    Bindings pre = flopwise::phase_bindings(cache, flopwise::Phase::Prefill);
    Bindings dec = flopwise::phase_bindings(cache, flopwise::Phase::Decode);
    REQUIRE(pre == Bindings{{"past", 0}});
    REQUIRE(dec == Bindings{{"seq", 1}});
    pre.insert(pre.end(), {{"batch", 2}, {"seq", 128}});
    dec.insert(dec.end(), {{"batch", 2}, {"past", 127}});
    CHECK(report_at(path, pre).totals.macs.v == macs(kv, 2, 128, 0));
    CHECK(report_at(path, dec).totals.macs.v == macs(kv, 2, 1, 127));

    // Prompt 6, 4 generated: prefill at 6, then decode at past 6, 7, 8.
    flopwise::Generation gen = flopwise::generation(*cache, 6, 4, [&](const Bindings& extra) {
      Bindings d{{"batch", 3}};
      d.insert(d.end(), extra.begin(), extra.end());
      return report_at(path, d);
    });
    CHECK(gen.prefill_macs.v == macs(kv, 3, 6, 0));
    CHECK(gen.decode_macs.v == macs(kv, 3, 1, 6) + macs(kv, 3, 1, 7) + macs(kv, 3, 1, 8));
    CHECK(gen.total_macs.v == gen.prefill_macs.v + gen.decode_macs.v);
    // The closed form in S and G: at (6, 4) the sum above; at (10, 7) the hand sum of prefill and 6 steps.
    CHECK(gen.total_macs_formula.eval({{"S", 6}, {"G", 4}}) == gen.total_macs.v);
    int64_t hand = macs(kv, 3, 10, 0);
    for (int64_t j = 0; j < 6; ++j) hand += macs(kv, 3, 1, 10 + j);
    CHECK(gen.total_macs_formula.eval({{"S", 10}, {"G", 7}}) == hand);
    CHECK(gen.total_flops_formula.eval({{"S", 6}, {"G", 4}}) == gen.total_flops.v);
    // The cache was found unbound: its bytes are a formula in batch, here at batch 3.
    CHECK(gen.kv_bytes_end.as_dim().substitute({{"batch", 3}}).value() ==
          2 * 2 * kv * 16 * 4 * 3 * (6 + 4 - 1));
  }
}

TEST_CASE("flopwise --phase / --generate on the command line") {
  auto dir = fwtest::scratch_dir("llm_cli");
  const std::string m = fwtest::model_path("shipped/llama_gqa.onnx");
  fwtest::CliRun d = fwtest::run_cli(m + " --phase decode --dim batch=1 --dim past=127", dir);
  CHECK(d.code == 0);
  CHECK(d.out.find("note:") != std::string::npos);
  CHECK(d.out.find("decode (seq = 1") != std::string::npos);
  fwtest::CliRun g = fwtest::run_cli(m + " --prompt 6 --generate 4 --dim batch=3", dir);
  CHECK(g.code == 0);
  CHECK(g.out.find("Generation") != std::string::npos);
  CHECK(g.out.find("KV cache bytes per token:") != std::string::npos);
  // A model that is no decoder cannot generate; a --dim that contradicts the phase is refused.
  CHECK(fwtest::run_cli(fwtest::model_path("resnet18.onnx") + " --prompt 6 --generate 4", dir).code == 2);
  CHECK(fwtest::run_cli(m + " --phase decode --dim seq=4", dir).code == 2);
  fwtest::CliRun none = fwtest::run_cli(fwtest::model_path("gpt2.onnx") + " --phase decode", dir);
  CHECK(none.code == 0);
  CHECK(none.out.find("no KV cache") != std::string::npos);
}

TEST_CASE(
    "a LLaMA-7B-shaped graph: 6,738,415,616 params; prefill at 2,048 and a decode step at 2,047 by closed "
    "form") {
  // models/shipped.py llama7b_graph: 32 layers, hidden h = 4096, 32 heads of 128, SwiGLU f = 11008, vocab
  // V = 32000, float16, weights declared only. Hugging Face's LLaMA-7B counts 6,738,415,616 parameters:
  // 32 * (4h^2 + 3hf + 2h) + h + 2Vh.
  const int64_t L = 32, h = 4096, f = 11008, V = 32000;
  const std::string path = fwtest::model_path("shipped/llama7b_graph.onnx");
  flopwise::Analysis a = flopwise::analyse(path, {}, flopwise::default_convention());
  CHECK(a.report.totals.params.v == 6738415616LL);
  CHECK(a.report.totals.params.v == L * (4 * h * h + 3 * h * f + 2 * h) + h + 2 * V * h);
  auto cache = flopwise::find_kv_cache(*a.model);
  REQUIRE(cache);
  CHECK(cache->pairs.size() == 64);
  // KV bytes per token: 2 (k, v) * 32 layers * 32 heads * 128 * 2 bytes = 512 KiB per sequence.
  CHECK(cache->bytes_per_token.as_dim().same_as(flopwise::Dim(2 * 32 * 32 * 128 * 2) *
                                                flopwise::Dim::symbol("batch")));
  // MACs: per token 32 * (4h^2 + 3hf) + hV; attention QK^T and AV: 2 * h per (query, key) pair per layer.
  auto closed = [&](int64_t b, int64_t s, int64_t p) {
    return b * s * (L * (4 * h * h + 3 * h * f) + h * V) + L * 2 * h * b * s * (p + s);
  };
  Bindings pre = flopwise::phase_bindings(cache, flopwise::Phase::Prefill);
  pre.insert(pre.end(), {{"batch", 1}, {"seq", 2048}});
  Bindings dec = flopwise::phase_bindings(cache, flopwise::Phase::Decode);
  dec.insert(dec.end(), {{"batch", 1}, {"past", 2047}});
  flopwise::Report p = report_at(path, pre), d = report_at(path, dec);
  CHECK(p.totals.uncounted == 0);
  CHECK(d.totals.uncounted == 0);
  CHECK(p.totals.macs.v == closed(1, 2048, 0));  // 14.63 T
  CHECK(d.totals.macs.v == closed(1, 1, 2047));  // 6.61 G + 0.54 G of attention
}

namespace {

// MACs a causal mask skips in models/shipped.py's decoders: per layer, QK^T and AV each skip S(S-1)/2 of the
// (query, key) pairs, per batch and head, each 16 (head_dim) long: 2 layers * 2 products * 4 heads * 16 =
// 256.
int64_t causal_skip(int64_t b, int64_t s) { return 256 * b * s * (s - 1) / 2; }

flopwise::Report causal_at(const std::string& path, const Bindings& dims) {
  flopwise::Pins pins;
  pins.dims = dims;
  flopwise::CostOptions opts;
  opts.causal = true;
  return flopwise::analyse(path, pins, flopwise::default_convention(), opts).report;
}

}  // namespace

TEST_CASE("--causal: attention products lose the masked upper triangle, S(S-1)/2 pairs per head") {
  for (auto [name, kv] :
       {std::pair<const char*, int64_t>{"llama_mha", 4}, {"llama_gqa", 2}, {"llama_nocache", 4}}) {
    const auto& name_ = name;  // clang 14 cannot capture a structured binding
    CAPTURE(name_);
    const std::string path = fwtest::model_path(std::string("shipped/") + name + ".onnx");
    const bool cache = std::string(name) != "llama_nocache";
    // Off by default: the graph as written.
    flopwise::Report plain = report_at(path, {{"batch", 2}, {"seq", 128}});
    CHECK_FALSE(plain.causal);
    Bindings pre{{"batch", 2}, {"seq", 128}};
    if (cache) pre.push_back({"past", 0});
    flopwise::Report on = causal_at(path, pre);
    REQUIRE(on.causal);
    CHECK(on.causal->products == 4);  // 2 layers x (QK^T, AV)
    CHECK(on.causal->masked == 2);    // each layer's scores pass a masked_fill (Where) before the Softmax
    CHECK(on.totals.macs.v == macs(kv, 2, 128, 0) - causal_skip(2, 128));
    CHECK(on.causal->macs_skipped.v == causal_skip(2, 128));
    // FLOPs: 2 per skipped MAC, the rest of the graph unchanged.
    CHECK(on.totals.flops.v == report_at(path, pre).totals.flops.v - 2 * causal_skip(2, 128));
    if (!cache) continue;
    // A chunk of 28 new tokens after 100 cached: the same S(S-1)/2 triangle, the past fully visible.
    CHECK(causal_at(path, {{"batch", 3}, {"seq", 28}, {"past", 100}}).totals.macs.v ==
          macs(kv, 3, 28, 100) - causal_skip(3, 28));
    // One decode step sees every cached key: nothing to skip.
    CHECK(causal_at(path, {{"batch", 3}, {"seq", 1}, {"past", 100}}).totals.macs.v == macs(kv, 3, 1, 100));
    // Unbound, the discount is a polynomial: 128*batch*seq*seq - 128*batch*seq off the attention terms.
    flopwise::Report sym = causal_at(path, {});
    REQUIRE(sym.totals.macs.symbolic());
    for (auto [b, s, p] : {std::array<int64_t, 3>{1, 7, 0}, {2, 5, 9}, {4, 64, 300}})
      CHECK(sym.totals.macs.as_dim().substitute({{"batch", b}, {"seq", s}, {"past", p}}).value() ==
            macs(kv, b, s, p) - causal_skip(b, s));
  }
  // A model without attention: a warning, nothing discounted.
  flopwise::Report cnn = causal_at(fwtest::model_path("resnet18.onnx"), {});
  REQUIRE(cnn.causal);
  CHECK(cnn.causal->products == 0);
  CHECK(cnn.totals.macs == report_at(fwtest::model_path("resnet18.onnx"), {}).totals.macs);
  bool warned = false;
  for (const auto& w : cnn.warnings) warned |= w.find("--causal: no attention products") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("a MoE decoder (top-2 of 8 experts): activated params and MACs from the router's TopK") {
  // models/shipped.py llama_moe: the GQA decoder with each MLP a router (64 -> 8) and 8 SwiGLU experts
  // (64 -> 160 -> 64, 3 * 64 * 160 = 30,720 params each: torch's own count, expect.json), top-2 renormalised.
  const std::string path = fwtest::model_path("shipped/llama_moe.onnx");
  flopwise::Analysis a = flopwise::analyse(path, {}, flopwise::default_convention());
  REQUIRE(a.report.moe);
  const flopwise::MoeSummary& m = *a.report.moe;
  CHECK(m.layers.size() == 2);
  CHECK(m.experts == 8);
  CHECK(m.top_k == 2);
  CHECK(m.dense);
  CHECK(m.layers[0].scope == "layers.0.mlp");
  CHECK(m.layers[0].one_params.v == 3 * 64 * 160);
  // Activated per token: all params but the 6 experts per layer the router skips (torch: 550,208 params,
  // plus the rotary inv_freq buffer of 8 the export stores as an initializer, which flopwise counts).
  CHECK(m.total_params.v == 550208 + 8);
  CHECK(m.activated_params.v == 550208 + 8 - 2 * 6 * 30720);
  // MACs: the graph runs all 8 experts on every token; activated counts the router and 2 experts:
  // per token 2 * (2*64*64 + 2*64*2*16 + 64*8 + 2*3*64*160) + 64*256 = 164,864, attention and rotary as
  // before.
  auto activated = [](int64_t b, int64_t s, int64_t p) {
    return b * s * 164864 + b * s * (p + s) * 256 + s * 8;
  };
  auto total = [](int64_t b, int64_t s, int64_t p) {
    return b * s * (2 * (2 * 64 * 64 + 2 * 64 * 2 * 16 + 64 * 8 + 8 * 3 * 64 * 160) + 64 * 256) +
           b * s * (p + s) * 256 + s * 8;
  };
  for (auto [b, s, p] : {std::array<int64_t, 3>{1, 1, 0}, {2, 5, 9}, {3, 64, 100}}) {
    const Bindings at{{"batch", b}, {"seq", s}, {"past", p}};
    CHECK(m.total_macs.as_dim().substitute(at).value() == total(b, s, p));
    CHECK(m.activated_macs.as_dim().substitute(at).value() == activated(b, s, p));
  }
  // Dense models have no MoE section.
  CHECK_FALSE(
      flopwise::analyse(fwtest::model_path("shipped/llama_gqa.onnx"), {}, flopwise::default_convention())
          .report.moe);
}

TEST_CASE(
    "a decoder without a KV cache: prefill is a forward over the prompt, each decode step one over the "
    "prefix") {
  const std::string path = fwtest::model_path("shipped/llama_nocache.onnx");
  flopwise::Analysis a = flopwise::analyse(path, {}, flopwise::default_convention());
  CHECK_FALSE(flopwise::find_kv_cache(*a.model));
  CHECK(flopwise::sequence_dim(*a.model) == "seq");
  CHECK(flopwise::phase_bindings(std::nullopt, flopwise::Phase::Decode).empty());
  CHECK(report_at(path, {{"batch", 2}, {"seq", 128}}).totals.macs.v == macs(4, 2, 128, 0));
  flopwise::KvCache none;
  none.seq_dim = "seq";
  // Prompt 6, 4 generated: forwards over 6, then 7, 8 and 9 tokens.
  flopwise::Generation gen = flopwise::generation(none, 6, 4, [&](const Bindings& extra) {
    Bindings d{{"batch", 3}};
    d.insert(d.end(), extra.begin(), extra.end());
    return report_at(path, d);
  });
  CHECK(gen.prefill_macs.v == macs(4, 3, 6, 0));
  CHECK(gen.decode_macs.v == macs(4, 3, 7, 0) + macs(4, 3, 8, 0) + macs(4, 3, 9, 0));
  // The closed form in S and G: forwards over S .. S + G - 1, here by hand at (10, 7).
  int64_t hand = 0;
  for (int64_t j = 0; j < 7; ++j) hand += macs(4, 3, 10 + j, 0);
  CHECK(gen.total_macs_formula.eval({{"S", 10}, {"G", 7}}) == hand);
  CHECK(gen.total_macs_formula.eval({{"S", 6}, {"G", 4}}) == gen.total_macs.v);
  auto dir = fwtest::scratch_dir("llm_nocache");
  fwtest::CliRun g = fwtest::run_cli(path + " --prompt 6 --generate 4 --dim batch=3", dir);
  CHECK(g.code == 0);
  CHECK(g.out.find("KV cache:") != std::string::npos);
  fwtest::CliRun d = fwtest::run_cli(path + " --phase decode", dir);
  CHECK(d.code == 0);
  CHECK(d.out.find("no KV cache") != std::string::npos);
}

TEST_CASE("LLaMA-7B prefill at 2,048 with --causal: the closed form less 32 * 4096 * S(S-1) MACs") {
  // Per layer, QK^T and AV each skip S(S-1)/2 pairs of 32 heads x 128 = h = 4096 MACs: h * S(S-1) per layer.
  const int64_t L = 32, h = 4096, f = 11008, V = 32000, S = 2048;
  const std::string path = fwtest::model_path("shipped/llama7b_graph.onnx");
  flopwise::Report r = causal_at(path, {{"batch", 1}, {"seq", S}, {"past", 0}});
  REQUIRE(r.causal);
  CHECK(r.causal->products == 64);
  CHECK(r.totals.macs.v ==
        S * (L * (4 * h * h + 3 * h * f) + h * V) + L * 2 * h * S * S - L * h * S * (S - 1));
}

TEST_CASE("roofline, peak memory, --causal and MoE reach the markdown and CSV reports") {
  auto dir = fwtest::scratch_dir("llm_formats");
  const std::string m = fwtest::model_path("shipped/llama_moe.onnx") +
                        " --dim batch=1 --dim seq=16 --dim past=0 --hardware h100-sxm --peak-memory --causal";
  fwtest::CliRun md = fwtest::run_cli(m + " --format markdown", dir);
  CHECK(md.code == 0);
  for (const char* row :
       {"| peak activation memory |", "| latency lower bound (", "| causal attention (--causal) | 4 products",
        "| MoE: top-2 of 8 experts, activated params |"})
    CHECK(md.out.find(row) != std::string::npos);
  fwtest::CliRun csv = fwtest::run_cli(m + " --format csv", dir);
  CHECK(csv.code == 0);
  CHECK(csv.out.find("param_dtypes,bound_seconds,bound_by\n") != std::string::npos);
  CHECK(csv.out.find(",memory\n") != std::string::npos);  // a tiny model: every node memory-bound
  // LLaMA-7B's 4096 x 4096 projections over 2,048 tokens: ~1,000 FLOPs/byte, over the H100's ridge.
  fwtest::CliRun big =
      fwtest::run_cli(fwtest::model_path("shipped/llama7b_graph.onnx") +
                          " --dim batch=1 --dim seq=2048 --dim past=0 --hardware h100-sxm --format csv",
                      dir);
  CHECK(big.out.find(",compute\n") != std::string::npos);
  fwtest::CliRun json = fwtest::run_cli(m + " --format json", dir);
  CHECK(json.code == 0);
  for (const char* key : {"\"causal\":", "\"moe\":", "\"peak_memory\":", "\"roofline\":"})
    CHECK(json.out.find(key) != std::string::npos);
  fwtest::CliRun html = fwtest::run_cli(m + " --format html", dir);
  CHECK(html.code == 0);
  for (const char* row : {"peak activation memory", "latency lower bound (h100-sxm)", "MoE activated params"})
    CHECK(html.out.find(row) != std::string::npos);
}

TEST_CASE(
    "Hugging Face Mixtral's sparse block (tokens routed at run time): activated params exact, routed FLOPs "
    "not known") {
  // models/shipped.py mixtral_dispatch: router 32 -> 4, top-2, 4 SwiGLU experts of 3 * 32 * 64 = 6,144 params
  // (torch's count, expect.json); torch counts 24,704 params, 12,416 active per token (router + 2 experts).
  const std::string path = fwtest::model_path("shipped/mixtral_dispatch.onnx");
  flopwise::Analysis a = flopwise::analyse(path, {}, flopwise::default_convention());
  REQUIRE(a.report.moe);
  const flopwise::MoeSummary& m = *a.report.moe;
  CHECK(m.experts == 4);
  CHECK(m.top_k == 2);
  CHECK(m.total_params.v == 24704);
  CHECK(m.activated_params.v == 24704 - 2 * 6144);
  CHECK_FALSE(m.dense);  // each expert's rows come from a NonZero: data-dependent
  CHECK_FALSE(m.activated_macs.exact());
}

// ---- the report's LLM section (JSON "llm", markdown, HTML) and budgets on it (issue 31) -----------------
// Expected figures: bytes per token by the hand formula 2 (K, V) * layers * kv_heads * head_dim * 4 (float32)
// * batch; a generation's totals as the sum of reports run on their own at the steps' bindings (--dim), and
// of macs() above; never the generation's own output.

namespace {

nlohmann::json cli_json(const std::string& args, const std::filesystem::path& dir) {
  fwtest::CliRun r = fwtest::run_cli(args + " --format json", dir);
  REQUIRE_MESSAGE(r.code == 0, args << ": " << r.err);
  return nlohmann::json::parse(r.out);
}

// A report's total `key` from a separate run of the CLI at these dims.
int64_t total_at(const std::string& model, const std::string& dims, const char* key,
                 const std::filesystem::path& dir) {
  nlohmann::json j = cli_json(model + " " + dims, dir);
  REQUIRE(j["totals"]["uncounted_nodes"] == 0);
  return j["totals"][key].get<int64_t>();
}

}  // namespace

TEST_CASE("--generate --format json: the llm key's cache and totals equal the separately run phases") {
  auto dir = fwtest::scratch_dir("llm_json");
  const std::string m = fwtest::model_path("shipped/llama_gqa.onnx");
  nlohmann::json j = cli_json(m + " --prompt 6 --generate 4 --dim batch=3", dir);
  REQUIRE(j.contains("llm"));
  const nlohmann::json& llm = j["llm"];
  CHECK(llm["phase"].is_null());
  const nlohmann::json& kv = llm["kv_cache"];
  CHECK(kv["found_by"] == "structure");
  CHECK(kv["past_dim"] == "past");
  CHECK(kv["seq_dim"] == "seq");
  CHECK(kv["tensors"].size() == 4);  // 2 layers x (key, value)
  for (const auto& t : kv["tensors"]) CHECK(t["axis"] == 2);
  // 2 (K, V) * 2 layers * 2 kv heads * 16 * 4 bytes * batch 3.
  const int64_t per_token = 2 * 2 * 2 * 16 * 4 * 3;
  CHECK(kv["bytes_per_token"] == per_token);

  const nlohmann::json& g = llm["generation"];
  CHECK(g["prompt"] == 6);
  CHECK(g["generated"] == 4);
  CHECK(g["decode_steps"] == 3);
  // The cache after the prefill (6) and 3 steps: 9 positions.
  CHECK(g["kv_bytes_end"] == per_token * 9);
  // Prefill: a report at seq = 6, past = 0; decode: reports at seq = 1, past = 6, 7, 8.
  for (const char* key : {"macs", "flops", "memory_bytes"}) {
    CAPTURE(key);
    const int64_t pre = total_at(m, "--dim batch=3 --dim seq=6 --dim past=0", key, dir);
    int64_t dec = 0;
    for (int64_t p = 6; p <= 8; ++p)
      dec += total_at(m, "--dim batch=3 --dim seq=1 --dim past=" + std::to_string(p), key, dir);
    CHECK(g["prefill"][key] == pre);
    CHECK(g["decode"][key] == dec);
    CHECK(g["total"][key] == pre + dec);
  }
  // And against the hand formula of MACs.
  CHECK(g["prefill"]["macs"] == macs(2, 3, 6, 0));
  CHECK(g["total"]["macs"] == macs(2, 3, 6, 0) + macs(2, 3, 1, 6) + macs(2, 3, 1, 7) + macs(2, 3, 1, 8));
  // One decode step in the cached length: the report at seq = 1 with past left a symbol.
  CHECK(g["decode_step"]["dim"] == "past");
  nlohmann::json step = cli_json(m + " --dim batch=3 --dim seq=1", dir);
  CHECK(g["decode_step"]["macs"] == step["totals"]["macs"]);
  CHECK(g["decode_step"]["flops"] == step["totals"]["flops"]);
  CHECK(g["formulas"]["prompt_symbol"] == "S");
  CHECK(g["formulas"]["generated_symbol"] == "G");
  CHECK(g["formulas"]["macs"].is_string());
  CHECK(g["formulas"]["kv_bytes_end"] == "1536*G + 1536*S - 1536");  // 1536 * (S + G - 1)

  // Markdown and HTML carry the same figures as rows; CSV and Netron refuse in one line.
  fwtest::CliRun md = fwtest::run_cli(m + " --prompt 6 --generate 4 --dim batch=3 --format markdown", dir);
  CHECK(md.code == 0);
  CHECK(md.out.find("| generation: prompt / generated tokens | 6 / 4 |") != std::string::npos);
  CHECK(md.out.find("| KV cache bytes per token | ") != std::string::npos);
  fwtest::CliRun html = fwtest::run_cli(m + " --prompt 6 --generate 4 --dim batch=3 --format html", dir);
  CHECK(html.code == 0);
  CHECK(html.out.find("generation: KV cache bytes at the end") != std::string::npos);
  for (const char* f : {"csv", "netron"}) {
    fwtest::CliRun r = fwtest::run_cli(m + " --prompt 6 --generate 4 --format " + f, dir);
    CHECK(r.code == 2);
    CHECK(r.err.find("--generate writes text, json, markdown or html, not " + std::string(f)) !=
          std::string::npos);
  }
  // Without LLM options there is no llm key.
  CHECK_FALSE(cli_json(m + " --dim batch=3", dir).contains("llm"));
}

TEST_CASE("--phase decode --format json: the phase and the cache's bytes per token; no generation") {
  auto dir = fwtest::scratch_dir("llm_json_phase");
  const std::string m = fwtest::model_path("shipped/llama_mha.onnx");
  nlohmann::json j = cli_json(m + " --phase decode --dim batch=2 --dim past=127", dir);
  CHECK(j["llm"]["phase"] == "decode");
  CHECK(j["llm"]["kv_cache"]["bytes_per_token"] == 2 * 2 * 4 * 16 * 4 * 2);  // MHA: 4 kv heads, batch 2
  CHECK_FALSE(j["llm"].contains("generation"));
  CHECK(j["totals"]["macs"] == macs(4, 2, 1, 127));
  // Unbound batch: bytes per token stay a polynomial, as counts do.
  nlohmann::json u = cli_json(m + " --phase prefill", dir);
  CHECK(u["llm"]["phase"] == "prefill");
  CHECK(u["llm"]["kv_cache"]["bytes_per_token"] == "1024*batch");  // 2 * 2 * 4 * 16 * 4
}

TEST_CASE(
    "--generate --format json without a cache: kv_cache null, the totals the forwards over each prefix") {
  auto dir = fwtest::scratch_dir("llm_json_nocache");
  const std::string m = fwtest::model_path("shipped/llama_nocache.onnx");
  nlohmann::json j = cli_json(m + " --prompt 6 --generate 4 --dim batch=3", dir);
  CHECK(j["llm"]["kv_cache"].is_null());
  const nlohmann::json& g = j["llm"]["generation"];
  CHECK(g["kv_bytes_end"].is_null());
  CHECK(g["formulas"]["kv_bytes_end"].is_null());
  CHECK(g["decode_step"]["dim"] == "seq");
  // Forwards over 6 (the prefill), then 7, 8 and 9 tokens, each a report run on its own.
  int64_t total = 0;
  for (int64_t s = 6; s <= 9; ++s)
    total += total_at(m, "--dim batch=3 --dim seq=" + std::to_string(s), "flops", dir);
  CHECK(g["total"]["flops"] == total);
  CHECK(g["total"]["macs"] == macs(4, 3, 6, 0) + macs(4, 3, 7, 0) + macs(4, 3, 8, 0) + macs(4, 3, 9, 0));
}

namespace {

struct Checked {
  int code = -1;
  std::string out, err, junit;
};

Checked check_llm(const std::string& model, const std::string& toml, const std::string& tag) {
  auto dir = fwtest::scratch_dir(tag);
  std::ofstream(dir / "budget.toml") << toml;
  std::filesystem::remove(dir / "junit.xml");
  fwtest::CliRun r = fwtest::run_cli("check \"" + model + "\" --budget \"" + (dir / "budget.toml").string() +
                                         "\" --junit \"" + (dir / "junit.xml").string() + "\"",
                                     dir);
  return {r.code, r.out, r.err, fwtest::slurp(dir / "junit.xml")};
}

}  // namespace

TEST_CASE("budget: limits on KV bytes and a generation's totals pass at, fail just over, and need a cache") {
  const std::string m = fwtest::model_path("shipped/llama_gqa.onnx");
  // GQA, batch 3: 2 * 2 layers * 2 kv heads * 16 * 4 bytes * 3 = 1536 bytes per token; after prompt 6 and 4
  // generated, 9 cached positions. MACs: the prefill at 6 and steps at past 6, 7, 8 (macs() above).
  const int64_t per_token = 1536, end = 1536 * 9;
  const int64_t gen_macs = macs(2, 3, 6, 0) + macs(2, 3, 1, 6) + macs(2, 3, 1, 7) + macs(2, 3, 1, 8);
  auto budget = [&](int64_t slack) {
    return "[dims]\nbatch = 3\n[llm]\nprompt = 6\ngenerate = 4\n[limits]\nkv_bytes_per_token = " +
           std::to_string(per_token + slack) + "\nkv_bytes_end = " + std::to_string(end + slack) +
           "\ngeneration_macs = " + std::to_string(gen_macs + slack) + "\n";
  };
  Checked at = check_llm(m, budget(0), "llm_budget_at");
  CAPTURE(at.out);
  CAPTURE(at.err);
  CHECK(at.code == 0);
  CHECK(at.out.find("all 3 limits hold") != std::string::npos);
  CHECK(at.junit.find("name=\"llm kv_bytes_per_token &lt;= " + std::to_string(per_token) + "\"/>") !=
        std::string::npos);
  Checked under = check_llm(m, budget(-1), "llm_budget_under");
  CHECK(under.code == 1);
  CHECK(under.out.find("3 of 3 limits fail") != std::string::npos);
  CHECK(under.out.find("llm kv_bytes_end: " + std::to_string(end) + " > " + std::to_string(end - 1)) !=
        std::string::npos);
  CHECK(under.junit.find("<failure ") != std::string::npos);

  // A phase: the total limits apply to one decode step at past = 127 (batch 1).
  const std::string dec = "[dims]\nbatch = 1\npast = 127\n[llm]\nphase = \"decode\"\n[limits]\nmacs = ";
  CHECK(check_llm(m, dec + std::to_string(macs(2, 1, 1, 127)) + "\n", "llm_budget_phase").code == 0);
  CHECK(check_llm(m, dec + std::to_string(macs(2, 1, 1, 127) - 1) + "\n", "llm_budget_phase_over").code == 1);
  // The phase binds seq = 1: a [dims] seq contradicts it (bad input).
  Checked clash =
      check_llm(m, "[dims]\nseq = 4\n[llm]\nphase = \"decode\"\n[limits]\nmacs = 1\n", "llm_budget_clash");
  CHECK(clash.code == 2);
  CHECK(clash.err.find("[llm]") != std::string::npos);

  // A model without a KV cache: its cache limit fails with the reason (the model changed, not the budget).
  Checked none =
      check_llm(fwtest::model_path("shipped/llama_nocache.onnx"),
                "[dims]\nbatch = 1\n[limits]\nkv_bytes_per_token = \"1M\"\n", "llm_budget_nocache");
  CHECK(none.code == 1);
  CHECK(none.out.find("the model has no KV cache") != std::string::npos);
  // A generation's limit without [llm] prompt and generate is an error of the budget file, with its line.
  Checked nogen = check_llm(m, "[dims]\nbatch = 1\n[limits]\nmacs = \"1G\"\ngeneration_flops = \"1G\"\n",
                            "llm_budget_nogen");
  CHECK(nogen.code == 2);
  CHECK(nogen.err.find("budget.toml:5: [limits] generation_flops: a generation's figure") !=
        std::string::npos);
  CHECK(check_llm(m, "[llm]\nprompt = 6\n", "llm_budget_half").code == 2);
  CHECK(check_llm(m, "[llm]\nphase = \"decode\"\nprompt = 6\ngenerate = 2\n", "llm_budget_both").code == 2);
  // Unbound batch: bytes per token are a formula, which cannot be shown to hold.
  Checked unbound = check_llm(m, "[limits]\nkv_bytes_per_token = \"1M\"\n", "llm_budget_unbound");
  CHECK(unbound.code == 1);
  CHECK(unbound.out.find("bind them in [dims]") != std::string::npos);
}

TEST_CASE("budget: a saved report's llm key is read back; it must be of the budget's generation") {
  auto dir = fwtest::scratch_dir("llm_budget_saved");
  const std::string m = fwtest::model_path("shipped/llama_gqa.onnx");
  const std::string saved = (dir / "saved.json").string();
  REQUIRE(fwtest::run_cli(m + " --prompt 6 --generate 4 --dim batch=3 --format json -o " + saved, dir).code ==
          0);
  // 1536 bytes per token, 9 positions at the end (as above).
  CHECK(check_llm(
            saved,
            "[llm]\nprompt = 6\ngenerate = 4\n[limits]\nkv_bytes_end = 13824\nkv_bytes_per_token = 1536\n",
            "llm_budget_saved_ok")
            .code == 0);
  CHECK(check_llm(saved, "[llm]\nprompt = 6\ngenerate = 4\n[limits]\nkv_bytes_end = 13823\n",
                  "llm_budget_saved_over")
            .code == 1);
  Checked other = check_llm(saved, "[llm]\nprompt = 6\ngenerate = 5\n[limits]\nkv_bytes_end = 13824\n",
                            "llm_budget_saved_other");
  CHECK(other.code == 2);
  CHECK(other.err.find("--prompt 6 --generate 5") != std::string::npos);
  // A saved report without the key: the limit fails, saying how to save one.
  const std::string plain = (dir / "plain.json").string();
  REQUIRE(fwtest::run_cli(m + " --dim batch=3 --format json -o " + plain, dir).code == 0);
  Checked missing = check_llm(plain, "[limits]\nkv_bytes_per_token = 1536\n", "llm_budget_saved_missing");
  CHECK(missing.code == 1);
  CHECK(missing.out.find("not in the saved report") != std::string::npos);
}
