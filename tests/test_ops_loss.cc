// Loss family: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss shapes per reduction, and costs.
// Cost convention (shape_inference/ops/loss.cc): per loss element L = N*d1..dk, negate 1 (+1 weight,
// +1 ignore_index compare); "sum" +1 per element; "mean" +1 (+1 denominator when weighted or
// ignore_index) per element and 1 divide; SCE adds 5 per scores element for its log-softmax.
#include "op_test_util.h"

using namespace fwtest;

TEST_CASE("loss ops") {
  const auto none = A::s("none"), sum = A::s("sum"), mean = A::s("mean");
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs
      // NegativeLogLikelihoodLoss
      {"nll none", "NegativeLogLikelihoodLoss", {"3x5x2", "3x2:int64"}, {{"reduction", none}}, {"3x2"}, 0, 6},
      // L = 3*2 = 6; negate 1 each = 6
      {"nll default mean", "NegativeLogLikelihoodLoss", {"4x5", "4:int64"}, {}, {"scalar"}, 0, 9},
      // L = 4; (negate 1 + sum 1) * 4 + 1 divide = 9
      {"nll sum", "NegativeLogLikelihoodLoss", {"4x5", "4:int64"}, {{"reduction", sum}}, {"scalar"}, 0, 8},
      // (negate 1 + sum 1) * 4 = 8
      {"nll mean weight ignore_index", "NegativeLogLikelihoodLoss", {"3x5x2", "3x2:int64", "5"},
       {{"reduction", mean}, {"ignore_index", A::i(1)}}, {"scalar"}, 0, 31},
      // L = 6; (negate 1 + weight 1 + compare 1 + sum 1 + weight-sum 1) * 6 + 1 divide = 31
      {"nll ranks 6", "NegativeLogLikelihoodLoss", {"2x3x2x2x2x2", "2x2x2x2x2:int64"}, {{"reduction", none}},
       {"2x2x2x2x2"}, 0, 32},  // L = 2^5 = 32
      {"nll symbolic", "NegativeLogLikelihoodLoss", {"Nx5x7", "Nx7:int64"}, {{"reduction", none}}, {"Nx7"}, 0,
       kUnknown},
      {"nll dims from labels", "NegativeLogLikelihoodLoss", {"?x5x7", "Nx?:int64"}, {{"reduction", none}},
       {"Nx7"}},
      {"nll symbolic mean is scalar", "NegativeLogLikelihoodLoss", {"Nx5", "N:int64"}, {}, {"scalar"}, 0, kUnknown},
      {"nll unknown scores rank", "NegativeLogLikelihoodLoss", {"*", "3x2:int64"}, {{"reduction", none}}, {"3x2"}, 0,
       6},  // L from the labels: 6
      {"nll unknown ranks", "NegativeLogLikelihoodLoss", {"*", "*:int64"}, {{"reduction", none}}, {"*"}, 0, kUnknown},
      {"nll labels rank", "NegativeLogLikelihoodLoss", {"3x5x2", "3:int64"}, {}, {"!"}},
      {"nll labels dim", "NegativeLogLikelihoodLoss", {"3x5x2", "3x4:int64"}, {}, {"!"}},
      {"nll scores rank 1", "NegativeLogLikelihoodLoss", {"5", "scalar:int64"}, {}, {"!"}},
      {"nll weight length", "NegativeLogLikelihoodLoss", {"3x5", "3:int64", "4"}, {}, {"!"}},
      {"nll weight rank", "NegativeLogLikelihoodLoss", {"3x5", "3:int64", "5x1"}, {}, {"!"}},
      {"nll bad reduction", "NegativeLogLikelihoodLoss", {"3x5", "3:int64"}, {{"reduction", A::s("max")}}, {"!"}},
      // SoftmaxCrossEntropyLoss
      {"sce none with log_prob", "SoftmaxCrossEntropyLoss", {"3x5", "3:int64"}, {{"reduction", none}},
       {"3", "3x5"}, 0, 78},  // log-softmax 5*15 = 75; negate 3 -> 78
      {"sce mean", "SoftmaxCrossEntropyLoss", {"3x5", "3:int64"}, {}, {"scalar", "3x5"}, 0, 82},
      // 75 + (negate 1 + sum 1) * 3 + 1 divide = 82
      {"sce sum weight ignore_index", "SoftmaxCrossEntropyLoss", {"2x3x4", "2x4:int64", "3"},
       {{"reduction", sum}, {"ignore_index", A::i(0)}}, {"scalar"}, 0, 152},
      // scores 2*3*4 = 24, 24*5 = 120; L = 8, (negate + weight + compare + sum = 4) * 8 = 32; 152
      {"sce 5-d none", "SoftmaxCrossEntropyLoss", {"3x5x6x6x5x3x4", "3x6x6x5x3x4:int64"}, {{"reduction", none}},
       {"3x6x6x5x3x4", "3x5x6x6x5x3x4"}},
      {"sce symbolic", "SoftmaxCrossEntropyLoss", {"Nx10", "N:int64"}, {{"reduction", none}}, {"N", "Nx10"}, 0,
       kUnknown},
      {"sce log_prob refined by labels", "SoftmaxCrossEntropyLoss", {"?x10x?", "4x7:int64"}, {},
       {"scalar", "4x10x7"}},
      {"sce unknown ranks", "SoftmaxCrossEntropyLoss", {"*", "*:int64"}, {}, {"scalar", "*"}, 0, kUnknown},
      {"sce labels rank", "SoftmaxCrossEntropyLoss", {"3x5", "3x1:int64"}, {}, {"!"}},
      {"sce weight length", "SoftmaxCrossEntropyLoss", {"3x5", "3:int64", "6"}, {}, {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}
