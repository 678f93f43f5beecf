// tests/test_ops_elementwise.cc — elementwise family: broadcasting shapes, constant folding, per-element
// costs.
#include "op_test_util.h"

using namespace fwtest;

TEST_CASE("elementwise ops") {
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs
      {"add static", "Add", {"3x4x5", "3x4x5"}, {}, {"3x4x5"}, 0, 60},  // 3*4*5 = 60
      {"add broadcast", "Add", {"3x1x5", "4x1"}, {}, {"3x4x5"}, 0, 60},
      {"add symbolic", "Add", {"batchx128", "128"}, {}, {"batchx128"}, 0, kUnknown},
      {"add unknown rank", "Add", {"*", "3"}, {}, {"*"}, -1, kUnknown},
      {"add mismatch", "Add", {"3x4", "5x4"}, {}, {"!"}},
      {"relu", "Relu", {"2x3"}, {}, {"2x3"}, 0, 6},
      {"gelu decomposed count", "Gelu", {"2x8"}, {}, {"2x8"}, 0, 80, "", 20},           // 5 per element * 16
      {"clip both bounds", "Clip", {"10", "scalar=0", "scalar=6"}, {}, {"10"}, 0, 20},  // min+max per element
      {"sum of three", "Sum", {"4", "4", "4"}, {}, {"4"}, 0, 8},                        // (3-1)*4
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

TEST_CASE("elementwise: every unary op, static / symbolic / unknown rank") {
  struct U {
    const char* op;
    int64_t per_elem;  // FLOPs per output element (docs/COUNTING.md; decompositions in the op's formula)
    int opset;
  };
  const U unary[] = {
      {"Relu", 1, 17},        {"LeakyRelu", 1, 17},  {"ThresholdedRelu", 1, 17},
      {"Ceil", 1, 17},        {"Floor", 1, 17},      {"Round", 1, 17},
      {"Sign", 1, 17},        {"Reciprocal", 1, 17}, {"Sqrt", 1, 17},
      {"Exp", 1, 17},         {"Log", 1, 17},        {"Erf", 1, 17},
      {"Tanh", 1, 17},        {"Sigmoid", 1, 17},    {"Sin", 1, 17},
      {"Cos", 1, 17},         {"Tan", 1, 17},        {"Asin", 1, 17},
      {"Acos", 1, 17},        {"Atan", 1, 17},       {"Sinh", 1, 17},
      {"Cosh", 1, 17},        {"Asinh", 1, 17},      {"Acosh", 1, 17},
      {"Atanh", 1, 17},       {"Abs", 1, 17},        {"Neg", 1, 17},
      {"BitwiseNot", 1, 18},  {"Elu", 4, 17},  // compare, exp, sub, mul
      {"Selu", 4, 17},                         // compare, exp, sub, mul
      {"Celu", 4, 17},                         // compare, exp, sub, mul
      {"HardSigmoid", 4, 17},                  // mul, add, min, max
      {"HardSwish", 5, 17},                    // hardsigmoid (4) and a mul
      {"Softplus", 3, 17},                     // exp, add, log
      {"Softsign", 3, 17},                     // abs, add, div
      {"Mish", 5, 18},                         // exp, add, log, tanh, mul
      {"Shrink", 2, 17},                       // compare, add
      {"Not", 1, 17},
  };
  for (const auto& u : unary) {
    // 2x3x4 = 24 elements
    check_case({"static", u.op, {"2x3x4"}, {}, {"2x3x4"}, 0, 24 * u.per_elem, "", u.opset});
    check_case({"symbolic", u.op, {"nx4"}, {}, {"nx4"}, 0, kUnknown, "", u.opset});
    check_case({"unknown rank", u.op, {"*"}, {}, {"*"}, 0, kUnknown, "", u.opset});
  }
  // Predicates give bool of the same shape.
  for (const char* op : {"IsNaN", "IsInf"}) check_case({"predicate", op, {"5x2"}, {}, {"5x2"}, 0, 10});
}

TEST_CASE("elementwise: every binary op broadcasts; mismatches are contradictions") {
  const std::pair<const char*, int> binary[] = {
      {"Sub", 17},        {"Div", 17},  {"Mod", 17},      {"Pow", 17},         {"Max", 17},
      {"Min", 17},        {"Mean", 17}, {"BitShift", 17}, {"BitwiseAnd", 18},  {"BitwiseOr", 18},
      {"BitwiseXor", 18}, {"Less", 17}, {"Greater", 17},  {"LessOrEqual", 17}, {"GreaterOrEqual", 17},
      {"And", 17},        {"Or", 17},   {"Xor", 17},      {"PRelu", 17},
  };
  for (const auto& [op, opset] : binary) {
    std::string o(op);
    // Mean of two inputs: (n-1) adds + 1 divide = 2 per element; PRelu output is X's shape.
    int64_t per = o == "Mean" ? 2 : 1;
    if (o == "PRelu") {
      check_case({"prelu slope broadcast", op, {"2x3x4", "3x1"}, {}, {"2x3x4"}, 0, 24, "", opset});
      continue;
    }
    check_case({"broadcast", op, {"2x3x4", "3x1"}, {}, {"2x3x4"}, 0, 24 * per, "", opset});  // 2*3*4 = 24
    check_case({"symbolic", op, {"nx4", "4"}, {}, {"nx4"}, 0, kUnknown, "", opset});
    check_case({"unknown rank", op, {"*", "4"}, {}, {"*"}, -1, kUnknown, "", opset});
    check_case({"mismatch", op, {"2x3", "4x3"}, {}, {"!"}, -1, -1, "", opset});
  }
  // CastLike takes the element type of its second input.
  auto r = run_op("CastLike", {"2x3", "1:int64"});
  CHECK(r.out(0).shape.str() == "2x3");
  CHECK(r.out(0).dtype == DType::Int64);
}
