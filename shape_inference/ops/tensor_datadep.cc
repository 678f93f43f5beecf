// shape_inference/ops/tensor_datadep.cc — tensor_datadep family: the tensor ops whose output size comes from
// the contents of an input (Compress, NonZero, Unique, torch's UniqueConsecutive) and OneHot, whose depth is
// an input's value. Layout only but NonZero's compares; the helpers are tensor_common.h's.
#include <algorithm>
#include <set>

#include "tensor_common.h"

namespace flopwise {

namespace {

using namespace tensor_ops;

// ---- data-dependent selections -------------------------------------------------------------------
// Their output sizes come from the contents: counted where the contents are known, else a fresh symbol of
// the node with the bounds the op implies (InferContext::data_dependent): Compress keeps 0..min(extent,
// condition length) slices, NonZero finds 0..numel hits, Unique 1..N distinct values (0 when N is 0).

// Compress(X, condition) [axis]: the slices along axis (or the flattened elements) whose condition entry is
// true; the condition may be shorter than the extent (the rest are dropped).
void infer_compress(InferContext& c) {
  const DType t = c.in_dtype(0);
  const Shape& in = c.in_shape(0);
  const bool has_axis = c.node().has_attr("axis");
  Dim extent = in.numel();  // what the condition runs along
  int64_t a = 0;
  if (has_axis) {
    if (!in.rank_known) {
      c.set_output(0, t, Shape::unknown_rank());
      return;
    }
    a = normalize_axis(c, c.node().attr_i("axis", 0), static_cast<int64_t>(in.rank()));
    extent = in.dims[a];
  }
  Dim count;  // number of kept slices: the true entries of the condition within the extent
  const Shape& cs = c.in_shape(1);
  const Dim cond_len = cs.rank_known && cs.rank() == 1 ? cs.dims[0] : Dim::unknown();
  auto cond = c.in_ints(1);
  // The entries that count: the first `extent` of them; all of them where the extent is symbolic (the
  // condition is no longer than it: proved, or assumed as a valid model needs).
  std::optional<int64_t> used;
  if (cond && extent.is_known()) used = std::min<int64_t>(extent.value(), static_cast<int64_t>(cond->size()));
  if (cond && !used && extent.is_symbolic()) {  // a condition longer than its axis is no valid model
    const Dim len(static_cast<int64_t>(cond->size()));
    auto order = Dim::compare(len, extent);
    if (!order || *order <= 0) {
      if (!order) c.assume(len, extent, "Compress's condition is no longer than the axis it selects along");
      used = static_cast<int64_t>(cond->size());
    }
  }
  if (used) {
    int64_t n = 0;
    for (int64_t i = 0; i < *used; ++i) n += (*cond)[i] != 0;
    count = Dim(n);
  } else {
    const Dim hi = cond_len.is_unknown() ? extent
                   : extent.is_unknown() ? cond_len
                                         : Dim::min(extent, cond_len);
    count = c.data_dependent(0, Dim(0), hi);
  }
  if (has_axis) {
    Shape out = in;
    out.dims[a] = count;
    c.set_output(0, t, out);
  } else {
    c.set_output(0, t, Shape({count}));
  }
}

// NonZero: [rank, count of non-zeros]; the indices are known only from known contents.
void infer_nonzero(InferContext& c) {
  const Shape& in = c.in_shape(0);
  const Dim rank = in.rank_known ? Dim(static_cast<int64_t>(in.rank())) : Dim::unknown();
  auto kt = known_tensor(c, 0);
  std::vector<int64_t> hits;  // flat offsets of non-zero elements, in row-major order
  for (size_t e = 0; kt && e < kt->data->size(); ++e) {
    if (kt->data->is_float) {
      if (kt->data->floats[e] != 0) hits.push_back(static_cast<int64_t>(e));
    } else {
      const Dim& v = kt->data->ints[e];
      if (!v.is_known()) {
        kt.reset();
        break;
      }
      if (v.value() != 0) hits.push_back(static_cast<int64_t>(e));
    }
  }
  if (!kt) {
    c.set_output(0, DType::Int64, Shape({rank, c.data_dependent(0, Dim(0), in.numel())}));
    return;
  }
  const size_t r = kt->dims.size();
  c.set_output(0, DType::Int64,
               Shape({Dim(static_cast<int64_t>(r)), Dim(static_cast<int64_t>(hits.size()))}));
  const auto st = strides_of(kt->dims);
  ConstData d;
  for (size_t j = 0; j < r; ++j)
    for (int64_t h : hits) d.ints.push_back(Dim((h / st[j]) % kt->dims[j]));
  c.set_output_data(0, std::move(d));
}

// Distinct slices of known contents along `axis` (-1: the flattened elements), or nullopt when some element
// is not known (or a NaN, which no two compare equal to). `consecutive`: runs of equal neighbours instead.
std::optional<int64_t> count_distinct(const KnownTensor& kt, int64_t axis, bool consecutive) {
  const ConstData& d = *kt.data;
  std::vector<double> f;
  std::vector<int64_t> i;
  for (size_t e = 0; e < d.size(); ++e) {
    if (d.is_float) {
      if (std::isnan(d.floats[e])) return std::nullopt;
      f.push_back(d.floats[e]);
    } else {
      if (!d.ints[e].is_known()) return std::nullopt;
      i.push_back(d.ints[e].value());
    }
  }
  // Slice k along the axis, as a key: its elements in row-major order.
  int64_t n = static_cast<int64_t>(d.size()), outer = 1, inner = 1;
  if (axis >= 0) {
    n = kt.dims[static_cast<size_t>(axis)];
    for (int64_t j = 0; j < axis; ++j) outer *= kt.dims[static_cast<size_t>(j)];
    for (size_t j = static_cast<size_t>(axis) + 1; j < kt.dims.size(); ++j) inner *= kt.dims[j];
  }
  auto slice = [&](int64_t k) {
    std::vector<double> key;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        const size_t e = static_cast<size_t>((o * n + k) * inner + in);
        key.push_back(d.is_float ? f[e] : static_cast<double>(i[e]));
      }
    return key;
  };
  if (!d.is_float)  // int64 beyond 2^53 would collide as doubles: compare those as integers
    for (int64_t x : i)
      if (x > (int64_t{1} << 53) || x < -(int64_t{1} << 53)) return std::nullopt;
  int64_t count = 0;
  std::set<std::vector<double>> seen;
  std::vector<double> prev;
  for (int64_t k = 0; k < n; ++k) {
    std::vector<double> key = slice(k);
    if (consecutive ? (k == 0 || key != prev) : seen.insert(key).second) ++count;
    prev = std::move(key);
  }
  return count;
}

// Unique(X) [axis, sorted]: Y (the distinct values, or slices along axis), indices and counts one per
// distinct value, inverse_indices one per element (or slice). flopwise::UniqueConsecutive, torch's
// unique_consecutive, counts runs of equal neighbours instead, with the same outputs.
void infer_unique(InferContext& c) {
  const Shape& in = c.in_shape(0);
  const bool has_axis = c.node().has_attr("axis");
  const bool consecutive = c.node().op == "UniqueConsecutive";
  if (has_axis && !in.rank_known) {
    c.set_output(0, c.in_dtype(0), Shape::unknown_rank());
    for (size_t k = 1; k < 4; ++k) c.set_output(k, DType::Int64, Shape::unknown_of_rank(1));
    return;
  }
  int64_t a = -1;
  Dim along = in.numel();  // inverse_indices has one entry per element (or per slice along axis)
  if (has_axis) {
    a = normalize_axis(c, c.node().attr_i("axis", 0), static_cast<int64_t>(in.rank()));
    along = in.dims[static_cast<size_t>(a)];
  }
  Dim count;
  if (auto kt = known_tensor(c, 0))
    if (auto n = count_distinct(*kt, a, consecutive)) count = Dim(*n);
  if (count.is_unknown()) {
    // At least one distinct value when there is any element: 1..N, or 0 for none.
    const Dim lo = along.is_known() ? Dim(std::min<int64_t>(along.value(), 1)) : Dim::min(along, Dim(1));
    count = c.data_dependent(0, along.is_unknown() ? Dim::unknown() : lo, along);
  }
  if (has_axis) {
    Shape y = in;
    y.dims[static_cast<size_t>(a)] = count;
    c.set_output(0, c.in_dtype(0), y);
  } else {
    c.set_output(0, c.in_dtype(0), Shape({count}));
  }
  c.set_output(1, DType::Int64, Shape({count}));
  c.set_output(2, DType::Int64, Shape({along}));
  c.set_output(3, DType::Int64, Shape({count}));
}

void infer_onehot(InferContext& c) {
  const Shape& ind = c.in_shape(0);
  const DType t = c.in_dtype(2);
  Dim depth;
  if (auto d = c.in_floats(1); d && d->size() == 1) {
    if (auto x = trunc_int64((*d)[0])) depth = Dim(*x);  // a float depth is cast to int64 (NaN: unknown)
  } else if (auto di = in_dim_data(c, 1); di && di->size() == 1) {
    depth = (*di)[0];
  }
  if (depth.is_known() && depth.value() < 1) c.fail("depth " + depth.str() + " must be positive");
  if (!ind.rank_known) {
    c.set_output(0, t, Shape::unknown_rank());
    return;
  }
  const int64_t r = static_cast<int64_t>(ind.rank()) + 1;
  const int64_t a = normalize_axis(c, c.node().attr_i("axis", -1), r);
  std::vector<Dim> out = ind.dims;
  out.insert(out.begin() + a, depth);
  c.set_output(0, t, Shape(out));
}

}  // namespace

void register_tensor_datadep_ops(OpRegistry& r) {
  reg(r, "OneHot", 9, 0, "layout only (writes on/off values)", infer_onehot, cost_zero);
  // Data-dependent output sizes.
  reg(r, "Compress", 9, 0, "layout only (output size known only from known condition)", infer_compress,
      cost_zero);
  reg(r, "NonZero", 9, 0, "1 per input element (compare with zero); output size data-dependent",
      infer_nonzero, cost_per_in_elem_1);
  reg(r, "Unique", 11, 0, "unknown (sort-based, data-dependent)", infer_unique, cost_unknown);
  // torch.unique_consecutive (the TorchScript importer's): Unique's outputs, runs of equal neighbours.
  reg(r, "UniqueConsecutive", 1, 0, "unknown (data-dependent)", infer_unique, cost_unknown, "flopwise");
}

}  // namespace flopwise
