// src/aten/aten_attention.cc — PyTorch's fused attention kernels, decomposed into the ops the unfused path
// runs (so MACs and FLOPs equal the same module scripted without its fast path):
// _native_multi_head_attention (nn.MultiheadAttention's inference fast path), _transformer_encoder_layer_fwd
// (nn.TransformerEncoderLayer's), and scaled dot-product attention.
#include <cmath>
#include <iterator>
#include <utility>

#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

struct Emitter {
  AtenLowerer& L;
  const AtenValue* o;  // names of the emitted values derive from this jit output
  int tmp(const std::string& what, const std::string& op, const std::vector<int>& ins, Attrs a = {}) {
    return L.emit_tmp(o, what, op, ins, std::move(a));
  }
  // x W^T (+ b), as aten::linear lowers.
  int linear(const std::string& what, int x, int w, int b) {
    int wt = tmp(what + "/weight_t", "Transpose", {w}, {{"perm", ais({1, 0})}});
    int y = tmp(what + "/matmul", "MatMul", {x, wt});
    return b >= 0 ? tmp(what + "/add", "Add", {y, b}) : y;
  }
  int layer_norm(const std::string& what, int x, int w, int b, double eps) {
    return tmp(what, "LayerNormalization", {x, w, b}, {{"axis", ai(-1)}, {"epsilon", af(eps)}});
  }
  // softmax(q k^T / sqrt(d) + mask) v over the last two dims; returns (output, probabilities).
  // Dropout on the probabilities (dropout_p > 0: a file traced in train mode) before the second product.
  std::pair<int, int> sdpa(int q, int k, int v, int mask, double scale, double dropout = 0.0) {
    int kt =
        L.emit_tmp(o, "attn/k_t", "TransposeDims", {k}, {{"dim0", ai(-2)}, {"dim1", ai(-1)}}, "flopwise");
    int s = tmp("attn/scores", "MatMul", {q, kt});
    s = tmp("attn/scaled", "Mul", {s, L.const_float(scale)});
    if (mask >= 0) s = tmp("attn/masked", "Add", {s, mask});
    int p = tmp("attn/probs", "Softmax", {s}, {{"axis", ai(-1)}});
    int pd = dropout > 0.0 ? tmp("attn/dropout", "Dropout", {p, L.const_float(dropout)}) : p;
    return {tmp("attn/context", "MatMul", {pd, v}), p};
  }
  // Multi-head attention on batch-first [B, L, E] inputs with packed in-projection weights [3E, E].
  std::pair<int, int> mha(int query, int key, int value, int64_t heads, int64_t embed, int qkv_w, int qkv_b,
                          int proj_w, int proj_b, int mask) {
    int64_t d = embed / heads;
    auto ws =
        L.emit("Split", {qkv_w, L.const_ints({embed, embed, embed})},
               {L.tmp(o, "in_proj/wq"), L.tmp(o, "in_proj/wk"), L.tmp(o, "in_proj/wv")}, {{"axis", ai(0)}});
    std::vector<int> bs{-1, -1, -1};
    if (qkv_b >= 0)
      bs =
          L.emit("Split", {qkv_b, L.const_ints({embed, embed, embed})},
                 {L.tmp(o, "in_proj/bq"), L.tmp(o, "in_proj/bk"), L.tmp(o, "in_proj/bv")}, {{"axis", ai(0)}});
    auto heads_first = [&](const std::string& what, int x) {  // [B, L, E] -> [B, H, L, D]
      int r = tmp(what + "/heads", "Reshape", {x, L.const_ints({0, 0, heads, d})});
      return tmp(what + "/heads_t", "Transpose", {r}, {{"perm", ais({0, 2, 1, 3})}});
    };
    int q = heads_first("q", linear("q_proj", query, ws[0], bs[0]));
    int k = heads_first("k", linear("k_proj", key, ws[1], bs[1]));
    int v = heads_first("v", linear("v_proj", value, ws[2], bs[2]));
    auto [ctx, probs] = sdpa(q, k, v, mask, 1.0 / std::sqrt(static_cast<double>(d)));
    int t = tmp("context_t", "Transpose", {ctx}, {{"perm", ais({0, 2, 1, 3})}});
    int merged = tmp("context_merged", "Reshape", {t, L.const_ints({0, 0, embed})});
    return {linear("out_proj", merged, proj_w, proj_b), probs};
  }
};

int opt_ir(AtenLowerer& L, const JV& j) { return AtenLowerer::is_none(j) ? -1 : L.as_ir(j); }

