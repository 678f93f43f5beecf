// tests/test_ops_norm.cc — norm family: BatchNormalization, LayerNormalization, InstanceNormalization,
// GroupNormalization, MeanVarianceNormalization, LpNormalization, LRN, Softmax/LogSoftmax/Hardmax, Dropout.
// Shapes of rows named "(onnx test_x)" are the output dims of ONNX's backend node test test_x; FLOPs per
// element as each op's formula states, derived by hand.
#include "op_test_util.h"

using namespace fwtest;

// Tables are aligned by hand: one case per row.
// clang-format off

namespace {
const std::vector<std::string> kBnIn = {"2x3x4x5", "3", "3", "3", "3"};
}

TEST_CASE("norm ops: batch, layer, instance, group") {
  const std::vector<OpCase> cases = {
      // 2*3*4*5 = 120 elems * 2 = 240
      {"bn inference (onnx test_batchnorm_example)", "BatchNormalization", kBnIn, {}, {"2x3x4x5"}, 0, 240, "", 15},
      // training: 120 * 7 = 840; running mean/var [C]
      {"bn training (onnx test_batchnorm_example_training_mode)", "BatchNormalization", kBnIn,
       {{"training_mode", A::i(1)}}, {"2x3x4x5", "3", "3"}, 0, 840, "", 15},
      {"bn opset 9 training outputs", "BatchNormalization", kBnIn, {}, {"2x3x4x5", "3", "3", "3", "3"}, 0, 840, "",
       9},
      {"bn symbolic", "BatchNormalization", {"N,3,H,W", "3", "3", "3", "3"}, {}, {"N,3,H,W"}, 0, kUnknown, "", 15},
      {"bn unknown rank", "BatchNormalization", {"*", "3", "3", "3", "3"}, {{"training_mode", A::i(1)}},
       {"*", "?", "?"}, 0, kUnknown, "", 15},
      {"bn bad scale length", "BatchNormalization", {"2x3x4x5", "4", "3", "3", "3"}, {}, {"!"}, -1, -1, "", 15},
      // 120 * (5 + 1 scale + 1 bias) = 840
      {"ln default axis (onnx test_layer_normalization_default_axis)", "LayerNormalization",
       {"2x3x4x5", "5", "5"}, {}, {"2x3x4x5", "2x3x4x1", "2x3x4x1"}, 0, 840},
      {"ln axis 1 (onnx test_layer_normalization_4d_axis1)", "LayerNormalization", {"2x3x4x5", "3x4x5", "3x4x5"},
       {{"axis", A::i(1)}}, {"2x3x4x5", "2x1x1x1", "2x1x1x1"}, 0, 840},
      {"ln axis -4 (onnx test_layer_normalization_4d_axis_negative_4)", "LayerNormalization",
       {"2x3x4x5", "2x3x4x5", "2x3x4x5"}, {{"axis", A::i(-4)}}, {"2x3x4x5", "1x1x1x1", "1x1x1x1"}, 0, 840},
      {"ln no bias", "LayerNormalization", {"2x3x4x5", "5"}, {}, {"2x3x4x5"}, 0, 720},  // 120 * 6
      {"ln symbolic", "LayerNormalization", {"batch,seq,768", "768", "768"}, {},
       {"batch,seq,768", "batch,seq,1", "batch,seq,1"}, 0, kUnknown},
      {"ln unknown rank", "LayerNormalization", {"*", "768", "768"}, {}, {"*", "*", "*"}, 0, kUnknown},
      {"ln bad axis", "LayerNormalization", {"2x3", "3"}, {{"axis", A::i(2)}}, {"!"}},
      {"ln bad scale rank", "LayerNormalization", {"2x3", "2x3"}, {}, {"!"}},
      // 120 * 7 = 840
      {"instance (onnx test_instancenorm_epsilon)", "InstanceNormalization", {"2x3x4x5", "3", "3"}, {},
       {"2x3x4x5"}, 0, 840},
      {"instance example (onnx test_instancenorm_example)", "InstanceNormalization", {"1x2x1x3", "2", "2"}, {},
       {"1x2x1x3"}, 0, 42},  // 6 * 7
      {"instance symbolic", "InstanceNormalization", {"Nx3xL", "3", "3"}, {}, {"Nx3xL"}, 0, kUnknown},
      {"instance unknown rank", "InstanceNormalization", {"*", "3", "3"}, {}, {"*"}, 0, kUnknown},
      {"instance bad scale", "InstanceNormalization", {"2x3x4", "4", "3"}, {}, {"!"}},
      // 2*6*4*4 = 192 * 7 = 1344
      {"group", "GroupNormalization", {"2x6x4x4", "3", "3"}, {{"num_groups", A::i(3)}}, {"2x6x4x4"}, 0, 1344, "",
       18},
      {"group symbolic", "GroupNormalization", {"N,6,H,W", "3", "3"}, {{"num_groups", A::i(3)}}, {"N,6,H,W"}, 0,
       kUnknown, "", 18},
      {"group unknown rank", "GroupNormalization", {"*", "3", "3"}, {{"num_groups", A::i(3)}}, {"*"}, 0, kUnknown,
       "", 18},
      {"group bad: channels not divisible", "GroupNormalization", {"2x6x4x4", "4", "4"}, {{"num_groups", A::i(4)}},
       {"!"}, -1, -1, "", 18},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("norm ops: other normalisations, softmax, dropout") {
  const std::vector<OpCase> cases = {
      // 3*3*3*1 = 27 * 5 = 135
      {"mvn (onnx test_mvn)", "MeanVarianceNormalization", {"3x3x3x1"}, {}, {"3x3x3x1"}, 0, 135},
      {"mvn symbolic", "MeanVarianceNormalization", {"N,3,H,W"}, {}, {"N,3,H,W"}, 0, kUnknown},
      {"mvn unknown rank", "MeanVarianceNormalization", {"*"}, {}, {"*"}, 0, kUnknown},
      {"mvn bad axes", "MeanVarianceNormalization", {"2x3"}, {{"axes", A::ints({0, 2})}}, {"!"}},
      {"lp norm", "LpNormalization", {"2x3"}, {}, {"2x3"}, 0, 18},  // 6 * 3
      {"lp norm symbolic", "LpNormalization", {"Nx3"}, {}, {"Nx3"}, 0, kUnknown},
      {"lp norm unknown rank", "LpNormalization", {"*"}, {}, {"*"}, 0, kUnknown},
      {"lp norm bad p", "LpNormalization", {"2x3"}, {{"p", A::i(3)}}, {"!"}},
      // 5^4 = 625 * (3 + 5) = 5000
      {"lrn (onnx test_lrn)", "LRN", {"5x5x5x5"}, {{"size", A::i(3)}, {"alpha", A::f(0.0002)}, {"beta", A::f(0.5)}},
       {"5x5x5x5"}, 0, 5000},
      {"lrn symbolic", "LRN", {"Nx5x5x5"}, {{"size", A::i(3)}}, {"Nx5x5x5"}, 0, kUnknown},
      {"lrn unknown rank", "LRN", {"*"}, {{"size", A::i(3)}}, {"*"}, 0, kUnknown},
      {"lrn bad: no size", "LRN", {"1x2x3x3"}, {}, {"!"}},
      // 3*4*5 = 60 * 5 = 300
      {"softmax axis 0 (onnx test_softmax_axis_0)", "Softmax", {"3x4x5"}, {{"axis", A::i(0)}}, {"3x4x5"}, 0, 300},
      {"softmax default (onnx test_softmax_default_axis)", "Softmax", {"3x4x5"}, {}, {"3x4x5"}, 0, 300},
      {"softmax opset 11 default axis 1", "Softmax", {"3x4x5"}, {}, {"3x4x5"}, 0, 300, "", 11},
      {"softmax symbolic", "Softmax", {"batch,heads,seq,seq"}, {}, {"batch,heads,seq,seq"}, 0, kUnknown},
      {"softmax unknown rank", "Softmax", {"*"}, {}, {"*"}, 0, kUnknown},
      {"softmax bad axis", "Softmax", {"3x4x5"}, {{"axis", A::i(3)}}, {"!"}},
      {"logsoftmax (onnx test_logsoftmax_axis_2)", "LogSoftmax", {"3x4x5"}, {{"axis", A::i(2)}}, {"3x4x5"}, 0, 300},
      {"logsoftmax symbolic", "LogSoftmax", {"Nx10"}, {}, {"Nx10"}, 0, kUnknown},
      {"logsoftmax unknown rank", "LogSoftmax", {"*"}, {}, {"*"}, 0, kUnknown},
      {"logsoftmax bad axis", "LogSoftmax", {"3x4"}, {{"axis", A::i(-3)}}, {"!"}},
      {"hardmax (onnx test_hardmax_axis_1)", "Hardmax", {"3x4x5"}, {{"axis", A::i(1)}}, {"3x4x5"}, 0, 60},
      {"hardmax symbolic", "Hardmax", {"Nx10"}, {}, {"Nx10"}, 0, kUnknown},
      {"hardmax unknown rank", "Hardmax", {"*"}, {}, {"*"}, 0, kUnknown},
      {"hardmax bad axis", "Hardmax", {"3x4"}, {{"axis", A::i(5)}}, {"!"}},
      {"dropout with mask (onnx test_dropout_default_mask)", "Dropout", {"3x4x5"}, {}, {"3x4x5", "3x4x5"}, 0, 0},
      {"dropout training inputs (onnx test_training_dropout_mask)", "Dropout",
       {"3x4x5", "scalar=0.75", "scalar:bool=1"}, {}, {"3x4x5", "3x4x5"}, 0, 0},
      {"dropout symbolic", "Dropout", {"Nx768"}, {}, {"Nx768"}, 0, 0},
      {"dropout unknown rank", "Dropout", {"*"}, {}, {"*", "*"}, 0, 0},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("norm ops: output element types") {
  auto d = run_op("Dropout", {"3x4:float16"}, {}, 2, "", 13);
  CHECK(d.out(0).dtype == DType::Float16);
  CHECK(d.out(1).dtype == DType::Bool);
  auto old = run_op("Dropout", {"3x4"}, {}, 2, "", 7);
  CHECK(old.out(1).dtype == DType::Float32);  // mask had the input's type before opset 10
  auto ln = run_op("LayerNormalization", {"2x3:float16", "3:float16"}, {}, 3);
  CHECK(ln.out(0).dtype == DType::Float16);
  CHECK(ln.out(1).dtype == DType::Float32);  // stash_type default 1 (float)
  CHECK(ln.out(2).dtype == DType::Float32);
  auto bn = run_op("BatchNormalization", {"2x3x4x5:float16", "3:float16", "3:float16", "3", "3"},
                   {{"training_mode", A::i(1)}}, 3, "", 15);
  CHECK(bn.out(0).dtype == DType::Float16);
  CHECK(bn.out(1).dtype == DType::Float32);  // running stats follow input_mean's type (U)
}
// clang-format on
