// tests/test_ops_conv.cc — conv family: Conv, ConvTranspose, DeformConv. Shapes of rows named "(onnx test_x)"
// are the output dims of ONNX's backend node test test_x; costs are derived by hand.
#include "flopwise/cost.h"
#include "op_test_util.h"

using namespace fwtest;

// Tables are aligned by hand: one case per row.
// clang-format off

namespace {
Attribute ints(std::vector<int64_t> v) { return A::ints(std::move(v)); }
}  // namespace

TEST_CASE("conv ops: Conv") {
  const std::vector<OpCase> cases = {
      // 1*1*5*5 out * 1*3*3 = 225
      {"with padding (onnx test_basic_conv_with_padding)", "Conv", {"1x1x5x5", "1x1x3x3"},
       {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}}, {"1x1x5x5"}, 225, 450},
      // 3*3 out * 9 = 81
      {"without padding (onnx test_basic_conv_without_padding)", "Conv", {"1x1x5x5", "1x1x3x3"},
       {{"kernel_shape", ints({3, 3})}, {"pads", ints({0, 0, 0, 0})}}, {"1x1x3x3"}, 81, 162},
      {"auto_pad SAME_LOWER (onnx test_conv_with_autopad_same)", "Conv", {"1x1x5x5", "1x1x3x3"},
       {{"auto_pad", A::s("SAME_LOWER")}, {"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}}, {"1x1x3x3"},
       81, 162},
      // 4*2 out * 9 = 72
      {"asymmetric pads (onnx test_conv_with_strides_and_asymmetric_padding)", "Conv", {"1x1x7x5", "1x1x3x3"},
       {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 0, 1, 0})}, {"strides", ints({2, 2})}}, {"1x1x4x2"}, 72,
       144},
      // 4*3 out * 9 = 108
      {"strides and pads (onnx test_conv_with_strides_padding)", "Conv", {"1x1x7x5", "1x1x3x3"},
       {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}, {"1x1x4x3"}, 108,
       216},
      {"strides, no pads (onnx test_conv_with_strides_no_padding)", "Conv", {"1x1x7x5", "1x1x3x3"},
       {{"kernel_shape", ints({3, 3})}, {"pads", ints({0, 0, 0, 0})}, {"strides", ints({2, 2})}}, {"1x1x3x2"}, 54,
       108},  // 3*2 * 9 = 54
      // ResNet stem: 64*112*112 * 3*7*7 = 118013952; FLOPs 2*118013952 + 64*112*112 (802816) = 236830720
      {"resnet stem with bias", "Conv", {"1x3x224x224", "64x3x7x7", "64"},
       {{"strides", ints({2, 2})}, {"pads", ints({3, 3, 3, 3})}}, {"1x64x112x112"}, 118013952, 236830720},
      // depthwise: 32*56*56 * 1*3*3 = 903168
      {"depthwise", "Conv", {"1x32x56x56", "32x1x3x3"}, {{"group", A::i(32)}, {"pads", ints({1, 1, 1, 1})}},
       {"1x32x56x56"}, 903168, 1806336},
      // grouped: out 2*16*8*8 = 2048, * (8/4)*3*3 = 18 -> 36864
      {"grouped", "Conv", {"2x8x10x10", "16x2x3x3"}, {{"group", A::i(4)}}, {"2x16x8x8"}, 36864, 73728},
      // dilation 2: effective kernel 5, (7-5)/1+1 = 3; 9 * 9 = 81
      {"dilated", "Conv", {"1x1x7x7", "1x1x3x3"}, {{"dilations", ints({2, 2})}}, {"1x1x3x3"}, 81, 162},
      // VALID, stride 2: floor((5-3)/2)+1 = 2; 4 * 9 = 36
      {"auto_pad VALID", "Conv", {"1x1x5x5", "1x1x3x3"}, {{"auto_pad", A::s("VALID")}, {"strides", ints({2, 2})}},
       {"1x1x2x2"}, 36, 72},
      // 1-D: 8*8 out * 4*3 = 768
      {"1d", "Conv", {"1x4x10", "8x4x3"}, {}, {"1x8x8"}, 768, 1536},
      // pads 1, kernel 3, stride 1: H + 2 - 3 + 1 = H
      {"symbolic", "Conv", {"N,3,H,W", "16x3x3x3"}, {{"pads", ints({1, 1, 1, 1})}}, {"N,16,H,W"}, kUnknown,
       kUnknown},
      // SAME, stride 2: ceil(H/2) = floor((H + 1)/2), exact for every H (tests/test_formulas.cc)
      {"symbolic SAME stride 2", "Conv", {"1,3,H,W", "16x3x3x3"},
       {{"auto_pad", A::s("SAME_UPPER")}, {"strides", ints({2, 2})}}, {"1x16xfloor((H + 1)/2)xfloor((W + 1)/2)"},
       kUnknown, kUnknown},
      {"unknown rank X", "Conv", {"*", "16x3x3x3"}, {}, {"?x16x?x?"}, kUnknown, kUnknown},
      {"unknown kernel dims", "Conv", {"1x3x8x8", "16x3x?x?"}, {}, {"1x16x?x?"}, kUnknown, kUnknown},
      {"bad channels", "Conv", {"1x4x5x5", "8x3x3x3"}, {}, {"!"}},
      {"bad group", "Conv", {"1x4x5x5", "6x2x3x3"}, {{"group", A::i(4)}}, {"!"}},
      {"bad kernel larger than input", "Conv", {"1x1x2x2", "1x1x3x3"}, {}, {"!"}},
      {"bad kernel_shape vs weight", "Conv", {"1x1x5x5", "1x1x3x3"}, {{"kernel_shape", ints({2, 2})}}, {"!"}},
      {"bad bias length", "Conv", {"1x1x5x5", "2x1x3x3", "3"}, {}, {"!"}},
      {"bad pads length", "Conv", {"1x1x5x5", "1x1x3x3"}, {{"pads", ints({1, 1})}}, {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("conv ops: ConvTranspose") {
  const std::vector<OpCase> cases = {
      // MACs = input elems * (Cout/group) * prod(kernel): 9 * 2 * 9 = 162
      {"default (onnx test_convtranspose)", "ConvTranspose", {"1x1x3x3", "1x2x3x3"}, {}, {"1x2x5x5"}, 162, 324},
      {"1d (onnx test_convtranspose_1d)", "ConvTranspose", {"1x1x3", "1x2x3"}, {}, {"1x2x5"}, 18, 36},  // 3*2*3
      // 3*4*5 = 60 in, * 2 * 27 = 3240
      {"3d (onnx test_convtranspose_3d)", "ConvTranspose", {"1x1x3x4x5", "1x2x3x3x3"}, {}, {"1x2x5x6x7"}, 3240,
       6480},
      {"SAME_UPPER (onnx test_convtranspose_autopad_same)", "ConvTranspose", {"1x1x3x3", "1x2x3x3"},
       {{"auto_pad", A::s("SAME_UPPER")}, {"strides", ints({2, 2})}}, {"1x2x6x6"}, 162, 324},
      // 9 * 1 * 4 = 36
      {"dilations (onnx test_convtranspose_dilations)", "ConvTranspose", {"1x1x3x3", "1x1x2x2"},
       {{"dilations", ints({2, 2})}}, {"1x1x5x5"}, 36, 72},
      {"output_shape (onnx test_convtranspose_output_shape)", "ConvTranspose", {"1x1x3x3", "1x2x3x3"},
       {{"output_shape", ints({10, 8})}, {"strides", ints({3, 2})}}, {"1x2x10x8"}, 162, 324},
      {"kernel_shape (onnx test_convtranspose_kernel_shape)", "ConvTranspose", {"1x1x3x3", "1x2x3x3"},
       {{"kernel_shape", ints({3, 3})}, {"output_padding", ints({1, 1})}, {"output_shape", ints({10, 8})},
        {"strides", ints({3, 2})}},
       {"1x2x10x8"}, 162, 324},
      {"output_padding (onnx test_convtranspose_pad)", "ConvTranspose", {"1x1x3x3", "1x2x3x3"},
       {{"output_padding", ints({1, 1})}, {"strides", ints({3, 2})}}, {"1x2x10x8"}, 162, 324},
      {"pads (onnx test_convtranspose_pads)", "ConvTranspose", {"1x1x3x3", "1x2x3x3"},
       {{"pads", ints({1, 2, 1, 2})}, {"strides", ints({3, 2})}}, {"1x2x7x3"}, 162, 324},
      // out = 2*(8-1) + 4 - 2 = 16; MACs = 4*8*8 (256) * 2 * 16 = 8192; FLOPs 16384 + 2*16*16 (512) = 16896
      {"bias", "ConvTranspose", {"1x4x8x8", "4x2x4x4", "2"}, {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}},
       {"1x2x16x16"}, 8192, 16896},
      // group 2: Cout = 3*2 = 6; out 5+3-1 = 7; MACs = 4*5*5 (100) * 3 * 9 = 2700
      {"grouped", "ConvTranspose", {"1x4x5x5", "4x3x3x3"}, {{"group", A::i(2)}}, {"1x6x7x7"}, 2700, 5400},
      {"symbolic batch", "ConvTranspose", {"Nx1x3x3", "1x2x3x3"}, {}, {"Nx2x5x5"}, kUnknown, kUnknown},
      {"unknown rank X", "ConvTranspose", {"*", "1x2x3x3"}, {}, {"?x2x?x?"}, kUnknown, kUnknown},
      {"bad channels", "ConvTranspose", {"1x3x3x3", "1x2x3x3"}, {}, {"!"}},
      {"bad output_padding length", "ConvTranspose", {"1x1x3x3", "1x2x3x3"}, {{"output_padding", ints({1})}}, {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("conv ops: DeformConv") {
  const std::vector<OpCase> cases = {
      // out (3-2)+1 = 2: 2*2 out * 1*2*2 = 16
      {"static", "DeformConv", {"1x1x3x3", "1x1x2x2", "1x8x2x2"}, {}, {"1x1x2x2"}, 16, 32},
      // with bias: 32 + 4 = 36
      {"bias", "DeformConv", {"1x1x3x3", "1x1x2x2", "1x8x2x2", "1"}, {}, {"1x1x2x2"}, 16, 36},
      {"symbolic", "DeformConv", {"Nx1x3x3", "1x1x2x2", "Nx8x2x2"}, {}, {"Nx1x2x2"}, kUnknown, kUnknown},
      {"unknown rank", "DeformConv", {"*", "1x1x2x2", "*"}, {}, {"?x1x?x?"}, kUnknown, kUnknown},
      {"bad channels", "DeformConv", {"1x2x3x3", "1x1x2x2", "1x8x2x2"}, {}, {"!"}},
  };
  for (auto tc : cases) {
    tc.opset = 19;
    check_case(tc);
  }
}

TEST_CASE("conv ops: symbolic spatial arithmetic") {
  // No padding, kernel 3, stride 1: H - 2.
  auto r = run_op("Conv", {"1,3,H,W", "8x3x3x3"});
  REQUIRE(r.out(0).shape.rank() == 4);
  CHECK(r.out(0).shape.dims[2] == Dim::symbol("H") - Dim(2));
  // ConvTranspose stride 2, kernel 4, pads 1+1: 2*(H-1) + 4 - 2 = 2*H.
  auto t = run_op("ConvTranspose", {"1,4,H,W", "4x2x4x4"}, {{"strides", A::ints({2, 2})}, {"pads", A::ints({1, 1, 1, 1})}});
  REQUIRE(t.out(0).shape.rank() == 4);
  CHECK(t.out(0).shape.dims[2] == Dim(2) * Dim::symbol("H"));
  CHECK(t.out(0).dtype == DType::Float32);
}
// clang-format on

TEST_CASE("conv ops: the kind of kernel a calibration fits apart (NodeReport::variant)") {
  // PyTorch's CPU convolution (aten/src/ATen/native/Convolution.cpp, use_mkldnn) takes oneDNN for batch 1 and
  // groups 1 only when a kernel is larger than 3 on both axes or the input has more than 20,480 elements
  // (N*C*H*W); below, its own im2col + GEMM: "/small".
  auto variant = [](const std::vector<std::string>& in, const std::map<std::string, Attribute>& attrs = {}) {
    OneNode one = run_op("Conv", in, attrs);
    Report r = build_report(one.model, one.result);
    REQUIRE(r.nodes.size() == 1);
    return std::string(r.nodes[0].variant);
  };
  CHECK(variant({"1x8x16x16", "8x8x3x3"}) == "spatial/small/3x3");    // 2,048 input elements
  CHECK(variant({"1x20x32x32", "8x20x3x3"}) == "spatial/small/3x3");  // 20,480: not above
  CHECK(variant({"1x21x32x32", "8x21x3x3"}) == "spatial/large/3x3");  // 21,504
  CHECK(variant({"1x8x16x16", "8x8x1x3"}) == "spatial/small/1x3");    // 1 <= 3 on one axis
  CHECK(variant({"1x8x16x16", "8x8x5x5"}) == "spatial/large/5x5");    // larger than 3 on both axes
  CHECK(variant({"2x8x16x16", "8x8x3x3"}) == "spatial/large/3x3");    // batch 2
  CHECK(variant({"N,8,16,16", "8x8x3x3"}) == "spatial/small/3x3");    // per sample where the batch is a dim
  CHECK(variant({"1,8,H,W", "8x8x3x3"}) == "spatial/3x3");            // unknown size: no algorithm
  CHECK(variant({"1,8,H,W", "8x8x7x7"}) == "spatial/large/7x7");      // 7 > 3 on both axes: oneDNN
  CHECK(variant({"1x8x16", "8x8x3"}) == "spatial/3");                 // 1-D
  // 3-D: the first four input dims (N*C*D*H; aten leaves W out), the kernel's last two axes.
  CHECK(variant({"1x16x8x56x56", "16x16x3x3x3"}) == "spatial/small/3x3x3");  // 16*8*56 = 7,168
  CHECK(variant({"1x64x8x56x56", "64x64x3x3x3"}) == "spatial/large/3x3x3");  // 28,672
  CHECK(variant({"1x3x8x32x32", "16x3x3x7x7"}) == "spatial/large/3x7x7");    // 7 > 3 on both last axes
  CHECK(variant({"1x16x8x28x28", "16x16x3x1x1"}) == "spatial/small/3x1x1");
  CHECK(variant({"1x8x16x16", "8x8x1x1"}) == "pointwise");
  CHECK(variant({"1x8x16x16", "8x1x3x3"}, {{"group", A::i(8)}}) == "depthwise/3x3");
  CHECK(variant({"1x8x16x16", "8x2x3x3"}, {{"group", A::i(4)}}) == "grouped");
  CHECK(variant({"2x4x4x8x8", "8x4x3x3x3"}) == "spatial/large/3x3x3");  // batch 2: oneDNN
}
