// tests/test_genai_ops.cc — ONNX Runtime's com.microsoft ops in small graphs (issue 55): SparseAttention in
// GenAI's Phi-3-small layout, GatherBlockQuantized as GenAI's quantized embedding, and every other contrib op
// flopwise counts, their shapes against ONNX Runtime 1.23. Files and expectations:
// models/exported/genai_ops.py (NAME.expect.json: what ORT returned, and numpy's count of the pairs a block
// mask keeps); the counts here are hand formulas from the files' attributes and tensors, never flopwise's
// output.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "flopwise/analyse.h"
#include "flopwise/convention.h"
#include "flopwise/cost.h"
#include "flopwise/llm.h"

namespace {

nlohmann::json expectations(const std::string& name) {
  return nlohmann::json::parse(fwtest::slurp(fwtest::model_path("exported/" + name + ".expect.json")));
}

flopwise::Analysis analyse_pinned(const std::string& name, const flopwise::Pins& pins) {
  return flopwise::analyse(fwtest::model_path("exported/" + name + ".onnx"), pins,
                           flopwise::default_convention());
}

std::string shape_str(const nlohmann::json& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i].get<int64_t>());
  return s.empty() ? "scalar" : s;
}

const flopwise::Value& value_of(const flopwise::Analysis& a, const std::string& name) {
  const flopwise::Graph& g = a.model->graph;
  const int i = g.find(name);
  REQUIRE(i >= 0);
  return g.values[static_cast<size_t>(i)];
}

}  // namespace

TEST_CASE(
    "SparseAttention in GenAI's Phi-3-small layout: the layout's kept pairs, ORT's shapes, the KV cache") {
  // 4 heads of 16, 2 kv heads, blocks of 16. kept_pairs (numpy, from the dense block mask): prefill, 20
  // tokens: rows 0 and 1 keep blocks {0} and {0, 1} in every head: 16*16 + 4*(16 + 4) = 336 a head, 1344;
  // decode, the token at 36 (row 2): heads 0, 2 keep blocks 1, 2: 16 + 5 keys, heads 1, 3 blocks 0, 1, 2: 16
  // + 16 + 5, 2*21 + 2*37 = 116. MACs = batch * pairs * head 16 * 2 products.
  const auto expect = expectations("sparse_attention");
  const int64_t head = expect["config"]["head"];
  for (const char* phase : {"prefill", "decode"}) {
    CAPTURE(phase);
    const auto& run = expect["runs"][phase];  // what ONNX Runtime 1.23 returned
    const int64_t B = run["batch"], S = run["seq"], T = run["total"], M = run["buffer"];
    const int64_t pairs = run["kept_pairs"];
    CHECK(pairs == (std::string(phase) == "prefill" ? 1344 : 116));
    flopwise::Pins pins;
    pins.dims = {
        {"batch_size", B}, {"sequence_length", S}, {"past_sequence_length", M}, {"total_sequence_length", T}};
    const flopwise::Analysis a = analyse_pinned("sparse_attention", pins);
    const flopwise::Report& r = a.report;
    CHECK(r.unsupported.empty());
    CHECK(r.totals.uncounted == 0);
    CHECK(r.totals.macs.v == B * pairs * head * 2);
    // FLOPs: 2*MACs + 6 a pair + rotary 3 a Q/K element (rot = 2*8) + the mask's ReduceSum, 1 an element.
    CHECK(r.totals.flops.v == 2 * B * pairs * head * 2 + 6 * B * pairs + 3 * B * S * (4 + 2) * 16 + B * T);
    CHECK(value_of(a, "attn_output").shape.str() == shape_str(run["output"]));
    CHECK(value_of(a, "present.0.key").shape.str() == shape_str(run["present_key"]));
    CHECK(value_of(a, "present.0.value").shape.str() == shape_str(run["present_value"]));
    for (const auto& w : a.inferred.warnings) CHECK(w.find("upper bound") == std::string::npos);
  }
  // Unbound, the cache as for GroupQueryAttention: past_key_values.0.* -> present.0.*, along the past axis;
  // the products counted densely (S and T are no numbers), with a warning.
  const flopwise::Analysis a = analyse_pinned("sparse_attention", flopwise::Pins{});
  auto kv = flopwise::find_kv_cache(*a.model);
  REQUIRE(kv);
  CHECK(kv->pairs.size() == 2);
  CHECK(kv->past_dim == "past_sequence_length");
  CHECK(kv->seq_dim == "sequence_length");
  CHECK(std::any_of(a.inferred.warnings.begin(), a.inferred.warnings.end(),
                    [](const std::string& w) { return w.find("upper bound") != std::string::npos; }));
}

TEST_CASE("GatherBlockQuantized: GenAI's quantized embedding, its params and bytes, ORT's shapes") {
  // models/exported/genai_ops.py: a uint8 [256, 32] table of 4-bit weights (2 a byte): 256*64 = 16384 params
  // in 8192 bytes; an int4 [8, 32] table: 256 params. Scales and zero points describe the encoding: not
  // params. FLOPs: dequantize 2 an output element: 2*(2*5*64) + 2*(8*3) = 1280 + 48.
  const auto expect = expectations("gather_block_quantized");
  const auto& run = expect["runs"];
  flopwise::Pins pins;
  pins.dims = {{"batch_size", run["batch"].get<int64_t>()}, {"sequence_length", run["seq"].get<int64_t>()}};
  const flopwise::Analysis a = analyse_pinned("gather_block_quantized", pins);
  const flopwise::Report& r = a.report;
  CHECK(r.unsupported.empty());
  CHECK(r.totals.uncounted == 0);
  CHECK(r.totals.macs.v == 0);
  CHECK(r.totals.flops.v == 1280 + 48);
  CHECK(r.totals.params.v == 16384 + 256);
  const auto u8 = std::find_if(r.by_dtype.begin(), r.by_dtype.end(), [](const flopwise::DtypeCounts& d) {
    return d.dtype == flopwise::DType::UInt8;
  });
  REQUIRE(u8 != r.by_dtype.end());
  CHECK(u8->params.v == 16384);
  CHECK(u8->weight_bytes.v == 8192);
  CHECK(value_of(a, "embeddings").shape.str() == shape_str(run["embeddings"]));
  CHECK(value_of(a, "picked").shape.str() == shape_str(run["picked"]));
}

TEST_CASE("com.microsoft ops' shapes are ONNX Runtime 1.23's") {
  // contrib_shapes.expect.json: per node, ORT's output shapes: from a run where its CPU provider has a
  // kernel, else ORT's schema inference (PackedAttention, PackedMultiHeadAttention, BiasAdd, BiasSoftmax,
  // packed KV).
  const auto expect = expectations("contrib_shapes");
  const flopwise::Analysis a = analyse_pinned("contrib_shapes", flopwise::Pins{});
  CHECK(a.report.unsupported.empty());
  // One node's counts are unknown, as they should be: DecoderMaskedMultiHeadAttention over its shared buffer
  // attends past_sequence_length + 1 keys, and that input's contents are data here.
  CHECK(a.report.totals.uncounted == 1);
  int compared = 0;
  for (const auto& [name, node] : expect["nodes"].items()) {
    const auto& outs = node["outputs"];
    for (size_t j = 0; j < outs.size(); ++j) {
      if (outs[j].is_null()) continue;  // an optional output the CPU kernel does not write
      const std::string out = name + ".out" + std::to_string(j);
      CAPTURE(out);
      CHECK(value_of(a, out).shape.str() == shape_str(outs[j]));
      ++compared;
    }
  }
  CHECK(compared >= 30);
}
