// shape_inference/ops/tensor.cc — tensor family: shape arithmetic and data movement (Shape, Reshape, Gather,
// Concat, Slice, ...); its data-dependent selections are tensor_datadep.cc, its ops that compute
// tensor_compute.cc, the helpers all three share tensor_common.h. Exported models compute reshape targets
// with Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains, often on symbolic dims, so every op here
// that moves small integer tensors also moves their known contents (ConstData, ints as Dims): a `batch` read
// by Shape arrives at Reshape as `batch`. Costs: layout ops are free ("layout only"); the few that compute
// say what they count.
//
// Symbolic Slice bounds: a symbolic dim is assumed to be at least as large as a constant index used
// on it (x[:, 1:] on `seq` gives `seq - 1`, x[:, -1:] gives 1), and a symbolic bound (a value read
// by Shape) is assumed to lie inside the sliced dim. Known dims use ONNX's exact clamping.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>

#include "../helpers.h"
#include "tensor_common.h"

namespace flopwise {

namespace {

using namespace tensor_ops;

// Slice bounds at or beyond +-2^31-1 mean "to the end" (exporters write INT64_MAX or INT32_MAX).
constexpr int64_t kToEnd = 2147483647;

// ---- Shape, Size, Identity ---------------------------------------------------------------------------
void infer_shape(InferContext& c) {
  const Shape& in = c.in_shape(0);
  if (!in.rank_known) {
    c.set_output(0, DType::Int64, Shape::unknown_of_rank(1));
    return;
  }
  const int64_t r = static_cast<int64_t>(in.rank());
  int64_t start = 0, end = r;
  if (c.node().opset >= 15) {  // Shape-15: start/end select a range of dims, clamped
    start = c.node().attr_i("start", 0);
    end = c.node().attr_i("end", r);
  }
  auto clamp = [r](int64_t v) { return std::clamp(v < 0 ? v + r : v, int64_t{0}, r); };
  start = clamp(start);
  end = std::max(start, clamp(end));
  ConstData d;
  d.ints.assign(in.dims.begin() + start, in.dims.begin() + end);
  c.set_output(0, DType::Int64, Shape({Dim(end - start)}));
  c.set_output_data(0, std::move(d));
}

void infer_size(InferContext& c) {
  c.set_output(0, DType::Int64, Shape::scalar());
  const Shape& in = c.in_shape(0);
  if (!in.rank_known) return;
  ConstData d;
  d.ints.push_back(in.numel());
  c.set_output_data(0, std::move(d));
}

void infer_identity(InferContext& c) {
  infer_same_as_input0(c);
  copy_data(c);
}

// ---- Reshape, Flatten, Squeeze, Unsqueeze --------------------------------------------------------------
// The -1 entry of a Reshape target: input elements / the other output dims. Factors copied from the
// input (0 entries) and factors provably equal on both sides cancel first, so `?xseqx768` ->
// [0, -1, 12, 64] still gives `seq`.
Dim reshape_inferred_dim(InferContext& c, const Shape& in, const std::vector<Dim>& out,
                         const std::vector<int>& copied, size_t infer_at) {
  if (!in.rank_known) return Dim::unknown();
  std::vector<Dim> num = in.dims;
  std::vector<bool> num_used(num.size(), false);
  Dim den(1);
  for (size_t i = 0; i < out.size(); ++i) {
    if (i == infer_at) continue;
    if (copied[i] >= 0) {
      num_used[copied[i]] = true;
      continue;
    }
    bool cancelled = false;
    for (size_t j = 0; j < num.size() && !cancelled; ++j) {
      if (!num_used[j] && num[j].same_as(out[i]) && !num[j].is_known()) {
        num_used[j] = true;
        cancelled = true;
      }
    }
    if (!cancelled) den = den * out[i];
  }
  Dim total(1);
  for (size_t j = 0; j < num.size(); ++j)
    if (!num_used[j]) total = total * num[j];
  if (total.is_known() && den.is_known()) {
    int64_t t = total.value(), d = den.value();
    if (d == 0) {
      if (t != 0) c.fail("cannot infer -1 in " + dims_text(out) + ": the other dims multiply to 0");
      return Dim::unknown();
    }
    if (t % d != 0)
      c.fail("cannot reshape " + in.str() + " into " + dims_text(out) + ": " + std::to_string(t) +
             " elements do not divide by " + std::to_string(d));
    return Dim(t / d);
  }
  return total / den;
}

void infer_reshape(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  const bool allowzero = c.node().opset >= 14 && c.node().attr_i("allowzero", 0) != 0;
  auto target = in_dim_data(c, 1);
  if (!target) {
    auto n = vector_length(c, 1);
    c.set_output(0, t, n ? Shape::unknown_of_rank(static_cast<size_t>(*n)) : Shape::unknown_rank());
    copy_data(c);
    return;
  }
  std::vector<Dim> out(target->size());
  std::vector<int> copied(target->size(), -1);  // input position a 0 entry copies
  std::optional<size_t> infer_at;
  bool has_zero = false;
  for (size_t i = 0; i < target->size(); ++i) {
    const Dim& v = (*target)[i];
    if (!v.is_known()) {
      out[i] = v;  // symbolic (from Shape data) or unknown
      continue;
    }
    const int64_t x = v.value();
    if (x == -1) {
      if (infer_at) c.fail("more than one -1 in target shape " + dims_text(*target));
      infer_at = i;
    } else if (x == 0 && !allowzero) {
      if (in.rank_known) {
        if (i >= in.rank())
          c.fail("target shape " + dims_text(*target) + " copies dim " + std::to_string(i) + " (0) of " +
                 in.str());
        out[i] = in.dims[i];
        copied[i] = static_cast<int>(i);
      }
    } else if (x < 0) {
      c.fail("invalid dim " + std::to_string(x) + " in target shape " + dims_text(*target));
    } else {
      has_zero = has_zero || x == 0;
      out[i] = v;
    }
  }
  if (infer_at && has_zero) c.fail("allowzero=1 target shape " + dims_text(*target) + " has both 0 and -1");
  if (infer_at) {
    out[*infer_at] = reshape_inferred_dim(c, in, out, copied, *infer_at);
  } else if (in.fully_known()) {
    Shape o(out);
    const auto on = o.numel().maybe_value(), inn = in.numel().maybe_value();  // unknown past int64
    if (on && inn && *on != *inn)
      c.fail("cannot reshape " + in.str() + " (" + in.numel().str() + " elements) into " + o.str() + " (" +
             o.numel().str() + " elements)");
  }
  c.set_output(0, t, Shape(out));
  copy_data(c);
}

void infer_flatten(InferContext& c) {
  const Shape& in = c.in_shape(0);
  if (!in.rank_known) {
    c.set_output(0, c.in_dtype(0), Shape::unknown_of_rank(2));
    copy_data(c);
    return;
  }
  const int64_t r = static_cast<int64_t>(in.rank());
  int64_t axis = c.node().attr_i("axis", 1);
  if (axis < -r || axis > r)
    c.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  Dim outer(1), inner(1);
  for (int64_t i = 0; i < r; ++i) {
    if (i < axis)
      outer = outer * in.dims[i];
    else
      inner = inner * in.dims[i];
  }
  c.set_output(0, c.in_dtype(0), Shape({outer, inner}));
  copy_data(c);
}

void infer_squeeze(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  copy_data(c);  // contents never change, whatever is known about the shape
  if (!in.rank_known) {
    c.set_output(0, t, Shape::unknown_rank());
    return;
  }
  const int64_t r = static_cast<int64_t>(in.rank());
  std::vector<Dim> out;
  if (!c.has_input(1)) {  // no axes: drop every dim that is 1; a dim not known may or may not be 1
    for (const auto& d : in.dims) {
      if (!d.is_known()) {
        c.set_output(0, t, Shape::unknown_rank());
        return;
      }
      if (d.value() != 1) out.push_back(d);
    }
  } else {
    auto axes = c.in_ints(1);
    if (!axes) {
      auto k = vector_length(c, 1);
      c.set_output(
          0, t, k && *k <= r ? Shape::unknown_of_rank(static_cast<size_t>(r - *k)) : Shape::unknown_rank());
      return;
    }
    auto ax = normalize_axes(c, *axes, r);
    for (int64_t i = 0; i < r; ++i) {
      if (std::find(ax.begin(), ax.end(), i) == ax.end()) {
        out.push_back(in.dims[i]);
      } else if (in.dims[i].is_known() && in.dims[i].value() != 1) {
        c.fail("cannot squeeze axis " + std::to_string(i) + " of " + in.str() + ": its size is " +
               std::to_string(in.dims[i].value()) + ", not 1");
      }
    }
  }
  c.set_output(0, t, Shape(out));
}

void infer_unsqueeze(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  auto axes = c.in_ints(1);
  if (!axes || !in.rank_known) {
    auto k = vector_length(c, 1);
    if (axes) k = static_cast<int64_t>(axes->size());
    c.set_output(0, t, k && in.rank_known ? Shape::unknown_of_rank(in.rank() + *k) : Shape::unknown_rank());
    copy_data(c);
    return;
  }
  const int64_t out_rank = static_cast<int64_t>(in.rank() + axes->size());
  auto ax = normalize_axes(c, *axes, out_rank);
  std::vector<Dim> out;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i)
    out.push_back(std::find(ax.begin(), ax.end(), i) != ax.end() ? Dim(1) : in.dims[next++]);
  c.set_output(0, t, Shape(out));
  copy_data(c);
}

// ---- Transpose, Concat, Split ----------------------------------------------------------------------------
void infer_transpose(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  std::vector<int64_t> perm = c.node().attr_ints("perm");
  if (!in.rank_known) {
    c.set_output(0, t, perm.empty() ? Shape::unknown_rank() : Shape::unknown_of_rank(perm.size()));
    return;
  }
  const size_t r = in.rank();
  if (perm.empty())
    for (size_t i = r; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  if (perm.size() != r)
    c.fail("perm " + dims_text(perm) + " has " + std::to_string(perm.size()) + " entries for " + in.str());
  std::vector<bool> seen(r, false);
  std::vector<Dim> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(r) || seen[p])
      c.fail("perm " + dims_text(perm) + " is not a permutation");
    seen[p] = true;
    out.push_back(in.dims[p]);
  }
  c.set_output(0, t, Shape(out));
  if (auto k = known_tensor(c, 0)) {
    std::vector<int64_t> od, st = strides_of(k->dims);
    for (int64_t p : perm) od.push_back(k->dims[p]);
    fold_by_index(c, 0, *k->data, od, [&](const std::vector<int64_t>& idx) {
      int64_t off = 0;
      for (size_t i = 0; i < r; ++i) off += idx[i] * st[perm[i]];
      return off;
    });
  }
}

