// tests/test_ops_pool.cc — pool family: MaxPool, AveragePool, LpPool, Global*Pool, MaxUnpool. Shapes of rows
// named "(onnx test_x)" are the output dims of ONNX's backend node test test_x; FLOPs (1 per window element
// read = out elems * prod(kernel)) are derived by hand.
#include "op_test_util.h"

using namespace fwtest;

// Tables are aligned by hand: one case per row.
// clang-format off

namespace {
Attribute ints(std::vector<int64_t> v) { return A::ints(std::move(v)); }
}  // namespace

TEST_CASE("pool ops: windowed") {
  const std::vector<OpCase> cases = {
      // 3*31*31 = 2883 out * 4 = 11532
      {"max 2d default (onnx test_maxpool_2d_default)", "MaxPool", {"1x3x32x32"}, {{"kernel_shape", ints({2, 2})}},
       {"1x3x31x31"}, 0, 11532},
      {"max 1d (onnx test_maxpool_1d_default)", "MaxPool", {"1x3x32"}, {{"kernel_shape", ints({2})}}, {"1x3x31"}, 0,
       186},  // 3*31 * 2 = 186
      // ceil((4-3)/2)+1 = 2: 4 out * 9 = 36
      {"max ceil_mode (onnx test_maxpool_2d_ceil)", "MaxPool", {"1x1x4x4"},
       {{"ceil_mode", A::i(1)}, {"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}}, {"1x1x2x2"}, 0, 36},
      // effective kernel 3: 4 out * 4 = 16
      {"max dilations (onnx test_maxpool_2d_dilations)", "MaxPool", {"1x1x4x4"},
       {{"dilations", ints({2, 2})}, {"kernel_shape", ints({2, 2})}, {"strides", ints({1, 1})}}, {"1x1x2x2"}, 0, 16},
      // ceil(5/2) = 3: 9 out * 9 = 81
      {"max SAME_UPPER (onnx test_maxpool_2d_precomputed_same_upper)", "MaxPool", {"1x1x5x5"},
       {{"auto_pad", A::s("SAME_UPPER")}, {"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}}, {"1x1x3x3"}, 0,
       81},
      // 3*30*30 = 2700 out * 9 = 24300
      {"max pads (onnx test_maxpool_2d_pads)", "MaxPool", {"1x3x28x28"},
       {{"kernel_shape", ints({3, 3})}, {"pads", ints({2, 2, 2, 2})}}, {"1x3x30x30"}, 0, 24300},
      // 3*10*10 = 300 out * 25 = 7500
      {"max strides (onnx test_maxpool_2d_strides)", "MaxPool", {"1x3x32x32"},
       {{"kernel_shape", ints({5, 5})}, {"strides", ints({3, 3})}}, {"1x3x10x10"}, 0, 7500},
      // 3*31^3 = 89373 out * 8 = 714984
      {"max 3d (onnx test_maxpool_3d_default)", "MaxPool", {"1x3x32x32x32"}, {{"kernel_shape", ints({2, 2, 2})}},
       {"1x3x31x31x31"}, 0, 714984},
      // 25 out * 25 = 625
      {"max with indices (onnx test_maxpool_with_argmax_2d_precomputed_pads)", "MaxPool", {"1x1x5x5"},
       {{"kernel_shape", ints({5, 5})}, {"pads", ints({2, 2, 2, 2})}}, {"1x1x5x5", "1x1x5x5"}, 0, 625},
      {"max indices, storage_order (onnx test_maxpool_with_argmax_2d_precomputed_strides)", "MaxPool", {"1x1x5x5"},
       {{"kernel_shape", ints({2, 2})}, {"storage_order", A::i(1)}, {"strides", ints({2, 2})}},
       {"1x1x2x2", "1x1x2x2"}, 0, 16},  // 4 * 4
      // pads 1, kernel 3, stride 1: H
      {"max symbolic", "MaxPool", {"N,64,H,W"}, {{"kernel_shape", ints({3, 3})}, {"pads", ints({1, 1, 1, 1})}},
       {"N,64,H,W"}, 0, kUnknown},
      // kernel 3, stride 2: floor((H - 3)/2) + 1 = floor((H + 1)/2) - 1 (H = 7: 3)
      {"max symbolic stride 2", "MaxPool", {"N,64,H,W"},
       {{"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}}, {"Nx64x(floor((H + 1)/2) - 1)x(floor((W + 1)/2) - 1)"},
       0, kUnknown},
      {"max unknown rank", "MaxPool", {"*"}, {{"kernel_shape", ints({3, 3})}}, {"?x?x?x?"}, 0, kUnknown},
      {"max bad: kernel larger than input", "MaxPool", {"1x1x2x2"}, {{"kernel_shape", ints({3, 3})}}, {"!"}},
      {"max bad: no kernel_shape", "MaxPool", {"1x1x4x4"}, {}, {"!"}},
      {"max bad: strides length", "MaxPool", {"1x1x4x4"}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({1})}},
       {"!"}},
      // 3*31*31 = 2883 * 4 = 11532
      {"avg default (onnx test_averagepool_2d_default)", "AveragePool", {"1x3x32x32"},
       {{"kernel_shape", ints({2, 2})}}, {"1x3x31x31"}, 0, 11532},
      {"avg ceil (onnx test_averagepool_2d_ceil)", "AveragePool", {"1x1x4x4"},
       {{"ceil_mode", A::i(1)}, {"kernel_shape", ints({3, 3})}, {"strides", ints({2, 2})}}, {"1x1x2x2"}, 0, 36},
      // 3*32*32 = 3072 * 4 = 12288
      {"avg SAME_LOWER (onnx test_averagepool_2d_same_lower)", "AveragePool", {"1x3x32x32"},
       {{"auto_pad", A::s("SAME_LOWER")}, {"kernel_shape", ints({2, 2})}}, {"1x3x32x32"}, 0, 12288},
      {"avg count_include_pad (onnx test_averagepool_2d_pads_count_include_pad)", "AveragePool", {"1x3x28x28"},
       {{"count_include_pad", A::i(1)}, {"kernel_shape", ints({3, 3})}, {"pads", ints({2, 2, 2, 2})}},
       {"1x3x30x30"}, 0, 24300},
      {"avg strides (onnx test_averagepool_2d_strides)", "AveragePool", {"1x3x32x32"},
       {{"kernel_shape", ints({5, 5})}, {"strides", ints({3, 3})}}, {"1x3x10x10"}, 0, 7500},
      {"avg symbolic", "AveragePool", {"Nx8xL"}, {{"kernel_shape", ints({1})}}, {"Nx8xL"}, 0, kUnknown},
      {"avg unknown rank", "AveragePool", {"*"}, {{"kernel_shape", ints({2})}}, {"?x?x?"}, 0, kUnknown},
      {"avg bad: pads length", "AveragePool", {"1x1x4x4"}, {{"kernel_shape", ints({2, 2})}, {"pads", ints({1, 1})}},
       {"!"}},
      // (32-2)/1+1 = 31: 11532 as MaxPool
      {"lp", "LpPool", {"1x3x32x32"}, {{"kernel_shape", ints({2, 2})}, {"p", A::i(2)}}, {"1x3x31x31"}, 0, 11532},
      {"lp symbolic", "LpPool", {"Nx3x32x32"}, {{"kernel_shape", ints({2, 2})}}, {"Nx3x31x31"}, 0, kUnknown},
      {"lp unknown rank", "LpPool", {"*"}, {{"kernel_shape", ints({2, 2})}}, {"?x?x?x?"}, 0, kUnknown},
      {"lp bad rank", "LpPool", {"3x4"}, {{"kernel_shape", ints({2, 2})}}, {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("pool ops: global and unpool") {
  const std::vector<OpCase> cases = {
      // reads 3*5*5 = 75
      {"global avg (onnx test_globalaveragepool)", "GlobalAveragePool", {"1x3x5x5"}, {}, {"1x3x1x1"}, 0, 75},
      {"global max (onnx test_globalmaxpool)", "GlobalMaxPool", {"1x3x5x5"}, {}, {"1x3x1x1"}, 0, 75},
      {"global lp", "GlobalLpPool", {"2x4x3x3x3"}, {}, {"2x4x1x1x1"}, 0, 216},  // 2*4*27 = 216
      {"global avg symbolic", "GlobalAveragePool", {"Nx512x7x7"}, {}, {"Nx512x1x1"}, 0, kUnknown},
      {"global max symbolic", "GlobalMaxPool", {"1,512,H,W"}, {}, {"1x512x1x1"}, 0, kUnknown},
      {"global lp symbolic", "GlobalLpPool", {"Nx2x3"}, {}, {"Nx2x1"}, 0, kUnknown},
      {"global avg unknown rank", "GlobalAveragePool", {"*"}, {}, {"*"}, 0, kUnknown},
      {"global max unknown rank", "GlobalMaxPool", {"*"}, {}, {"*"}, 0, kUnknown},
      {"global lp unknown rank", "GlobalLpPool", {"*"}, {}, {"*"}, 0, kUnknown},
      {"global avg bad rank", "GlobalAveragePool", {"5"}, {}, {"!"}},
      {"global max bad rank", "GlobalMaxPool", {"5"}, {}, {"!"}},
      {"global lp bad rank", "GlobalLpPool", {"5"}, {}, {"!"}},
      // (2-1)*2 + 2 = 4
      {"unpool (onnx test_maxunpool_export_without_output_shape)", "MaxUnpool", {"1x1x2x2", "1x1x2x2:int64"},
       {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}}, {"1x1x4x4"}, 0, 0},
      {"unpool output_shape (onnx test_maxunpool_export_with_output_shape)", "MaxUnpool",
       {"1x1x2x2", "1x1x2x2:int64", "4:int64=1,1,5,5"}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}},
       {"1x1x5x5"}, 0, 0},
      {"unpool output_shape not known", "MaxUnpool", {"1x1x2x2", "1x1x2x2:int64", "4:int64"},
       {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}}, {"?x?x?x?"}, 0, 0},
      // kernel 3 stride 1: (H-1) + 3 = H + 2 for H; N, C pass through
      {"unpool symbolic batch", "MaxUnpool", {"Nx2x3x3", "Nx2x3x3:int64"}, {{"kernel_shape", ints({3, 3})}},
       {"Nx2x5x5"}, 0, 0},
      {"unpool unknown rank", "MaxUnpool", {"*", "*"}, {{"kernel_shape", ints({2, 2})}}, {"?x?x?x?"}, 0, 0},
      {"unpool bad indices shape", "MaxUnpool", {"1x1x2x2", "1x1x3x3:int64"}, {{"kernel_shape", ints({2, 2})}},
       {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("pool ops: MaxPool Indices are int64") {
  auto r = run_op("MaxPool", {"1x1x4x4"}, {{"kernel_shape", A::ints({2, 2})}}, 2);
  CHECK(r.out(0).dtype == DType::Float32);
  CHECK(r.out(1).dtype == DType::Int64);
  CHECK(r.out(1).shape.str() == "1x1x3x3");
}
// clang-format on