// _native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight,
// proj_bias, mask=None, need_weights=True, average_attn_weights=True, mask_type=None) -> (out, weights).
bool lower_native_mha(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 9) return false;
  auto embed = L.known_int(L.in(n, 3)), heads = L.known_int(L.in(n, 4));
  if (!embed || !heads || *heads <= 0 || *embed % *heads) return false;
  int mask = n->inputs().size() > 9 ? opt_ir(L, L.in(n, 9)) : -1;
  bool need = n->inputs().size() > 10 ? L.known_int(L.in(n, 10)).value_or(1) != 0 : true;
  bool average = n->inputs().size() > 11 ? L.known_int(L.in(n, 11)).value_or(1) != 0 : true;
  Emitter e{L, n->output(0)};
  auto [out, probs] =
      e.mha(L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 1)), L.as_ir(L.in(n, 2)), *heads, *embed,
            L.as_ir(L.in(n, 5)), opt_ir(L, L.in(n, 6)), L.as_ir(L.in(n, 7)), opt_ir(L, L.in(n, 8)), mask);
  L.set_ir(n->output(0), L.emit("Identity", {out}, {AtenLowerer::ir_name(n->output(0))})[0]);
  if (n->outputs().size() > 1) {
    if (!need) {  // an empty tensor
      L.emit_to(n->output(1), "ConstantOfShape", {L.const_ints({0})});
    } else if (average) {
      L.emit_to(n->output(1), "ReduceMean", {probs, L.const_ints({1})}, {{"keepdims", ai(0)}});
    } else {
      L.emit_to(n->output(1), "Identity", {probs});
    }
  }
  return true;
}

// _transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
// use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2, ffn_weight_1,
// ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None): one nn.TransformerEncoderLayer.
bool lower_encoder_layer(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 18) return false;
  auto in = [&](size_t i) -> JV& { return L.in(n, i); };
  auto embed = L.known_int(in(1)), heads = L.known_int(in(2));
  auto gelu = L.known_int(in(7)), norm_first = L.known_int(in(8));
  auto eps = L.known_num(in(9));
  if (!embed || !heads || !gelu || !norm_first || !eps || *heads <= 0 || *embed % *heads) return false;
  int mask = n->inputs().size() > 18 ? opt_ir(L, in(18)) : -1;
  Emitter e{L, n->output()};
  int src = L.as_ir(in(0));
  auto attn = [&](int x) {
    return e
        .mha(x, x, x, *heads, *embed, L.as_ir(in(3)), opt_ir(L, in(4)), L.as_ir(in(5)), opt_ir(L, in(6)),
             mask)
        .first;
  };
  auto ffn = [&](int x) {
    int h = e.linear("linear1", x, L.as_ir(in(14)), opt_ir(L, in(15)));
    h = *gelu ? L.emit_tmp(n->output(), "activation", "Gelu", {h}, {}, "", 20)
              : e.tmp("activation", "Relu", {h});
    return e.linear("linear2", h, L.as_ir(in(16)), opt_ir(L, in(17)));
  };
  int n1w = L.as_ir(in(10)), n1b = L.as_ir(in(11)), n2w = L.as_ir(in(12)), n2b = L.as_ir(in(13));
  int x;
  if (*norm_first) {
    x = e.tmp("residual1", "Add", {src, attn(e.layer_norm("norm1", src, n1w, n1b, *eps))});
    x = e.tmp("residual2", "Add", {x, ffn(e.layer_norm("norm2", x, n2w, n2b, *eps))});
  } else {
    x = e.layer_norm("norm1", e.tmp("residual1", "Add", {src, attn(src)}), n1w, n1b, *eps);
    x = e.layer_norm("norm2", e.tmp("residual2", "Add", {x, ffn(x)}), n2w, n2b, *eps);
  }
  L.set_ir(n->output(), L.emit("Identity", {x}, {AtenLowerer::ir_name(n->output())})[0]);
  return true;
}

// scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0., is_causal=False[, scale]) and
// torch 1.13's _scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, need_attn_weights, is_causal)
// -> (out, weights). A causal mask is an additive mask here (the full QK^T is computed, as the kernel does).
bool lower_sdpa(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 3) return false;
  int q = L.as_ir(L.in(n, 0));
  auto rank = L.known_rank(L.in(n, 0));
  if (!rank) return false;
  const Shape qs = L.facts(q).shape;  // a copy: emitting reallocates the values
  if (!qs.dims.back().is_known()) return false;
  int mask = n->inputs().size() > 3 ? opt_ir(L, L.in(n, 3)) : -1;
  const double dropout = n->inputs().size() > 4 ? L.known_num(L.in(n, 4)).value_or(0.0) : 0.0;
  Emitter e{L, n->output(0)};
  auto [out, probs] = e.sdpa(q, L.as_ir(L.in(n, 1)), L.as_ir(L.in(n, 2)), mask,
                             1.0 / std::sqrt(static_cast<double>(qs.dims.back().value())), dropout);
  L.set_ir(n->output(0), L.emit("Identity", {out}, {AtenLowerer::ir_name(n->output(0))})[0]);
  if (n->outputs().size() > 1) L.set_ir(n->output(1), probs);
  return true;
}

