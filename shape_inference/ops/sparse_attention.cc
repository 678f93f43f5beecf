// shape_inference/ops/sparse_attention.cc — the sparse_attention family: ONNX Runtime's SparseAttention
// (com.microsoft), Phi-3-small's block-sparse attention as ONNX Runtime GenAI ships it.
// The query at position q attends to the keys of the blocks its block row keeps in the layout of its head
// (the block mask in CSR: block_row_indices [L, max_blocks + 1], block_col_indices [L, max_nnz]; head h uses
// layout h % L), below the attended length T: a kept block counts whole up to T (block kernels compute its
// tile; the causal part of the diagonal block is masked in it). The products are counted over those (query,
// key) pairs, FLOPs = 2*MACs + 6 per pair (softmax 5, scale 1) + rotary 3 per new Q and K element. Where the
// layout's contents are not known (an input, or over FLOPWISE_MAX_CONST_ELEMENTS) every causal block is
// counted, an upper bound; where S or T is not a number, the dense S x T of GroupQueryAttention, an upper
// bound too: both warned. ONNX Runtime's CPU kernel computes the dense product and masks what the layout
// drops.
#include <algorithm>
#include <string>
#include <vector>

#include "contrib_view.h"

namespace flopwise {

namespace {

using contrib::count_of;
using contrib::kMS;
using contrib::OpView;
using contrib::view;

// query [B, S, N*head] or packed [B, S, (N + 2*KVN)*head]; key/value [B, S, KVN*head]; past_key/past_value
// [B, KVN, M, head] (the buffer present shares); block_row_indices; block_col_indices; total_sequence_length
// (scalar); key_total_sequence_lengths [B]; cos_cache/sin_cache [max_seq, rot/2]
// -> output [B, S, N*head], present_key/present_value [B, KVN, max(M, T), head].
struct SparseDims {
  Dim batch, seq, heads, kv_heads, head, rot, total, present, layouts, max_blocks;
  int64_t block = 0;
};

Dim positive_attr(const OpView& v, const char* name) {
  const int64_t n = v.node.attr_i(name, 0);
  v.check(n > 0, std::string(name) + " attribute must be positive, got " + std::to_string(n));
  return n > 0 ? Dim(n) : Dim::unknown();
}

// Query, key and value: batch, sequence length, head size.
void decode_qkv(const OpView& v, SparseDims& d) {
  v.check_rank(0, {3}, "query");
  d.batch = v.dim(0, 0);
  d.seq = v.dim(0, 1);
  if (!v.has(1)) {
    v.check(!v.has(2), "key and value must both be given, or both omitted (packed QKV)");
    d.head = v.divide(v.dim(0, 2), d.heads + d.kv_heads * Dim(2), "packed QKV width per head");
    return;
  }
  v.check(v.has(2), "key and value must both be given, or both omitted (packed QKV)");
  v.check_rank(1, {3}, "key");
  v.check_rank(2, {3}, "value");
  d.head = v.divide(v.dim(0, 2), d.heads, "query hidden size per head");
  d.batch = v.unify(d.batch, v.dim(1, 0), "batch (query vs key)");
  d.seq = v.unify(d.seq, v.dim(1, 1), "sequence length (query vs key)");
  d.head = v.unify(d.head, v.divide(v.dim(1, 2), d.kv_heads, "key hidden size per kv head"),
                   "head size (query vs key)");
  for (int64_t a = 0; a < 3; ++a) v.unify(v.dim(1, a), v.dim(2, a), "key vs value");
}

// The past buffers and the layout's shapes; T and the present buffer.
void decode_cache(const OpView& v, SparseDims& d) {
  Dim past;
  const bool has_past = v.has(3);
  v.check(has_past && v.has(4), "past_key and past_value are required (the KV cache buffers present shares)");
  if (has_past) {
    v.check_rank(3, {4}, "past_key");
    d.batch = v.unify(d.batch, v.dim(3, 0), "batch (query vs past_key)");
    v.unify(d.kv_heads, v.dim(3, 1), "kv_num_heads (attribute vs past_key)");
    d.head = v.unify(d.head, v.dim(3, 3), "head size (query vs past_key)");
    past = v.dim(3, 2);
    if (v.has(4))
      for (int64_t a = 0; a < 4; ++a) v.unify(v.dim(3, a), v.dim(4, a), "past_key vs past_value");
  }
  v.check_rank(5, {2}, "block_row_indices");
  v.check_rank(6, {2}, "block_col_indices");
  d.layouts = v.unify(v.dim(5, 0), v.dim(6, 0), "layouts (block_row_indices vs block_col_indices)");
  if (d.layouts.is_known() && d.heads.is_known())
    v.check(d.layouts.value() > 0 && d.heads.value() % d.layouts.value() == 0,
            "num_heads " + d.heads.str() + " is not a multiple of the layouts " + d.layouts.str());
  d.max_blocks = v.dim(5, 1) - Dim(1);
  if (v.has(8)) {
    v.check_rank(8, {1}, "key_total_sequence_lengths");
    d.batch = v.unify(d.batch, v.dim(8, 0), "batch (query vs key_total_sequence_lengths)");
  }
  // T: total_sequence_length when known; else, as GroupQueryAttention, the past and the new tokens (the
  // buffer's length read as the tokens cached, GenAI's declared past_sequence_length).
  const auto total = v.scalar_int(7);
  d.total = total ? Dim(*total) : has_past ? past + d.seq : d.seq;
  d.present = has_past && total ? Dim::max(past, d.total) : d.total;
  if (total && d.seq.is_known())
    v.check(*total >= d.seq.value(), "total_sequence_length " + std::to_string(*total) +
                                         " is less than the query's sequence length " + d.seq.str());
  if (total && d.max_blocks.is_known())
    v.check(d.max_blocks.value() * d.block >= *total, "total_sequence_length " + std::to_string(*total) +
                                                          " is past the layout's " + d.max_blocks.str() +
                                                          " blocks of " + std::to_string(d.block));
}

SparseDims decode_sparse(const OpView& v) {
  SparseDims d;
  d.heads = positive_attr(v, "num_heads");
  d.kv_heads = positive_attr(v, "kv_num_heads");
  const Dim block = positive_attr(v, "sparse_block_size");
  d.block = block.is_known() ? block.value() : 0;
  if (d.heads.is_known() && d.kv_heads.is_known())
    v.check(d.heads.value() % d.kv_heads.value() == 0,
            "num_heads " + d.heads.str() + " is not a multiple of kv_num_heads " + d.kv_heads.str());
  decode_qkv(v, d);
  decode_cache(v, d);
  d.rot = d.head;
  if (v.has(9) || v.has(10)) {
    v.check_rank(9, {2}, "cos_cache");
    v.check_rank(10, {2}, "sin_cache");
    const Dim half = v.unify(v.dim(9, 1), v.dim(10, 1), "rotary half dim (cos_cache vs sin_cache)");
    if (half.is_known()) d.rot = half * Dim(2);
  }
  return d;
}

// ---- the layout -----------------------------------------------------------------------------------------
// The block mask in CSR, read from the inputs' contents: row pointers [L][max_blocks + 1], columns [L][nnz].
struct Layout {
  std::vector<int64_t> rows, cols;
  int64_t layouts = 0, row_stride = 0, col_stride = 0;
};

std::optional<std::vector<int64_t>> known_ints(const OpView& v, size_t i) {
  if (!v.has(i)) return std::nullopt;
  const auto& data = v.graph.values[static_cast<size_t>(v.node.inputs[i])].data;
  if (!data || data->is_float) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(data->ints.size());
  for (const Dim& x : data->ints) {
    if (!x.is_known()) return std::nullopt;
    out.push_back(x.value());
  }
  return out;
}

// The layout when both tensors' contents and shapes are known and consistent (a contradiction fails).
std::optional<Layout> read_layout(const OpView& v, const SparseDims& d) {
  auto rows = known_ints(v, 5), cols = known_ints(v, 6);
  const Dim rs = v.dim(5, 1), cs = v.dim(6, 1);
  if (!rows || !cols || !d.layouts.is_known() || !rs.is_known() || !cs.is_known()) return std::nullopt;
  Layout l{std::move(*rows), std::move(*cols), d.layouts.value(), rs.value(), cs.value()};
  if (l.row_stride < 2 || static_cast<int64_t>(l.rows.size()) != l.layouts * l.row_stride ||
      static_cast<int64_t>(l.cols.size()) != l.layouts * l.col_stride)
    return std::nullopt;
  bool ok = true;
  for (int64_t k = 0; k < l.layouts && ok; ++k) {
    const int64_t* r = &l.rows[static_cast<size_t>(k * l.row_stride)];
    for (int64_t i = 0; i + 1 < l.row_stride && ok; ++i)
      ok = r[0] == 0 && r[i] <= r[i + 1] && r[i + 1] <= l.col_stride;
    v.check(ok, "block_row_indices of layout " + std::to_string(k) + " are not row pointers into its " +
                    std::to_string(l.col_stride) + " columns");
  }
  for (size_t i = 0; i < l.cols.size() && ok; ++i) {
    ok = l.cols[i] < l.row_stride - 1;
    v.check(ok, "block_col_indices holds block " + std::to_string(l.cols[i]) + " of " +
                    std::to_string(l.row_stride - 1));
  }
  if (!ok) return std::nullopt;
  return l;
}

// Block rows x heads walked at most; past it the dense bound stands (no file makes the pass loop for long).
constexpr int64_t kMaxRowVisits = 10000000;

// Keys below t in block c of `bs` tokens.
int64_t keys_in_block(int64_t c, int64_t bs, int64_t t) {
  return c < 0 ? 0 : std::max<int64_t>(0, std::min((c + 1) * bs, t) - c * bs);
}

// The (query, key) pairs of one sequence, summed over the heads: queries at t-s .. t-1, each its row's kept
// blocks (every causal block where `layout` is null). Unknown when s, t or the heads are not numbers.
Count kept_pairs(const SparseDims& d, const Layout* layout) {
  if (!d.seq.is_known() || !d.total.is_known() || !d.heads.is_known() || d.block <= 0)
    return Count::unknown();
  const int64_t s = d.seq.value(), t = d.total.value(), bs = d.block;
  if (s < 0 || t < s || (s / bs + 1) > kMaxRowVisits / d.heads.value()) return Count::unknown();
  Count pairs{0};
  for (int64_t h = 0; h < d.heads.value(); ++h) {
    const int64_t k = layout ? h % layout->layouts : 0;
    for (int64_t r = (t - s) / bs; r * bs < t; ++r) {
      const int64_t queries = std::min((r + 1) * bs, t) - std::max(r * bs, t - s);
      Count keys{0};
      if (!layout) {
        keys = Count{std::min((r + 1) * bs, t)};  // blocks 0 .. r
      } else {
        if (r + 1 >= layout->row_stride) return Count::unknown();  // past the layout (checked in inference)
        const int64_t* row = &layout->rows[static_cast<size_t>(k * layout->row_stride)];
        for (int64_t j = row[r]; j < row[r + 1]; ++j)
          keys += Count{keys_in_block(layout->cols[static_cast<size_t>(k * layout->col_stride + j)], bs, t)};
      }
      pairs += Count{queries} * keys;
    }
  }
  return pairs;
}

// Scores of the whole batch and whether they are a bound (the layout or the lengths unknown).
struct Scores {
  Count n;
  const char* bound = nullptr;  // why they are an upper bound, or null when exact
};

Scores count_scores(const OpView& v, const SparseDims& d) {
  const std::optional<Layout> layout = read_layout(v, d);
  const Count pairs = kept_pairs(d, layout ? &*layout : nullptr);
  if (!pairs.known)
    return {
        count_of({d.batch, d.heads, d.seq, d.total}),
        "the sequence lengths are not numbers (or too many blocks to walk): the products are counted densely "
        "over S x T, an upper bound of the blocks the layout keeps"};
  return {
      pairs * Count::of(d.batch),
      layout
          ? nullptr
          : "the layout's contents (block_row_indices, block_col_indices) are not known: every causal block "
            "is counted, an upper bound (a computed layout, or one over FLOPWISE_MAX_CONST_ELEMENTS)"};
}

void infer_sparse_attention(InferContext& c) {
  const OpView v = view(c);
  const SparseDims d = decode_sparse(v);
  const DType t = c.in_dtype(0);
  const DType cache_t = c.has_input(3) && c.in_dtype(3) != DType::Undefined ? c.in_dtype(3) : t;
  c.set_output(0, t, Shape({d.batch, d.seq, d.heads * d.head}));
  c.set_output(1, cache_t, Shape({d.batch, d.kv_heads, d.present, d.head}));
  c.set_output(2, cache_t, Shape({d.batch, d.kv_heads, d.present, d.head}));
  if (const Scores s = count_scores(v, d); s.bound) c.warn(s.bound);
}

OpCost cost_sparse_attention(const CostContext& c) {
  const OpView v = view(c);
  const SparseDims d = decode_sparse(v);
  const Count scores = count_scores(v, d).n;
  Count extra = scores * Count{6};
  if (v.node.attr_i("do_rotary", 0) != 0)  // rotary on new Q and K: 3 per rotated element
    extra += count_of({d.batch, d.seq, d.heads + d.kv_heads, d.rot}) * Count{3};
  return cost_contraction(scores * Count::of(d.head) * Count{2}, extra);
}

}  // namespace

void register_sparse_attention_ops(OpRegistry& r) {
  reg(r, "SparseAttention", 1, 0,
      "2*MACs (QK^T and AV over the (query, key) pairs the block layout keeps, head each: a kept block's "
      "keys "
      "below T; every causal block where the layout is not known, dense B*N*S*T where S or T is not a "
      "number: "
      "upper bounds, warned) + 6 per pair + rotary 3 per rotated Q/K element",
      infer_sparse_attention, cost_sparse_attention, kMS);
}

}  // namespace flopwise
