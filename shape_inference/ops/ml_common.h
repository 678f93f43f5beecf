// shape_inference/ops/ml_common.h — what the ai.onnx.ml families (ml.cc, ml_trees.cc) share: the domain,
// an attribute list read in place, a [N, C] input's rows and features, post_transform costs. Internal.
#pragma once

#include <string>
#include <vector>

#include "../helpers.h"

namespace flopwise::ml {

inline constexpr const char* kML = "ai.onnx.ml";

// A list attribute in place (tree ensembles carry 10^5 entries: no copies); empty when absent.
const std::vector<double>& floats_of(const Node& n, const std::string& k);
const std::vector<int64_t>& ints_of(const Node& n, const std::string& k);
const std::vector<std::string>& strings_of(const Node& n, const std::string& k);
// Elements of a list attribute, or of its `<k>_as_tensor` form (opset 3's double tensors).
int64_t list_size(const Node& n, const std::string& k);

// X [N, C] or [C] (one row): the shape the linear, SVM and tree ops take. rank 0 or above 2 fails.
struct Rows {
  bool known = false;  // rank known
  Dim n, c;            // rows, features
};
Rows decode_rows(InferContext* c, const Shape& x);

// FLOPs per score of a post_transform by name (NONE 0, LOGISTIC 1, SOFTMAX 5, SOFTMAX_ZERO 5, PROBIT 1);
// -1 for a name ONNX does not define.
int64_t post_transform_flops(const std::string& name);
// The class labels' element type: String with classlabels_strings, Int64 otherwise; their number
// (classlabels_strings, classlabels_ints, or the tree classifier's classlabels_int64s).
DType label_dtype(const Node& n);
int64_t label_count(const Node& n);
// Output `i` is [N] when rows are known, unknown rank otherwise; output `j` is [N, cols].
void set_rows_out(InferContext& c, size_t i, DType t, const Rows& r);
void set_rows_cols_out(InferContext& c, size_t j, DType t, const Rows& r, const Dim& cols);

// Records an op whose learned weights are its attributes (params counted from them, flopwise/ops.h).
inline void reg_ml(OpRegistry& r, std::string_view name, int since, int until, std::string_view formula,
                   ShapeFn infer, CostFn cost, AttrParamsFn params = nullptr) {
  r.add(OpRecord{kML, name, since, until, formula, infer, cost, {}, WorkKind::other, params});
}

}  // namespace flopwise::ml