// Where a fused attention backward keeps the forward's output and its additive mask (-1: none).
struct SdpaBackwardSlots {
  const char* op;
  int out, mask;
};
constexpr SdpaBackwardSlots kSdpaBackward[] = {
    {"_scaled_dot_product_flash_attention_for_cpu_backward", 4, 8},
    {"_scaled_dot_product_flash_attention_backward", 4, -1},
    {"_scaled_dot_product_efficient_attention_backward", 5, 4},
    {"_scaled_dot_product_cudnn_attention_backward", 4, -1},
};

// _scaled_dot_product_*_attention_backward(grad_out, query, key, value, ...) -> (grad_query, grad_key,
// grad_value) as the math backward runs it, the products torch.utils.flop_counter's
// sdpa_backward_flop_count counts: the scores again, P = softmax(QK^T scale [+ mask]); dV = P^T dO;
// dP = dO V^T; dS = P (dP - rowsum(dO O)); dQ = dS K scale; dK = dS^T Q scale. Grouped-query heads
// (Hq = G Hkv): the query side as [B, Hkv, G, L, E] against one key head each, dK and dV summed over G.
template <size_t row>  // kSdpaBackward[row] is the op's
bool lower_sdpa_backward(AtenLowerer& L, const Node* n, const std::string&) {
  const SdpaBackwardSlots* slots = &kSdpaBackward[row];
  if (n->inputs().size() <= static_cast<size_t>(slots->out) || n->outputs().size() < 3) return false;
  const int dout = L.as_ir(L.in(n, 0)), q = L.as_ir(L.in(n, 1)), k = L.as_ir(L.in(n, 2)),
            v = L.as_ir(L.in(n, 3)), out = L.as_ir(L.in(n, static_cast<size_t>(slots->out)));
  if (q < 0 || k < 0 || v < 0 || dout < 0 || out < 0) return false;
  const Shape qs = L.facts(q).shape, ks = L.facts(k).shape, vs = L.facts(v).shape;
  if (!qs.rank_known || qs.rank() != 4 || !ks.rank_known || ks.rank() != 4 || !vs.rank_known ||
      vs.rank() != 4)
    return false;
  for (const Dim* d : {&qs.dims[1], &qs.dims[3], &ks.dims[1], &vs.dims[3]})
    if (!d->is_known() || d->value() <= 0) return false;
  const int64_t hq = qs.dims[1].value(), hkv = ks.dims[1].value(), e = qs.dims[3].value(),
                ev = vs.dims[3].value();
  if (hq % hkv) return false;
  const int64_t group = hq / hkv;
  Emitter em{L, n->output(0)};
  auto grouped = [&](const char* what, int x, int64_t heads,
                     int64_t last) {  // [B, H, L, D] -> [B, Hkv, g, L, D]
    if (group == 1) return x;
    return em.tmp(std::string("grouped/") + what, "Reshape",
                  {x, L.const_ints({0, hkv, heads == hq ? group : 1, -1, last})});
  };
  auto t = [&](const char* what, int x) {
    return L.emit_tmp(n->output(0), what, "TransposeDims", {x}, {{"dim0", ai(-2)}, {"dim1", ai(-1)}},
                      "flopwise");
  };
  const int qg = grouped("q", q, hq, e), kg = grouped("k", k, hkv, e), vg = grouped("v", v, hkv, ev);
  const int dog = grouped("grad_out", dout, hq, ev), og = grouped("out", out, hq, ev);
  const int scale = L.const_float(1.0 / std::sqrt(static_cast<double>(e)));
  int s = em.tmp("scaled", "Mul", {em.tmp("scores", "MatMul", {qg, t("k_t", kg)}), scale});
  const int mask = slots->mask >= 0 && group == 1 && n->inputs().size() > static_cast<size_t>(slots->mask)
                       ? opt_ir(L, L.in(n, static_cast<size_t>(slots->mask)))
                       : -1;
  if (mask >= 0) s = em.tmp("masked", "Add", {s, mask});
  const int p = em.tmp("probs", "Softmax", {s}, {{"axis", ai(-1)}});
  int dv = em.tmp("grad_v", "MatMul", {t("probs_t", p), dog});
  const int dp = em.tmp("grad_probs", "MatMul", {dog, t("v_t", vg)});
  const int rows =
      em.tmp("rowsum", "ReduceSum", {em.tmp("grad_out_out", "Mul", {dog, og}), L.const_ints({-1})},
             {{"keepdims", ai(1)}});
  const int ds = em.tmp("grad_scores", "Mul", {p, em.tmp("centred", "Sub", {dp, rows})});
  int dq = em.tmp("grad_q", "Mul", {em.tmp("grad_q_mm", "MatMul", {ds, kg}), scale});
  int dk = em.tmp("grad_k", "Mul", {em.tmp("grad_k_mm", "MatMul", {t("grad_scores_t", ds), qg}), scale});
  if (group > 1) {
    dq = em.tmp("grad_q_heads", "Reshape", {dq, L.const_ints({0, hq, -1, e})});
    dk = em.tmp("grad_k_sum", "ReduceSum", {dk, L.const_ints({2})}, {{"keepdims", ai(0)}});
    dv = em.tmp("grad_v_sum", "ReduceSum", {dv, L.const_ints({2})}, {{"keepdims", ai(0)}});
  }
  const int grads[3] = {dq, dk, dv};
  for (size_t i = 0; i < 3; ++i)
    L.set_ir(n->output(i), L.emit("Identity", {grads[i]}, {AtenLowerer::ir_name(n->output(i))})[0]);
  for (size_t i = 3; i < n->outputs().size(); ++i) L.set(n->output(i), JV());
  return true;
}