void infer_concat(InferContext& c) {
  const int opset = c.node().opset;
  if (opset >= 4 && !c.node().has_attr("axis")) c.fail("the axis attribute is required");
  const int64_t axis = c.node().attr_i("axis", 1);  // Concat-1: default 1
  DType t = DType::Undefined;
  std::optional<size_t> rank;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    if (t == DType::Undefined) t = c.in_dtype(i);
    const Shape& s = c.in_shape(i);
    if (!s.rank_known) continue;
    if (rank && *rank != s.rank())
      c.fail("inputs have different ranks: " + std::to_string(*rank) + " vs " + std::to_string(s.rank()) +
             " (" + s.str() + ")");
    rank = s.rank();
  }
  if (!rank) {
    c.set_output(0, t, Shape::unknown_rank());
    return;
  }
  const int64_t a = normalize_axis(c, axis, static_cast<int64_t>(*rank));
  std::vector<Dim> out(*rank);
  Dim sum(0);
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    const Shape& s = c.in_shape(i);
    if (!s.rank_known) {
      sum = Dim::unknown();
      continue;
    }
    sum = sum + s.dims[a];
    for (size_t j = 0; j < *rank; ++j)
      if (static_cast<int64_t>(j) != a) out[j] = merge_dim(c, out[j], s.dims[j], "Concat non-axis dim");
  }
  out[a] = sum;
  c.set_output(0, t, Shape(out));
  // Contents: the usual case is 1-D pieces of a reshape target; any axis works the same way.
  std::vector<KnownTensor> parts;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    auto k = known_tensor(c, i);
    if (!k || (!parts.empty() && k->data->is_float != parts[0].data->is_float)) return;
    parts.push_back(*k);
  }
  auto od = known_dims(Shape(out));
  if (parts.empty() || !od || !small_numel(*od)) return;
  ConstData r;
  r.is_float = parts[0].data->is_float;
  int64_t outer = 1;
  for (int64_t j = 0; j < a; ++j) outer *= parts[0].dims[j];
  for (int64_t o = 0; o < outer; ++o)
    for (const auto& p : parts) {
      int64_t chunk = 1;
      for (size_t j = a; j < p.dims.size(); ++j) chunk *= p.dims[j];
      for (int64_t e = o * chunk; e < (o + 1) * chunk; ++e) {
        if (r.is_float)
          r.floats.push_back(p.data->floats[e]);
        else
          r.ints.push_back(p.data->ints[e]);
      }
    }
  c.set_output_data(0, std::move(r));
}

