// LLM phases from the exported graph (issue 13): the KV cache found by structure, prefill and decode,
// KV bytes per token, a generation's totals. Expected figures are hand formulas written here.
#include <doctest/doctest.h>

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
  for (auto [name_, kv, past, seq] :
       {std::tuple<const char*, int64_t, const char*, const char*>{"llama_mha", 4, "past", "seq"},
        {"llama_gqa", 2, "past", "seq"},
        {"llama_hf", 2, "past_sequence_length", "sequence_length"}}) {
    auto& name = name_;  // a named variable: clang cannot capture a structured binding (C++17)
    CAPTURE(name);
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
  for (auto [name_, kv] : {std::pair<const char*, int64_t>{"llama_mha", 4}, {"llama_gqa", 2}}) {
    auto& name = name_;  // a named variable: clang cannot capture a structured binding (C++17)
    CAPTURE(name);
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
  // A model without a cache cannot generate; a --dim that contradicts the phase is refused.
  CHECK(fwtest::run_cli(fwtest::model_path("gpt2.onnx") + " --prompt 6 --generate 4", dir).code == 2);
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