// The fused kernels SDPA dispatches to, as a profiler records them (torch 2.x):
//   _scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, return_debug_mask, *, scale)
//   _scaled_dot_product_efficient_attention(q, k, v, attn_bias?, compute_log_sumexp, dropout_p, is_causal, *,
//   scale) _scaled_dot_product_cudnn_attention(q, k, v, attn_bias?, compute_log_sumexp, dropout_p, is_causal,
//   ...)
// priced as scaled_dot_product_attention of the same q, k, v (and bias): their first output is SDPA's; the
// others (logsumexp, seeds) are not costed.
template <int kBias, int kDropout>
bool lower_sdpa_kernel(AtenLowerer& L, const Node* n, const std::string&) {
  if (n->inputs().size() < 3 || n->outputs().empty()) return false;
  int q = L.as_ir(L.in(n, 0));
  if (!L.known_rank(L.in(n, 0))) return false;
  const Shape qs = L.facts(q).shape;
  if (!qs.dims.back().is_known()) return false;
  auto arg = [&](int i) { return i >= 0 && static_cast<size_t>(i) < n->inputs().size(); };
  int mask = arg(kBias) ? opt_ir(L, L.in(n, static_cast<size_t>(kBias))) : -1;
  const double dropout =
      arg(kDropout) ? L.known_num(L.in(n, static_cast<size_t>(kDropout))).value_or(0.0) : 0.0;
  Emitter e{L, n->output(0)};
  auto [out, probs] = e.sdpa(q, L.as_ir(L.in(n, 1)), L.as_ir(L.in(n, 2)), mask,
                             1.0 / std::sqrt(static_cast<double>(qs.dims.back().value())), dropout);
  (void)probs;
  L.set_ir(n->output(0), L.emit("Identity", {out}, {AtenLowerer::ir_name(n->output(0))})[0]);
  return true;
}

template <size_t... row>
void add_sdpa_backward(AtenTable& t, std::index_sequence<row...>) {
  (t.add(kSdpaBackward[row].op, lower_sdpa_backward<row>), ...);
}

}  // namespace

void register_aten_attention(AtenTable& t) {
  add_sdpa_backward(t, std::make_index_sequence<std::size(kSdpaBackward)>());
  t.add("_native_multi_head_attention", lower_native_mha);
  t.add("_transformer_encoder_layer_fwd", lower_encoder_layer);
  t.add({"scaled_dot_product_attention", "_scaled_dot_product_attention"}, lower_sdpa);
  t.add("_scaled_dot_product_flash_attention", lower_sdpa_kernel<-1, 3>);
  // (q, k, v, dropout_p, is_causal, *, attn_mask, scale): the CPU's kernel, as core ATen programs call it
  t.add("_scaled_dot_product_flash_attention_for_cpu", lower_sdpa_kernel<5, 3>);
  t.add({"_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention"},
        lower_sdpa_kernel<3, 5>);
}

}  // namespace flopwise
