// tests/test_ops_loss.cc — loss family: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss shapes per
// reduction, and costs. Cost convention (shape_inference/ops/loss.cc): per loss element L = N*d1..dk, negate
// 1 (+1 weight, +1 ignore_index compare); "sum" +1 per element; "mean" +1 (+1 denominator when weighted or
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
      {"nll mean weight ignore_index",
       "NegativeLogLikelihoodLoss",
       {"3x5x2", "3x2:int64", "5"},
       {{"reduction", mean}, {"ignore_index", A::i(1)}},
       {"scalar"},
       0,
       31},
      // L = 6; (negate 1 + weight 1 + compare 1 + sum 1 + weight-sum 1) * 6 + 1 divide = 31
      {"nll ranks 6",
       "NegativeLogLikelihoodLoss",
       {"2x3x2x2x2x2", "2x2x2x2x2:int64"},
       {{"reduction", none}},
       {"2x2x2x2x2"},
       0,
       32},  // L = 2^5 = 32
      {"nll symbolic",
       "NegativeLogLikelihoodLoss",
       {"Nx5x7", "Nx7:int64"},
       {{"reduction", none}},
       {"Nx7"},
       0,
       kUnknown},
      {"nll dims from labels",
       "NegativeLogLikelihoodLoss",
       {"?x5x7", "Nx?:int64"},
       {{"reduction", none}},
       {"Nx7"}},
      {"nll symbolic mean is scalar",
       "NegativeLogLikelihoodLoss",
       {"Nx5", "N:int64"},
       {},
       {"scalar"},
       0,
       kUnknown},
      {"nll unknown scores rank",
       "NegativeLogLikelihoodLoss",
       {"*", "3x2:int64"},
       {{"reduction", none}},
       {"3x2"},
       0,
       6},  // L from the labels: 6
      {"nll unknown ranks",
       "NegativeLogLikelihoodLoss",
       {"*", "*:int64"},
       {{"reduction", none}},
       {"*"},
       0,
       kUnknown},
      {"nll labels rank", "NegativeLogLikelihoodLoss", {"3x5x2", "3:int64"}, {}, {"!"}},
      {"nll labels dim", "NegativeLogLikelihoodLoss", {"3x5x2", "3x4:int64"}, {}, {"!"}},
      {"nll scores rank 1", "NegativeLogLikelihoodLoss", {"5", "scalar:int64"}, {}, {"!"}},
      {"nll weight length", "NegativeLogLikelihoodLoss", {"3x5", "3:int64", "4"}, {}, {"!"}},
      {"nll weight rank", "NegativeLogLikelihoodLoss", {"3x5", "3:int64", "5x1"}, {}, {"!"}},
      {"nll bad reduction",
       "NegativeLogLikelihoodLoss",
       {"3x5", "3:int64"},
       {{"reduction", A::s("max")}},
       {"!"}},
      // SoftmaxCrossEntropyLoss
      {"sce none with log_prob",
       "SoftmaxCrossEntropyLoss",
       {"3x5", "3:int64"},
       {{"reduction", none}},
       {"3", "3x5"},
       0,
       78},  // log-softmax 5*15 = 75; negate 3 -> 78
      {"sce mean", "SoftmaxCrossEntropyLoss", {"3x5", "3:int64"}, {}, {"scalar", "3x5"}, 0, 82},
      // 75 + (negate 1 + sum 1) * 3 + 1 divide = 82
      {"sce sum weight ignore_index",
       "SoftmaxCrossEntropyLoss",
       {"2x3x4", "2x4:int64", "3"},
       {{"reduction", sum}, {"ignore_index", A::i(0)}},
       {"scalar"},
       0,
       152},
      // scores 2*3*4 = 24, 24*5 = 120; L = 8, (negate + weight + compare + sum = 4) * 8 = 32; 152
      {"sce 5-d none",
       "SoftmaxCrossEntropyLoss",
       {"3x5x6x6x5x3x4", "3x6x6x5x3x4:int64"},
       {{"reduction", none}},
       {"3x6x6x5x3x4", "3x5x6x6x5x3x4"}},
      {"sce symbolic",
       "SoftmaxCrossEntropyLoss",
       {"Nx10", "N:int64"},
       {{"reduction", none}},
       {"N", "Nx10"},
       0,
       kUnknown},
      {"sce log_prob refined by labels",
       "SoftmaxCrossEntropyLoss",
       {"?x10x?", "4x7:int64"},
       {},
       {"scalar", "4x10x7"}},
      {"sce unknown ranks", "SoftmaxCrossEntropyLoss", {"*", "*:int64"}, {}, {"scalar", "*"}, 0, kUnknown},
      {"sce labels rank", "SoftmaxCrossEntropyLoss", {"3x5", "3x1:int64"}, {}, {"!"}},
      {"sce weight length", "SoftmaxCrossEntropyLoss", {"3x5", "3:int64", "6"}, {}, {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("loss ops: torch's losses (flopwise domain)") {
  const auto none = A::s("none"), sum = A::s("sum"), mean = A::s("mean");
  const char* fw = "flopwise";
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs, domain
      {"mse none", "MSELoss", {"4x5", "4x5"}, {{"reduction", none}}, {"4x5"}, 0, 40, fw},  // 20 * (sub,
                                                                                           // square)
      {"mse default mean", "MSELoss", {"4x5", "4x5"}, {}, {"scalar"}, 0, 61, fw},  // 40 + 20 adds + 1 divide
      {"mse sum broadcast",
       "MSELoss",
       {"3x1", "1x4"},
       {{"reduction", sum}},
       {"scalar"},
       0,
       36,
       fw},  // L 12: 24 + 12
      {"mse none broadcast", "MSELoss", {"3x1", "1x4"}, {{"reduction", none}}, {"3x4"}, 0, 24, fw},
      {"mse symbolic", "MSELoss", {"Nx5", "Nx5"}, {{"reduction", none}}, {"Nx5"}, 0, kUnknown, fw},
      {"mse unknown rank", "MSELoss", {"*", "4x5"}, {}, {"scalar"}, 0, kUnknown, fw},
      {"mse unknown rank none", "MSELoss", {"*", "4x5"}, {{"reduction", none}}, {"*"}, 0, kUnknown, fw},
      {"mse clash", "MSELoss", {"3x4", "3x5"}, {}, {"!"}, -1, -1, fw},
      {"mse bad reduction", "MSELoss", {"3", "3"}, {{"reduction", A::s("batchmean")}}, {"!"}, -1, -1, fw},
      {"l1 sum", "L1Loss", {"2x3", "2x3"}, {{"reduction", sum}}, {"scalar"}, 0, 18, fw},  // 6 * 2 + 6
      {"smooth l1 none",
       "SmoothL1Loss",
       {"2x3x4", "2x3x4"},
       {{"reduction", none}, {"beta", A::f(0.5)}},
       {"2x3x4"},
       0,
       192,
       fw},                                                                                      // 24 * 8
      {"huber mean", "HuberLoss", {"10", "10"}, {{"delta", A::f(2.0)}}, {"scalar"}, 0, 91, fw},  // 80 + 10 +
                                                                                                 // 1
      {"bce weight none",
       "BinaryCrossEntropy",
       {"4x5", "4x5", "4x5"},
       {{"reduction", none}},
       {"4x5"},
       0,
       220,
       fw},
      // 20 * (10 + 1 weight)
      {"bce mean", "BinaryCrossEntropy", {"4x5", "4x5"}, {}, {"scalar"}, 0, 221, fw},  // 200 + 20 + 1
      {"bce logits weight pos_weight mean",
       "BinaryCrossEntropyWithLogits",
       {"4x5", "4x5", "4x5", "5"},
       {},
       {"scalar"},
       0,
       241,
       fw},  // 20 * (9 + 1 + 1) + 20 + 1
      {"bce logits pos_weight only sum",
       "BinaryCrossEntropyWithLogits",
       {"4x5", "4x5", "", "5"},
       {{"reduction", sum}},
       {"scalar"},
       0,
       220,
       fw},  // 20 * (9 + 1) + 20
      {"bce logits pos_weight broadcast none",
       "BinaryCrossEntropyWithLogits",
       {"2x3x5", "2x3x5", "", "5"},
       {{"reduction", none}},
       {"2x3x5"},
       0,
       300,
       fw},                                                                                       // 30 * 10
      {"kl div sum", "KLDivLoss", {"4x5", "4x5"}, {{"reduction", sum}}, {"scalar"}, 0, 120, fw},  // 20 * 5 +
                                                                                                  // 20
      {"kl div log_target none",
       "KLDivLoss",
       {"4x5", "4x5"},
       {{"reduction", none}, {"log_target", A::i(1)}},
       {"4x5"},
       0,
       60,
       fw},                                                                           // 20 * 3
      {"soft margin mean", "SoftMarginLoss", {"6", "6"}, {}, {"scalar"}, 0, 37, fw},  // 30 + 6 + 1
      {"margin ranking none",
       "MarginRankingLoss",
       {"6", "6", "6"},
       {{"reduction", none}, {"margin", A::f(0.1)}},
       {"6"},
       0,
       30,
       fw},
      {"hinge embedding sum",
       "HingeEmbeddingLoss",
       {"2x3", "2x3"},
       {{"reduction", sum}},
       {"scalar"},
       0,
       48,
       fw},
      // 6 * 7 + 6
      {"poisson log_input mean",
       "PoissonNLLLoss",
       {"4x5", "4x5"},
       {{"log_input", A::i(1)}},
       {"scalar"},
       0,
       81,
       fw},
      // 20 * 3 + 20 + 1
      {"poisson full none",
       "PoissonNLLLoss",
       {"4x5", "4x5"},
       {{"reduction", none}, {"log_input", A::i(0)}, {"full", A::i(1)}},
       {"4x5"},
       0,
       280,
       fw},  // 20 * (4 + 10)
      {"cosine embedding none",
       "CosineEmbeddingLoss",
       {"3x8", "3x8", "3"},
       {{"reduction", none}},
       {"3"},
       0,
       183,
       fw},  // 24 * 6 + 3 * 13
      {"cosine embedding mean",
       "CosineEmbeddingLoss",
       {"3x8", "3x8", "3"},
       {},
       {"scalar"},
       0,
       187,
       fw},  // + 3 + 1
      {"cosine embedding unbatched",
       "CosineEmbeddingLoss",
       {"8", "8", "scalar"},
       {{"reduction", none}},
       {"scalar"},
       0,
       61,
       fw},  // 8 * 6 + 13
      {"cosine embedding symbolic",
       "CosineEmbeddingLoss",
       {"Nx8", "Nx8", "N"},
       {{"reduction", none}},
       {"N"},
       0,
       kUnknown,
       fw},
      {"cosine embedding scalars",
       "CosineEmbeddingLoss",
       {"scalar", "scalar", "scalar"},
       {},
       {"!"},
       -1,
       -1,
       fw},
      // CrossEntropyLoss: S scores elements, L loss elements
      {"ce probs none", "CrossEntropyLoss", {"4x5", "4x5"}, {{"reduction", none}}, {"4"}, 0, 144, fw},
      // S 20, L 4: log-softmax 100 + (multiply, class sum) 40 + negate 4
      {"ce probs mean", "CrossEntropyLoss", {"4x5", "4x5"}, {}, {"scalar"}, 0, 149, fw},  // 144 + 4 + 1
      {"ce probs weight smoothing sum",
       "CrossEntropyLoss",
       {"4x5", "4x5", "5"},
       {{"reduction", sum}, {"label_smoothing", A::f(0.1)}},
       {"scalar"},
       0,
       208,
       fw},
      // 100 + (2 + 1 weight + 2 mixing) * 20 + 4 negate + 4 sum
      {"ce probs unbatched", "CrossEntropyLoss", {"5", "5"}, {{"reduction", none}}, {"scalar"}, 0, 36, fw},
      // 25 + 10 + 1
      {"ce probs k-dim", "CrossEntropyLoss", {"2x3x4", "2x3x4"}, {{"reduction", none}}, {"2x4"}, 0, 176, fw},
      // S 24, L 8: 120 + 48 + 8
      {"ce smoothing mean",
       "CrossEntropyLoss",
       {"4x5", "4:int64"},
       {{"label_smoothing", A::f(0.1)}, {"ignore_index", A::i(-100)}},
       {"scalar"},
       0,
       157,
       fw},
      // S 20, L 4: log-softmax 100; nll (negate, compare) 8 + mean (2 L + 1) 9; smoothing: class sum 20 +
      // (negate, fill) 8 + mean 9; combine 3: 100 + 17 + 37 + 3 = 157
      {"ce smoothing weight k-dim none",
       "CrossEntropyLoss",
       {"2x3x4", "2x4:int64", "3"},
       {{"reduction", none}, {"label_smoothing", A::f(0.2)}, {"ignore_index", A::i(-100)}},
       {"2x4"},
       0,
       232,
       fw},
      // S 24, L 8: 120; nll (negate, weight, compare) 24; smoothing (class sum, weight) 48 + (negate, fill)
      // 16;
      // combine 3 * 8 = 24: 120 + 24 + 48 + 16 + 24 = 232
      {"ce smoothing unbatched sum",
       "CrossEntropyLoss",
       {"5", "scalar:int64"},
       {{"reduction", sum}, {"label_smoothing", A::f(0.1)}},
       {"scalar"},
       0,
       37,
       fw},
      // S 5, L 1: 25; nll negate 1 + sum 1; smoothing class sum 5 + negate 1 + sum 1; combine 3
      {"ce smoothing symbolic",
       "CrossEntropyLoss",
       {"Nx5", "N:int64"},
       {{"label_smoothing", A::f(0.1)}},
       {"scalar"},
       0,
       kUnknown,
       fw},
      {"ce unknown ranks",
       "CrossEntropyLoss",
       {"*", "*:int64"},
       {{"reduction", none}, {"label_smoothing", A::f(0.1)}},
       {"*"},
       0,
       kUnknown,
       fw},
      {"ce class target rank", "CrossEntropyLoss", {"4x5", "4x5:int64"}, {}, {"!"}, -1, -1, fw},
      {"ce probs target shape", "CrossEntropyLoss", {"4x5", "4x6"}, {}, {"!"}, -1, -1, fw},
      {"ce weight length",
       "CrossEntropyLoss",
       {"4x5", "4:int64", "6"},
       {{"label_smoothing", A::f(0.1)}},
       {"!"},
       -1,
       -1,
       fw},
      {"ce scalar scores", "CrossEntropyLoss", {"scalar", "scalar"}, {}, {"!"}, -1, -1, fw},
  };
  for (const auto& tc : cases) check_case(tc);
}
