// tests/test_ops_generator.cc — generator family: Constant, ConstantOfShape, Range, EyeLike, random
// generators. Shapes from ONNX's spec (onnx/defs/generator/defs.cc); backend-test dims noted where a row
// mirrors one (/usr/share/libonnx-testdata/data/node/test_*/test_data_set_0/output_0.pb).
#include "op_test_util.h"

using namespace fwtest;

namespace {

// Re-infers a one-node graph after replacing input i's contents (for symbolic shape values).
void rerun_with_data(OneNode& r, size_t input, std::vector<Dim> ints) {
  Graph& g = r.model.graph;
  ConstData d;
  d.ints = std::move(ints);
  g.values[g.nodes[0].inputs[input]].data = d;
  for (int o : g.nodes[0].outputs) g.values[o].data.reset();  // the pass runs each node once; forget run 1
  r.result = InferResult{};
  infer_graph(g, r.result);
}

}  // namespace

TEST_CASE("generator ops") {
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs
      {"constant tensor", "Constant", {}, {{"value", A::tensor(DType::Float32, {2, 3})}}, {"2x3"}, 0, 0},
      {"constant value_ints", "Constant", {}, {{"value_ints", A::ints({1, 2, 3})}}, {"3"}, 0, 0},
      {"constant value_float", "Constant", {}, {{"value_float", A::f(2.5)}}, {"scalar"}, 0, 0},
      {"constant value_string", "Constant", {}, {{"value_string", A::s("hi")}}, {"scalar"}},
      {"constant without value", "Constant", {}, {}, {"*"}},
      // test_constantofshape_int_shape_zero: input [0] -> output dims [0].
      {"constantofshape", "ConstantOfShape", {"2:int64=3,4"}, {}, {"3x4"}, 0, 0},
      {"constantofshape zero dim", "ConstantOfShape", {"1:int64=0"}, {}, {"0"}, 0, 0},
      {"constantofshape empty shape is scalar", "ConstantOfShape", {"0:int64="}, {}, {"scalar"}},
      {"constantofshape contents unknown", "ConstantOfShape", {"3:int64"}, {}, {"?x?x?"}},
      {"constantofshape unknown rank", "ConstantOfShape", {"*:int64"}, {}, {"*"}},
      {"constantofshape 2-D shape input", "ConstantOfShape", {"2x2:int64"}, {}, {"!"}},
      {"constantofshape negative dim", "ConstantOfShape", {"2:int64=3,-1"}, {}, {"!"}},
      // Range length = max(ceil((limit - start) / delta), 0).
      {"range int",
       "Range",
       {"scalar:int64=0", "scalar:int64=10", "scalar:int64=3"},
       {},
       {"4"},
       0,
       0},  // ceil(10/3)
      // test_range_int32_type_negative_delta: 10, 6, -3 -> ceil(-4/-3) = 2.
      {"range negative delta", "Range", {"scalar:int32=10", "scalar:int32=6", "scalar:int32=-3"}, {}, {"2"}},
      // test_range_float_type_positive_delta: 1, 5, 2 -> ceil(4/2) = 2.
      {"range float", "Range", {"scalar=1", "scalar=5", "scalar=2"}, {}, {"2"}},
      {"range float fraction", "Range", {"scalar=0", "scalar=1", "scalar=0.3"}, {}, {"4"}},  // ceil(3.33) = 4
      {"range empty",
       "Range",
       {"scalar:int64=5", "scalar:int64=1", "scalar:int64=1"},
       {},
       {"0"}},  // max(-4, 0)
      {"range unknown limit", "Range", {"scalar:int64=0", "scalar:int64", "scalar:int64=1"}, {}, {"?"}},
      {"range unknown rank", "Range", {"*:int64", "*:int64", "*:int64"}, {}, {"?"}},
      {"range non-scalar", "Range", {"2:int64=0,1", "scalar:int64=4", "scalar:int64=1"}, {}, {"!"}},
      {"eyelike", "EyeLike", {"3x4"}, {}, {"3x4"}, 0, 0},
      {"eyelike symbolic", "EyeLike", {"nx4"}, {{"k", A::i(1)}}, {"nx4"}, 0, 0},
      {"eyelike unknown rank", "EyeLike", {"*"}, {}, {"?x?"}},
      {"eyelike 1-D", "EyeLike", {"3"}, {}, {"!"}},
      // Random generators: 1 FLOP per value drawn.
      {"randomnormal", "RandomNormal", {}, {{"shape", A::ints({2, 3})}}, {"2x3"}, 0, 6},  // 2*3
      {"randomuniform", "RandomUniform", {}, {{"shape", A::ints({4})}, {"dtype", A::i(11)}}, {"4"}, 0, 4},
      {"randomnormal no shape", "RandomNormal", {}, {}, {"*"}, 0, kUnknown},
      {"randomnormal negative", "RandomNormal", {}, {{"shape", A::ints({2, -3})}}, {"!"}},
      {"randomnormallike", "RandomNormalLike", {"2x5"}, {}, {"2x5"}, 0, 10},  // 2*5
      {"randomuniformlike symbolic", "RandomUniformLike", {"bx5"}, {}, {"bx5"}, 0, kUnknown},
      {"randomuniformlike unknown rank", "RandomUniformLike", {"*"}, {}, {"*"}, 0, kUnknown},
      {"bernoulli", "Bernoulli", {"3x4"}, {}, {"3x4"}, 0, 12},  // 3*4
      {"bernoulli symbolic", "Bernoulli", {"bx4"}, {}, {"bx4"}, 0, kUnknown},
      // Multinomial: cumulative sum 4*10 + draws 4*3 = 52.
      {"multinomial", "Multinomial", {"4x10"}, {{"sample_size", A::i(3)}}, {"4x3"}, 0, 52},
      {"multinomial symbolic", "Multinomial", {"bx10"}, {}, {"bx1"}, 0, kUnknown},
      {"multinomial unknown rank", "Multinomial", {"*"}, {{"sample_size", A::i(2)}}, {"?x2"}},
      {"multinomial 1-D", "Multinomial", {"10"}, {}, {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("generator dtypes and contents") {
  auto c = run_op("Constant", {}, {{"value", A::tensor(DType::Int64, {2}, {7, 9})}});
  CHECK(c.out(0).dtype == DType::Int64);
  REQUIRE(c.out(0).data);
  CHECK(c.out(0).data->ints[1].value() == 9);

  auto vi = run_op("Constant", {}, {{"value_int", A::i(5)}});
  CHECK(vi.out(0).dtype == DType::Int64);
  REQUIRE(vi.out(0).data);
  CHECK(vi.out(0).data->ints[0].value() == 5);

  // ConstantOfShape: float32 zeros by default; the value tensor sets dtype and fill.
  auto z = run_op("ConstantOfShape", {"1:int64=3"});
  CHECK(z.out(0).dtype == DType::Float32);
  auto ones = run_op("ConstantOfShape", {"2:int64=2,2"}, {{"value", A::tensor(DType::Int64, {1}, {1})}});
  CHECK(ones.out(0).dtype == DType::Int64);
  REQUIRE(ones.out(0).data);
  CHECK(ones.out(0).data->ints.size() == 4);  // 2*2 copies of 1
  CHECK(ones.out(0).data->ints[3].value() == 1);

  // Range contents: 0, 3, 6, 9; float 1, 3.
  auto r = run_op("Range", {"scalar:int64=0", "scalar:int64=10", "scalar:int64=3"});
  CHECK(r.out(0).dtype == DType::Int64);
  REQUIRE(r.out(0).data);
  CHECK(r.out(0).data->ints[3].value() == 9);
  auto rf = run_op("Range", {"scalar=1", "scalar=5", "scalar=2"});
  CHECK(rf.out(0).dtype == DType::Float32);
  REQUIRE(rf.out(0).data);
  CHECK(rf.out(0).data->floats[1] == 3.0);

  CHECK(run_op("EyeLike", {"3x3"}, {{"dtype", A::i(7)}}).out(0).dtype == DType::Int64);
  CHECK(run_op("EyeLike", {"3x3:int32"}).out(0).dtype == DType::Int32);
  CHECK(run_op("Multinomial", {"2x3"}).out(0).dtype == DType::Int32);
  CHECK(run_op("RandomNormal", {}, {{"shape", A::ints({1})}}).out(0).dtype == DType::Float32);
  CHECK(run_op("RandomUniformLike", {"2:float64"}).out(0).dtype == DType::Float64);
}

TEST_CASE("generator symbolic shape values") {
  // ConstantOfShape of [batch, 4] -> batch x 4.
  auto c = run_op("ConstantOfShape", {"2:int64=1,4"});
  rerun_with_data(c, 0, {Dim::symbol("batch"), Dim(4)});
  CHECK(c.out(0).shape.str() == "batchx4");
  CHECK(!c.out(0).data);  // not fully known: no contents

  // Range(0, seq, 1) has length seq; its contents are unknown.
  auto r = run_op("Range", {"scalar:int64=0", "scalar:int64=1", "scalar:int64=1"});
  rerun_with_data(r, 1, {Dim::symbol("seq")});
  CHECK(r.out(0).shape.str() == "seq");
  CHECK(!r.out(0).data);

  // Range(1, seq + 1, 1): (seq + 1 - 1) / 1 = seq.
  auto r1 = run_op("Range", {"scalar:int64=1", "scalar:int64=1", "scalar:int64=1"});
  rerun_with_data(r1, 1, {Dim::symbol("seq") + Dim(1)});
  CHECK(r1.out(0).shape.str() == "seq");

  // Range(0, seq, 2): ceil(seq/2) = floor((seq + 1)/2) elements, exact for every seq.
  auto r2 = run_op("Range", {"scalar:int64=0", "scalar:int64=1", "scalar:int64=2"});
  rerun_with_data(r2, 1, {Dim::symbol("seq")});
  CHECK(r2.out(0).shape.str() == "floor((seq + 1)/2)");

  // Range(s, s + 3, 1): length 3 with contents s, s+1, s+2.
  auto r3 = run_op("Range", {"scalar:int64=0", "scalar:int64=1", "scalar:int64=1"});
  Graph& g = r3.model.graph;
  g.values[g.nodes[0].inputs[0]].data->ints = {Dim::symbol("s")};
  rerun_with_data(r3, 1, {Dim::symbol("s") + Dim(3)});
  CHECK(r3.out(0).shape.str() == "3");
  REQUIRE(r3.out(0).data);
  CHECK(r3.out(0).data->ints[2].str() == (Dim::symbol("s") + Dim(2)).str());
}
