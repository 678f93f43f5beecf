// tests/test_ops_contrib.cc — contrib family (com.microsoft): fused attention (packed, decoder-masked and
// block-sparse too), fused norms, fused GELUs, FusedMatMul, rotary.
// Attention FLOPs = 2*MACs + 6 per score (softmax 5 + scale 1) + bias adds.
#include "op_test_util.h"

using namespace fwtest;

namespace {
const char* const MS = "com.microsoft";
Attribute heads(int64_t n) { return A::i(n); }
}  // namespace

TEST_CASE("contrib ops: Attention") {
  const std::map<std::string, Attribute> h4 = {{"num_heads", heads(4)}};
  std::map<std::string, Attribute> qkv = h4;
  qkv["qkv_hidden_sizes"] = A::ints({16, 16, 8});
  // clang-format off
  const std::vector<OpCase> cases = {
      // B=2 S=8 Hin=16 width=48 N=4 head=4 T=8. Projection 2*8*16*48 = 12288; scores 2*4*8*8 = 512;
      // QK 512*4 = 2048, AV 2048 -> MACs 16384. FLOPs 32768 + bias 2*8*48 = 768 + 6*512 = 3072 -> 36608.
      {"attention static", "Attention", {"2x8x16", "16x48", "48"}, h4, {"2x8x16", "2x2x4x8x4"}, 16384, 36608, MS,
       1},
      // + attention_bias, 1 per score: 36608 + 512 = 37120
      {"attention with attention_bias", "Attention", {"2x8x16", "16x48", "48", "", "", "1x4x8x8"}, h4, {"2x8x16"},
       16384, 37120, MS, 1},
      // past P=5: T=13; scores 2*4*8*13 = 832; MACs 12288 + 2*832*4 = 18944;
      // FLOPs 37888 + 768 + 6*832 = 43648
      {"attention with past", "Attention", {"2x8x16", "16x48", "48", "", "2x2x4x5x4"}, h4,
       {"2x8x16", "2x2x4x13x4"}, 18944, 43648, MS, 1},
      // Hv=8: v_head 2. Projection 2*8*16*40 = 10240; QK 512*4 = 2048; AV 512*2 = 1024 -> 13312;
      // FLOPs 26624 + 2*8*40 = 640 + 3072 -> 30336
      {"attention qkv_hidden_sizes", "Attention", {"2x8x16", "16x40", "40"}, qkv, {"2x8x8", "2x2x4x8x4"}, 13312,
       30336, MS, 1},
      {"attention symbolic", "Attention", {"Bx8x16", "16x48", "48"}, h4, {"Bx8x16", "2xBx4x8x4"}, kUnknown,
       kUnknown, MS, 1},
      {"attention unknown rank", "Attention", {"*", "16x48", "48"}, h4, {"?x?x16", "2x?x4x?x4"}, kUnknown,
       kUnknown, MS, 1},
      {"attention bias width mismatch", "Attention", {"2x8x16", "16x48", "36"}, h4, {"!"}, -1, -1, MS, 1},
      {"attention heads do not divide", "Attention", {"2x8x16", "16x48", "48"}, {{"num_heads", heads(3)}}, {"!"},
       -1, -1, MS, 1},
      {"attention input hidden mismatch", "Attention", {"2x8x12", "16x48", "48"}, h4, {"!"}, -1, -1, MS, 1},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("contrib ops: MultiHeadAttention") {
  const std::map<std::string, Attribute> h4 = {{"num_heads", heads(4)}};
  // clang-format off
  const std::vector<OpCase> cases = {
      // B=2 S=8 L=10 N=4 head=4: scores 2*4*8*10 = 640; MACs 640*4*2 = 5120; FLOPs 10240 + 6*640 = 14080
      {"mha static", "MultiHeadAttention", {"2x8x16", "2x10x16", "2x10x16"}, h4,
       {"2x8x16", "2x4x10x4", "2x4x10x4", "2x4x8x10"}, 5120, 14080, MS, 1},
      // bias adds: Q 2*8*16 = 256, K and V 2*10*32 = 640 -> 14080 + 896 = 14976
      {"mha with bias", "MultiHeadAttention", {"2x8x16", "2x10x16", "2x10x16", "48"}, h4, {"2x8x16"}, 5120, 14976,
       MS, 1},
      // packed QKV [B, S, N, 3, head]: scores 2*4*8*8 = 512; MACs 512*4*2 = 4096; FLOPs 8192 + 3072 = 11264
      {"mha packed qkv", "MultiHeadAttention", {"2x8x4x3x4"}, h4, {"2x8x16", "2x4x8x4"}, 4096, 11264, MS, 1},
      {"mha packed kv", "MultiHeadAttention", {"2x8x16", "2x10x4x2x4"}, h4, {"2x8x16", "2x4x10x4"}, 5120, 14080,
       MS, 1},
      {"mha key in BNSH", "MultiHeadAttention", {"2x8x16", "2x4x10x4", "2x4x10x4"}, h4, {"2x8x16", "2x4x10x4"},
       5120, 14080, MS, 1},
      // past 6 + 10 new = 16: scores 2*4*8*16 = 1024; MACs 1024*8 = 8192; FLOPs 16384 + 6144 = 22528
      {"mha with past", "MultiHeadAttention", {"2x8x16", "2x10x16", "2x10x16", "", "", "", "2x4x6x4", "2x4x6x4"},
       h4, {"2x8x16", "2x4x16x4", "2x4x16x4", "2x4x8x16"}, 8192, 22528, MS, 1},
      {"mha symbolic", "MultiHeadAttention", {"Bx8x16", "Bx10x16", "Bx10x16"}, h4, {"Bx8x16", "Bx4x10x4"},
       kUnknown, kUnknown, MS, 1},
      {"mha unknown rank", "MultiHeadAttention", {"*"}, h4, {"?x?x?"}, kUnknown, kUnknown, MS, 1},
      {"mha key hidden mismatch", "MultiHeadAttention", {"2x8x16", "2x10x12", "2x10x12"}, h4, {"!"}, -1, -1, MS,
       1},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("contrib ops: GroupQueryAttention and RotaryEmbedding") {
  const std::map<std::string, Attribute> gqa = {{"num_heads", heads(4)}, {"kv_num_heads", heads(2)}};
  std::map<std::string, Attribute> gqa_rot = gqa;
  gqa_rot["do_rotary"] = A::i(1);
  const std::map<std::string, Attribute> rot32 = {{"rotary_embedding_dim", A::i(32)},
                                                  {"num_heads", heads(4)}};
  // clang-format off
  const std::vector<OpCase> cases = {
      // N=4 KVN=2 head=8, S=T=8: scores 4*8*8 = 256; MACs 256*8*2 = 4096; FLOPs 8192 + 6*256 = 9728
      {"gqa prompt", "GroupQueryAttention", {"1x8x32", "1x8x16", "1x8x16", "", "", "1:int32", "scalar:int32=8"},
       gqa, {"1x8x32", "1x2x8x8", "1x2x8x8"}, 4096, 9728, MS, 1},
      // rotary on Q and K: 3 * 8 * (4+2)*8 = 1152 -> 9728 + 1152 = 10880
      {"gqa prompt rotary", "GroupQueryAttention",
       {"1x8x32", "1x8x16", "1x8x16", "", "", "1:int32", "scalar:int32=8", "16x4", "16x4"}, gqa_rot, {"1x8x32"},
       4096, 10880, MS, 1},
      // decode: S=1, buffer 16, total 12: present max(16, 12) = 16; scores 4*1*12 = 48;
      // MACs 48*8*2 = 768; FLOPs 1536 + 6*48 = 1824
      {"gqa decode", "GroupQueryAttention",
       {"1x1x32", "1x1x16", "1x1x16", "1x2x16x8", "1x2x16x8", "1:int32", "scalar:int32=12"}, gqa,
       {"1x1x32", "1x2x16x8", "1x2x16x8", "1x4x1x12"}, 768, 1824, MS, 1},
      // decode with total_sequence_length computed from the mask (contents unknown, as GenAI makes it): the
      // past 5 and the new token attended, present 6. Scores 4*1*6 = 24: MACs 2*24*8 = 384; FLOPs 768 + 6*24.
      {"gqa decode total from mask", "GroupQueryAttention",
       {"1x1x32", "1x1x16", "1x1x16", "1x2x5x8", "1x2x5x8", "1:int32", "scalar:int32"}, gqa,
       {"1x1x32", "1x2x6x8", "1x2x6x8", "1x4x1x6"}, 384, 912, MS, 1},
      // packed QKV width (4 + 2*2) * 8 = 64
      {"gqa packed", "GroupQueryAttention", {"1x8x64", "", "", "", "", "1:int32", "scalar:int32=8"}, gqa,
       {"1x8x32", "1x2x8x8"}, 4096, 9728, MS, 1},
      {"gqa symbolic", "GroupQueryAttention", {"Bx8x32", "Bx8x16", "Bx8x16", "", "", "B:int32", "scalar:int32"},
       gqa, {"Bx8x32", "Bx2x8x8"}, kUnknown, kUnknown, MS, 1},
      {"gqa unknown rank", "GroupQueryAttention", {"*", "*", "*"}, gqa, {"?x?x?"}, kUnknown, kUnknown, MS, 1},
      {"gqa key head mismatch", "GroupQueryAttention", {"1x8x32", "1x8x20", "1x8x20"}, gqa, {"!"}, -1, -1, MS, 1},
      {"gqa heads not grouped", "GroupQueryAttention", {"1x8x24", "1x8x16", "1x8x16"},
       {{"num_heads", heads(3)}, {"kv_num_heads", heads(2)}}, {"!"}, -1, -1, MS, 1},
      // Rotary: 3 per rotated element. Full: 3 * 2*8*64 = 3072.
      {"rotary full", "RotaryEmbedding", {"2x8x64", "2x8:int64", "128x32", "128x32"}, {}, {"2x8x64"}, 0, 3072, MS,
       1},
      // 4-D, rot 32 of head 64: rows 2*4*8 = 64; 64*32*3 = 6144
      {"rotary partial 4d", "RotaryEmbedding", {"2x4x8x64", "2x8:int64", "128x16", "128x16"},
       {{"rotary_embedding_dim", A::i(32)}}, {"2x4x8x64"}, 0, 6144, MS, 1},
      // 3-D, hidden 256 / 4 heads = 64: rows 2*8*4 = 64; 64*32*3 = 6144
      {"rotary partial 3d", "RotaryEmbedding", {"2x8x256", "2x8:int64", "128x16", "128x16"}, rot32, {"2x8x256"},
       0, 6144, MS, 1},
      {"rotary symbolic", "RotaryEmbedding", {"Bx8x64", "Bx8:int64", "128x32", "128x32"}, {}, {"Bx8x64"}, 0,
       kUnknown, MS, 1},
      {"rotary unknown rank", "RotaryEmbedding", {"*", "*:int64", "*", "*"}, {}, {"*"}, 0, kUnknown, MS, 1},
      {"rotary cache mismatch", "RotaryEmbedding", {"2x8x64", "2x8:int64", "128x32", "128x16"}, {}, {"!"}, -1, -1,
       MS, 1},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("contrib ops: PackedAttention, PackedMultiHeadAttention, DecoderMaskedMultiHeadAttention") {
  const std::map<std::string, Attribute> h4 = {{"num_heads", heads(4)}};
  // clang-format off
  const std::vector<OpCase> cases = {
      // PackedAttention: T=10 tokens of B=2 sequences padded to S=8; Hin=16, width 48, N=4, head 4.
      // Projection 10*16*48 = 7680; scores over the padded batch 2*4*8*8 = 512, QK and AV 512*4 each -> 11776
      // MACs. FLOPs 23552 + bias 10*48 = 480 + 6*512 = 3072 -> 27104.
      {"packed attention", "PackedAttention", {"10x16", "16x48", "48", "2x8:int32", "3:int32"}, h4, {"10x16"},
       11776, 27104, MS, 1},
      {"packed attention attention_bias", "PackedAttention",
       {"10x16", "16x48", "48", "2x8:int32", "3:int32", "2x4x8x8"}, h4, {"10x16"}, 11776, 27616, MS, 1},  // + 512
      {"packed attention symbolic", "PackedAttention", {"Tx16", "16x48", "48", "Bx8:int32", "?:int32"}, h4,
       {"Tx16"}, kUnknown, kUnknown, MS, 1},
      {"packed attention unknown rank", "PackedAttention", {"*", "16x48", "48", "*", "*"}, h4, {"?x16"}, kUnknown,
       kUnknown, MS, 1},
      {"packed attention batch clash", "PackedAttention", {"10x16", "16x48", "48", "2x8:int32", "4:int32"}, h4,
       {"!"}, -1, -1, MS, 1},
      // PackedMultiHeadAttention: scores 512; MACs 512*4*2 = 4096; FLOPs 8192 + 3072 = 11264; bias 10*48 = 480.
      {"packed mha", "PackedMultiHeadAttention", {"10x16", "10x16", "10x16", "", "2x8:int32", "3:int32"}, h4,
       {"10x16"}, 4096, 11264, MS, 1},
      {"packed mha bias", "PackedMultiHeadAttention", {"10x16", "10x16", "10x16", "48", "2x8:int32", "3:int32"},
       h4, {"10x16"}, 4096, 11744, MS, 1},
      {"packed mha packed qkv", "PackedMultiHeadAttention", {"10x4x3x4", "", "", "", "2x8:int32", "3:int32"}, h4,
       {"10x16"}, 4096, 11264, MS, 1},
      {"packed mha symbolic", "PackedMultiHeadAttention", {"Tx16", "Tx16", "Tx16", "", "Bx8:int32", "?:int32"},
       h4, {"Tx16"}, kUnknown, kUnknown, MS, 1},
      {"packed mha packed qkv not 3", "PackedMultiHeadAttention", {"10x4x2x4", "", "", "", "2x8:int32", "3:int32"},
       h4, {"!"}, -1, -1, MS, 1},
      // DecoderMaskedMultiHeadAttention: B=2, one token, N=4, head 4, past_sequence_length 5 -> T = 6;
      // scores 2*4*6 = 48; MACs 48*4*2 = 384; FLOPs 768 + 6*48 = 1056. Present: the past buffers.
      {"dmmha self", "DecoderMaskedMultiHeadAttention",
       {"2x1x16", "2x1x16", "2x1x16", "", "", "2x4x32x4", "2x4x32x4", "scalar:int32=5"}, h4,
       {"2x1x16", "2x4x32x4", "2x4x32x4", "2x4x1x6"}, 384, 1056, MS, 1},
      // bias on Q, K, V: 2*48 = 96 -> 1152
      {"dmmha bias", "DecoderMaskedMultiHeadAttention",
       {"2x1x16", "2x1x16", "2x1x16", "", "", "2x4x32x4", "2x4x32x4", "scalar:int32=5", "", "", "48"}, h4,
       {"2x1x16"}, 384, 1152, MS, 1},
      {"dmmha past length not known", "DecoderMaskedMultiHeadAttention",
       {"2x1x16", "2x1x16", "2x1x16", "", "", "2x4x32x4", "2x4x32x4", "scalar:int32"}, h4,
       {"2x1x16", "2x4x32x4", "2x4x32x4", "2x4x1x?"}, kUnknown, kUnknown, MS, 1},
      // cross attention over a cache of L=10: scores 2*4*10 = 80; MACs 640; FLOPs 1280 + 480 = 1760
      {"dmmha cross", "DecoderMaskedMultiHeadAttention", {"2x1x16", "2x4x10x4", "2x4x10x4"}, h4,
       {"2x1x16", "-", "-", "2x4x1x10"}, 640, 1760, MS, 1},
      {"dmmha symbolic", "DecoderMaskedMultiHeadAttention", {"Bx1x16", "Bx4xLx4", "Bx4xLx4"}, h4,
       {"Bx1x16", "-", "-", "Bx4x1xL"}, kUnknown, kUnknown, MS, 1},
      {"dmmha unknown rank", "DecoderMaskedMultiHeadAttention", {"*"}, h4, {"?x1x?"}, kUnknown, kUnknown, MS, 1},
      {"dmmha two tokens", "DecoderMaskedMultiHeadAttention", {"2x2x16", "2x1x16", "2x1x16"}, h4, {"!"}, -1, -1,
       MS, 1},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("contrib ops: SparseAttention") {
  // N=2 heads, KVN=1, head 8, blocks of 4, one layout of 3 blocks: rows {0}, {0, 1}, {1, 2} (2 local blocks),
  // in CSR rows [0, 1, 3, 5], cols [0, 0, 1, 1, 2]; past buffers of 12.
  const std::map<std::string, Attribute> sa = {
      {"num_heads", heads(2)}, {"kv_num_heads", heads(1)}, {"sparse_block_size", A::i(4)}};
  std::map<std::string, Attribute> sa_rot = sa;
  sa_rot["do_rotary"] = A::i(1);
  const char* rows = "1x4:int32=0,1,3,5";
  const char* cols = "1x5:int32=0,0,1,1,2";
  const char* past = "1x1x12x8";
  // clang-format off
  const std::vector<OpCase> cases = {
      // Prefill S = T = 10: queries 0-3 (row 0) see block 0: 4*4 = 16; 4-7 (row 1) blocks 0, 1: 4*8 = 32; 8-9
      // (row 2) block 1 and block 2's keys 8-9: 2*(4 + 2) = 12. 60 a head, 120 pairs: MACs 120*8*2 = 1920;
      // FLOPs 3840 + 6*120 = 4560. Present: the buffer, max(12, 10).
      {"sparse prefill", "SparseAttention",
       {"1x10x16", "1x10x8", "1x10x8", past, past, rows, cols, "scalar:int32=10", "1:int32"}, sa,
       {"1x10x16", "1x1x12x8", "1x1x12x8"}, 1920, 4560, MS, 1},
      // rotary on Q and K, rot = 2*2 (cos_cache [16, 2]): 10*(2 + 1)*4*3 = 360 -> 4920
      {"sparse prefill rotary", "SparseAttention",
       {"1x10x16", "1x10x8", "1x10x8", past, past, rows, cols, "scalar:int32=10", "1:int32", "16x2", "16x2"},
       sa_rot, {"1x10x16"}, 1920, 4920, MS, 1},
      // Decode: the token at 10 (row 2) sees block 1 (4 keys) and block 2's keys 8-10 (3): 7 a head, 14 pairs;
      // MACs 14*16 = 224, FLOPs 448 + 84 = 532
      {"sparse decode", "SparseAttention",
       {"1x1x16", "1x1x8", "1x1x8", past, past, rows, cols, "scalar:int32=11", "1:int32"}, sa,
       {"1x1x16", "1x1x12x8", "1x1x12x8"}, 224, 532, MS, 1},
      // packed QKV (2 + 2*1)*8 = 32 wide: as the prefill
      {"sparse packed qkv", "SparseAttention", {"1x10x32", "", "", past, past, rows, cols, "scalar:int32=10",
       "1:int32"}, sa, {"1x10x16", "1x1x12x8"}, 1920, 4560, MS, 1},
      // total_sequence_length not known: as GroupQueryAttention, past 5 + 1 new token, present 6. The token at 5
      // (row 1) sees blocks 0, 1 below 6: 4 + 2 keys, 12 pairs: MACs 192, FLOPs 384 + 72 = 456
      {"sparse decode total not known", "SparseAttention",
       {"1x1x16", "1x1x8", "1x1x8", "1x1x5x8", "1x1x5x8", rows, cols, "scalar:int32", "1:int32"}, sa,
       {"1x1x16", "1x1x6x8", "1x1x6x8"}, 192, 456, MS, 1},
      // layout not known: every causal block, row 2 whole below 10: 16 + 32 + 2*10 = 68 a head, 136 pairs;
      // MACs 136*16 = 2176, FLOPs 4352 + 816 = 5168 (warned as an upper bound)
      {"sparse layout not known", "SparseAttention",
       {"1x10x16", "1x10x8", "1x10x8", past, past, "1x4:int32", "1x5:int32", "scalar:int32=10", "1:int32"}, sa,
       {"1x10x16"}, 2176, 5168, MS, 1},
      {"sparse symbolic", "SparseAttention",
       {"Bx10x16", "Bx10x8", "Bx10x8", "Bx1x12x8", "Bx1x12x8", rows, cols, "scalar:int32=10", "B:int32"}, sa,
       {"Bx10x16", "Bx1x12x8"}, kUnknown, kUnknown, MS, 1},
      {"sparse unknown rank", "SparseAttention", {"*", "*", "*", "*", "*", rows, cols, "scalar:int32", "*:int32"},
       sa, {"?x?x?"}, kUnknown, kUnknown, MS, 1},
      {"sparse total past the layout", "SparseAttention",
       {"1x10x16", "1x10x8", "1x10x8", "1x1x16x8", "1x1x16x8", rows, cols, "scalar:int32=13", "1:int32"}, sa,
       {"!"}, -1, -1, MS, 1},
      {"sparse total below the query", "SparseAttention",
       {"1x10x16", "1x10x8", "1x10x8", past, past, rows, cols, "scalar:int32=5", "1:int32"}, sa, {"!"}, -1, -1, MS,
       1},
      {"sparse heads vs layouts", "SparseAttention",
       {"1x10x16", "1x10x8", "1x10x8", past, past, "3x4:int32", "3x5:int32", "scalar:int32=10", "1:int32"}, sa,
       {"!"}, -1, -1, MS, 1},
      {"sparse column past the layout", "SparseAttention",
       {"1x10x16", "1x10x8", "1x10x8", past, past, rows, "1x5:int32=0,0,1,1,3", "scalar:int32=10", "1:int32"}, sa,
       {"!"}, -1, -1, MS, 1},
      {"sparse no past", "SparseAttention",
       {"1x10x16", "1x10x8", "1x10x8", "", "", rows, cols, "scalar:int32=10", "1:int32"}, sa, {"!"}, -1, -1, MS, 1},
      {"sparse key head mismatch", "SparseAttention",
       {"1x10x16", "1x10x12", "1x10x12", past, past, rows, cols, "scalar:int32=10", "1:int32"}, sa, {"!"}, -1, -1,
       MS, 1},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("contrib ops: fused layer norms") {
  // clang-format off
  const std::vector<OpCase> cases = {
      // 2*8*16 = 256 elements. Skip add 1 + bias 1 + LayerNorm 5 + gamma 1 + beta 1 = 9 -> 2304
      {"skip ln full", "SkipLayerNormalization", {"2x8x16", "2x8x16", "16", "16", "16"}, {},
       {"2x8x16", "2x8x1", "2x8x1", "2x8x16"}, 0, 2304, MS, 1},
      {"skip ln minimal", "SkipLayerNormalization", {"2x8x16", "2x8x16", "16"}, {}, {"2x8x16"}, 0, 1792, MS,
       1},  // 256 * 7
      {"skip ln 2d skip", "SkipLayerNormalization", {"2x8x16", "8x16", "16", "16"}, {}, {"2x8x16"}, 0, 2048, MS,
       1},  // 256 * 8
      {"skip ln symbolic", "SkipLayerNormalization", {"Bx8x16", "Bx8x16", "16"}, {}, {"Bx8x16", "Bx8x1"}, 0,
       kUnknown, MS, 1},
      {"skip ln unknown rank", "SkipLayerNormalization", {"*", "*", "16"}, {}, {"*", "*"}, 0, kUnknown, MS, 1},
      {"skip ln gamma mismatch", "SkipLayerNormalization", {"2x8x16", "2x8x16", "12"}, {}, {"!"}, -1, -1, MS, 1},
      {"skip ln skip mismatch", "SkipLayerNormalization", {"2x8x16", "3x8x16", "16"}, {}, {"!"}, -1, -1, MS, 1},
      // skip 1 + RMSNorm 3 + gamma 1 = 5 -> 1280; + bias 1 -> 1536
      {"skip rms", "SkipSimplifiedLayerNormalization", {"2x8x16", "2x8x16", "16"}, {},
       {"2x8x16", "2x8x1", "2x8x1", "2x8x16"}, 0, 1280, MS, 1},
      {"skip rms bias", "SkipSimplifiedLayerNormalization", {"2x8x16", "2x8x16", "16", "16"}, {}, {"2x8x16"}, 0,
       1536, MS, 1},
      {"skip rms symbolic", "SkipSimplifiedLayerNormalization", {"Bx8x16", "Bx8x16", "16"}, {}, {"Bx8x16"}, 0,
       kUnknown, MS, 1},
      {"skip rms unknown rank", "SkipSimplifiedLayerNormalization", {"*", "*", "16"}, {}, {"*"}, 0, kUnknown, MS,
       1},
      {"skip rms gamma mismatch", "SkipSimplifiedLayerNormalization", {"2x8x16", "2x8x16", "8"}, {}, {"!"}, -1, -1,
       MS, 1},
      // RMSNorm 3 + scale 1 = 4 per element: 1024
      {"rms ms", "SimplifiedLayerNormalization", {"2x8x16", "16"}, {}, {"2x8x16", "2x8x1"}, 0, 1024, MS, 1},
      {"rms default domain", "SimplifiedLayerNormalization", {"2x8x16", "16"}, {}, {"2x8x16", "2x8x1"}, 0, 1024},
      {"rms symbolic", "SimplifiedLayerNormalization", {"Bx8x16", "16"}, {}, {"Bx8x16", "Bx8x1"}, 0, kUnknown, MS,
       1},
      {"rms unknown rank", "SimplifiedLayerNormalization", {"*", "16"}, {}, {"*", "*"}, 0, kUnknown, MS, 1},
      {"rms scale mismatch", "SimplifiedLayerNormalization", {"2x8x16", "12"}, {}, {"!"}, -1, -1, MS, 1},
      {"rms bad axis", "SimplifiedLayerNormalization", {"2x8x16", "16"}, {{"axis", A::i(3)}}, {"!"}, -1, -1, MS, 1},
      // LayerNorm 5 + scale 1 + bias 1 = 7: 1792; without bias 6: 1536
      {"ln ms", "LayerNormalization", {"2x8x16", "16", "16"}, {}, {"2x8x16", "2x8x1", "2x8x1"}, 0, 1792, MS, 1},
      {"ln ms axis 1", "LayerNormalization", {"2x8x16", "8x16", "8x16"}, {{"axis", A::i(1)}},
       {"2x8x16", "2x1x1", "2x1x1"}, 0, 1792, MS, 1},
      {"ln ms no bias", "LayerNormalization", {"2x8x16", "16"}, {}, {"2x8x16"}, 0, 1536, MS, 1},
      {"ln ms symbolic", "LayerNormalization", {"Bx8x16", "16", "16"}, {}, {"Bx8x16", "Bx8x1"}, 0, kUnknown, MS,
       1},
      {"ln ms unknown rank", "LayerNormalization", {"*", "16", "16"}, {}, {"*"}, 0, kUnknown, MS, 1},
      {"ln ms scale mismatch", "LayerNormalization", {"2x8x16", "12", "16"}, {}, {"!"}, -1, -1, MS, 1},
      // Embed: 2*8*16 = 256 outputs * (2 adds + LayerNorm 5 + affine 2) = 2304, + mask 2*8 = 16 -> 2320
      {"embed ln full", "EmbedLayerNormalization",
       {"2x8:int32", "2x8:int32", "100x16", "64x16", "2x16", "16", "16", "2x8:int32"}, {}, {"2x8x16", "2"}, 0,
       2320, MS, 1},
      {"embed ln no segment", "EmbedLayerNormalization", {"2x8:int32", "", "100x16", "64x16", "", "16", "16"}, {},
       {"2x8x16"}, 0, 2048, MS, 1},  // 256 * 8
      {"embed ln symbolic", "EmbedLayerNormalization", {"Bx8:int32", "", "100x16", "64x16", "", "16", "16"}, {},
       {"Bx8x16", "B"}, 0, kUnknown, MS, 1},
      {"embed ln unknown rank", "EmbedLayerNormalization", {"*:int32", "", "100x16", "64x16", "", "16", "16"}, {},
       {"?x?x16", "?"}, 0, kUnknown, MS, 1},
      {"embed ln gamma mismatch", "EmbedLayerNormalization", {"2x8:int32", "", "100x16", "64x16", "", "12", "16"},
       {}, {"!"}, -1, -1, MS, 1},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
  auto e =
      run_op("EmbedLayerNormalization", {"2x8:int32", "", "100x16", "64x16", "", "16", "16"}, {}, 3, MS, 1);
  CHECK(e.out(0).dtype == DType::Float32);
  CHECK(e.out(1).dtype == DType::Int32);
  CHECK(e.out(2).shape.str() == "2x8x16");
}

TEST_CASE("contrib ops: FusedMatMul and fused activations") {
  // clang-format off
  const std::vector<OpCase> cases = {
      {"fusedmatmul batched", "FusedMatMul", {"2x3x4", "2x4x5"}, {}, {"2x3x5"}, 120, 240, MS, 1},  // 2*3*5*4
      // transB: 3x4 @ (5x4)^T = 3x5, MACs 3*5*4 = 60; alpha 0.5 scales 15 outputs: 120 + 15
      {"fusedmatmul transB alpha", "FusedMatMul", {"3x4", "5x4"}, {{"transB", A::i(1)}, {"alpha", A::f(0.5)}},
       {"3x5"}, 60, 135, MS, 1},
      {"fusedmatmul transA", "FusedMatMul", {"4x3", "4x5"}, {{"transA", A::i(1)}}, {"3x5"}, 60, 120, MS, 1},
      // transBatchA: A [3, 2, 4] read as [2, 3, 4]
      {"fusedmatmul transBatchA", "FusedMatMul", {"3x2x4", "2x4x5"}, {{"transBatchA", A::i(1)}}, {"2x3x5"}, 120,
       240, MS, 1},
      // transBatchB: B [4, 2, 5] read as [2, 4, 5]
      {"fusedmatmul transBatchB", "FusedMatMul", {"2x3x4", "4x2x5"}, {{"transBatchB", A::i(1)}}, {"2x3x5"}, 120,
       240, MS, 1},
      {"fusedmatmul symbolic", "FusedMatMul", {"Bx3x4", "4x5"}, {}, {"Bx3x5"}, kUnknown, kUnknown, MS, 1},
      {"fusedmatmul unknown rank", "FusedMatMul", {"*", "4x5"}, {}, {"*"}, kUnknown, kUnknown, MS, 1},
      {"fusedmatmul inner mismatch", "FusedMatMul", {"3x4", "5x6"}, {}, {"!"}, -1, -1, MS, 1},
      // 16 elements each
      {"gelu", "Gelu", {"2x8"}, {}, {"2x8"}, 0, 80, MS, 1},                      // 5 * 16
      {"gelu symbolic", "Gelu", {"Bx8"}, {}, {"Bx8"}, 0, kUnknown, MS, 1},
      {"gelu unknown rank", "Gelu", {"*"}, {}, {"*"}, 0, kUnknown, MS, 1},
      {"biasgelu", "BiasGelu", {"2x8", "8"}, {}, {"2x8"}, 0, 96, MS, 1},         // 6 * 16
      {"biasgelu symbolic", "BiasGelu", {"Bx8", "8"}, {}, {"Bx8"}, 0, kUnknown, MS, 1},
      {"biasgelu unknown rank", "BiasGelu", {"*", "8"}, {}, {"*"}, 0, kUnknown, MS, 1},
      {"biasgelu bias mismatch", "BiasGelu", {"2x8", "6"}, {}, {"!"}, -1, -1, MS, 1},
      {"fastgelu", "FastGelu", {"2x8"}, {}, {"2x8"}, 0, 128, MS, 1},             // 8 * 16
      {"fastgelu bias", "FastGelu", {"2x8", "8"}, {}, {"2x8"}, 0, 144, MS, 1},   // 9 * 16
      {"fastgelu symbolic", "FastGelu", {"Bx8"}, {}, {"Bx8"}, 0, kUnknown, MS, 1},
      {"fastgelu unknown rank", "FastGelu", {"*"}, {}, {"*"}, 0, kUnknown, MS, 1},
      {"fastgelu bias mismatch", "FastGelu", {"2x8", "4"}, {}, {"!"}, -1, -1, MS, 1},
      {"quickgelu", "QuickGelu", {"2x8"}, {}, {"2x8"}, 0, 48, MS, 1},            // 3 * 16
      {"quickgelu symbolic", "QuickGelu", {"Bx8"}, {}, {"Bx8"}, 0, kUnknown, MS, 1},
      {"quickgelu unknown rank", "QuickGelu", {"*"}, {}, {"*"}, 0, kUnknown, MS, 1},
      {"biasadd", "BiasAdd", {"2x4x8", "8", "2x4x8"}, {}, {"2x4x8"}, 0, 128, MS, 1},  // 2 * 64
      {"biasadd symbolic", "BiasAdd", {"Nx4x8", "8", "Nx4x8"}, {}, {"Nx4x8"}, 0, kUnknown, MS, 1},
      {"biasadd unknown rank", "BiasAdd", {"*", "8", "*"}, {}, {"*"}, 0, kUnknown, MS, 1},
      {"biasadd skip mismatch", "BiasAdd", {"2x4x8", "8", "2x5x8"}, {}, {"!"}, -1, -1, MS, 1},
      {"biassoftmax", "BiasSoftmax", {"2x4x8x8", "2x1x8x8"}, {{"is_inner_broadcast", A::i(0)}}, {"2x4x8x8"}, 0,
       3072, MS, 1},  // 6 * 512
      {"biassoftmax symbolic", "BiasSoftmax", {"Bx4x8x8", "Bx1x8x8"}, {}, {"Bx4x8x8"}, 0, kUnknown, MS, 1},
      {"biassoftmax unknown rank", "BiasSoftmax", {"*", "2x1x8x8"}, {}, {"*"}, 0, kUnknown, MS, 1},
      {"biassoftmax bias mismatch", "BiasSoftmax", {"2x4x8x8", "3x1x8x8"}, {}, {"!"}, -1, -1, MS, 1},
  };
  // clang-format on
  for (const auto& tc : cases) check_case(tc);
}
