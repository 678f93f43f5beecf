// LLM phases from the exported graph (issue 13): the KV cache found by structure, prefill and decode,
// KV bytes per token, a generation's totals. Expected figures are hand formulas written here.
#include <doctest/doctest.h>

#include <array>

#include "cli_util.h"
#include "flopwise/analyse.h"
#include "flopwise/convention.h"
#include "flopwise/llm.h"

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

TEST_CASE("the KV cache is found by structure; bytes per token = 2 * layers * kv_heads * head_dim * 4 * batch") {
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
  flopwise::Analysis g = flopwise::analyse(fwtest::model_path("gpt2.onnx"), {}, flopwise::default_convention());
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
    CHECK(gen.kv_bytes_end.as_dim().substitute({{"batch", 3}}).value() == 2 * 2 * kv * 16 * 4 * 3 * (6 + 4 - 1));
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

TEST_CASE("a LLaMA-7B-shaped graph: 6,738,415,616 params; prefill at 2,048 and a decode step at 2,047 by closed form") {
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
  CHECK(cache->bytes_per_token.as_dim().same_as(flopwise::Dim(2 * 32 * 32 * 128 * 2) * flopwise::Dim::symbol("batch")));
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
// (query, key) pairs, per batch and head, each 16 (head_dim) long: 2 layers * 2 products * 4 heads * 16 = 256.
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
  for (auto [name, kv] : {std::pair<const char*, int64_t>{"llama_mha", 4}, {"llama_gqa", 2}, {"llama_nocache", 4}}) {
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
  // per token 2 * (2*64*64 + 2*64*2*16 + 64*8 + 2*3*64*160) + 64*256 = 164,864, attention and rotary as before.
  auto activated = [](int64_t b, int64_t s, int64_t p) { return b * s * 164864 + b * s * (p + s) * 256 + s * 8; };
  auto total = [](int64_t b, int64_t s, int64_t p) {
    return b * s * (2 * (2 * 64 * 64 + 2 * 64 * 2 * 16 + 64 * 8 + 8 * 3 * 64 * 160) + 64 * 256) + b * s * (p + s) * 256 + s * 8;
  };
  for (auto [b, s, p] : {std::array<int64_t, 3>{1, 1, 0}, {2, 5, 9}, {3, 64, 100}}) {
    const Bindings at{{"batch", b}, {"seq", s}, {"past", p}};
    CHECK(m.total_macs.as_dim().substitute(at).value() == total(b, s, p));
    CHECK(m.activated_macs.as_dim().substitute(at).value() == activated(b, s, p));
  }
  // Dense models have no MoE section.
  CHECK_FALSE(flopwise::analyse(fwtest::model_path("shipped/llama_gqa.onnx"), {}, flopwise::default_convention()).report.moe);
}

TEST_CASE("a decoder without a KV cache: prefill is a forward over the prompt, each decode step one over the prefix") {
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
  CHECK(r.totals.macs.v == S * (L * (4 * h * h + 3 * h * f) + h * V) + L * 2 * h * S * S - L * h * S * (S - 1));
}

TEST_CASE("roofline, peak memory, --causal and MoE reach the markdown and CSV reports") {
  auto dir = fwtest::scratch_dir("llm_formats");
  const std::string m = fwtest::model_path("shipped/llama_moe.onnx") +
                        " --dim batch=1 --dim seq=16 --dim past=0 --hardware h100-sxm --peak-memory --causal";
  fwtest::CliRun md = fwtest::run_cli(m + " --format markdown", dir);
  CHECK(md.code == 0);
  for (const char* row : {"| peak activation memory |", "| latency lower bound (", "| causal attention (--causal) | 4 products",
                          "| MoE: top-2 of 8 experts, activated params |"})
    CHECK(md.out.find(row) != std::string::npos);
  fwtest::CliRun csv = fwtest::run_cli(m + " --format csv", dir);
  CHECK(csv.code == 0);
  CHECK(csv.out.find("param_dtypes,bound_seconds,bound_by\n") != std::string::npos);
  CHECK(csv.out.find(",memory\n") != std::string::npos);  // a tiny model: every node memory-bound
  // LLaMA-7B's 4096 x 4096 projections over 2,048 tokens: ~1,000 FLOPs/byte, over the H100's ridge.
  fwtest::CliRun big = fwtest::run_cli(fwtest::model_path("shipped/llama7b_graph.onnx") +
                                           " --dim batch=1 --dim seq=2048 --dim past=0 --hardware h100-sxm --format csv",
                                       dir);
  CHECK(big.out.find(",compute\n") != std::string::npos);
  fwtest::CliRun json = fwtest::run_cli(m + " --format json", dir);
  CHECK(json.code == 0);
  for (const char* key : {"\"causal\":", "\"moe\":", "\"peak_memory\":", "\"roofline\":"}) CHECK(json.out.find(key) != std::string::npos);
  fwtest::CliRun html = fwtest::run_cli(m + " --format html", dir);
  CHECK(html.code == 0);
  for (const char* row : {"peak activation memory", "latency lower bound (h100-sxm)", "MoE activated params"})
    CHECK(html.out.find(row) != std::string::npos);
}

TEST_CASE("Hugging Face Mixtral's sparse block (tokens routed at run time): activated params exact, routed FLOPs not known") {
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