void infer_split(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  const size_t n = c.num_outputs();
  if (!in.rank_known) {
    for (size_t i = 0; i < n; ++i) c.set_output(i, t, Shape::unknown_rank());
    return;
  }
  const int64_t a = normalize_axis(c, c.node().attr_i("axis", 0), static_cast<int64_t>(in.rank()));
  const Dim& d = in.dims[a];
  std::vector<Dim> sizes(n);
  if (c.has_input(1)) {  // explicit split sizes
    if (auto s = in_dim_data(c, 1)) {
      if (s->size() != n)
        c.fail("split " + dims_text(*s) + " has " + std::to_string(s->size()) + " entries for " +
               std::to_string(n) + " outputs");
      Dim total(0);
      for (const auto& x : *s) {
        if (x.is_known() && x.value() < 0) c.fail("negative size in split " + dims_text(*s));
        total = total + x;
      }
      if (total.is_known() && d.is_known() && total.value() != d.value())
        c.fail("split " + dims_text(*s) + " sums to " + total.str() + ", but axis " + std::to_string(a) +
               " of " + in.str() + " has " + d.str());
      sizes = *s;
    }
  } else if (c.node().opset >= 18 && c.node().has_attr("num_outputs")) {
    // Split-18 num_outputs: chunks of ceil(d/m), the last one smaller when d does not divide evenly.
    const int64_t m = c.node().attr_i("num_outputs", 0);
    if (m != static_cast<int64_t>(n))
      c.fail("num_outputs " + std::to_string(m) + " but the node has " + std::to_string(n) + " outputs");
    if (m <= 0) c.fail("num_outputs " + std::to_string(m) + " must be positive");
    const Dim chunk_dim = Dim::ceil_div(d, Dim(m)), last_dim = d - chunk_dim * Dim(m - 1);  // checked
    if (d.is_known() && chunk_dim.is_known() && last_dim.is_known()) {
      const int64_t chunk = chunk_dim.value(), last = last_dim.value();
      if (last < 0)
        c.fail("cannot split " + d.str() + " into " + std::to_string(m) + " chunks of " +
               std::to_string(chunk));
      for (size_t i = 0; i < n; ++i) sizes[i] = Dim(i + 1 < n ? chunk : last);
    } else if (d.is_known()) {
      for (auto& s : sizes) s = Dim::unknown();
    } else {
      for (auto& s : sizes) s = d / Dim(m);
    }
  } else if (n > 0) {  // equal parts, one per output
    if (d.is_known() && d.value() % static_cast<int64_t>(n) != 0)
      c.fail("cannot split " + d.str() + " into " + std::to_string(n) + " equal parts");
    for (auto& s : sizes) s = d / Dim(static_cast<int64_t>(n));
  }
  for (size_t i = 0; i < n; ++i) {
    Shape o = in;
    o.dims[a] = sizes[i];
    c.set_output(i, t, o);
  }
  // Contents of a split 1-D tensor (a shape vector split into pieces).
  auto k = known_tensor(c, 0);
  if (!k || k->dims.size() != 1) return;
  int64_t off = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!sizes[i].is_known()) return;
    const int64_t len = sizes[i].value(), base = off;
    if (off + len > k->dims[0]) return;
    fold_by_index(c, i, *k->data, {len}, [base](const std::vector<int64_t>& idx) { return base + idx[0]; });
    off += len;
  }
}

