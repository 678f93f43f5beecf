// shape_inference/helpers.cc — the shared pieces of shape and cost rules (helpers.h): dim merging,
// broadcasting, axis normalisation, constant folding of small integer tensors, conv and pool window
// arithmetic, the common cost shapes.
#include "helpers.h"

#include <algorithm>
#include <cmath>

namespace flopwise {

Dim merge_dim(InferContext& ctx, const Dim& a, const Dim& b, const char* what) {
  if (a.is_unknown()) return b;
  if (b.is_unknown()) return a;
  if (a.is_known() && b.is_known()) {
    if (a.value() != b.value())
      ctx.fail(std::string(what) + ": " + std::to_string(a.value()) + " vs " + std::to_string(b.value()));
    return a;
  }
  if (a.is_known()) return a;
  return b;
}

namespace {
// broadcast_shapes over the inputs in place (an elementwise node's shapes are not copied to be read).
Shape broadcast_shape_ptrs(InferContext& ctx, const std::vector<const Shape*>& shape_ptrs) {
  size_t rank = 0;
  for (const Shape* s : shape_ptrs) {
    if (!s->rank_known) return Shape::unknown_rank();
    rank = std::max(rank, s->rank());
  }
  std::vector<Dim> out(rank, Dim(1));
  for (size_t i = 0; i < rank; ++i) {
    // Collect the dims aligned at position i (right-aligned).
    Dim result(1);
    bool any_unknown = false;
    for (const Shape* sp : shape_ptrs) {
      const Shape& s = *sp;
      if (s.rank() + i < rank) continue;
      const Dim& d = s.dims[s.rank() - rank + i];
      if (d.is_known() && d.value() == 1) continue;
      if (d.is_unknown()) {
        any_unknown = true;
        continue;
      }
      if (result.is_known() && result.value() == 1) {
        result = d;
      } else if (!result.same_as(d)) {
        // min(x, K) against x (a clamped slice of a table, beside the full-size tensor): equal exactly
        // when x <= K, which a model that runs needs; assumed, and recorded.
        auto min_other = [](const Dim& m, const Dim& x) -> std::optional<Dim> {
          if (!m.is_symbolic() || m.terms().size() != 1 || m.terms()[0].second != 1 ||
              m.terms()[0].first.size() != 1)
            return std::nullopt;
          const DimAtom* a = Dim::atom(m.terms()[0].first[0]);
          if (!a || a->kind != DimAtom::Kind::Min) return std::nullopt;
          if (a->a.same_as(x)) return a->b;
          if (a->b.same_as(x)) return a->a;
          return std::nullopt;
        };
        if (auto k = min_other(result, d)) {
          ctx.assume(d, *k, "broadcast of " + d.str() + " with " + result.str());
          result = d;
          continue;
        }
        if (auto k = min_other(d, result)) {
          ctx.assume(result, *k, "broadcast of " + result.str() + " with " + d.str());
          continue;
        }
        if (result.is_known() && d.is_known())
          ctx.fail("cannot broadcast dim " + std::to_string(result.value()) + " with " +
                   std::to_string(d.value()) + " (axis " + std::to_string(i) + " of the broadcast shape)");
        // Two different symbols: the result is whichever is not 1 at run time; unknown statically.
        any_unknown = true;
        result = Dim::unknown();
      }
    }
    if (any_unknown) {
      // An unknown dim may be 1 or the other dim: only a known non-1 result survives.
      out[i] = (result.is_known() && result.value() != 1) ? result : Dim::unknown();
      if (result.is_symbolic()) out[i] = Dim::unknown();
    } else {
      out[i] = result;
    }
  }
  return Shape(out);
}
}  // namespace

Shape broadcast_shapes(InferContext& ctx, const std::vector<Shape>& shapes) {
  std::vector<const Shape*> ptrs;
  ptrs.reserve(shapes.size());
  for (const auto& s : shapes) ptrs.push_back(&s);
  return broadcast_shape_ptrs(ctx, ptrs);
}

int64_t normalize_axis(InferContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    ctx.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

void infer_same_as_input0(InferContext& ctx) { ctx.set_output(0, ctx.in_dtype(0), ctx.in_shape(0)); }

void infer_broadcast(InferContext& ctx, DType out_dtype) {
  std::vector<const Shape*> shapes;
  shapes.reserve(ctx.num_inputs());
  for (size_t i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) shapes.push_back(&ctx.in_shape(i));
  DType t = out_dtype == DType::Undefined ? ctx.in_dtype(0) : out_dtype;
  ctx.set_output(0, t, broadcast_shape_ptrs(ctx, shapes));
}

Dim conv_out_dim(const Dim& in, int64_t k, int64_t stride, int64_t dilation, int64_t pad_begin,
                 int64_t pad_end, bool ceil_mode) {
  if (stride <= 0) return Dim::unknown();
  // The attributes are the model's: every step is checked (an overflow leaves the dim unknown).
  const Dim window = Dim(dilation) * (Dim(k) - Dim(1)) + Dim(1);
  if (!window.is_known()) return Dim::unknown();
  Dim eff = in + Dim(pad_begin) + Dim(pad_end) - window;
  Dim q = ceil_mode ? Dim::ceil_div(eff, Dim(stride)) : Dim::floor_div(eff, Dim(stride));
  Dim out = q + Dim(1);
  if (ceil_mode && out.is_known() && in.is_known()) {
    // PyTorch/ONNX rule: the last window must start inside the input or left padding.
    const Dim last_start = (out - Dim(1)) * Dim(stride), limit = in + Dim(pad_begin);
    if (!last_start.is_known() || !limit.is_known()) return Dim::unknown();
    if (last_start.value() >= limit.value()) out = out - Dim(1);
  } else if (ceil_mode && pad_end < window.value()) {
    // The same rule for every size at once: with less end padding than the window, dropping that last
    // window leaves exactly the windows that start before in + pad_begin, so out = min(q + 1, ceil((in +
    // pad_begin)/stride)).
    out = Dim::min(out, Dim::ceil_div(in + Dim(pad_begin), Dim(stride)));
  } else if (ceil_mode) {
    return Dim::unknown();  // padding wider than the window: a case split not expressed
  }
  return out;
}

Dim same_out_dim(const Dim& in, int64_t stride) {
  if (stride <= 0) return Dim::unknown();
  return Dim::ceil_div(in, Dim(stride));
}

std::optional<std::vector<int64_t>> known_dims(const Shape& s) {
  if (!s.fully_known()) return std::nullopt;
  std::vector<int64_t> v;
  v.reserve(s.dims.size());
  for (const auto& d : s.dims) v.push_back(d.value());
  return v;
}

int64_t ceil_log2(int64_t n) {
  int64_t k = 0;
  while (k < 63 && (int64_t{1} << k) < n) ++k;
  return k;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (auto x : v)
    if (x < 0 || !checked_mul(p, x, &p)) return INT64_MAX;  // saturates: above every element bound
  return p;
}

std::optional<std::vector<Dim>> exact_ints(const ConstData& d) {
  if (!d.is_float) return d.ints;
  std::vector<Dim> out;
  out.reserve(d.floats.size());
  for (double f : d.floats) {
    auto x = exact_int64(f);
    if (!x || *x > (int64_t{1} << 53) || *x < -(int64_t{1} << 53))
      return std::nullopt;  // beyond 2^53 a double is no exact int
    out.push_back(Dim(*x));
  }
  return out;
}

ConstData float_valued(std::vector<Dim> ints) {
  ConstData r;
  bool all_known = true;
  for (const auto& x : ints) all_known = all_known && x.is_known();
  if (!all_known) {
    r.ints = std::move(ints);
    return r;
  }
  r.is_float = true;
  for (const auto& x : ints) r.floats.push_back(static_cast<double>(x.value()));
  return r;
}

void fold_elementwise(InferContext& ctx, const std::function<Dim(const std::vector<Dim>&)>& fi,
                      const std::function<double(const std::vector<double>&)>& ff,
                      const std::function<Dim(const std::vector<Dim>&)>& fi_float, size_t arity) {
  Value* out = ctx.output(0);
  if (!out) return;
  auto od = known_dims(out->shape);
  if (!od || product(*od) > limits().max_const_elements) return;
  // The functions read operands 0..arity-1: every one must be present (a node may have fewer inputs than
  // its op needs, or an omitted one between), and each must broadcast to the output (no higher rank, each
  // dim 1 or the output's), or an element's offset would fall outside its contents.
  if (ctx.num_inputs() < std::max<size_t>(arity, 1)) return;
  std::vector<const ConstData*> ins;
  std::vector<std::vector<int64_t>> in_dims;
  ins.reserve(ctx.num_inputs());
  in_dims.reserve(ctx.num_inputs());
  bool any_float = false, any_symbolic = false;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return;
    const ConstData* d = ctx.in_data(i);
    auto dims = known_dims(ctx.in_shape(i));
    if (!d || !dims || static_cast<int64_t>(d->size()) != product(*dims)) return;
    if (dims->size() > od->size()) return;
    for (size_t j = 0; j < dims->size(); ++j) {
      const int64_t x = (*dims)[j], o = (*od)[od->size() - dims->size() + j];
      if (x != 1 && x != o) return;
    }
    any_float = any_float || d->is_float;
    if (!d->is_float)
      for (const auto& x : d->ints) any_symbolic = any_symbolic || !x.is_known();
    ins.push_back(d);
    in_dims.push_back(std::move(*dims));
  }
  if (ins.empty()) return;
  // Float shape arithmetic over symbolic sizes (arange(seq) in float, a size cast to float and back):
  // exact integers go the integer way, on a float output with exact (not floor) semantics.
  const bool float_out = is_float(out->dtype);
  std::vector<ConstData> converted;
  if (any_symbolic && any_float) {
    converted.reserve(ins.size());
    for (auto& d : ins) {
      auto xs = exact_ints(*d);
      if (!xs) return;
      ConstData c;
      c.ints = std::move(*xs);
      converted.push_back(std::move(c));
    }
    for (size_t k = 0; k < ins.size(); ++k) ins[k] = &converted[k];
    any_float = false;
  }
  const auto& fint = (float_out && fi_float) ? fi_float : fi;
  if (any_float ? !ff : !fint) return;
  const int64_t n = product(*od);
  const size_t r = od->size();
  ConstData res;
  res.is_float = any_float && float_out;
  if (res.is_float)
    res.floats.reserve(static_cast<size_t>(n));
  else
    res.ints.reserve(static_cast<size_t>(n));
  std::vector<int64_t> idx(r, 0);
  std::vector<Dim> ai;  // one element's operands: cleared, not reallocated, per element
  std::vector<double> af;
  ai.reserve(ins.size());
  af.reserve(ins.size());
  for (int64_t e = 0; e < n; ++e) {
    ai.clear();
    af.clear();
    for (size_t k = 0; k < ins.size(); ++k) {
      // Broadcast index: right-aligned, size-1 dims repeat.
      const auto& dk = in_dims[k];
      int64_t off = 0;
      for (size_t j = 0; j < dk.size(); ++j) {
        int64_t pos = idx[r - dk.size() + j];
        off = off * dk[j] + (dk[j] == 1 ? 0 : pos);
      }
      if (any_float) {
        af.push_back(ins[k]->is_float ? ins[k]->floats[off]
                                      : static_cast<double>(ins[k]->ints[off].maybe_value().value_or(0)));
        if (!ins[k]->is_float && !ins[k]->ints[off].is_known()) return;
      } else {
        ai.push_back(ins[k]->ints[off]);
      }
    }
    if (any_float) {
      double v = ff(af);
      if (res.is_float)
        res.floats.push_back(v);
      else
        res.ints.push_back(trunc_int64(v) ? Dim(*trunc_int64(v)) : Dim());
    } else {
      res.ints.push_back(fint(ai));
    }
    for (size_t j = r; j-- > 0;) {
      if (++idx[j] < (*od)[j]) break;
      idx[j] = 0;
    }
  }
  if (!res.is_float && float_out) res = float_valued(std::move(res.ints));
  ctx.set_output_data(0, std::move(res));
}

Dim product(const std::vector<Dim>& v) {
  Dim p(1);
  for (const auto& d : v) p = p * d;
  return p;
}

OpCost cost_zero(const CostContext&) { return OpCost{Count{}, Count{}}; }

OpCost cost_per_out_elem(const CostContext& c, int64_t k) {
  return OpCost{Count{}, c.out_numel(0) * Count{k}};
}

OpCost cost_per_out_elem_1(const CostContext& c) { return cost_per_out_elem(c, 1); }

OpCost cost_per_in_elem_1(const CostContext& c) { return OpCost{Count{}, c.in_numel(0)}; }

OpCost cost_unknown(const CostContext&) { return OpCost{Count::unknown(), Count::unknown()}; }

OpCost cost_contraction(const Count& macs, const Count& extra) {
  return OpCost{macs, macs * Count{2} + extra};
}
OpCost cost_contraction_bias(const Count& macs, const Count& bias) {
  return OpCost{macs, macs * Count{2} + bias, bias};
}

// ---- conv/pool windows ----------------------------------------------------------------------------
ConvWindow decode_conv_window(InferContext& ctx, size_t n, const Shape* w, bool use_dilations) {
  const Node& node = ctx.node();
  ConvWindow win;
  auto list = [&](const char* name, size_t size, int64_t dflt) {
    std::vector<int64_t> v = node.attr_ints(name);
    if (!node.has_attr(name)) return std::vector<int64_t>(size, dflt);
    if (v.size() != size)
      ctx.fail(std::string(name) + " has " + std::to_string(v.size()) + " values, expected " +
               std::to_string(size));
    return v;
  };
  win.strides = list("strides", n, 1);
  win.dilations = use_dilations ? list("dilations", n, 1) : std::vector<int64_t>(n, 1);
  win.explicit_pads = node.has_attr("pads");
  win.pads = list("pads", 2 * n, 0);
  win.auto_pad = node.attr_s("auto_pad", "NOTSET");
  win.ceil_mode = node.attr_i("ceil_mode", 0) != 0;
  for (size_t i = 0; i < n; ++i)
    if (win.strides[i] <= 0 || win.dilations[i] <= 0)
      ctx.fail("strides and dilations must be positive (axis " + std::to_string(i) + ": stride " +
               std::to_string(win.strides[i]) + ", dilation " + std::to_string(win.dilations[i]) + ")");
  std::vector<Dim> wk;
  if (w && w->rank_known) {
    if (w->rank() != n + 2)
      ctx.fail("weight " + w->str() + " has rank " + std::to_string(w->rank()) + ", expected " +
               std::to_string(n + 2));
    wk.assign(w->dims.begin() + 2, w->dims.end());
  }
  if (node.has_attr("kernel_shape")) {
    win.kernel = list("kernel_shape", n, 1);
    for (size_t i = 0; i < wk.size(); ++i)
      if (wk[i].is_known() && wk[i].value() != win.kernel[i])
        ctx.fail("kernel_shape " + std::to_string(win.kernel[i]) + " vs weight spatial dim " +
                 std::to_string(wk[i].value()) + " (axis " + std::to_string(i) + ")");
  } else if (!wk.empty()) {
    bool all_known = true;
    for (const auto& d : wk) all_known = all_known && d.is_known();
    if (all_known)
      for (const auto& d : wk) win.kernel.push_back(d.value());
  }
  return win;
}

std::vector<Dim> conv_window_out_dims(InferContext& ctx, const ConvWindow& w, const std::vector<Dim>& in) {
  const size_t n = in.size();
  std::vector<Dim> out(n);
  const bool same = !w.explicit_pads && (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER");
  const bool valid = !w.explicit_pads && w.auto_pad == "VALID";
  if (w.kernel.size() != n && !same) return out;  // kernel unknown: only SAME sizes are known
  for (size_t i = 0; i < n; ++i) {
    if (same) {
      out[i] = same_out_dim(in[i], w.strides[i]);
    } else {
      int64_t pb = valid ? 0 : w.pads[i], pe = valid ? 0 : w.pads[i + n];
      out[i] = conv_out_dim(in[i], w.kernel[i], w.strides[i], w.dilations[i], pb, pe, w.ceil_mode);
    }
    if (out[i].is_known() && out[i].value() < 1 && in[i].is_known() && in[i].value() >= 1)
      ctx.fail("spatial axis " + std::to_string(i) + ": input " + std::to_string(in[i].value()) +
               " with kernel " + (i < w.kernel.size() ? std::to_string(w.kernel[i]) : std::string("?")) +
               ", stride " + std::to_string(w.strides[i]) + ", dilation " + std::to_string(w.dilations[i]) +
               " gives output size " + std::to_string(out[i].value()));
  }
  return out;
}

}  // namespace flopwise
