// tests/test_ops_torch_ext.cc — torch_ext family (shape_inference/ops/torch_ext.cc, the "flopwise" domain):
// the ops the torch importers lower to where ONNX has none, their shapes and costs, each expected figure with
// its arithmetic beside it.
#include "op_test_util.h"

using namespace fwtest;

TEST_CASE("torch_ext ops (flopwise domain)") {
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs, domain, opset
      {"pack scalars", "PackScalars", {"scalar:int64=2", "scalar:int64=3"}, {}, {"2"}, 0, 0, "flopwise", 1},
      {"pack scalars symbolic",
       "PackScalars",
       {"scalar:int64", "scalar:int64=3"},
       {},
       {"2"},
       0,
       0,
       "flopwise",
       1},
      {"pack scalars unknown rank", "PackScalars", {"*:int64"}, {}, {"1"}, 0, 0, "flopwise", 1},
      {"transpose dims",
       "TransposeDims",
       {"2x3x4"},
       {{"dim0", A::i(-1)}, {"dim1", A::i(-2)}},
       {"2x4x3"},
       0,
       0,
       "flopwise",
       1},
      {"transpose dims symbolic",
       "TransposeDims",
       {"Nx8x4"},
       {{"dim0", A::i(0)}, {"dim1", A::i(1)}},
       {"8xNx4"},
       0,
       0,
       "flopwise",
       1},
      {"transpose dims unknown rank",
       "TransposeDims",
       {"*"},
       {{"dim0", A::i(0)}, {"dim1", A::i(1)}},
       {"*"},
       -1,
       -1,
       "flopwise",
       1},
      {"transpose dims out of range",
       "TransposeDims",
       {"2x3"},
       {{"dim0", A::i(0)}, {"dim1", A::i(5)}},
       {"!"},
       -1,
       -1,
       "flopwise",
       1},
      // aten::convolution_backward as a training trace records it: the forward's MACs (8*64*2*2 outputs x
      // 64*3*3) for each gradient output_mask asks; the bias gradient's sum, 1 per grad_output element.
      {"convolution backward, input and weight gradients",
       "ConvolutionBackward",
       {"8x64x2x2", "8x64x2x2", "64x64x3x3"},
       {{"output_mask", A::ints({1, 1, 0})}, {"transposed", A::i(0)}, {"groups", A::i(1)}},
       {"8x64x2x2", "64x64x3x3", "64"},
       2 * 2048 * 576,
       4 * 2048 * 576,
       "flopwise",
       1},
      {"convolution backward, weight and bias gradients",
       "ConvolutionBackward",
       {"8x64x2x2", "8x64x2x2", "64x64x3x3"},
       {{"output_mask", A::ints({0, 1, 1})}, {"transposed", A::i(0)}, {"groups", A::i(1)}},
       {"8x64x2x2", "64x64x3x3", "64"},
       2048 * 576,
       2 * 2048 * 576 + 2048,
       "flopwise",
       1},
      // A transposed convolution's forward output is this call's grad_output; its forward MACs are its
      // input's
      // elements (1*8*4*4) x out-channels per group x kernel (4*3*3); the bias has out-channels x groups.
      {"convolution backward, transposed, all gradients",
       "ConvolutionBackward",
       {"1x4x8x8", "1x8x4x4", "8x4x3x3"},
       {{"output_mask", A::ints({1, 1, 1})}, {"transposed", A::i(1)}, {"groups", A::i(1)}},
       {"1x8x4x4", "8x4x3x3", "4"},
       2 * 128 * 36,
       4 * 128 * 36 + 256,
       "flopwise",
       1},
  };
  for (const auto& tc : cases) check_case(tc);
  // Adaptive average and max pooling alike: 1 per input element (8*14*14 = 1568); output [N, C,
  // *output_size].
  for (const char* op : {"AdaptiveAvgPool", "AdaptiveMaxPool"}) {
    CAPTURE(op);
    const std::map<std::string, Attribute> to7{{"output_size", A::ints({7, 7})}},
        to2{{"output_size", A::ints({2, 2})}};
    // clang-format off
    check_case({"static", op, {"1x8x14x14"}, to7, {"1x8x7x7"}, 0, 1568, "flopwise", 1});
    check_case({"symbolic", op, {"Nx8x14x14"}, to2, {"Nx8x2x2"}, 0, kUnknown, "flopwise", 1});
    check_case({"unknown rank", op, {"*"}, to2, {"*"}, -1, kUnknown, "flopwise", 1});
    check_case({"rank too small", op, {"8"}, to2, {"!"}, -1, -1, "flopwise", 1});
    // clang-format on
  }
  // Batch norm's backward by hand, 8x64x2x2 = 2048 input elements: all gradients 9 per element (both sums,
  // then the normalised combination), the weight's and bias's only 4 + 1.
  check_case({"batch norm backward, all gradients",
              "BatchNormBackward",
              {"8x64x2x2", "8x64x2x2"},
              {{"output_mask", A::ints({1, 1, 1})}},
              {"8x64x2x2", "64", "64"},
              0,
              9 * 2048,
              "flopwise",
              1});
  check_case({"batch norm backward, weight and bias only (a frozen input)",
              "BatchNormBackward",
              {"8x64x2x2", "8x64x2x2"},
              {{"output_mask", A::ints({0, 1, 1})}},
              {"8x64x2x2", "64", "64"},
              0,
              5 * 2048,
              "flopwise",
              1});
  // Max pooling's backward: 1 per output gradient (2x64x16x16 = 32768), into the input's shape.
  check_case({"max pool backward",
              "MaxPoolBackward",
              {"2x64x16x16", "2x64x16x16:int64"},
              {{"input_shape", A::ints({2, 64, 32, 32})}},
              {"2x64x32x32"},
              0,
              32768,
              "flopwise",
              1});
  // The same with the input's shape as a third input (how a .pt2 of symbolic sizes gives it).
  check_case({"max pool backward, the shape as an input",
              "MaxPoolBackward",
              {"2x64x16x16", "2x64x16x16:int64", "4:int64=2,64,32,32"},
              {},
              {"2x64x32x32"},
              0,
              32768,
              "flopwise",
              1});
  // PackScalars keeps symbolic contents: [s, 3]
  auto r = run_op("PackScalars", {"scalar:int64=2", "scalar:int64=3"}, {}, 1, "flopwise", 1);
  REQUIRE(r.out(0).data);
  CHECK(r.out(0).data->ints[1].value() == 3);
}