// ---- Slice ---------------------------------------------------------------------------------------
// Position of a slice bound within a dim of size d (ONNX's clamping for known values; see the file
// comment for symbolic ones).
Dim slice_pos(const Dim& d, const Dim& v, int64_t step, bool is_start) {
  if (v.is_known() && d.is_known()) {
    const int64_t n = d.value();
    int64_t x = v.value();
    if (x < 0) x += n;  // x >= INT64_MIN and n >= 0: no overflow
    const int64_t lo = (step < 0 && !is_start) ? -1 : 0, hi = step < 0 ? n - 1 : n;
    return Dim(std::min(std::max(x, lo), hi));
  }
  // A symbolic bound (a length such as seq, taken as >= 0) is clamped to the dim like a known one:
  // min(seq, 128) rows of a 128-row table, exact for every seq.
  if (!v.is_known()) return step < 0 ? Dim::min(v, d - Dim(1)) : Dim::min(v, d);
  const int64_t x = v.value();
  if (x >= kToEnd) return step < 0 ? d - Dim(1) : d;
  if (x <= -kToEnd) return step < 0 ? Dim(-1) : Dim(0);
  if (x < 0) return d + Dim(x);
  return Dim(x);
}

Dim slice_extent(const Dim& d, const Dim& start, const Dim& end, int64_t step) {
  if (d.is_known() && d.value() == 0) return Dim(0);
  const Dim s = slice_pos(d, start, step, true), e = slice_pos(d, end, step, false);
  if (step == INT64_MIN) return Dim::unknown();  // -step would overflow
  Dim n = step > 0 ? Dim::ceil_div(e - s, Dim(step)) : Dim::ceil_div(s - e, Dim(-step));
  if (n.is_known() && n.value() < 0) return Dim(0);
  return n;
}

