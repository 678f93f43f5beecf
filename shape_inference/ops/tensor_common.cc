// shape_inference/ops/tensor_common.cc — the helpers the tensor families share (tensor_common.h).
#include "tensor_common.h"

#include <algorithm>
#include <numeric>

namespace flopwise::tensor_ops {

std::string dims_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
std::string dims_text(const std::vector<Dim>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i].str();
  return s + "]";
}

std::optional<std::vector<Dim>> in_dim_data(const InferContext& c, size_t i) {
  const ConstData* d = c.in_data(i);
  if (!d) return std::nullopt;
  if (!d->is_float) return d->ints;
  std::vector<Dim> out;
  for (double f : d->floats) {
    auto x = exact_int64(f);
    if (!x) return std::nullopt;
    out.push_back(Dim(*x));
  }
  return out;
}

std::optional<int64_t> small_numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || !checked_mul(n, d, &n) || n > limits().max_const_elements) return std::nullopt;
  }
  return n;
}

std::optional<KnownTensor> known_tensor(const InferContext& c, size_t i) {
  const ConstData* d = c.in_data(i);
  auto dims = known_dims(c.in_shape(i));
  if (!d || !dims) return std::nullopt;
  auto n = small_numel(*dims);
  if (!n || static_cast<int64_t>(d->size()) != *n) return std::nullopt;
  return KnownTensor{d, *dims};
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

void fold_by_index(InferContext& c, size_t out, const ConstData& in, const std::vector<int64_t>& out_dims,
                   const std::function<int64_t(const std::vector<int64_t>&)>& src) {
  auto n = small_numel(out_dims);
  if (!n) return;
  ConstData r;
  r.is_float = in.is_float;
  if (in.is_float)
    r.floats.reserve(static_cast<size_t>(*n));
  else
    r.ints.reserve(static_cast<size_t>(*n));
  std::vector<int64_t> idx(out_dims.size(), 0);
  for (int64_t e = 0; e < *n; ++e) {
    int64_t s = src(idx);
    if (s < 0 || s >= static_cast<int64_t>(in.size())) return;
    if (in.is_float)
      r.floats.push_back(in.floats[s]);
    else
      r.ints.push_back(in.ints[s]);
    for (size_t j = out_dims.size(); j-- > 0;) {
      if (++idx[j] < out_dims[j]) break;
      idx[j] = 0;
    }
  }
  c.set_output_data(out, std::move(r));
}

void copy_data(InferContext& c) {
  if (const ConstData* d = c.in_data(0)) c.set_output_data(0, *d);
}

std::vector<int64_t> normalize_axes(InferContext& c, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = normalize_axis(c, a, rank);
    if (std::find(out.begin(), out.end(), n) != out.end())
      c.fail("axis " + std::to_string(a) + " repeated in axes");
    out.push_back(n);
  }
  return out;
}

std::vector<int64_t> all_axes(size_t rank) {
  std::vector<int64_t> v(rank);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::optional<int64_t> vector_length(const InferContext& c, size_t i) {
  const Shape& s = c.in_shape(i);
  if (!s.rank_known || s.rank() != 1 || !s.dims[0].is_known()) return std::nullopt;
  return s.dims[0].value();
}

}  // namespace flopwise::tensor_ops
