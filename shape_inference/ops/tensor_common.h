// shape_inference/ops/tensor_common.h — the helpers the tensor families share (tensor.cc, tensor_datadep.cc,
// tensor_compute.cc): known contents of small integer tensors read and moved by index, axes lists, dims as
// text. Internal header of shape_inference/ops.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../helpers.h"

namespace flopwise::tensor_ops {

std::string dims_text(const std::vector<int64_t>& v);
std::string dims_text(const std::vector<Dim>& v);

// Integer contents of input i as Dims (symbolic entries allowed); float contents are converted when
// integral. nullopt when absent.
std::optional<std::vector<Dim>> in_dim_data(const InferContext& c, size_t i);

// Element count of a fully known shape when it is at most limits().max_const_elements.
std::optional<int64_t> small_numel(const std::vector<int64_t>& dims);

// Input i's contents with its fully known dims, when their sizes agree.
struct KnownTensor {
  const ConstData* data = nullptr;
  std::vector<int64_t> dims;
};
std::optional<KnownTensor> known_tensor(const InferContext& c, size_t i);

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims);

// Output `out` gets, for each row-major multi-index idx over `out_dims`, element src(idx) of `in`
// (src < 0: unknown, nothing is set). Used by every data-moving op's constant propagation.
void fold_by_index(InferContext& c, size_t out, const ConstData& in, const std::vector<int64_t>& out_dims,
                   const std::function<int64_t(const std::vector<int64_t>&)>& src);

// Same contents, new shape (Identity, Reshape, Flatten, Squeeze, Unsqueeze).
void copy_data(InferContext& c);

// Axes given as a list: normalised against `rank`, duplicates fail.
std::vector<int64_t> normalize_axes(InferContext& c, const std::vector<int64_t>& axes, int64_t rank);

std::vector<int64_t> all_axes(size_t rank);

// Length of a 1-D input from its shape (when its contents are not known).
std::optional<int64_t> vector_length(const InferContext& c, size_t i);

}  // namespace flopwise::tensor_ops