void infer_slice(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  if (!in.rank_known) {
    c.set_output(0, t, Shape::unknown_rank());
    return;
  }
  const int64_t r = static_cast<int64_t>(in.rank());
  auto starts = in_dim_data(c, 1), ends = in_dim_data(c, 2);
  std::optional<std::vector<int64_t>> axes, steps;
  // Number of sliced axes, from whichever input tells it.
  std::optional<int64_t> k = starts ? std::optional<int64_t>(starts->size()) : vector_length(c, 1);
  if (c.has_input(3)) {
    if (auto ax = c.in_ints(3)) axes = normalize_axes(c, *ax, r);
  } else if (k) {
    if (*k > r) c.fail(std::to_string(*k) + " starts for " + in.str());
    axes = all_axes(static_cast<size_t>(*k));
  }
  if (c.has_input(4)) {
    steps = c.in_ints(4);
  } else if (k) {
    steps = std::vector<int64_t>(static_cast<size_t>(*k), 1);
  }
  std::vector<Dim> out = in.dims;
  if (!starts || !ends || !axes || !steps) {
    if (axes)
      for (int64_t a : *axes) out[a] = Dim::unknown();
    else
      out.assign(in.rank(), Dim::unknown());
    c.set_output(0, t, Shape(out));
    return;
  }
  if (starts->size() != ends->size() || axes->size() != starts->size() || steps->size() != starts->size())
    c.fail("starts, ends, axes and steps have different lengths: " + std::to_string(starts->size()) + ", " +
           std::to_string(ends->size()) + ", " + std::to_string(axes->size()) + ", " +
           std::to_string(steps->size()));
  for (size_t i = 0; i < axes->size(); ++i) {
    if ((*steps)[i] == 0) c.fail("step 0 on axis " + std::to_string((*axes)[i]));
    out[(*axes)[i]] = slice_extent(in.dims[(*axes)[i]], (*starts)[i], (*ends)[i], (*steps)[i]);
  }
  c.set_output(0, t, Shape(out));
  // Contents: every axis becomes (first index, step) over the known input.
  auto kt = known_tensor(c, 0);
  auto od = known_dims(Shape(out));
  if (!kt || !od) return;
  std::vector<int64_t> first(r, 0), step(r, 1);
  for (size_t i = 0; i < axes->size(); ++i) {
    const int64_t a = (*axes)[i];
    Dim s = slice_pos(Dim(kt->dims[a]), (*starts)[i], (*steps)[i], true);
    if (!s.is_known()) return;
    first[a] = s.value();
    step[a] = (*steps)[i];
  }
  const auto st = strides_of(kt->dims);
  fold_by_index(c, 0, *kt->data, *od, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (int64_t j = 0; j < r; ++j) {
      const int64_t p = first[j] + idx[j] * step[j];
      if (p < 0 || p >= kt->dims[j]) return int64_t{-1};
      off += p * st[j];
    }
    return off;
  });
}

// ---- Gather family ---------------------------------------------------------------------------------
void infer_gather(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& data = c.in_shape(0);
  const Shape& ind = c.in_shape(1);
  if (!data.rank_known || !ind.rank_known) {
    c.set_output(0, t, Shape::unknown_rank());
    return;
  }
  const int64_t r = static_cast<int64_t>(data.rank());
  const int64_t a = normalize_axis(c, c.node().attr_i("axis", 0), r);
  std::vector<Dim> out(data.dims.begin(), data.dims.begin() + a);
  out.insert(out.end(), ind.dims.begin(), ind.dims.end());
  out.insert(out.end(), data.dims.begin() + a + 1, data.dims.end());
  c.set_output(0, t, Shape(out));
  auto idx_vals = c.in_ints(1);
  if (idx_vals && data.dims[a].is_known()) {
    const int64_t n = data.dims[a].value();
    for (int64_t v : *idx_vals)
      if (v < -n || v >= n)
        c.fail("index " + std::to_string(v) + " out of range for axis " + std::to_string(a) + " of " +
               data.str());
  }
  // Contents: the Shape -> Gather idiom picks dims (batch, seq) out of a shape vector.
  auto kt = known_tensor(c, 0);
  auto od = known_dims(Shape(out));
  auto id = known_dims(ind);
  if (!kt || !od || !idx_vals || !id || static_cast<int64_t>(idx_vals->size()) != product(*id)) return;
  const int64_t q = static_cast<int64_t>(id->size()), n = kt->dims[a];
  const auto st = strides_of(kt->dims), ist = strides_of(*id);
  fold_by_index(c, 0, *kt->data, *od, [&](const std::vector<int64_t>& o) {
    int64_t off = 0, flat = 0;
    for (int64_t j = 0; j < a; ++j) off += o[j] * st[j];
    for (int64_t j = 0; j < q; ++j) flat += o[a + j] * ist[j];
    int64_t g = (*idx_vals)[flat];
    if (g < 0) g += n;
    off += g * st[a];
    for (int64_t j = a + 1; j < r; ++j) off += o[j + q - 1] * st[j];
    return off;
  });
}

void infer_gather_elements(InferContext& c) {
  const Shape& data = c.in_shape(0);
  const Shape& ind = c.in_shape(1);
  if (data.rank_known && ind.rank_known && data.rank() != ind.rank())
    c.fail("data " + data.str() + " and indices " + ind.str() + " have different ranks");
  if (data.rank_known) normalize_axis(c, c.node().attr_i("axis", 0), static_cast<int64_t>(data.rank()));
  c.set_output(0, c.in_dtype(0), ind);
}

// GatherND: output = indices.shape[:-1] + data.shape[batch_dims + k:], k = indices.shape[-1].
void infer_gather_nd(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& data = c.in_shape(0);
  const Shape& ind = c.in_shape(1);
  const int64_t b = c.node().attr_i("batch_dims", 0);
  if (!data.rank_known || !ind.rank_known || ind.rank() == 0 || !ind.dims.back().is_known()) {
    c.set_output(0, t, Shape::unknown_rank());
    return;
  }
  const int64_t r = static_cast<int64_t>(data.rank()), q = static_cast<int64_t>(ind.rank());
  const int64_t k = ind.dims.back().value();
  if (b < 0 || b >= std::min(r, q))
    c.fail("batch_dims " + std::to_string(b) + " for data " + data.str() + ", indices " + ind.str());
  if (k < 1 || k > r - b)
    c.fail("indices " + ind.str() + " address " + std::to_string(k) + " dims of data " + data.str() +
           " past batch_dims " + std::to_string(b));
  std::vector<Dim> out;
  for (int64_t i = 0; i < q - 1; ++i)
    out.push_back(i < b ? merge_dim(c, data.dims[i], ind.dims[i], "GatherND batch dim") : ind.dims[i]);
  out.insert(out.end(), data.dims.begin() + b + k, data.dims.end());
  c.set_output(0, t, Shape(out));
}

