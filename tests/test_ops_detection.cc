// tests/test_ops_detection.cc — detection family: RoiAlign (exact cost with a fixed sampling ratio),
// MaxRoiPool and NonMaxSuppression (data-dependent costs).
#include "op_test_util.h"

using namespace fwtest;

TEST_CASE("detection ops") {
  const std::map<std::string, Attribute> roi5x5 = {
      {"output_height", A::i(5)}, {"output_width", A::i(5)}, {"sampling_ratio", A::i(2)}};
  std::map<std::string, Attribute> roi_max = roi5x5;
  roi_max["mode"] = A::s("max");
  const std::map<std::string, Attribute> pooled = {{"pooled_shape", A::ints({2, 2})}};
  // clang-format off
  const std::vector<OpCase> cases = {
      // RoiAlign: per output element 2*2 samples * (4 mul + 3 add + 1 accumulate) + 1 divide (avg).
      {"roialign static", "RoiAlign", {"1x1x10x10", "3x4", "3:int64"}, roi5x5, {"3x1x5x5"}, 0,
       2475},  // 3*1*5*5 = 75; 75 * (8*4 + 1) = 2475
      {"roialign max", "RoiAlign", {"1x1x10x10", "3x4", "3:int64"}, roi_max, {"3x1x5x5"}, 0, 2400},  // 75 * 32
      {"roialign adaptive sampling", "RoiAlign", {"1x1x10x10", "3x4", "3:int64"},
       {{"output_height", A::i(5)}, {"output_width", A::i(5)}}, {"3x1x5x5"}, kUnknown, kUnknown},
      {"roialign symbolic", "RoiAlign", {"Nx256x14x14", "Rx4", "R:int64"}, roi5x5, {"Rx256x5x5"}, 0, kUnknown},
      {"roialign unknown rank", "RoiAlign", {"*", "*", "*:int64"}, {}, {"?x?x1x1"}},
      {"roialign roi count mismatch", "RoiAlign", {"1x1x10x10", "3x4", "4:int64"}, roi5x5, {"!"}},
      {"roialign rois not boxes", "RoiAlign", {"1x1x10x10", "3x5", "3:int64"}, roi5x5, {"!"}},
      // MaxRoiPool: windows depend on ROI coordinates.
      {"maxroipool static", "MaxRoiPool", {"1x3x16x16", "4x5"}, pooled, {"4x3x2x2"}, kUnknown, kUnknown},
      {"maxroipool symbolic", "MaxRoiPool", {"Nx3x16x16", "Rx5"}, pooled, {"Rx3x2x2"}, kUnknown, kUnknown},
      {"maxroipool unknown rank", "MaxRoiPool", {"*", "*"}, pooled, {"?x?x2x2"}},
      {"maxroipool rois not 5 wide", "MaxRoiPool", {"1x3x16x16", "4x4"}, pooled, {"!"}},
      {"maxroipool no pooled_shape", "MaxRoiPool", {"1x3x16x16", "4x5"}, {}, {"!"}},
      // NonMaxSuppression: [selected, 3] int64, selected count data-dependent.
      {"nms static", "NonMaxSuppression", {"1x6x4", "1x1x6", "1:int64", "1", "1"}, {}, {"?x3"}, kUnknown, kUnknown},
      {"nms no max output", "NonMaxSuppression", {"1x6x4", "1x1x6"}, {}, {"0x3"}},
      {"nms max output 0", "NonMaxSuppression", {"1x6x4", "1x1x6", "1:int64=0"}, {}, {"0x3"}},
      {"nms symbolic", "NonMaxSuppression", {"Bx6x4", "Bx2x6", "1:int64=3"}, {}, {"?x3"}},
      {"nms unknown rank", "NonMaxSuppression", {"*", "*", "1:int64"}, {}, {"?x3"}},
      {"nms batch mismatch", "NonMaxSuppression", {"1x6x4", "2x1x6", "1:int64"}, {}, {"!"}},
      {"nms spatial mismatch", "NonMaxSuppression", {"1x6x4", "1x1x5", "1:int64"}, {}, {"!"}},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
  CHECK(run_op("NonMaxSuppression", {"1x6x4", "1x1x6", "1:int64"}).out(0).dtype == DType::Int64);
}

TEST_CASE("detection ops: NonMaxSuppression folds when every input is known") {
  // ONNX's suppress_by_IOU example: boxes 1 and 2 overlap box 0 (IoU > 0.5), box 4 overlaps box 3;
  // by score: 3 (0.95), 0 (0.9), 1 (suppressed), 2 (suppressed), 4 (suppressed), 5 (0.3) -> [3, 0, 5].
  const std::vector<std::string> in = {
      "1x6x4=0,0,1,1, 0,0.1,1,1.1, 0,-0.1,1,0.9, 0,10,1,11, 0,10.1,1,11.1, 0,100,1,101",
      "1x1x6=0.9,0.75,0.6,0.95,0.5,0.3", "1:int64=3", "1=0.5", "1=0.0"};
  auto r = run_op("NonMaxSuppression", in);
  CHECK(r.out(0).shape.str() == "3x3");
  REQUIRE(r.out(0).data);
  std::vector<int64_t> got;
  for (const auto& d : r.out(0).data->ints) got.push_back(d.value());
  CHECK(got == std::vector<int64_t>{0, 0, 3, 0, 0, 0, 0, 0, 5});
  // max_output_boxes_per_class 2 keeps the first two selections.
  std::vector<std::string> in2 = in;
  in2[2] = "1:int64=2";
  CHECK(run_op("NonMaxSuppression", in2).out(0).shape.str() == "2x3");
}
