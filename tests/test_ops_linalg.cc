// tests/test_ops_linalg.cc — linalg family: MatMul, Gemm, Einsum, Det (and torch's GroupedMatMul). Shapes of
// rows named "(onnx test_x)" are the output dims of ONNX's backend node test test_x
// (test_data_set_0/output_0.pb); costs are derived by hand.
#include "op_test_util.h"

using namespace fwtest;

// Tables are aligned by hand: one case per row.
// clang-format off

TEST_CASE("linalg ops: MatMul") {
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs
      {"2d (onnx test_matmul_2d)", "MatMul", {"3x4", "4x3"}, {}, {"3x3"}, 36, 72},       // 3*3*4 = 36
      {"3d (onnx test_matmul_3d)", "MatMul", {"2x3x4", "2x4x3"}, {}, {"2x3x3"}, 72, 144},  // 2*3*3*4 = 72
      {"4d (onnx test_matmul_4d)", "MatMul", {"1x2x3x4", "1x2x4x3"}, {}, {"1x2x3x3"}, 72, 144},  // 1*2*3*3*4
      {"batch broadcast", "MatMul", {"5x1x3x4", "6x4x2"}, {}, {"5x6x3x2"}, 720, 1440},  // 5*6*3*2*4 = 720
      {"1-D A drops M", "MatMul", {"4", "2x4x3"}, {}, {"2x3"}, 24, 48},                  // 2*3*4 = 24
      {"1-D B drops N", "MatMul", {"2x3x4", "4"}, {}, {"2x3"}, 24, 48},                  // 2*3*4 = 24
      {"1-D both: dot product", "MatMul", {"4", "4"}, {}, {"scalar"}, 4, 8},            // 1*4
      {"symbolic", "MatMul", {"batch,seq,64", "64x128"}, {}, {"batch,seq,128"}, kUnknown, kUnknown},
      {"unknown K on one side", "MatMul", {"3x?", "5x2"}, {}, {"3x2"}, 30, 60},          // 3*2*5 = 30
      {"unknown rank", "MatMul", {"*", "4x3"}, {}, {"*"}, kUnknown, kUnknown},
      {"bad K", "MatMul", {"3x4", "5x3"}, {}, {"!"}},
      {"bad batch broadcast", "MatMul", {"2x3x4", "3x4x5"}, {}, {"!"}},
      {"bad scalar operand", "MatMul", {"scalar", "3"}, {}, {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("linalg ops: Gemm") {
  const std::vector<OpCase> cases = {
      // M=3 K=4 N=5: 2*60 + 15 (bias) + 15 (alpha .25) + 15 (beta .35) = 165
      {"all attributes (onnx test_gemm_all_attributes)", "Gemm", {"4x3", "5x4", "1x5"},
       {{"transA", A::i(1)}, {"transB", A::i(1)}, {"alpha", A::f(0.25)}, {"beta", A::f(0.35)}}, {"3x5"}, 60, 165},
      // M=3 K=5 N=4: MACs 60; 120 + 12 (bias) + 12 (alpha) = 144
      {"alpha (onnx test_gemm_alpha)", "Gemm", {"3x5", "5x4", "1x4"}, {{"alpha", A::f(0.5)}}, {"3x4"}, 60, 144},
      // M=2 K=7 N=4: MACs 56; 112 + 8 (bias) + 8 (beta) = 128
      {"beta (onnx test_gemm_beta)", "Gemm", {"2x7", "7x4", "1x4"}, {{"beta", A::f(0.5)}}, {"2x4"}, 56, 128},
      // 2*3*10 = 60
      {"no bias (onnx test_gemm_default_no_bias)", "Gemm", {"2x10", "10x3"}, {}, {"2x3"}, 60, 120},
      // 2*4*3 = 24; 48 + 8 = 56
      {"scalar bias (onnx test_gemm_default_scalar_bias)", "Gemm", {"2x3", "3x4", "scalar"}, {}, {"2x4"}, 24, 56},
      // 3*4*6 = 72; 144 + 12 = 156
      {"matrix bias (onnx test_gemm_default_matrix_bias)", "Gemm", {"3x6", "6x4", "3x4"}, {}, {"3x4"}, 72, 156},
      {"transA (onnx test_gemm_transposeA)", "Gemm", {"6x3", "6x4", "1x4"}, {{"transA", A::i(1)}}, {"3x4"}, 72, 156},
      {"transB (onnx test_gemm_transposeB)", "Gemm", {"3x6", "4x6", "1x4"}, {{"transB", A::i(1)}}, {"3x4"}, 72, 156},
      // beta != 1 without C: nothing to scale. 2*3*4 = 24
      {"beta without C", "Gemm", {"2x4", "4x3"}, {{"beta", A::f(0.5)}}, {"2x3"}, 24, 48},
      {"symbolic", "Gemm", {"batchx512", "1000x512", "1000"}, {{"transB", A::i(1)}}, {"batchx1000"}, kUnknown,
       kUnknown},
      {"unknown rank A", "Gemm", {"*", "5x4"}, {}, {"?x4"}, kUnknown, kUnknown},
      {"bad K", "Gemm", {"3x5", "6x4"}, {}, {"!"}},
      {"bad bias", "Gemm", {"3x5", "5x4", "2x4"}, {}, {"!"}},
      {"bad rank", "Gemm", {"2x3x4", "4x5"}, {}, {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("linalg ops: Einsum") {
  auto eq = [](const char* e) { return std::map<std::string, Attribute>{{"equation", A::s(e)}}; };
  const std::vector<OpCase> cases = {
      // b5 i2 j3 k4: P = 120
      {"batch matmul (onnx test_einsum_batch_matmul)", "Einsum", {"5x2x3", "5x3x4"}, eq("bij, bjk -> bik"),
       {"5x2x4"}, 120, 240},
      {"inner product, implicit (onnx test_einsum_inner_prod)", "Einsum", {"5", "5"}, eq("i,i"), {"scalar"}, 5, 10},
      // one operand summing j: P = 3*4 = 12 reads
      {"sum (onnx test_einsum_sum)", "Einsum", {"3x4"}, eq("ij->i"), {"3"}, 0, 12},
      {"transpose is layout (onnx test_einsum_transpose)", "Einsum", {"3x4"}, eq("ij->ji"), {"4x3"}, 0, 0},
      {"batch diagonal (onnx test_einsum_batch_diagonal)", "Einsum", {"3x5x5"}, eq("...ii ->...i"), {"3x5"}, 0, 0},
      {"implicit output", "Einsum", {"2x3", "3x4"}, eq("ij,jk"), {"2x4"}, 24, 48},   // 2*3*4
      {"implicit output sorted", "Einsum", {"3x4"}, eq("ba"), {"4x3"}, 0, 0},
      // ellipsis broadcast [2,1] with [5] -> [2,5]; P = 2*5*3*4*6 = 720
      {"ellipsis broadcast", "Einsum", {"2x1x3x4", "5x4x6"}, eq("...ij,...jk->...ik"), {"2x5x3x6"}, 720, 1440},
      // three operands: P = 2*3*4*5 = 120, MACs = 2*120 = 240
      {"three operands", "Einsum", {"2x3", "3x4", "4x5"}, eq("ij,jk,kl->il"), {"2x5"}, 240, 480},
      {"symbolic", "Einsum", {"Bx2x3", "Bx3x4"}, eq("bij,bjk->bik"), {"Bx2x4"}, kUnknown, kUnknown},
      {"unknown rank under ellipsis", "Einsum", {"*", "3x4"}, eq("...ij,jk->...ik"), {"*"}, kUnknown, kUnknown},
      {"unknown rank, letters only", "Einsum", {"*", "3x4"}, eq("ij,jk->ik"), {"?x4"}, kUnknown, kUnknown},
      {"bad index sizes", "Einsum", {"2x3", "4x5"}, eq("ij,jk->ik"), {"!"}},
      {"bad term count", "Einsum", {"2x3", "3x4"}, eq("ij->ij"), {"!"}},
      {"bad rank for term", "Einsum", {"2x3x4"}, eq("ij->i"), {"!"}},
  };
  for (auto tc : cases) {
    tc.opset = 12;
    check_case(tc);
  }
}

TEST_CASE("linalg ops: Det") {
  const std::vector<OpCase> cases = {
      {"2d (onnx test_det_2d)", "Det", {"2x2"}, {}, {"scalar"}, kUnknown, kUnknown},
      {"nd (onnx test_det_nd)", "Det", {"3x2x2"}, {}, {"3"}, kUnknown, kUnknown},
      {"symbolic", "Det", {"Bx4x4"}, {}, {"B"}},
      {"unknown rank", "Det", {"*"}, {}, {"*"}},
      {"bad: not square", "Det", {"2x3"}, {}, {"!"}},
      {"bad: rank 1", "Det", {"3"}, {}, {"!"}},
  };
  for (const auto& tc : cases) check_case(tc);
}

// torch._grouped_mm's four layouts (flopwise domain; transformers' grouped_mm_fallback lowers to it). Output
// shapes from torch's meta function (torch/_meta_registrations.py, _create_grouped_mm_output_tensor); MACs
// by hand: each output element one group's dot product over its K.
TEST_CASE("linalg ops: GroupedMatMul") {
  const std::vector<OpCase> cases = {
      // 10 tokens of 4 experts, K=6, N=5: 10*6*5 = 300
      {"rows grouped: (M,K)@(G,K,N)", "GroupedMatMul", {"10x6", "4x6x5", "4:int32"}, {}, {"10x5"}, 300, 600, "flopwise", 1},
      // K=12 split in 3 groups: (3,M,N) = 3x2x5; 2*12*5 = 120
      {"inner dim grouped: (M,Ktot)@(Ktot,N)", "GroupedMatMul", {"2x12", "12x5", "3:int32"}, {}, {"3x2x5"}, 120, 240, "flopwise", 1},
      // N=9 split in 3 groups: (M,Ntot) = 2x9; 2*6*9 = 108
      {"columns grouped: (G,M,K)@(K,Ntot)", "GroupedMatMul", {"3x2x6", "6x9", "3:int32"}, {}, {"2x9"}, 108, 216, "flopwise", 1},
      // a bmm: 3*2*6*5 = 180
      {"batched: (G,M,K)@(G,K,N)", "GroupedMatMul", {"3x2x6", "3x6x5"}, {}, {"3x2x5"}, 180, 360, "flopwise", 1},
      // a bias: + 10*5 output elements
      {"bias", "GroupedMatMul", {"10x6", "4x6x5", "4:int32", "4x5"}, {}, {"10x5"}, 300, 650, "flopwise", 1},
      {"symbolic tokens", "GroupedMatMul", {"Sx6", "4x6x5", "4:int32"}, {}, {"Sx5"}, kUnknown, kUnknown, "flopwise", 1},
      {"bad: 2-D without offs", "GroupedMatMul", {"10x6", "4x6x5"}, {}, {"!"}, -1, -1, "flopwise", 1},
      {"bad: rank 4", "GroupedMatMul", {"1x10x6", "4x6x5x1"}, {}, {"!"}, -1, -1, "flopwise", 1},
  };
  for (const auto& tc : cases) check_case(tc);
}
// clang-format on
