// tests/test_weight_facts.cc — the weight facts on each op's record (flopwise/ops.h, WeightFacts): the inputs
// where a layer keeps learned tensors, quantised ops' weights, packed weights, and the rows of the ops
// flopwise has no record of. Every slot number is the operator's input list as its spec writes it: ONNX's
// Operators.md (Conv, LSTM, BatchNormalization, QLinearConv) and ONNX Runtime's ContribOperators.md (QGemm,
// MatMulNBits).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "flopwise/ops.h"
#include "flopwise/stored_tensors.h"

namespace {

using flopwise::has_slot;
using flopwise::Node;
using flopwise::cost_detail::learned_slots;
using flopwise::cost_detail::weight_facts;

Node node(std::string domain, std::string op) {
  Node n;
  n.domain = std::move(domain);
  n.op = std::move(op);
  return n;
}

// The slots 0..8 set in a mask, as a string: "1 2 3 7".
std::string listed(flopwise::SlotMask m) {
  std::string s;
  for (size_t i = 0; i <= 8; ++i)
    if (has_slot(m, i)) s += (s.empty() ? "" : " ") + std::to_string(i);
  return s;
}

}  // namespace

TEST_CASE("weight facts: the inputs where layers keep learned tensors, as the operator specs list them") {
  // Conv(X, W, B); LSTM(X, W, R, B, sequence_lens, initial_h, initial_c, P);
  // BatchNormalization(X, scale, B, input_mean, input_var): the last two running statistics, buffers.
  CHECK(listed(learned_slots(node("", "Conv"))) == "1 2 3 4 5 6 7 8");
  CHECK(listed(learned_slots(node("", "LSTM"))) == "1 2 3 7");
  CHECK(listed(learned_slots(node("", "BatchNormalization"))) == "1 2");
  CHECK(listed(weight_facts(node("", "BatchNormalization")).buffers) == "3 4");
  CHECK(listed(learned_slots(node("", "Gather"))) == "0");  // an embedding table: Gather(data, indices)
  CHECK(learned_slots(node("", "Relu")) == 0);
  CHECK(has_slot(learned_slots(node("", "Einsum")), 100));  // any operand, however many
}

TEST_CASE("weight facts: quantised ops' weights are their quantised values and int32 biases") {
  // QLinearConv(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B);
  // QGemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C, y_scale, y_zero_point).
  const flopwise::WeightFacts& conv = weight_facts(node("", "QLinearConv"));
  CHECK(conv.quantised);
  CHECK(listed(conv.quant) == "0 3 8");
  const flopwise::WeightFacts& gemm = weight_facts(node("com.microsoft", "QGemm"));
  CHECK(gemm.quantised);
  CHECK(listed(gemm.quant) == "0 3 6");
  CHECK(flopwise::cost_detail::quant_operand_slot(gemm.quant) == 3);  // B's dtype: the products'
  // Quantised, with no weights: QuantizeLinear's stored inputs (scale, zero point) are none of them params.
  CHECK(weight_facts(node("", "QuantizeLinear")).quantised);
  CHECK(weight_facts(node("", "QuantizeLinear")).quant == 0);
  CHECK_FALSE(weight_facts(node("", "MatMul")).quantised);
  // As stored_role reads them: QGemm's int8 B is a param, its float b_scale describes the encoding.
  flopwise::Graph g;
  for (flopwise::DType t : {flopwise::DType::Int8, flopwise::DType::Float32}) {
    flopwise::Value v;
    v.dtype = t;
    v.shape = flopwise::Shape(std::vector<flopwise::Dim>{flopwise::Dim(16), flopwise::Dim(8)});
    v.is_initializer = true;
    g.values.push_back(v);
  }
  const flopwise::cost_detail::WeightSources sources(g);
  const Node user = node("com.microsoft", "QGemm");
  using flopwise::cost_detail::Role;
  CHECK(flopwise::cost_detail::stored_role(g, g.values[0], user, 3, sources, g.values[0]) == Role::Param);
  CHECK(flopwise::cost_detail::stored_role(g, g.values[1], user, 4, sources, g.values[1]) == Role::None);
  // MatMulNBits(A, B, scales, zero_points, g_idx, bias): B packed, 8/bits weights a byte.
  const flopwise::WeightFacts& nbits = weight_facts(node("com.microsoft", "MatMulNBits"));
  CHECK(nbits.packed_slot == 1);
  CHECK(listed(nbits.packed_encoding) == "2 3 4");
}

TEST_CASE("weight facts: ops without a record keep the facts the name rules gave them") {
  // ONNX's RMSNormalization (opset 23) has no record, yet its scale is a weight and it normalises the
  // features.
  CHECK(flopwise::OpRegistry::instance().find("", "RMSNormalization", 23) == nullptr);
  CHECK(listed(learned_slots(node("", "RMSNormalization"))) == "1 2 3 4 5 6 7 8");
  const flopwise::WeightFacts* rms = flopwise::OpRegistry::instance().weights("", "RMSNormalization");
  REQUIRE(rms != nullptr);
  CHECK(rms->needs_whole);
  // ONNX Runtime's DynamicQuantizeMatMul(A, B, b_scale, b_zero_point, bias): A quantised on the fly.
  CHECK(weight_facts(node("com.microsoft", "DynamicQuantizeMatMul")).int8_products);
  // The default domain and com.microsoft lend each other their learned inputs (the name rule matched both).
  CHECK(listed(learned_slots(node("com.microsoft", "Conv"))) == "1 2 3 4 5 6 7 8");
  CHECK(listed(learned_slots(node("", "SkipLayerNormalization"))) == "1 2 3 4 5 6 7 8");
  // No other domain does, and an op no row names has no facts.
  CHECK(learned_slots(node("custom.domain", "Conv")) == 0);
  CHECK(flopwise::OpRegistry::instance().weights("", "NoSuchOp") == nullptr);
  CHECK(learned_slots(node("", "NoSuchOp")) == 0);
}

TEST_CASE("weight facts: a row for an op not registered, or one with a record, is refused") {
  flopwise::OpRegistry r;
  CHECK_THROWS_AS(r.set_weights("", "Conv", flopwise::WeightFacts{}), std::logic_error);
  r.add_unrecorded_weights("com.microsoft", "QGemm", flopwise::WeightFacts{});
  CHECK_THROWS_AS(r.add_unrecorded_weights("com.microsoft", "QGemm", flopwise::WeightFacts{}),
                  std::logic_error);
  // the registry's own rows all name registered ops (else building it throws)
  CHECK(flopwise::OpRegistry::instance().weights("", "Conv") != nullptr);
}
