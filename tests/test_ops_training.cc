// tests/test_ops_training.cc — training family (ai.onnx.preview.training v1): optimizer outputs mirror the
// optimized tensors and their state; FLOPs per optimized element: Adagrad 9, Adam 15, Momentum 7 (standard)
// or 9 (nesterov). Gradient's outputs take the shapes of the xs inputs; its cost is unknown.
#include "op_test_util.h"

using namespace fwtest;

namespace {
const char* kTraining = "ai.onnx.preview.training";
Attribute strings(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::Strings;
  a.strings = std::move(v);
  return a;
}
}  // namespace

TEST_CASE("training ops") {
  const std::string r = "scalar", t = "scalar:int64";
  const auto mom = [](const char* mode) {
    return std::map<std::string, Attribute>{
        {"alpha", A::f(0.95)}, {"beta", A::f(0.1)}, {"norm_coefficient", A::f(0.001)}, {"mode", A::s(mode)}};
  };
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs, domain, opset
      {"adagrad", "Adagrad", {r, t, "3x4", "3x4", "3x4"}, {}, {"3x4", "3x4"}, 0, 108, kTraining, 1},  // 12*9
      {"adagrad two tensors",
       "Adagrad",
       {r, t, "1", "2", "1", "2", "1", "2"},
       {},
       {"1", "2", "1", "2"},
       0,
       27,
       kTraining,
       1},  // (1+2)*9 = 27
      {"adagrad symbolic",
       "Adagrad",
       {r, t, "Nx4", "Nx4", "Nx4"},
       {},
       {"Nx4", "Nx4"},
       0,
       kUnknown,
       kTraining,
       1},
      {"adagrad unknown rank", "Adagrad", {r, t, "*", "*", "*"}, {}, {"*", "*"}, 0, kUnknown, kTraining, 1},
      {"adagrad partial group", "Adagrad", {r, t, "2", "2", "2", "2"}, {}, {"!"}, -1, -1, kTraining, 1},
      {"adam", "Adam", {r, t, "2", "2", "2", "2"}, {}, {"2", "2", "2"}, 0, 30, kTraining, 1},  // 2*15
      {"adam two tensors",
       "Adam",
       {r, t, "1", "2", "1", "2", "1", "2", "1", "2"},
       {},
       {"1", "2", "1", "2", "1", "2"},
       0,
       45,
       kTraining,
       1},  // (1+2)*15 = 45
      {"adam symbolic", "Adam", {r, t, "B", "B", "B", "B"}, {}, {"B", "B", "B"}, 0, kUnknown, kTraining, 1},
      {"adam unknown rank",
       "Adam",
       {r, t, "*", "*", "*", "*"},
       {},
       {"*", "*", "*"},
       0,
       kUnknown,
       kTraining,
       1},
      {"adam partial group", "Adam", {r, t, "2", "2", "2"}, {}, {"!"}, -1, -1, kTraining, 1},
      {"momentum standard",
       "Momentum",
       {r, t, "2", "2", "2"},
       mom("standard"),
       {"2", "2"},
       0,
       14,
       kTraining,
       1},  // 2*7
      {"momentum nesterov",
       "Momentum",
       {r, t, "2", "2", "2"},
       mom("nesterov"),
       {"2", "2"},
       0,
       18,
       kTraining,
       1},  // 2*9
      {"momentum two tensors",
       "Momentum",
       {r, t, "1", "2x3", "1", "2x3", "1", "2x3"},
       mom("standard"),
       {"1", "2x3", "1", "2x3"},
       0,
       49,
       kTraining,
       1},  // (1+6)*7 = 49
      {"momentum symbolic",
       "Momentum",
       {r, t, "Nx3", "Nx3", "Nx3"},
       mom("standard"),
       {"Nx3", "Nx3"},
       0,
       kUnknown,
       kTraining,
       1},
      {"momentum unknown rank",
       "Momentum",
       {r, t, "*", "*", "*"},
       mom("standard"),
       {"*", "*"},
       0,
       kUnknown,
       kTraining,
       1},
      {"momentum partial group", "Momentum", {r, t, "2", "2"}, mom("standard"), {"!"}, -1, -1, kTraining, 1},
      {"gradient",
       "Gradient",
       {"2x3", "3x4", "5"},
       {{"xs", strings({"X", "W"})}, {"zs", strings({"Z"})}, {"y", A::s("Y")}},
       {"2x3", "3x4"},
       kUnknown,
       kUnknown,
       kTraining,
       1},
      {"gradient symbolic",
       "Gradient",
       {"Nx3"},
       {{"xs", strings({"X"})}, {"y", A::s("Y")}},
       {"Nx3"},
       -1,
       -1,
       kTraining,
       1},
      {"gradient unknown rank",
       "Gradient",
       {"*"},
       {{"xs", strings({"X"})}, {"y", A::s("Y")}},
       {"*"},
       -1,
       -1,
       kTraining,
       1},
  };
  for (const auto& tc : cases) check_case(tc);
}