// Scatter, ScatterND, ScatterElements: output is data with some elements replaced.
void infer_scatter(InferContext& c) { infer_same_as_input0(c); }

// ---- Expand, Tile, Pad ---------------------------------------------------------------------------------
// Broadcast source offset of output index `o` in a known input of dims `dims` (right-aligned).
int64_t broadcast_offset(const std::vector<int64_t>& o, const std::vector<int64_t>& dims) {
  int64_t off = 0;
  const size_t shift = o.size() - dims.size();
  for (size_t j = 0; j < dims.size(); ++j) off = off * dims[j] + (dims[j] == 1 ? 0 : o[shift + j]);
  return off;
}

void infer_expand(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  auto target = in_dim_data(c, 1);
  if (!target) {
    auto k = vector_length(c, 1);
    if (!k || !in.rank_known) {
      c.set_output(0, t, Shape::unknown_rank());
      return;
    }
    // Rank is known; an input dim that is known and not 1 survives broadcasting unchanged.
    const size_t r = std::max(in.rank(), static_cast<size_t>(*k));
    std::vector<Dim> out(r);
    for (size_t i = 0; i < in.rank(); ++i) {
      const Dim& d = in.dims[i];
      if (d.is_known() && d.value() != 1) out[r - in.rank() + i] = d;
    }
    c.set_output(0, t, Shape(out));
    return;
  }
  for (const auto& d : *target)
    if (d.is_known() && d.value() < 0) c.fail("negative dim in Expand shape " + dims_text(*target));
  Shape out = broadcast_shapes(c, {in, Shape(*target)});
  c.set_output(0, t, out);
  auto kt = known_tensor(c, 0);
  auto od = known_dims(out);
  if (!kt || !od) return;
  fold_by_index(c, 0, *kt->data, *od,
                [&](const std::vector<int64_t>& o) { return broadcast_offset(o, kt->dims); });
}

void infer_tile(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  if (c.node().opset < 6) {  // Tile-1: input, tiles (scalar), axis (scalar)
    auto tiles = in_dim_data(c, 1);
    auto axis = c.in_ints(2);
    if (!in.rank_known || !axis || axis->size() != 1) {
      c.set_output(0, t, in.rank_known ? Shape::unknown_of_rank(in.rank()) : Shape::unknown_rank());
      return;
    }
    Shape out = in;
    const int64_t a = normalize_axis(c, (*axis)[0], static_cast<int64_t>(in.rank()));
    out.dims[a] = tiles && tiles->size() == 1 ? in.dims[a] * (*tiles)[0] : Dim::unknown();
    c.set_output(0, t, out);
    return;
  }
  auto reps = in_dim_data(c, 1);
  if (!in.rank_known || !reps) {
    auto k = reps ? std::optional<int64_t>(reps->size()) : vector_length(c, 1);
    if (in.rank_known) k = static_cast<int64_t>(in.rank());
    c.set_output(0, t, k ? Shape::unknown_of_rank(static_cast<size_t>(*k)) : Shape::unknown_rank());
    return;
  }
  if (reps->size() != in.rank())
    c.fail("repeats " + dims_text(*reps) + " has " + std::to_string(reps->size()) + " entries for " +
           in.str());
  std::vector<Dim> out;
  for (size_t i = 0; i < in.rank(); ++i) {
    if ((*reps)[i].is_known() && (*reps)[i].value() < 0) c.fail("negative repeat in " + dims_text(*reps));
    out.push_back(in.dims[i] * (*reps)[i]);
  }
  c.set_output(0, t, Shape(out));
  auto kt = known_tensor(c, 0);
  auto od = known_dims(Shape(out));
  if (!kt || !od) return;
  const auto st = strides_of(kt->dims);
  fold_by_index(c, 0, *kt->data, *od, [&](const std::vector<int64_t>& o) {
    int64_t off = 0;
    for (size_t j = 0; j < o.size(); ++j) off += (o[j] % kt->dims[j]) * st[j];
    return off;
  });
}

