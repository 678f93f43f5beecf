// shape_inference/ops/contrib.cc — contrib family: ONNX Runtime's "com.microsoft" ops found in optimised
// transformer graphs (fused attention: packed, decoder-masked and grouped-query too; fused layer norms, fused
// GELUs, FusedMatMul, rotary embedding).
// Attention counts its two products (QK^T and AV) as MACs, plus the QKV projection where the op
// owns the weights; FLOPs = 2*MACs + per score 6 (softmax 5 + scale 1) + bias/additive-mask adds.
// Masked (causal or padded) scores are counted densely: the kernels compute them.
#include <string>

#include "contrib_view.h"

namespace flopwise {

namespace {

using contrib::count_of;
using contrib::kMS;
using contrib::OpView;
using contrib::view;

// ---- Attention (merged QKV projection inside the op) ---------------------------------------------
// Q and V widths of a merged projection `width` wide: qkv_hidden_sizes, else three equal parts.
void split_qkv(const OpView& v, Dim& width, Dim& q_hidden, Dim& v_hidden) {
  std::vector<int64_t> qkv = v.node.attr_ints("qkv_hidden_sizes");
  if (qkv.empty()) {
    q_hidden = v_hidden = v.divide(width, Dim(3), "Q+K+V width split in 3");
    return;
  }
  v.check(qkv.size() == 3, "qkv_hidden_sizes must have 3 elements, got " + std::to_string(qkv.size()));
  if (qkv.size() != 3) return;
  q_hidden = Dim(qkv[0]);
  v_hidden = Dim(qkv[2]);
  width = v.unify(width, Dim(qkv[0] + qkv[1] + qkv[2]), "Q+K+V width (weights vs qkv_hidden_sizes)");
}

// input [B, S, Hin], weights [Hin, Hq+Hk+Hv], bias [Hq+Hk+Hv], mask_index, past [2, B, N, P, head],
// attention_bias [B|1, N|1, S, T], past_sequence_length -> output [B, S, Hv], present [2, B, N, T, head].
struct AttentionDims {
  Dim batch, seq, in_hidden, width, q_hidden, v_hidden, heads, head, v_head, past, total;
  bool shared_buffer = false;
};

AttentionDims decode_attention(const OpView& v) {
  AttentionDims d;
  int64_t n = v.node.attr_i("num_heads", 0);
  v.check(n > 0, "num_heads attribute must be positive, got " + std::to_string(n));
  d.heads = n > 0 ? Dim(n) : Dim::unknown();
  v.check_rank(0, {3}, "input");
  v.check_rank(1, {2}, "weights");
  v.check_rank(2, {1}, "bias");
  d.batch = v.dim(0, 0);
  d.seq = v.dim(0, 1);
  d.in_hidden = v.unify(v.dim(0, 2), v.dim(1, 0), "input hidden size (input vs weights)");
  d.width = v.unify(v.dim(1, 1), v.dim(2, 0), "Q+K+V width (weights vs bias)");
  split_qkv(v, d.width, d.q_hidden, d.v_hidden);
  d.head = v.divide(d.q_hidden, d.heads, "hidden size per head");
  d.v_head = v.divide(d.v_hidden, d.heads, "value hidden size per head");
  d.shared_buffer = v.node.attr_i("past_present_share_buffer", 0) != 0;
  if (v.has(4)) {
    v.check_rank(4, {5}, "past");
    v.check_dim(4, 0, 2, "past's first dim (key, value)");
    d.batch = v.unify(d.batch, v.dim(4, 1), "batch (input vs past)");
    v.unify(d.heads, v.dim(4, 2), "num_heads (attribute vs past)");
    d.head = v.unify(d.head, v.dim(4, 4), "head size (weights vs past)");
    d.past = v.dim(4, 3);
  } else {
    d.past = Dim(0);
  }
  if (d.shared_buffer && v.has(4)) {
    // past holds max_sequence_length; the attended length is past_sequence_length + S.
    auto p = v.scalar_int(6);
    d.total = p ? Dim(*p) + d.seq : Dim::unknown();
  } else {
    d.total = d.past + d.seq;
  }
  return d;
}

void infer_attention(InferContext& c) {
  OpView v = view(c);
  AttentionDims d = decode_attention(v);
  DType t = c.in_dtype(0);
  c.set_output(0, t, Shape({d.batch, d.seq, d.v_hidden}));
  if (d.shared_buffer && v.has(4))
    c.set_output(1, t, v.shape(4));
  else
    c.set_output(1, t, Shape({Dim(2), d.batch, d.heads, d.total, d.head}));
}

OpCost cost_attention(const CostContext& c) {
  OpView v = view(c);
  AttentionDims d = decode_attention(v);
  Count proj = count_of({d.batch, d.seq, d.in_hidden, d.width});
  Count scores = count_of({d.batch, d.heads, d.seq, d.total});
  Count macs = proj + scores * Count::of(d.head) + scores * Count::of(d.v_head);
  Count extra = scores * Count{6};
  if (v.has(2)) extra += count_of({d.batch, d.seq, d.width});
  if (v.has(5)) extra += scores;
  return cost_contraction(macs, extra);
}

// ---- MultiHeadAttention (Q, K, V already projected) -----------------------------------------------
// query [B, S, Hq] or packed QKV [B, S, N, 3, head]; key [B, L, Hq], packed KV [B, L, N, 2, head] or
// BNSH [B, N, L, head]; value [B, L, Hv] or [B, N, L, v_head]; bias [Hq+Hq+Hv]; key_padding_mask;
// attention_bias; past_key/past_value [B, N, P, head].
// -> output [B, S, Hv], present_key [B, N, T, head], present_value [B, N, T, v_head], qk [B, N, S, T].
struct MhaDims {
  Dim batch, seq, kv_seq, heads, q_hidden, v_hidden, head, v_head, total;
};

MhaDims decode_mha(const OpView& v) {
  MhaDims d;
  int64_t n = v.node.attr_i("num_heads", 0);
  v.check(n > 0, "num_heads attribute must be positive, got " + std::to_string(n));
  d.heads = n > 0 ? Dim(n) : Dim::unknown();
  v.check_rank(0, {3, 5}, "query");
  d.batch = v.dim(0, 0);
  d.seq = v.dim(0, 1);
  bool packed_qkv = v.ranked(0) && v.rank(0) == 5;
  bool key_bnsh = false;
  if (packed_qkv) {
    v.unify(d.heads, v.dim(0, 2), "num_heads (attribute vs packed QKV)");
    v.check_dim(0, 3, 3, "packed QKV's fourth dim (q, k, v)");
    d.head = d.v_head = v.dim(0, 4);
    d.q_hidden = d.v_hidden = d.heads * d.head;
    d.kv_seq = d.seq;
  } else {
    d.q_hidden = v.dim(0, 2);
    d.head = v.divide(d.q_hidden, d.heads, "query hidden size per head");
    d.kv_seq = d.seq;  // no key: self attention on the query
    d.v_hidden = d.q_hidden;
    if (v.has(1)) {
      v.check_rank(1, {3, 4, 5}, "key");
      d.batch = v.unify(d.batch, v.dim(1, 0), "batch (query vs key)");
      size_t kr = v.ranked(1) ? v.rank(1) : 0;
      if (kr == 3) {
        d.kv_seq = v.dim(1, 1);
        v.unify(d.q_hidden, v.dim(1, 2), "hidden size (query vs key)");
        if (v.has(2)) {
          v.check_rank(2, {3}, "value");
          d.kv_seq = v.unify(d.kv_seq, v.dim(2, 1), "kv sequence length (key vs value)");
          d.v_hidden = v.dim(2, 2);
        }
      } else if (kr == 5) {  // packed KV
        d.kv_seq = v.dim(1, 1);
        v.unify(d.heads, v.dim(1, 2), "num_heads (attribute vs packed KV)");
        v.check_dim(1, 3, 2, "packed KV's fourth dim (k, v)");
        d.head = v.unify(d.head, v.dim(1, 4), "head size (query vs packed KV)");
        d.v_hidden = d.q_hidden;
      } else if (kr == 4) {  // key/value already in BNSH (cross-attention cache)
        key_bnsh = true;
        v.unify(d.heads, v.dim(1, 1), "num_heads (attribute vs key)");
        d.kv_seq = v.dim(1, 2);
        d.head = v.unify(d.head, v.dim(1, 3), "head size (query vs key)");
        if (v.has(2)) {
          v.check_rank(2, {4}, "value");
          d.kv_seq = v.unify(d.kv_seq, v.dim(2, 2), "kv sequence length (key vs value)");
          d.v_hidden = d.heads * v.dim(2, 3);
        }
      } else {
        d.kv_seq = Dim::unknown();
        d.v_hidden = Dim::unknown();
      }
    }
    d.v_head = v.divide(d.v_hidden, d.heads, "value hidden size per head");
  }
  Dim past(0);
  if (v.has(6) && !key_bnsh) {
    v.check_rank(6, {4}, "past_key");
    d.batch = v.unify(d.batch, v.dim(6, 0), "batch (query vs past_key)");
    d.head = v.unify(d.head, v.dim(6, 3), "head size (query vs past_key)");
    past = v.dim(6, 2);
  }
  d.total = past + d.kv_seq;
  return d;
}

void infer_mha(InferContext& c) {
  MhaDims d = decode_mha(view(c));
  DType t = c.in_dtype(0);
  c.set_output(0, t, Shape({d.batch, d.seq, d.v_hidden}));
  c.set_output(1, t, Shape({d.batch, d.heads, d.total, d.head}));
  c.set_output(2, t, Shape({d.batch, d.heads, d.total, d.v_head}));
  c.set_output(3, t, Shape({d.batch, d.heads, d.seq, d.total}));
}

OpCost cost_mha(const CostContext& c) {
  OpView v = view(c);
  MhaDims d = decode_mha(v);
  Count scores = count_of({d.batch, d.heads, d.seq, d.total});
  Count macs = scores * Count::of(d.head) + scores * Count::of(d.v_head);
  Count extra = scores * Count{6};
  if (v.has(3))  // projection bias added to Q (S tokens) and K, V (L tokens)
    extra += count_of({d.batch, d.seq, d.q_hidden}) + count_of({d.batch, d.kv_seq, d.q_hidden + d.v_hidden});
  if (v.has(5)) extra += scores;
  return cost_contraction(macs, extra);
}

// ---- GroupQueryAttention ----------------------------------------------------------------------------
// query [B, S, N*head] or packed [B, S, (N + 2*KVN)*head]; key/value [B, L, KVN*head];
// past_key/past_value [B, KVN, P, head]; seqlens_k [B]; total_sequence_length (scalar);
// cos_cache/sin_cache [max_seq, rot/2] -> output [B, S, N*head], present [B, KVN, T', head], qk [B, N, S, T].
struct GqaDims {
  Dim batch, seq, kv_seq, heads, kv_heads, head, total, present;
};

GqaDims decode_gqa(const OpView& v) {
  GqaDims d;
  int64_t n = v.node.attr_i("num_heads", 0), kvn = v.node.attr_i("kv_num_heads", 0);
  v.check(n > 0 && kvn > 0, "num_heads and kv_num_heads must be positive, got " + std::to_string(n) +
                                " and " + std::to_string(kvn));
  v.check(kvn <= 0 || n % kvn == 0,
          "num_heads " + std::to_string(n) + " is not a multiple of kv_num_heads " + std::to_string(kvn));
  d.heads = n > 0 ? Dim(n) : Dim::unknown();
  d.kv_heads = kvn > 0 ? Dim(kvn) : Dim::unknown();
  v.check_rank(0, {3}, "query");
  d.batch = v.dim(0, 0);
  d.seq = v.dim(0, 1);
  if (v.has(1)) {
    v.check_rank(1, {3}, "key");
    d.head = v.divide(v.dim(0, 2), d.heads, "query hidden size per head");
    d.kv_seq = v.dim(1, 1);
    d.head = v.unify(d.head, v.divide(v.dim(1, 2), d.kv_heads, "key hidden size per kv head"),
                     "head size (query vs key)");
  } else {
    d.head = v.divide(v.dim(0, 2), d.heads + d.kv_heads * Dim(2), "packed QKV width per head");
    d.kv_seq = d.seq;
  }
  Dim past;
  bool has_past = v.has(3);
  if (has_past) {
    v.check_rank(3, {4}, "past_key");
    d.batch = v.unify(d.batch, v.dim(3, 0), "batch (query vs past_key)");
    v.unify(d.kv_heads, v.dim(3, 1), "kv_num_heads (attribute vs past_key)");
    d.head = v.unify(d.head, v.dim(3, 3), "head size (query vs past_key)");
    past = v.dim(3, 2);
  }
  auto total = v.scalar_int(6);
  // Attended length: total_sequence_length when known. GenAI computes it from the attention mask, so
  // mostly it is not: then it is the past and the new tokens, as a cache that is no shared buffer holds
  // them (a shared buffer's past is its capacity, and its total a constant or a --value).
  d.total = total ? Dim(*total) : has_past ? past + d.kv_seq : d.kv_seq;
  // Present buffer: max(past buffer, total), ONNX Runtime's rule.
  d.present = has_past && total ? Dim::max(past, Dim(*total)) : d.total;
  return d;
}

void infer_gqa(InferContext& c) {
  GqaDims d = decode_gqa(view(c));
  DType t = c.in_dtype(0);
  DType cache_t = c.has_input(3) && c.in_dtype(3) != DType::Undefined ? c.in_dtype(3) : t;
  c.set_output(0, t, Shape({d.batch, d.seq, d.heads * d.head}));
  c.set_output(1, cache_t, Shape({d.batch, d.kv_heads, d.present, d.head}));
  c.set_output(2, cache_t, Shape({d.batch, d.kv_heads, d.present, d.head}));
  c.set_output(3, t, Shape({d.batch, d.heads, d.seq, d.total}));
}

OpCost cost_gqa(const CostContext& c) {
  OpView v = view(c);
  GqaDims d = decode_gqa(v);
  Count scores = count_of({d.batch, d.heads, d.seq, d.total});
  Count macs = scores * Count::of(d.head) * Count{2};
  Count extra = scores * Count{6};
  if (v.node.attr_i("do_rotary", 0) != 0)  // rotary on new Q and K: 3 per element
    extra += count_of({d.batch, d.seq, d.heads + d.kv_heads, d.head}) * Count{3};
  if (v.has(11)) extra += scores;  // attention_bias
  return cost_contraction(macs, extra);
}

// ---- PackedAttention, PackedMultiHeadAttention (padding removed) -----------------------------------------
// The tokens of all sequences in one dim T; token_offset [B, S] and cumulative_sequence_length [B + 1]
// describe the packing. Each sequence attends over its own length (cumulative_sequence_length's contents,
// data): the products are counted over the padded B*S*S, an upper bound, as masked scores are elsewhere.
struct PackedDims {
  Dim tokens, in_hidden, width, q_hidden, v_hidden, heads, head, v_head, batch, seq;
};

Dim heads_attr(const OpView& v) {
  const int64_t n = v.node.attr_i("num_heads", 0);
  v.check(n > 0, "num_heads attribute must be positive, got " + std::to_string(n));
  return n > 0 ? Dim(n) : Dim::unknown();
}

// The packing inputs (token_offset at `offsets`, cumulative_sequence_length after it), then the head sizes.
void decode_packing(const OpView& v, size_t offsets, PackedDims& d) {
  v.check_rank(offsets, {2}, "token_offset");
  v.check_rank(offsets + 1, {1}, "cumulative_sequence_length");
  d.batch = v.dim(offsets, 0);
  d.seq = v.dim(offsets, 1);
  const Dim cum = v.dim(offsets + 1, 0);
  if (cum.is_known())
    d.batch = v.unify(d.batch, Dim(cum.value() - 1), "batch (token_offset vs cumulative lengths - 1)");
  d.head = v.divide(d.q_hidden, d.heads, "hidden size per head");
  d.v_head = v.divide(d.v_hidden, d.heads, "value hidden size per head");
}

// input [T, Hin], weights [Hin, Hq+Hk+Hv], bias, token_offset, cumulative_sequence_length, attention_bias
// [B|1, N|1, S, S] -> output [T, Hv].
PackedDims decode_packed_attention(const OpView& v) {
  PackedDims d;
  d.heads = heads_attr(v);
  v.check_rank(0, {2}, "input");
  v.check_rank(1, {2}, "weights");
  v.check_rank(2, {1}, "bias");
  d.tokens = v.dim(0, 0);
  d.in_hidden = v.unify(v.dim(0, 1), v.dim(1, 0), "input hidden size (input vs weights)");
  d.width = v.unify(v.dim(1, 1), v.dim(2, 0), "Q+K+V width (weights vs bias)");
  split_qkv(v, d.width, d.q_hidden, d.v_hidden);
  decode_packing(v, 3, d);
  return d;
}

void infer_packed_attention(InferContext& c) {
  const PackedDims d = decode_packed_attention(view(c));
  c.set_output(0, c.in_dtype(0), Shape({d.tokens, d.v_hidden}));
}

OpCost packed_attention_cost(const OpView& v, const PackedDims& d, Count macs, Count extra,
                             size_t bias_input) {
  const Count scores = count_of({d.batch, d.heads, d.seq, d.seq});
  macs += scores * Count::of(d.head) + scores * Count::of(d.v_head);
  extra += scores * Count{6};
  if (v.has(bias_input)) extra += scores;  // attention_bias
  return cost_contraction(macs, extra);
}

OpCost cost_packed_attention(const CostContext& c) {
  const OpView v = view(c);
  const PackedDims d = decode_packed_attention(v);
  const Count proj = count_of({d.tokens, d.in_hidden, d.width});
  const Count bias = v.has(2) ? count_of({d.tokens, d.width}) : Count{};
  return packed_attention_cost(v, d, proj, bias, 5);
}

// query [T, Hq] or packed QKV [T, N, 3, head]; key [T, Hq]; value [T, Hv]; bias [Hq+Hq+Hv]; token_offset;
// cumulative_sequence_length; attention_bias -> output [T, Hv].
PackedDims decode_packed_mha(const OpView& v) {
  PackedDims d;
  d.heads = heads_attr(v);
  v.check_rank(0, {2, 4}, "query");
  d.tokens = v.dim(0, 0);
  if (v.ranked(0) && v.rank(0) == 4) {
    v.unify(d.heads, v.dim(0, 1), "num_heads (attribute vs packed QKV)");
    v.check_dim(0, 2, 3, "packed QKV's third dim (q, k, v)");
    d.q_hidden = d.v_hidden = d.heads * v.dim(0, 3);
  } else {
    d.q_hidden = d.v_hidden = v.dim(0, 1);
    if (v.has(1)) {
      v.check_rank(1, {2}, "key");
      d.q_hidden = v.unify(d.q_hidden, v.dim(1, 1), "hidden size (query vs key)");
    }
    if (v.has(2)) {
      v.check_rank(2, {2}, "value");
      d.v_hidden = v.dim(2, 1);
    }
  }
  decode_packing(v, 4, d);
  return d;
}

void infer_packed_mha(InferContext& c) {
  const PackedDims d = decode_packed_mha(view(c));
  c.set_output(0, c.in_dtype(0), Shape({d.tokens, d.v_hidden}));
}

OpCost cost_packed_mha(const CostContext& c) {
  const OpView v = view(c);
  const PackedDims d = decode_packed_mha(v);
  const Count bias = v.has(3) ? count_of({d.tokens, d.q_hidden * Dim(2) + d.v_hidden}) : Count{};
  return packed_attention_cost(v, d, Count{}, bias, 6);
}

// ---- DecoderMaskedMultiHeadAttention (one new token per sequence, a shared KV buffer) ---------------------
// query [B, 1, Hq] (packed QKV [B, 1, 3*Hq] without key); key/value [B, 1, H] (self attention) or
// [B, N, L, head] (a cross-attention cache); mask_index; attention_bias; past_key/past_value
// [B, N, max_seq, head]; past_sequence_length (scalar); beam_width; cache_indirection; bias
// -> output [B, 1, Hv], present_key/present_value (the past buffers), qk [B, N, 1, T].
// Self attention covers T = past_sequence_length + 1 tokens: known when that input is (a --value), else the
// counts are unknown (the buffer's max_seq is its capacity, not the past).
struct DmmhaDims {
  Dim batch, heads, q_hidden, v_hidden, head, v_head, total;
};

DmmhaDims decode_dmmha(const OpView& v) {
  DmmhaDims d;
  d.heads = heads_attr(v);
  v.check_rank(0, {3}, "query");
  v.check_dim(0, 1, 1, "query's sequence length");
  d.batch = v.dim(0, 0);
  const bool cross = v.has(1) && v.ranked(1) && v.rank(1) == 4;
  d.q_hidden = v.has(1) ? v.dim(0, 2) : v.divide(v.dim(0, 2), Dim(3), "packed QKV width split in 3");
  d.head = v.divide(d.q_hidden, d.heads, "query hidden size per head");
  d.v_hidden = v.has(2) && v.ranked(2) && v.rank(2) == 3 ? v.dim(2, 2) : d.q_hidden;
  if (cross) {
    v.unify(d.heads, v.dim(1, 1), "num_heads (attribute vs key)");
    d.head = v.unify(d.head, v.dim(1, 3), "head size (query vs key)");
    d.total = v.dim(1, 2);
    if (v.has(2) && v.ranked(2) && v.rank(2) == 4) d.v_hidden = d.heads * v.dim(2, 3);
  } else {
    if (v.has(5)) {
      v.check_rank(5, {4}, "past_key");
      d.batch = v.unify(d.batch, v.dim(5, 0), "batch (query vs past_key)");
      d.head = v.unify(d.head, v.dim(5, 3), "head size (query vs past_key)");
    }
    const auto past = v.scalar_int(7);
    d.total = past ? Dim(*past + 1) : Dim::unknown();
  }
  d.v_head = v.divide(d.v_hidden, d.heads, "value hidden size per head");
  return d;
}

void infer_dmmha(InferContext& c) {
  const OpView v = view(c);
  const DmmhaDims d = decode_dmmha(v);
  const DType t = c.in_dtype(0);
  c.set_output(0, t, Shape({d.batch, Dim(1), d.v_hidden}));
  if (v.has(5)) c.set_output(1, c.in_dtype(5), v.shape(5));
  if (v.has(6)) c.set_output(2, c.in_dtype(6), v.shape(6));
  c.set_output(3, t, Shape({d.batch, d.heads, Dim(1), d.total}));
}

// Per new token: QK^T and AV over T keys; 6 per score; the bias on Q, K, V; attention_bias per score.
OpCost cost_dmmha(const CostContext& c) {
  const OpView v = view(c);
  const DmmhaDims d = decode_dmmha(v);
  const Count scores = count_of({d.batch, d.heads, d.total});
  const Count macs = scores * Count::of(d.head) + scores * Count::of(d.v_head);
  Count extra = scores * Count{6};
  if (v.has(10)) extra += count_of({d.batch, d.q_hidden * Dim(2) + d.v_hidden});
  if (v.has(4)) extra += scores;
  return cost_contraction(macs, extra);
}

// ---- RotaryEmbedding ----------------------------------------------------------------------------------
// input [B, S, hidden] or [B, N, S, head]; output same. Each rotated element: 2 mul + 1 add.
void infer_rotary(InferContext& c) {
  OpView v = view(c);
  v.check_rank(0, {3, 4}, "input");
  v.check_rank(2, {2}, "cos_cache");
  v.check_rank(3, {2}, "sin_cache");
  v.unify(v.dim(2, 1), v.dim(3, 1), "rotary half dim (cos_cache vs sin_cache)");
  infer_same_as_input0(c);
}

OpCost cost_rotary(const CostContext& c) {
  OpView v = view(c);
  int64_t rot = v.node.attr_i("rotary_embedding_dim", 0);
  Count numel = c.in_numel(0);
  if (rot <= 0) return OpCost{Count{}, numel * Count{3}};
  // Partial rotation: rotated = (numel / head) * rot.
  Dim head;
  if (v.ranked(0) && v.rank(0) == 4) {
    head = v.dim(0, 3);
  } else {
    int64_t n = v.node.attr_i("num_heads", 0);
    head = n > 0 ? v.dim(0, 2) / Dim(n) : Dim::unknown();
  }
  Dim rows = v.shape(0).rank_known ? v.shape(0).numel() / head : Dim::unknown();
  return OpCost{Count{}, count_of({rows, Dim(rot)}) * Count{3}};
}

// ---- layer norms ---------------------------------------------------------------------------------------
// Statistics shape: X's dims before `axis`, then 1s (ONNX LayerNormalization-17).
Shape stats_shape(const Shape& x, int64_t axis) {
  if (!x.rank_known) return Shape::unknown_rank();
  std::vector<Dim> out = x.dims;
  for (size_t i = static_cast<size_t>(axis); i < out.size(); ++i) out[i] = Dim(1);
  return Shape(out);
}

DType stash_dtype(const Node& n) {
  int64_t s = n.attr_i("stash_type", 1);
  return s > 0 ? static_cast<DType>(s) : DType::Float32;
}

// X [..., normalized...], scale and bias broadcast to the normalized dims.
void infer_layer_norm_common(InferContext& c, size_t first_stat_output) {
  const Shape& x = c.in_shape(0);
  c.set_output(0, c.in_dtype(0), x);
  if (!x.rank_known) {
    for (size_t o = first_stat_output; o < c.num_outputs(); ++o) c.set_output_dtype(o, stash_dtype(c.node()));
    return;
  }
  int64_t axis = normalize_axis(c, c.node().attr_i("axis", -1), static_cast<int64_t>(x.rank()));
  OpView v = view(c);
  for (size_t i = 1; i <= 2; ++i) {  // scale, bias: trailing dims must match X's
    if (!v.ranked(i)) continue;
    const Shape& p = v.shape(i);
    v.check(p.rank() <= x.rank(),
            "parameter " + std::to_string(i) + " shape " + p.str() + " has higher rank than X " + x.str());
    for (size_t k = 0; k < p.rank() && k < x.rank(); ++k) {
      const Dim& pd = p.dims[p.rank() - 1 - k];
      if (pd.is_known() && pd.value() == 1) continue;
      v.unify(pd, x.dims[x.rank() - 1 - k], "normalized dim (parameter vs X)");
    }
  }
  for (size_t o = first_stat_output; o < c.num_outputs(); ++o)
    c.set_output(o, stash_dtype(c.node()), stats_shape(x, axis));
}

void infer_ms_layer_norm(InferContext& c) { infer_layer_norm_common(c, 1); }

// LayerNorm 5 per element, + 1 for the scale, + 1 for the bias when present.
OpCost cost_ms_layer_norm(const CostContext& c) { return cost_per_out_elem(c, 6 + (c.has_input(2) ? 1 : 0)); }

// RMSNorm: square, sum, normalising multiply = 3 per element (LayerNorm's 5 without mean and
// subtract), + 1 for the scale.
OpCost cost_simplified_layer_norm(const CostContext& c) { return cost_per_out_elem(c, 4); }

// input [..., H], skip (broadcastable to input: [B, S, H], [1, S, H] or [S, H]), gamma [H],
// beta [H], bias [H] -> output, mean, inv_std_var ([..., 1] float), input_skip_bias_sum.
void infer_skip_norm(InferContext& c, bool simplified) {
  OpView v = view(c);
  const Shape& x = c.in_shape(0);
  DType t = c.in_dtype(0);
  v.check_rank(0, {2, 3}, "input");
  if (x.rank_known && v.ranked(1)) broadcast_shapes(c, {x, v.shape(1)});
  Dim hidden = v.dim(0, -1);
  hidden = v.unify(hidden, v.dim(1, -1), "hidden size (input vs skip)");
  std::vector<size_t> params = simplified ? std::vector<size_t>{2, 3} : std::vector<size_t>{2, 3, 4};
  for (size_t i : params) {
    if (!v.has(i)) continue;
    v.check_rank(i, {1}, "gamma/beta/bias");
    hidden = v.unify(hidden, v.dim(i, 0), "hidden size (input vs gamma/beta/bias)");
  }
  c.set_output(0, t, x);
  Shape stats = x.rank_known ? stats_shape(x, static_cast<int64_t>(x.rank()) - 1) : Shape::unknown_rank();
  c.set_output(1, DType::Float32, stats);
  c.set_output(2, DType::Float32, stats);
  c.set_output(3, t, x);
}

void infer_skip_layer_norm(InferContext& c) { infer_skip_norm(c, false); }
void infer_skip_simplified_layer_norm(InferContext& c) { infer_skip_norm(c, true); }

// skip add 1 + bias add 1 (when given) + LayerNorm 5 + gamma 1 + beta 1 (when given).
OpCost cost_skip_layer_norm(const CostContext& c) {
  return cost_per_out_elem(c, 7 + (c.has_input(3) ? 1 : 0) + (c.has_input(4) ? 1 : 0));
}

// skip add 1 + bias add 1 (when given) + RMSNorm 3 + gamma 1.
OpCost cost_skip_simplified_layer_norm(const CostContext& c) {
  return cost_per_out_elem(c, 5 + (c.has_input(3) ? 1 : 0));
}

// input_ids [B, S], segment_ids [B, S], word [V, H], position [P, H], segment [G, H], gamma [H],
// beta [H], mask [B, S], position_ids -> output [B, S, H], mask_index [B] int32, embedding_sum [B, S, H].
void infer_embed_layer_norm(InferContext& c) {
  OpView v = view(c);
  v.check_rank(0, {2}, "input_ids");
  Dim b = v.dim(0, 0), s = v.dim(0, 1);
  if (v.has(1)) {
    v.check_rank(1, {2}, "segment_ids");
    b = v.unify(b, v.dim(1, 0), "batch (input_ids vs segment_ids)");
    s = v.unify(s, v.dim(1, 1), "sequence (input_ids vs segment_ids)");
  }
  if (v.has(7)) {
    v.check_rank(7, {2}, "mask");
    b = v.unify(b, v.dim(7, 0), "batch (input_ids vs mask)");
    s = v.unify(s, v.dim(7, 1), "sequence (input_ids vs mask)");
  }
  Dim h;
  for (size_t i : {2, 3, 4}) {
    if (!v.has(i)) continue;
    v.check_rank(i, {2}, "embedding table");
    h = v.unify(h, v.dim(i, 1), "hidden size of the embedding tables");
  }
  for (size_t i : {5, 6}) {
    if (!v.has(i)) continue;
    v.check_rank(i, {1}, "gamma/beta");
    h = v.unify(h, v.dim(i, 0), "hidden size (embeddings vs gamma/beta)");
  }
  DType t = c.in_dtype(2);
  c.set_output(0, t, Shape({b, s, h}));
  c.set_output(1, DType::Int32, Shape({b}));
  c.set_output(2, t, Shape({b, s, h}));
}

// Per output element: embedding adds (1, or 2 with segments) + LayerNorm 5 + affine 2; plus the
// mask index reduction, 1 per mask element. Gathers are layout only.
OpCost cost_embed_layer_norm(const CostContext& c) {
  OpCost r = cost_per_out_elem(c, (c.has_input(4) ? 2 : 1) + 7);
  if (c.has_input(7)) r.flops += c.in_numel(7);
  return r;
}

// ---- FusedMatMul ----------------------------------------------------------------------------------------
// MatMul with optional transposes: transA/transB swap the last two dims; transBatchA/B move dim 0 to
// the row position (ONNX Runtime's rule). 1-D operands are never transposed.
std::vector<Dim> fused_operand(const Shape& s, bool trans, bool trans_batch) {
  std::vector<Dim> d = s.dims;
  size_t r = d.size();
  if (r < 2) return d;
  std::vector<Dim> out;
  size_t start = trans_batch ? 1 : 0, end = trans_batch ? r - 1 : r - 2;
  for (size_t i = start; i < end; ++i) out.push_back(d[i]);
  size_t row = trans_batch ? 0 : r - 2, col = r - 1;
  if (trans) std::swap(row, col);
  out.push_back(d[row]);
  out.push_back(d[col]);
  return out;
}

struct FusedMatMulDims {
  Shape out;
  Dim k;
};

FusedMatMulDims decode_fused_matmul(const OpView& v) {
  FusedMatMulDims r;
  const Shape& a = v.shape(0);
  const Shape& b = v.shape(1);
  if (!a.rank_known || !b.rank_known) return r;
  v.check(a.rank() > 0 && b.rank() > 0, "operands must have rank >= 1, got " + a.str() + " and " + b.str());
  if (a.rank() == 0 || b.rank() == 0) return r;
  const Node& n = v.node;
  std::vector<Dim> ad = fused_operand(a, n.attr_i("transA", 0) != 0, n.attr_i("transBatchA", 0) != 0);
  std::vector<Dim> bd = fused_operand(b, n.attr_i("transB", 0) != 0, n.attr_i("transBatchB", 0) != 0);
  if (ad.size() == 1) ad.insert(ad.begin(), Dim(1));
  if (bd.size() == 1) bd.push_back(Dim(1));
  r.k = v.unify(ad[ad.size() - 1], bd[bd.size() - 2], "inner dimension (A's columns vs B's rows)");
  std::vector<Dim> pa(ad.begin(), ad.end() - 2), pb(bd.begin(), bd.end() - 2);
  std::vector<Dim> out;
  if (v.ictx) {
    out = broadcast_shapes(*v.ictx, {Shape(pa), Shape(pb)}).dims;
  } else {
    out.assign(std::max(pa.size(), pb.size()), Dim::unknown());
  }
  if (a.rank() > 1) out.push_back(ad[ad.size() - 2]);
  if (b.rank() > 1) out.push_back(bd[bd.size() - 1]);
  r.out = Shape(out);
  return r;
}

void infer_fused_matmul(InferContext& c) { c.set_output(0, c.in_dtype(0), decode_fused_matmul(view(c)).out); }

// MACs = out * K; alpha != 1 scales each output element (1 FLOP).
OpCost cost_fused_matmul(const CostContext& c) {
  Count macs = c.out_numel(0) * Count::of(decode_fused_matmul(view(c)).k);
  Count extra = c.node.attr_f("alpha", 1.0) != 1.0 ? c.out_numel(0) : Count{};
  return cost_contraction(macs, extra);
}

// ---- fused elementwise ------------------------------------------------------------------------------------
// X plus a 1-D bias over its last dim (BiasGelu, FastGelu's optional bias, BiasAdd).
void infer_x_plus_bias(InferContext& c, size_t bias_idx) {
  OpView v = view(c);
  if (v.has(bias_idx) && v.ranked(bias_idx) && v.rank(bias_idx) == 1)
    v.unify(v.dim(0, -1), v.dim(bias_idx, 0), "bias length vs input's last dim");
  infer_same_as_input0(c);
}

void infer_bias_gelu(InferContext& c) { infer_x_plus_bias(c, 1); }
void infer_bias_add(InferContext& c) {
  OpView v = view(c);
  if (v.ranked(0) && v.ranked(2)) {
    const Shape& x = v.shape(0);
    const Shape& s = v.shape(2);
    v.check(x.rank() == s.rank(), "skip " + s.str() + " must have input's shape " + x.str());
    for (size_t i = 0; i < x.rank() && i < s.rank(); ++i) v.unify(x.dims[i], s.dims[i], "skip vs input");
  }
  infer_x_plus_bias(c, 1);
}
void infer_bias_softmax(InferContext& c) {
  if (c.in_shape(0).rank_known && c.in_shape(1).rank_known)
    broadcast_shapes(c, {c.in_shape(0), c.in_shape(1)});
  infer_same_as_input0(c);
}

// FastGelu as 0.5*x*(1 + tanh(x*(c1 + c2*x*x))): x*x, *c2, +c1, *x, tanh, +1, *x, *0.5 = 8, +1 bias.
OpCost cost_fast_gelu(const CostContext& c) { return cost_per_out_elem(c, 8 + (c.has_input(1) ? 1 : 0)); }
// Gelu x*0.5*(1 + erf(x/sqrt(2))) = 5; BiasGelu adds the bias first: 6.
OpCost cost_ms_gelu(const CostContext& c) { return cost_per_out_elem(c, 5); }
OpCost cost_bias_gelu(const CostContext& c) { return cost_per_out_elem(c, 6); }
// QuickGelu x*sigmoid(alpha*x): mul, sigmoid, mul.
OpCost cost_ms_3(const CostContext& c) { return cost_per_out_elem(c, 3); }
// BiasAdd x + bias + skip: 2 adds.
OpCost cost_ms_2(const CostContext& c) { return cost_per_out_elem(c, 2); }
// BiasSoftmax: add 1 + softmax 5.
OpCost cost_6(const CostContext& c) { return cost_per_out_elem(c, 6); }

}  // namespace

void register_contrib_ops(OpRegistry& r) {
  reg(r, "Attention", 1, 0,
      "2*MACs (QKV projection B*S*Hin*(Hq+Hk+Hv) + QK^T and AV B*N*S*T*head each) + bias + 6 per score "
      "(softmax 5, scale 1) + attention_bias",
      infer_attention, cost_attention, kMS);
  reg(r, "MultiHeadAttention", 1, 0,
      "2*MACs (QK^T and AV: B*N*S*T*head each) + 6 per score (softmax 5, scale 1) + bias + attention_bias",
      infer_mha, cost_mha, kMS);
  reg(r, "GroupQueryAttention", 1, 0,
      "2*MACs (QK^T and AV: B*N*S*T*head each) + 6 per score (softmax 5, scale 1) + rotary 3 per Q/K element",
      infer_gqa, cost_gqa, kMS);
  reg(r, "PackedAttention", 1, 0,
      "2*MACs (QKV projection T*Hin*(Hq+Hk+Hv) + QK^T and AV over the padded batch B*N*S*S*head each, an "
      "upper bound: each sequence attends over its own length) + bias + 6 per score + attention_bias",
      infer_packed_attention, cost_packed_attention, kMS);
  reg(r, "PackedMultiHeadAttention", 1, 0,
      "2*MACs (QK^T and AV over the padded batch B*N*S*S*head each, an upper bound) + 6 per score + bias + "
      "attention_bias",
      infer_packed_mha, cost_packed_mha, kMS);
  reg(r, "DecoderMaskedMultiHeadAttention", 1, 0,
      "2*MACs (QK^T and AV for 1 token: B*N*T*head each, T = past_sequence_length + 1, or the cross cache's "
      "length) + 6 per score + bias + attention_bias",
      infer_dmmha, cost_dmmha, kMS);
  reg(r, "RotaryEmbedding", 1, 0, "3 per rotated element (2 mul, 1 add)", infer_rotary, cost_rotary, kMS);
  reg(r, "SkipLayerNormalization", 1, 0,
      "per element: skip add 1 + bias 1 + LayerNorm 5 + gamma 1 + beta 1 (bias, beta when given)",
      infer_skip_layer_norm, cost_skip_layer_norm, kMS);
  reg(r, "SkipSimplifiedLayerNormalization", 1, 0,
      "per element: skip add 1 + bias 1 (when given) + RMSNorm 3 + gamma 1", infer_skip_simplified_layer_norm,
      cost_skip_simplified_layer_norm, kMS);
  // ONNX Runtime registers these two in the default domain too; exported graphs use both spellings.
  // (Default-domain LayerNormalization belongs to the norm family.)
  const char* rms = "4 per element (RMSNorm 3: square, sum, normalise; scale 1)";
  reg(r, "SimplifiedLayerNormalization", 1, 0, rms, infer_ms_layer_norm, cost_simplified_layer_norm, kMS);
  reg(r, "SimplifiedLayerNormalization", 1, 0, rms, infer_ms_layer_norm, cost_simplified_layer_norm);
  reg(r, "LayerNormalization", 1, 0, "per element: LayerNorm 5 + scale 1 + bias 1 (when given)",
      infer_ms_layer_norm, cost_ms_layer_norm, kMS);
  reg(r, "EmbedLayerNormalization", 1, 0,
      "per output element: embedding adds (1, 2 with segments) + LayerNorm 5 + affine 2; + 1 per mask "
      "element",
      infer_embed_layer_norm, cost_embed_layer_norm, kMS);
  reg(r, "FusedMatMul", 1, 0, "2*MACs (out * K) + 1 per output element when alpha != 1", infer_fused_matmul,
      cost_fused_matmul, kMS);
  reg(r, "Gelu", 1, 0, "5 per element (div, erf, add, mul, mul)", infer_same_as_input0, cost_ms_gelu, kMS);
  reg(r, "BiasGelu", 1, 0, "6 per element (bias add, then Gelu 5)", infer_bias_gelu, cost_bias_gelu, kMS);
  reg(r, "FastGelu", 1, 0, "8 per element (tanh approximation: 3 mul, 1 add, tanh, add, 2 mul) + 1 bias",
      infer_bias_gelu, cost_fast_gelu, kMS);
  reg(r, "QuickGelu", 1, 0, "3 per element (mul, sigmoid, mul)", infer_same_as_input0, cost_ms_3, kMS);
  reg(r, "BiasAdd", 1, 0, "2 per element (bias add, skip add)", infer_bias_add, cost_ms_2, kMS);
  reg(r, "BiasSoftmax", 1, 0, "6 per element (bias add 1, softmax 5)", infer_bias_softmax, cost_6, kMS);
  // --train (flopwise/ops.h, TrainFacts): the one contrib op with a training rule.
  train_in(r, kMS, "FusedMatMul", TrainBackward::products, TrainKeeps::other_operand, TrainAutocast::low);
  // Weight facts (flopwise/ops.h, WeightFacts): the norms' gamma, beta and bias (each normalises over the
  // whole hidden dim, so a split input is gathered first), FusedMatMul's operands.
  for (const char* op : {"LayerNormalization", "SkipLayerNormalization", "SimplifiedLayerNormalization",
                         "SkipSimplifiedLayerNormalization"})
    weights_in(r, kMS, op, Learned{slots_from(1)}, NeedsWhole{});
  weights(r, "SimplifiedLayerNormalization", Learned{slots_from(1)}, NeedsWhole{});
  weights_in(r, kMS, "FusedMatMul", Learned{kAllSlots});
}

}  // namespace flopwise
