// Elementwise family: broadcasting shapes, constant folding, per-element costs.
#include "op_test_util.h"

using namespace fwtest;

TEST_CASE("elementwise ops") {
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs
      {"add static", "Add", {"3x4x5", "3x4x5"}, {}, {"3x4x5"}, 0, 60},           // 3*4*5 = 60
      {"add broadcast", "Add", {"3x1x5", "4x1"}, {}, {"3x4x5"}, 0, 60},
      {"add symbolic", "Add", {"batchx128", "128"}, {}, {"batchx128"}, 0, kUnknown},
      {"add unknown rank", "Add", {"*", "3"}, {}, {"*"}, -1, kUnknown},
      {"add mismatch", "Add", {"3x4", "5x4"}, {}, {"!"}},
      {"relu", "Relu", {"2x3"}, {}, {"2x3"}, 0, 6},
      {"gelu decomposed count", "Gelu", {"2x8"}, {}, {"2x8"}, 0, 80, "", 20},  // 5 per element * 16
      {"clip both bounds", "Clip", {"10", "scalar=0", "scalar=6"}, {}, {"10"}, 0, 20},  // min+max per element
      {"sum of three", "Sum", {"4", "4", "4"}, {}, {"4"}, 0, 8},                   // (3-1)*4
      {"where", "Where", {"2x1:bool", "1x3", "2x3"}, {}, {"2x3"}, 0, 6},
      {"equal gives bool", "Equal", {"2:int64", "2:int64"}, {}, {"2"}},
      {"cast", "Cast", {"2x3"}, {{"to", A::i(7)}}, {"2x3"}, 0, 0},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("elementwise constant folding keeps shape arithmetic exact") {
  // [2, 3] * [4] = [8, 12]
  auto r = run_op("Mul", {"2:int64=2,3", "1:int64=4"});
  REQUIRE(r.out(0).data);
  CHECK(r.out(0).data->ints[0].value() == 8);
  CHECK(r.out(0).data->ints[1].value() == 12);
  // Where(cond=[1,0], [5,6], [7,8]) = [5, 8]
  auto w = run_op("Where", {"2:bool=1,0", "2:int64=5,6", "2:int64=7,8"});
  REQUIRE(w.out(0).data);
  CHECK(w.out(0).data->ints[0].value() == 5);
  CHECK(w.out(0).data->ints[1].value() == 8);
  CHECK(w.out(0).dtype == DType::Int64);
}