// Pad: pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...] over `axes` (Pad-18) or all axes.
void infer_pad(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  if (!in.rank_known) {
    auto k = vector_length(c, 1);
    c.set_output(
        0, t, k && !c.has_input(3) && *k % 2 == 0 ? Shape::unknown_of_rank(*k / 2) : Shape::unknown_rank());
    return;
  }
  const int64_t r = static_cast<int64_t>(in.rank());
  std::optional<std::vector<int64_t>> axes;
  if (c.has_input(3)) {
    if (auto ax = c.in_ints(3)) axes = normalize_axes(c, *ax, r);
  } else {
    axes = all_axes(in.rank());
  }
  auto pads = in_dim_data(c, 1);
  std::vector<Dim> out = in.dims;
  if (!pads || !axes) {
    if (axes)
      for (int64_t a : *axes) out[a] = Dim::unknown();
    else
      out.assign(in.rank(), Dim::unknown());
    c.set_output(0, t, Shape(out));
    return;
  }
  const size_t n = axes->size();
  if (pads->size() != 2 * n)
    c.fail("pads " + dims_text(*pads) + " has " + std::to_string(pads->size()) + " entries for " +
           std::to_string(n) + " axes");
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = (*axes)[i];
    Dim d = in.dims[a] + (*pads)[i] + (*pads)[i + n];
    if (d.is_known() && d.value() < 0)
      c.fail("pads " + dims_text(*pads) + " make axis " + std::to_string(a) + " of " + in.str() +
             " negative");
    out[a] = d;
  }
  c.set_output(0, t, Shape(out));
}

// ---- depth/space rearrangement ----------------------------------------------------------------------
// Shared contract of DepthToSpace and SpaceToDepth: a positive blocksize and an NCHW input. Returns
// the blocksize, or 0 when the input's rank is unknown (the output then gets rank 4, dims unknown).
int64_t decode_block_rearrange(InferContext& c) {
  const Shape& in = c.in_shape(0);
  const int64_t b = c.node().attr_i("blocksize", 0);
  if (b <= 0) c.fail("blocksize " + std::to_string(b) + " must be positive");
  if (!in.rank_known) {
    c.set_output(0, c.in_dtype(0), Shape::unknown_of_rank(4));
    return 0;
  }
  if (in.rank() != 4) c.fail("input " + in.str() + " must have rank 4");
  return b;
}

void infer_depth_to_space(InferContext& c) {
  const int64_t b = decode_block_rearrange(c);
  if (!b) return;
  const Shape& in = c.in_shape(0);
  const Dim& ch = in.dims[1];
  if (ch.is_known() && ch.value() % (b * b) != 0)
    c.fail("channels " + ch.str() + " of " + in.str() +
           " do not divide by blocksize^2 = " + std::to_string(b * b));
  c.set_output(0, c.in_dtype(0),
               Shape({in.dims[0], ch / Dim(b * b), in.dims[2] * Dim(b), in.dims[3] * Dim(b)}));
}

void infer_space_to_depth(InferContext& c) {
  const int64_t b = decode_block_rearrange(c);
  if (!b) return;
  const Shape& in = c.in_shape(0);
  for (int i = 2; i < 4; ++i)
    if (in.dims[i].is_known() && in.dims[i].value() % b != 0)
      c.fail("spatial dim " + in.dims[i].str() + " of " + in.str() + " does not divide by blocksize " +
             std::to_string(b));
  c.set_output(0, c.in_dtype(0),
               Shape({in.dims[0], in.dims[1] * Dim(b * b), in.dims[2] / Dim(b), in.dims[3] / Dim(b)}));
}

// ---- Trilu, ReverseSequence, CenterCropPad ----------------------------------------------------------
void infer_trilu(InferContext& c) {
  const Shape& in = c.in_shape(0);
  if (in.rank_known && in.rank() < 2) c.fail("input " + in.str() + " must have rank >= 2");
  infer_same_as_input0(c);
}

void infer_reverse_sequence(InferContext& c) {
  const Shape& in = c.in_shape(0);
  const Shape& lens = c.in_shape(1);
  Shape out = in;
  if (in.rank_known) {
    if (in.rank() < 2) c.fail("input " + in.str() + " must have rank >= 2");
    const int64_t b = normalize_axis(c, c.node().attr_i("batch_axis", 1), static_cast<int64_t>(in.rank()));
    normalize_axis(c, c.node().attr_i("time_axis", 0), static_cast<int64_t>(in.rank()));
    if (lens.rank_known && lens.rank() == 1)
      out.dims[b] = merge_dim(c, in.dims[b], lens.dims[0], "batch size");
  }
  c.set_output(0, c.in_dtype(0), out);
}

void infer_center_crop_pad(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  auto shape = in_dim_data(c, 1);
  const bool has_axes = c.node().has_attr("axes");
  if (!in.rank_known) {
    c.set_output(0, t, shape && !has_axes ? Shape(*shape) : Shape::unknown_rank());
    return;
  }
  const int64_t r = static_cast<int64_t>(in.rank());
  auto axes = has_axes ? normalize_axes(c, c.node().attr_ints("axes"), r) : all_axes(in.rank());
  std::vector<Dim> out = in.dims;
  if (!shape) {
    for (int64_t a : axes) out[a] = Dim::unknown();
  } else {
    if (shape->size() != axes.size())
      c.fail("shape " + dims_text(*shape) + " has " + std::to_string(shape->size()) + " entries for " +
             std::to_string(axes.size()) + " axes of " + in.str());
    for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = (*shape)[i];
  }
  c.set_output(0, t, Shape(out));
}

