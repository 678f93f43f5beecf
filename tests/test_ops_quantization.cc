// tests/test_ops_quantization.cc — quantization family: QDQ ops (2 FLOPs per element), integer contractions
// (integer MACs), MatMulNBits and GatherBlockQuantized (ONNX Runtime's weight-only quantized ops).
#include "op_test_util.h"

using namespace fwtest;

TEST_CASE("quantization ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear") {
  // clang-format off
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs
      {"quantize static", "QuantizeLinear", {"6", "scalar", "scalar:uint8"}, {}, {"6"}, 0, 12},  // 2*6
      {"quantize per-axis", "QuantizeLinear", {"1x3x3x2", "3", "3:uint8"}, {}, {"1x3x3x2"}, 0, 36},  // 2*18
      {"quantize symbolic", "QuantizeLinear", {"Nx4", "scalar"}, {}, {"Nx4"}, 0, kUnknown},
      {"quantize unknown rank", "QuantizeLinear", {"*", "scalar"}, {}, {"*"}, 0, kUnknown},
      {"quantize per-axis mismatch", "QuantizeLinear", {"1x3x3x2", "4", "4:uint8"}, {}, {"!"}},
      {"dequantize static", "DequantizeLinear", {"4:uint8", "scalar", "scalar:uint8"}, {}, {"4"}, 0, 8},  // 2*4
      {"dequantize per-axis", "DequantizeLinear", {"1x3x3x2:uint8", "3", "3:uint8"}, {}, {"1x3x3x2"}, 0, 36},
      {"dequantize symbolic", "DequantizeLinear", {"Nx4:int8", "scalar"}, {}, {"Nx4"}, 0, kUnknown},
      {"dequantize unknown rank", "DequantizeLinear", {"*:int8", "scalar"}, {}, {"*"}, 0, kUnknown},
      {"dequantize per-axis mismatch", "DequantizeLinear", {"1x3x3x2:uint8", "5", "5:uint8"}, {}, {"!"}},
      {"dequantize axis out of range", "DequantizeLinear", {"4:uint8", "4"}, {{"axis", A::i(3)}}, {"!"}},
      // min, max, quantize 2 per element + 9 scalar ops: 4*12 + 9 = 57
      {"dynamic quantize", "DynamicQuantizeLinear", {"3x4"}, {}, {"3x4", "scalar", "scalar"}, 0, 57},
      {"dynamic quantize symbolic", "DynamicQuantizeLinear", {"Nx4"}, {}, {"Nx4", "scalar", "scalar"}, 0, kUnknown},
      {"dynamic quantize unknown rank", "DynamicQuantizeLinear", {"*"}, {}, {"*", "scalar", "scalar"}, 0, kUnknown},
      {"ms quantize", "QuantizeLinear", {"2x3", "scalar", "scalar:int16"}, {}, {"2x3"}, 0, 12, "com.microsoft", 1},
      {"ms dequantize", "DequantizeLinear", {"2x3:int16", "scalar"}, {}, {"2x3"}, 0, 12, "com.microsoft", 1},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("quantization ops: output element types") {
  CHECK(run_op("QuantizeLinear", {"6", "scalar", "scalar:int8"}).out(0).dtype == DType::Int8);
  CHECK(run_op("QuantizeLinear", {"6", "scalar"}).out(0).dtype == DType::UInt8);  // no zero point: uint8
  CHECK(run_op("QuantizeLinear", {"6", "scalar"}, {{"output_dtype", A::i(3)}}, 1, "", 21).out(0).dtype ==
        DType::Int8);
  CHECK(run_op("DequantizeLinear", {"6:int8", "scalar"}).out(0).dtype == DType::Float32);
  CHECK(run_op("DequantizeLinear", {"6:int8", "scalar:float16"}, {}, 1, "", 19).out(0).dtype ==
        DType::Float16);
  auto d = run_op("DynamicQuantizeLinear", {"6"}, {}, 3);
  CHECK(d.out(0).dtype == DType::UInt8);
  CHECK(d.out(1).dtype == DType::Float32);
  CHECK(d.out(2).dtype == DType::UInt8);
  CHECK(run_op("MatMulInteger", {"4x3:uint8", "3x2:uint8"}).out(0).dtype == DType::Int32);
  CHECK(run_op("ConvInteger", {"1x1x3x3:uint8", "1x1x2x2:uint8"}).out(0).dtype == DType::Int32);
  std::vector<std::string> qmm = {"2x4:uint8", "1", "1:uint8", "4x3:int8", "1", "1:int8", "1", "1:int8"};
  CHECK(run_op("QLinearMatMul", qmm).out(0).dtype == DType::Int8);  // y_zero_point's type
}

TEST_CASE("quantization ops: integer contractions") {
  // QLinearMatMul inputs: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp.
  auto qmm = [](const std::string& a, const std::string& b) {
    return std::vector<std::string>{a, "1", "1:uint8", b, "1", "1:uint8", "1", "1:uint8"};
  };
  // QLinearConv inputs: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp[, B].
  auto qconv = [](const std::string& x, const std::string& w, const std::string& bias = "") {
    std::vector<std::string> v{x, "scalar", "scalar:uint8", w, "1", "1:uint8", "scalar", "scalar:uint8"};
    if (!bias.empty()) v.push_back(bias);
    return v;
  };
  auto nbits = [](int64_t k, int64_t n, int64_t bits, int64_t block) {
    return std::map<std::string, Attribute>{
        {"K", A::i(k)}, {"N", A::i(n)}, {"bits", A::i(bits)}, {"block_size", A::i(block)}};
  };
  // clang-format off
  const std::vector<OpCase> cases = {
      // MatMulInteger: MACs = out * K.
      {"matmulinteger static", "MatMulInteger", {"4x3:uint8", "3x2:uint8", "1:uint8", "1:uint8"}, {}, {"4x2"},
       24, 48},  // 4*2*3 = 24
      {"matmulinteger batched", "MatMulInteger", {"2x4x3:int8", "3x5:int8"}, {}, {"2x4x5"}, 120, 240},  // 2*4*5*3
      {"matmulinteger vector", "MatMulInteger", {"3:uint8", "3x5:uint8"}, {}, {"5"}, 15, 30},  // 5*3
      {"matmulinteger symbolic", "MatMulInteger", {"Mx3:uint8", "3x2:uint8"}, {}, {"Mx2"}, kUnknown, kUnknown},
      {"matmulinteger unknown rank", "MatMulInteger", {"*:uint8", "3x2:uint8"}, {}, {"*"}, kUnknown, kUnknown},
      {"matmulinteger inner mismatch", "MatMulInteger", {"4x3:uint8", "5x2:uint8"}, {}, {"!"}},
      // QLinearMatMul: 2*MACs + 2 per output (requantize).
      {"qlinearmatmul 2d", "QLinearMatMul", qmm("2x4:uint8", "4x3:uint8"), {}, {"2x3"}, 24, 60},  // 2*3*4; 48+12
      {"qlinearmatmul 3d", "QLinearMatMul", qmm("2x2x4:uint8", "2x4x3:uint8"), {}, {"2x2x3"}, 48,
       120},  // 2*2*3*4 = 48; 96 + 2*12
      {"qlinearmatmul symbolic", "QLinearMatMul", qmm("Bx2x4:uint8", "4x3:uint8"), {}, {"Bx2x3"}, kUnknown,
       kUnknown},
      {"qlinearmatmul unknown rank", "QLinearMatMul", qmm("*:uint8", "4x3:uint8"), {}, {"*"}, kUnknown, kUnknown},
      {"qlinearmatmul batch mismatch", "QLinearMatMul", qmm("2x2x4:uint8", "3x4x3:uint8"), {}, {"!"}},
      // MatMulNBits (com.microsoft): K=64, N=8, 4 bits in blocks of 32: B 8x2x16 uint8, scales 16.
      // MACs = rows * K * N = 2*3*64*8 = 3072; FLOPs 2*3072 + dequantize 2*8*64 = 6144 + 1024 = 7168.
      {"matmulnbits 4-bit", "MatMulNBits", {"2x3x64", "8x2x16:uint8", "16", "8:uint8"}, nbits(64, 8, 4, 32),
       {"2x3x8"}, 3072, 7168, "com.microsoft", 1},
      // 8 bits, blocks of 16: B 8x4x16; bias: + 3*8 = 24 -> 2*1536 + 1024 + 24 = 4120.
      {"matmulnbits 8-bit bias", "MatMulNBits", {"3x64", "8x4x16:uint8", "32", "", "", "8"}, nbits(64, 8, 8, 16),
       {"3x8"}, 1536, 4120, "com.microsoft", 1},
      {"matmulnbits symbolic", "MatMulNBits", {"Bx64", "8x2x16:uint8", "16"}, nbits(64, 8, 4, 32), {"Bx8"},
       kUnknown, kUnknown, "com.microsoft", 1},
      {"matmulnbits unknown rank", "MatMulNBits", {"*", "8x2x16:uint8", "16"}, nbits(64, 8, 4, 32), {"*"},
       kUnknown, kUnknown, "com.microsoft", 1},
      {"matmulnbits K mismatch", "MatMulNBits", {"3x48", "8x2x16:uint8", "16"}, nbits(64, 8, 4, 32), {"!"}, -1,
       -1, "com.microsoft", 1},
      {"matmulnbits blob mismatch", "MatMulNBits", {"3x64", "8x2x32:uint8", "16"}, nbits(64, 8, 4, 32), {"!"}, -1,
       -1, "com.microsoft", 1},
      // ConvInteger: MACs = out * C/group * kh * kw.
      {"convinteger padded", "ConvInteger", {"1x1x3x3:uint8", "1x1x2x2:uint8", "scalar:uint8"},
       {{"pads", A::ints({1, 1, 1, 1})}}, {"1x1x4x4"}, 64, 128},  // 16 * 1*2*2 = 64
      {"convinteger valid", "ConvInteger", {"1x1x3x3:uint8", "1x1x2x2:uint8", "scalar:uint8"}, {}, {"1x1x2x2"},
       16, 32},  // 4 * 4
      {"convinteger symbolic batch", "ConvInteger", {"Nx3x32x32:uint8", "8x3x3x3:uint8"}, {}, {"Nx8x30x30"},
       kUnknown, kUnknown},
      {"convinteger unknown rank", "ConvInteger", {"*:uint8", "8x3x3x3:uint8"}, {}, {"?x8x?x?"}, kUnknown,
       kUnknown},
      {"convinteger channel mismatch", "ConvInteger", {"1x4x8x8:uint8", "8x3x3x3:uint8"}, {}, {"!"}},
      // QLinearConv: 2*MACs + (bias 1) + requantize 2 per output element.
      {"qlinearconv 1x1", "QLinearConv", qconv("1x1x7x7:uint8", "1x1x1x1:uint8"), {}, {"1x1x7x7"}, 49,
       196},  // 49*1; 98 + 2*49
      // (8 + 2 - 3)/2 + 1 = 4; MACs 16*4*4 * 3*3*3 = 6912; FLOPs 13824 + 3*256 = 14592
      {"qlinearconv strided with bias", "QLinearConv", qconv("1x3x8x8:uint8", "16x3x3x3:uint8", "16:int32"),
       {{"strides", A::ints({2, 2})}, {"pads", A::ints({1, 1, 1, 1})}}, {"1x16x4x4"}, 6912, 14592},
      // depthwise: group 4, W 4x1x3x3, SAME_UPPER: out 4x4x8x8, MACs 256 * 9 = 2304
      {"qlinearconv depthwise same", "QLinearConv", qconv("1x4x8x8:uint8", "4x1x3x3:uint8"),
       {{"group", A::i(4)}, {"auto_pad", A::s("SAME_UPPER")}}, {"1x4x8x8"}, 2304, 5120},  // 4608 + 512
      {"qlinearconv symbolic", "QLinearConv", qconv("Nx1x7x7:uint8", "2x1x3x3:uint8"), {}, {"Nx2x5x5"}, kUnknown,
       kUnknown},
      {"qlinearconv unknown rank", "QLinearConv", qconv("*:uint8", "2x1x3x3:uint8"), {}, {"?x2x?x?"}, kUnknown,
       kUnknown},
      {"qlinearconv rank mismatch", "QLinearConv", qconv("1x1x7x7:uint8", "2x1x3:uint8"), {}, {"!"}},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("quantization ops: GatherBlockQuantized") {
  const char* ms = "com.microsoft";
  auto gbq = [](int64_t bits, int64_t block, int64_t gather_axis = 0, int64_t quantize_axis = 1) {
    return std::map<std::string, Attribute>{{"bits", A::i(bits)},
                                            {"block_size", A::i(block)},
                                            {"gather_axis", A::i(gather_axis)},
                                            {"quantize_axis", A::i(quantize_axis)}};
  };
  // clang-format off
  const std::vector<OpCase> cases = {
      // GenAI's embedding: 256 x 64 4-bit weights in a uint8 [256, 32] (2 a byte), blocks of 32: scales [256, 2],
      // zero points [256, ceil(2/2) = 1]. Output [2, 5, 32*2 = 64]; dequantize 2 per element: 2*2*5*64 = 1280.
      {"gbq uint8 4-bit", "GatherBlockQuantized", {"256x32:uint8", "2x5:int64", "256x2", "256x1:uint8"},
       gbq(4, 32), {"2x5x64"}, 0, 1280, ms, 1},
      // 8 bits: one a byte, [256, 64] -> [3, 64]; scales [256, 64/16 = 4]: 2*3*64 = 384
      {"gbq uint8 8-bit", "GatherBlockQuantized", {"256x64:uint8", "3:int64", "256x4"}, gbq(8, 16), {"3x64"}, 0,
       384, ms, 1},
      // gather along 1 of a [8, 32] table quantized along 0 (int8 stands for int4 here): [8, 3]; 2*24 = 48
      {"gbq gather axis 1", "GatherBlockQuantized", {"8x32:int8", "3:int64", "1x32"}, gbq(4, 16, 1, 0), {"8x3"}, 0,
       48, ms, 1},
      {"gbq symbolic", "GatherBlockQuantized", {"256x32:uint8", "Bx5:int64", "256x2"}, gbq(4, 32), {"Bx5x64"}, 0,
       kUnknown, ms, 1},
      {"gbq unknown rank", "GatherBlockQuantized", {"256x32:uint8", "*:int64", "256x2"}, gbq(4, 32), {"*"}, 0,
       kUnknown, ms, 1},
      {"gbq scales blocks mismatch", "GatherBlockQuantized", {"256x32:uint8", "2x5:int64", "256x3"}, gbq(4, 32),
       {"!"}, -1, -1, ms, 1},
      {"gbq zero points not packed", "GatherBlockQuantized", {"256x32:uint8", "2x5:int64", "256x2", "256x2:uint8"},
       gbq(4, 32), {"!"}, -1, -1, ms, 1},
      {"gbq uint8 gathered along 1", "GatherBlockQuantized", {"256x32:uint8", "2x5:int64", "256x2"},
       gbq(4, 32, 1, 1), {"!"}, -1, -1, ms, 1},
      {"gbq bits 3", "GatherBlockQuantized", {"256x32:uint8", "2x5:int64", "256x2"}, gbq(3, 32), {"!"}, -1, -1, ms,
       1},
      {"gbq block 8", "GatherBlockQuantized", {"256x32:uint8", "2x5:int64", "256x8"}, gbq(4, 8), {"!"}, -1, -1, ms,
       1},
      {"gbq axis out of range", "GatherBlockQuantized", {"256x32:uint8", "2x5:int64", "256x2"}, gbq(4, 32, 2, 1),
       {"!"}, -1, -1, ms, 1},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
}
