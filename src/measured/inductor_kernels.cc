// src/measured/inductor_kernels.cc — the triton kernels torch.compile's inductor generates, priced from what
// the profiler records of their launch (flopwise/torch_trace.h, cost_inductor_kernel): the cpu_op named
// triton_{poi,red,per}_fused_<ops>_<n> carries the kernel's pointer arguments (Input Dims, Input type) and
// its element counts (the Scalar arguments: xnumel, and rnumel for a reduction). The name lists the aten ops
// fused into it (sorted, each once); each is priced by the aten table on a flat tensor of the kernel's
// element count, so a fused add + mul + rsqrt costs what the three eager ops would on that many elements.
// Approximations (stated in docs/trace.md): an op named twice counts once (the name says which ops, not how
// many times); an op the table cannot price on a flat tensor (one needing a shape argument:
// native_layer_norm, addmm's epilogue) counts 0; bytes are each pointer argument read or written once.
#include <algorithm>
#include <cstdlib>
#include <map>

#include "flopwise/aten_schema.h"
#include "flopwise/torch_trace.h"

namespace flopwise {

namespace {

// The fused op names of an inductor kernel ("triton_red_fused__to_copy_add_mean_1" -> {_to_copy, add, mean}):
// its underscore-separated tokens split into the fewest names the aten schemas know; empty when they do not.
std::vector<std::string> fused_ops(const std::string& kernel) {
  static const char* const kPrefixes[] = {"triton_poi_fused_", "triton_red_fused_", "triton_per_fused_"};
  std::string body;
  for (const char* p : kPrefixes)
    if (kernel.rfind(p, 0) == 0) body = kernel.substr(std::char_traits<char>::length(p));
  size_t cut = body.find_last_not_of("0123456789");
  if (body.empty() || cut == std::string::npos || body[cut] != '_') return {};
  body.resize(cut);
  std::vector<std::string> tok;
  for (size_t b = 0;;) {
    size_t e = body.find('_', b);
    tok.push_back(body.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  const size_t n = tok.size();
  std::vector<int> best(n + 1, -1), from(n + 1, -1);  // fewest names covering tok[0, i)
  best[0] = 0;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 0; j < i; ++j) {
      if (best[j] < 0) continue;
      std::string name = tok[j];
      for (size_t k = j + 1; k < i; ++k) name += "_" + tok[k];
      if (aten_schemas().overloads("aten::" + name).empty()) continue;
      if (best[i] < 0 || best[j] + 1 < best[i]) best[i] = best[j] + 1, from[i] = static_cast<int>(j);
    }
  if (best[n] < 0) return {};
  std::vector<std::string> ops;
  for (size_t i = n; i > 0; i = static_cast<size_t>(from[i])) {
    std::string name = tok[static_cast<size_t>(from[i])];
    for (size_t k = static_cast<size_t>(from[i]) + 1; k < i; ++k) name += "_" + tok[k];
    ops.push_back(name);
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

// aten::<op> on a flat tensor of `numel` elements of `dtype`: its first overload on a tensor (not `out`)
// whose required arguments are all tensors and whose results are not lists (split(1), unbind would make one
// value per element); nothing when none is.
std::optional<AtenCall> flat_call(const std::string& op, int64_t numel, const std::string& dtype) {
  for (const AtenSchema* s : aten_schemas().overloads("aten::" + op)) {
    if (s->args.empty() || !s->args[0].type.is_tensor() || s->overload == "out")
      continue;  // add.int, add.out
    if (std::any_of(s->returns.begin(), s->returns.end(), [](const AtenType& t) { return t.is_list(); }))
      continue;
    AtenCall c;
    c.op = "aten::" + op;
    bool ok = true;
    for (const AtenArg& a : s->args) {
      if (a.type.is_tensor() && !a.type.optional) {
        c.types.push_back(dtype), c.dims.push_back({{numel}}), c.concrete.push_back("");
      } else if (a.default_value || a.type.optional) {
        c.types.push_back(""), c.dims.push_back({}), c.concrete.push_back("");
      } else {
        ok = false;
        break;
      }
    }
    if (ok) return c;
  }
  return std::nullopt;
}

// Attention kernels written in triton and launched by name (no aten op above them): where q, k, v are
// among the launch's arguments. Priced as scaled_dot_product_attention of those shapes.
struct TritonAttention {
  const char* prefix;  // the kernel's name, or its start (the launcher numbers it)
  size_t q, k, v;
};
constexpr TritonAttention kTritonAttention[] = {
    {"sage_fwd", 0, 1, 2},  // SageAttention (xDiT's aiter backend): q, k quantised int8, v fp8
};

std::optional<AtenCost> cost_triton_attention(const AtenCall& call, const AtenCoster& cost) {
  for (const auto& a : kTritonAttention) {
    if (call.op.rfind(a.prefix, 0) != 0) continue;
    const size_t need = std::max({a.q, a.k, a.v});
    if (call.dims.size() <= need || call.types.size() <= need) return std::nullopt;
    AtenCall sdpa;
    sdpa.op = "aten::scaled_dot_product_attention";
    for (size_t i : {a.q, a.k, a.v}) {
      if (call.dims[i].empty()) return std::nullopt;
      sdpa.types.push_back(call.types[i]), sdpa.dims.push_back(call.dims[i]), sdpa.concrete.push_back("");
    }
    std::vector<AtenCost> c = cost({sdpa});
    if (c.empty() || !c[0].costed) return std::nullopt;
    return c[0];
  }
  return std::nullopt;
}

}  // namespace

std::optional<AtenCost> cost_inductor_kernel(const AtenCall& call, const AtenCoster& cost) {
  if (auto a = cost_triton_attention(call, cost)) return a;
  std::vector<std::string> ops = fused_ops(call.op);
  if (ops.empty()) return std::nullopt;
  std::vector<int64_t> counts;  // the Scalar arguments: xnumel [, rnumel]
  AtenCost r;
  std::string recorded;  // the first pointer's element type as recorded ("c10::BFloat16")
  for (size_t i = 0; i < call.types.size() && i < call.dims.size(); ++i) {
    if (call.types[i] == "Scalar") {
      if (i < call.concrete.size() && !call.concrete[i].empty())
        counts.push_back(std::atoll(call.concrete[i].c_str()));
      continue;
    }
    DType t = trace_dtype(call.types[i]);
    if (t == DType::Undefined || call.dims[i].empty()) continue;
    if (r.dtype.empty()) r.dtype = dtype_name(t), recorded = call.types[i];
    int64_t n = dtype_size(t);
    for (int64_t d : call.dims[i][0])
      if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
    if (__builtin_add_overflow(r.bytes, n, &r.bytes)) return std::nullopt;
  }
  const bool reduction = call.op.rfind("triton_poi_", 0) != 0;
  int64_t numel = counts.empty() ? -1 : counts.back();
  if (reduction && counts.size() >= 2 &&
      __builtin_mul_overflow(counts[counts.size() - 2], counts.back(), &numel))
    return std::nullopt;
  if (numel <= 0 || r.dtype.empty()) return std::nullopt;
  std::vector<AtenCall> flat;
  for (const auto& op : ops)
    if (auto c = flat_call(op, numel, recorded)) flat.push_back(std::move(*c));
  for (const AtenCost& c : cost(flat))
    if (c.costed && __builtin_add_overflow(r.flops, c.flops, &r.flops)) return std::nullopt;
  r.costed = true;
  return r;
}

}  // namespace flopwise