// ---- costs ------------------------------------------------------------------------------------------
// ScatterND/ScatterElements with a reduction (add, mul, min, max) combine each update: 1 per update.
OpCost cost_scatter_reduce(const CostContext& c) {
  if (c.node.attr_s("reduction", "none") == "none") return OpCost{Count{}, Count{}};
  return OpCost{Count{}, c.in_numel(2)};
}
}  // namespace

void register_tensor_ops(OpRegistry& r) {
  const char* layout = "layout only";
  // Shape arithmetic: contents propagate (ints as Dims, symbolic dims included).
  const std::pair<const char*, ShapeFn> dims_readers[] = {{"Shape", infer_shape}, {"Size", infer_size}};
  for (const auto& [name, infer] : dims_readers) {
    OpRecord rec{"", name, 1, 0, "layout only (reads dims)", infer, cost_zero};
    rec.reads_dims_only = true;
    r.add(rec);
  }
  reg(r, "Identity", 1, 0, layout, infer_identity, cost_zero);
  reg(r, "Reshape", 1, 0, layout, infer_reshape, cost_zero);
  reg(r, "Flatten", 1, 0, layout, infer_flatten, cost_zero);
  reg(r, "Squeeze", 1, 0, layout, infer_squeeze, cost_zero);
  reg(r, "Unsqueeze", 1, 0, layout, infer_unsqueeze, cost_zero);
  reg(r, "Transpose", 1, 0, layout, infer_transpose, cost_zero);
  reg(r, "Concat", 1, 0, layout, infer_concat, cost_zero);
  reg(r, "Split", 1, 0, layout, infer_split, cost_zero);
  reg(r, "Slice", 1, 0, layout, infer_slice, cost_zero);
  reg(r, "Gather", 1, 0, layout, infer_gather, cost_zero);
  reg(r, "GatherElements", 11, 0, layout, infer_gather_elements, cost_zero);
  reg(r, "GatherND", 11, 0, layout, infer_gather_nd, cost_zero);
  reg(r, "Expand", 8, 0, layout, infer_expand, cost_zero);
  reg(r, "Tile", 1, 0, layout, infer_tile, cost_zero);
  reg(r, "Pad", 1, 0, "layout only (any mode)", infer_pad, cost_zero);
  reg(r, "DepthToSpace", 1, 0, layout, infer_depth_to_space, cost_zero);
  reg(r, "SpaceToDepth", 1, 0, layout, infer_space_to_depth, cost_zero);
  reg(r, "CenterCropPad", 18, 0, layout, infer_center_crop_pad, cost_zero);
  reg(r, "ReverseSequence", 10, 0, layout, infer_reverse_sequence, cost_zero);
  reg(r, "Trilu", 14, 0, "layout only (masks a triangle)", infer_trilu, cost_zero);
  // EyeLike is registered by the generator family; OneHot by tensor_datadep.
  // Scatters: the old Scatter is ScatterElements without reduction.
  reg(r, "Scatter", 9, 0, layout, infer_scatter, cost_zero);
  reg(r, "ScatterND", 11, 0, "layout only; reduction != none: 1 per update element", infer_scatter,
      cost_scatter_reduce);
  reg(r, "ScatterElements", 11, 0, "layout only; reduction != none: 1 per update element", infer_scatter,
      cost_scatter_reduce);
  // Data-dependent output sizes: tensor_datadep.cc. Computing ops: tensor_compute.cc.
  // --train (flopwise/ops.h, TrainFacts): torch's views of their input's storage, and what keeps sizes only.
  for (const char* op : {"Identity", "Reshape", "Flatten"})
    train(r, op, TrainKeeps::nothing, TrainView::reshape, MovesElements{});
  for (const char* op : {"Squeeze", "Unsqueeze"})
    train(r, op, TrainKeeps::nothing, TrainView::same_order, MovesElements{});
  train(r, "Transpose", TrainKeeps::nothing, TrainView::transpose, MovesElements{});
  train(r, "Split", TrainKeeps::nothing, TrainView::split, MovesElements{});
  train(r, "Slice", TrainKeeps::nothing, TrainView::slice, MovesElements{});
  train(r, "Expand", TrainKeeps::nothing, TrainView::expand, MovesElements{});
  train(r, "Concat", TrainKeeps::nothing, TrainAutocast::promote, MovesElements{});
  train(r, "Gather", TrainKeeps::indices_in, MovesElements{});
  for (const char* op : {"GatherElements", "GatherND"}) train(r, op, TrainKeeps::indices_in);
  for (const char* op : {"Pad", "Tile"}) train(r, op, TrainKeeps::nothing);
  // Weight facts (flopwise/ops.h, WeightFacts): an embedding table.
  weights(r, "Gather", Learned{slots({0})});
}

}  // namespace flopwise
