// src/aten/aten_serving.cc — the library ops of LLM serving engines (vLLM's _C / vllm::, sglang's
// sgl_kernel::, AMD's aiter::), as a profiler records them under a CUDA/HIP graph's capture: registered by
// their full name (namespace included: `_C::rms_norm` is not aten::rms_norm) and read by position, as the
// trace records their arguments. Each lowers to the ops its unfused PyTorch form runs, so a fused kernel
// costs what the eager model's ops cost (RMSNorm 4 per element: square, sum, normalise, scale; SiLU-and-mul =
// SiLU + Mul).
//
// Not here, for want of the facts in the recorded arguments (each stays "no cost rule" in the report):
// paged / unified attention (the KV lengths per request are in tensors whose values are not recorded),
// fused MoE (vllm::moe_forward takes its layer by name: the expert weights are not among its inputs), and
// KV-cache writes (reshape_and_cache: a copy, no arithmetic).
#include "aten_table.h"

namespace flopwise {
namespace {

using Node = AtenNode;

bool tensor_at(AtenLowerer& L, const Node* n, size_t i) {
  return i < n->inputs().size() && AtenLowerer::is_tensor(L.in(n, i));
}

// RMSNorm of input `x` by `w` (eps at `eps`), after adding `res` when res >= 0: [Add +] RMSNorm.
bool rms_norm(AtenLowerer& L, const Node* n, size_t x, size_t w, size_t eps, int res = -1) {
  if (!tensor_at(L, n, x) || !tensor_at(L, n, w) || (res >= 0 && !tensor_at(L, n, static_cast<size_t>(res))))
    return false;
  const double e = eps < n->inputs().size() ? L.known_num(L.in(n, eps)).value_or(1e-6) : 1e-6;
  const AtenValue* o = n->output();
  int in = L.as_ir(L.in(n, x));
  if (res >= 0) in = L.emit_tmp(o, "residual", "Add", {in, L.as_ir(L.in(n, static_cast<size_t>(res)))});
  L.emit_to(o, "SimplifiedLayerNormalization", {in, L.as_ir(L.in(n, w))},
            {{"axis", ai(-1)}, {"epsilon", af(e)}});
  return true;
}

// _C::rms_norm(out, input, weight, eps); aiter::rmsnorm(out, input, weight, eps)
bool lower_rms_norm_out(AtenLowerer& L, const Node* n, const std::string&) { return rms_norm(L, n, 1, 2, 3); }
// vllm::rocm_aiter_rms_norm(input, weight, eps)
bool lower_rms_norm(AtenLowerer& L, const Node* n, const std::string&) { return rms_norm(L, n, 0, 1, 2); }
// _C::fused_add_rms_norm(input, residual, weight, eps); vllm::rocm_aiter_rmsnorm2d_fwd_with_add (same)
bool lower_add_rms_norm(AtenLowerer& L, const Node* n, const std::string&) {
  return rms_norm(L, n, 0, 2, 3, 1);
}
// aiter::add_rmsnorm(out, input, residual_in, residual_out, weight, eps)
bool lower_add_rms_norm_out(AtenLowerer& L, const Node* n, const std::string&) {
  return rms_norm(L, n, 1, 4, 5, 2);
}

// silu_and_mul(out [T, d], input [T, 2d]): silu(input[:, :d]) * input[:, d:] (1 + 1 + 1 per output element:
// sigmoid, its product with x, the product with the other half; as aten::silu and aten::mul count them).
bool lower_silu_and_mul(AtenLowerer& L, const Node* n, const std::string&) {
  if (!tensor_at(L, n, 1)) return false;
  int x = L.as_ir(L.in(n, 1));
  const Shape s = L.facts(x).shape;
  if (s.dims.empty() || !s.dims.back().is_known() || s.dims.back().value() % 2) return false;
  const int64_t d = s.dims.back().value() / 2;
  const AtenValue* o = n->output();
  auto half = [&](const char* what, int64_t b, int64_t e) {
    return L.emit_tmp(o, what, "Slice", {x, L.const_ints({b}), L.const_ints({e}), L.const_ints({-1})});
  };
  int gate = half("gate", 0, d), up = half("up", d, 2 * d);
  int sig = L.emit_tmp(o, "sigmoid", "Sigmoid", {gate});
  int act = L.emit_tmp(o, "silu", "Mul", {gate, sig});
  L.emit_to(o, "Mul", {act, up});
  return true;
}

// rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox): x * cos + rotate(x) * sin on
// query and key, 3 per element (2 products, 1 sum), as the eager apply_rotary_pos_emb counts; the rotation
// itself (a gather of halves) is layout. A partial rotary (rotary dim < head size) is counted whole.
bool lower_rotary(AtenLowerer& L, const Node* n, const std::string&) {
  if (!tensor_at(L, n, 1)) return false;
  const AtenValue* o = n->output();
  int last = -1;
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (!tensor_at(L, n, i)) continue;
    int x = L.as_ir(L.in(n, i));
    int c = L.emit_tmp(o, i == 1 ? "q_cos" : "k_cos", "Mul", {x, x});
    int r = L.emit_tmp(o, i == 1 ? "q_sin" : "k_sin", "Mul", {x, x});
    last = L.emit_tmp(o, i == 1 ? "q" : "k", "Add", {c, r});
  }
  L.emit_to(o, "Identity", {last});
  return true;
}

// aiter::gemm_a16w16(A [M, K], B [N, K], bias?, ...): A B^T (+ bias), as aten::linear.
bool lower_gemm_nt(AtenLowerer& L, const Node* n, const std::string&) {
  if (!tensor_at(L, n, 0) || !tensor_at(L, n, 1)) return false;
  std::vector<int> ins{L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 1))};
  if (tensor_at(L, n, 2)) ins.push_back(L.as_ir(L.in(n, 2)));
  L.emit_to(n->output(), "Gemm", ins, {{"transB", ai(1)}});
  return true;
}

// aten::_scaled_mm(self [M, K], mat2 [K, N], scale_a, scale_b, bias?, ...): FP8 (and block-scaled) GEMM,
// priced as its product self @ mat2 (+ bias): M * N * K MACs; the scales' multiply on the output is not
// counted.
bool lower_scaled_mm(AtenLowerer& L, const Node* n, const std::string&) {
  if (!tensor_at(L, n, 0) || !tensor_at(L, n, 1)) return false;
  const AtenValue* o = n->output();
  int y = L.emit_tmp(o, "matmul", "MatMul", {L.as_ir(L.in(n, 0)), L.as_ir(L.in(n, 1))});
  if (tensor_at(L, n, 4)) y = L.emit_tmp(o, "bias", "Add", {y, L.as_ir(L.in(n, 4))});
  L.emit_to(o, "Identity", {y});
  return true;
}

}  // namespace

void register_aten_serving(AtenTable& t) {
  t.add({"_C::rms_norm", "aiter::rmsnorm"}, lower_rms_norm_out);
  t.add("vllm::rocm_aiter_rms_norm", lower_rms_norm);
  t.add({"_C::fused_add_rms_norm", "vllm::rocm_aiter_rmsnorm2d_fwd_with_add"}, lower_add_rms_norm);
  t.add("aiter::add_rmsnorm", lower_add_rms_norm_out);
  t.add({"_C::silu_and_mul", "sgl_kernel::silu_and_mul"}, lower_silu_and_mul);
  t.add({"_C::rotary_embedding", "sgl_kernel::rotary_embedding"}, lower_rotary);
  t.add("aiter::gemm_a16w16", lower_gemm_nt);
  t.add("_scaled_mm", lower_scaled_mm);
}

}  // namespace flopwise
