// shape_inference/ops/ml.cc — the ai.onnx.ml family (scikit-learn, XGBoost, LightGBM through skl2onnx and
// onnxmltools): linear models and SVMs (coefficients' MACs, kernel evaluations), the feature transformers
// (Scaler, Normalizer, Binarizer, Imputer: per element) and the encoders and containers (LabelEncoder,
// OneHotEncoder, ZipMap, ...: lookups, no arithmetic). Tree ensembles are ml_trees.cc's. The learned
// weights of these ops are attributes: each record counts them as params (docs/COUNTING.md).
#include <algorithm>
#include <map>

#include "ml_common.h"

namespace flopwise {
namespace ml {

const std::vector<double>& floats_of(const Node& n, const std::string& k) {
  static const std::vector<double> none;
  auto it = n.attrs.find(k);
  return it == n.attrs.end() ? none : it->second.floats;
}
const std::vector<int64_t>& ints_of(const Node& n, const std::string& k) {
  static const std::vector<int64_t> none;
  auto it = n.attrs.find(k);
  return it == n.attrs.end() ? none : it->second.ints;
}
const std::vector<std::string>& strings_of(const Node& n, const std::string& k) {
  static const std::vector<std::string> none;
  auto it = n.attrs.find(k);
  return it == n.attrs.end() ? none : it->second.strings;
}

int64_t list_size(const Node& n, const std::string& k) {
  auto it = n.attrs.find(k);
  if (it == n.attrs.end()) it = n.attrs.find(k + "_as_tensor");
  if (it == n.attrs.end()) return 0;
  const Attribute& a = it->second;
  if (a.kind != Attribute::Kind::Tensor)
    return static_cast<int64_t>(a.floats.size() + a.ints.size() + a.strings.size());
  return product(a.tensor.dims);
}

Rows decode_rows(InferContext* c, const Shape& x) {
  if (!x.rank_known) return {};
  if (x.rank() == 1) return {true, Dim(1), x.dims[0]};
  if (x.rank() == 2) return {true, x.dims[0], x.dims[1]};
  if (c) c->fail("input must be [N, C] or [C], got " + x.str());
  return {};
}

int64_t post_transform_flops(const std::string& name) {
  static const std::map<std::string, int64_t, std::less<>> table = {
      {"NONE", 0}, {"LOGISTIC", 1}, {"SOFTMAX", 5}, {"SOFTMAX_ZERO", 5}, {"PROBIT", 1}};
  auto it = table.find(name);
  return it == table.end() ? -1 : it->second;
}

DType label_dtype(const Node& n) {
  return strings_of(n, "classlabels_strings").empty() ? DType::Int64 : DType::String;
}
int64_t label_count(const Node& n) {
  const auto& s = strings_of(n, "classlabels_strings");
  if (!s.empty()) return static_cast<int64_t>(s.size());
  const auto& i = ints_of(n, "classlabels_ints");  // the tree classifier's: classlabels_int64s
  return static_cast<int64_t>(i.empty() ? ints_of(n, "classlabels_int64s").size() : i.size());
}

void set_rows_out(InferContext& c, size_t i, DType t, const Rows& r) {
  if (!c.has_output(i)) return;
  c.set_output(i, t, r.known ? Shape({r.n}) : Shape::unknown_rank());
}
void set_rows_cols_out(InferContext& c, size_t j, DType t, const Rows& r, const Dim& cols) {
  if (!c.has_output(j)) return;
  c.set_output(j, t, Shape({r.known ? r.n : Dim::unknown(), cols}));
}

}  // namespace ml

namespace {

using namespace ml;

// Checks X's features against the count the weights give (when both are known).
void check_features(InferContext& c, const Rows& r, int64_t features, const char* what) {
  if (r.known && features > 0) merge_dim(c, r.c, Dim(features), what);
}

int64_t post_of(InferContext* c, const Node& n) {
  const std::string p = n.attr_s("post_transform", "NONE");
  const int64_t f = post_transform_flops(p);
  if (f < 0 && c) c->fail("unknown post_transform '" + p + "'");
  return f;
}

Count rows_count(const Shape& x) {
  const Rows r = decode_rows(nullptr, x);
  return r.known ? Count::of(r.n) : Count::unknown();
}

// ---- LinearClassifier, LinearRegressor ----------------------------------------------------------
// LinearClassifier: coefficients [E, C] and intercepts [E] (E = intercepts, else the labels) -> Y [N]
// labels, Z [N, E] scores; a binary model with one coefficient row scores both classes (Z [N, 2]).
struct LinearDims {
  int64_t e = 0, c = 0, score_cols = 0, post = 0;
};

LinearDims decode_linear_classifier(InferContext* c, const Node& n) {
  LinearDims d;
  const int64_t coefs = static_cast<int64_t>(floats_of(n, "coefficients").size());
  const int64_t icp = static_cast<int64_t>(floats_of(n, "intercepts").size());
  d.e = icp > 0 ? icp : label_count(n);
  if (d.e <= 0 || coefs == 0 || coefs % d.e != 0) {
    if (c)
      c->fail("coefficients (" + std::to_string(coefs) + ") must be classes (" + std::to_string(d.e) +
              ") times features");
    return LinearDims{};
  }
  d.c = coefs / d.e;
  d.score_cols = d.e == 1 && label_count(n) == 2 ? 2 : d.e;
  d.post = post_of(c, n);
  return d;
}

void infer_linear_classifier(InferContext& c) {
  const LinearDims d = decode_linear_classifier(&c, c.node());
  const Rows r = decode_rows(&c, c.in_shape(0));
  check_features(c, r, d.c, "X's features vs coefficients / classes");
  set_rows_out(c, 0, label_dtype(c.node()), r);
  set_rows_cols_out(c, 1, DType::Float32, r, Dim(d.score_cols));
}

// MACs N*E*C; FLOPs 2*MACs + N*E intercepts + per score (N*Z): post_transform, and 1 for the label choice.
OpCost cost_linear_classifier(const CostContext& c) {
  const LinearDims d = decode_linear_classifier(nullptr, c.node);
  const Count n = rows_count(c.in_shape(0));
  const Count macs = n * Count{d.e * d.c};
  const Count bias = floats_of(c.node, "intercepts").empty() ? Count{} : n * Count{d.e};
  return OpCost{macs, macs * Count{2} + bias + n * Count{d.score_cols * (d.post + 1)}, bias};
}

Count params_linear(const Node& n) {
  return Count{static_cast<int64_t>(floats_of(n, "coefficients").size() + floats_of(n, "intercepts").size())};
}

// LinearRegressor: coefficients [T, C], intercepts [T] -> Y [N, T] (T = targets, default 1).
LinearDims decode_linear_regressor(InferContext* c, const Node& n) {
  LinearDims d;
  d.e = n.attr_i("targets", 1);
  const int64_t coefs = static_cast<int64_t>(floats_of(n, "coefficients").size());
  if (d.e <= 0 || coefs == 0 || coefs % d.e != 0) {
    if (c)
      c->fail("coefficients (" + std::to_string(coefs) + ") must be targets (" + std::to_string(d.e) +
              ") times features");
    return LinearDims{};
  }
  d.c = coefs / d.e;
  d.score_cols = d.e;
  d.post = post_of(c, n);
  return d;
}

void infer_linear_regressor(InferContext& c) {
  const LinearDims d = decode_linear_regressor(&c, c.node());
  const Rows r = decode_rows(&c, c.in_shape(0));
  check_features(c, r, d.c, "X's features vs coefficients / targets");
  set_rows_cols_out(c, 0, DType::Float32, r, Dim(d.e));
}

// MACs N*T*C; FLOPs 2*MACs + N*T intercepts + N*T post_transform.
OpCost cost_linear_regressor(const CostContext& c) {
  const LinearDims d = decode_linear_regressor(nullptr, c.node);
  const Count n = rows_count(c.in_shape(0));
  const Count macs = n * Count{d.e * d.c};
  const Count bias = floats_of(c.node, "intercepts").empty() ? Count{} : n * Count{d.e};
  return OpCost{macs, macs * Count{2} + bias + n * Count{d.e * d.post}, bias};
}

// ---- SVMClassifier, SVMRegressor ----------------------------------------------------------------
// A kernel evaluation k(x, s) costs C MACs (the dot product, or the squared distance's squares) plus
// kernel_extra FLOPs: LINEAR 0; POLY 3 (gamma*, +coef0, pow); SIGMOID 3 (gamma*, +coef0, tanh);
// RBF C + 2 (C differences, -gamma*, exp).
int64_t kernel_extra(InferContext* c, const Node& n, int64_t features) {
  const std::string k = n.attr_s("kernel_type", "LINEAR");
  if (k == "LINEAR") return 0;
  if (k == "POLY" || k == "SIGMOID") return 3;
  if (k == "RBF") return features + 2;
  if (c) c->fail("unknown kernel_type '" + k + "'");
  return -1;
}

// SVMClassifier: support vectors V = sum(vectors_per_class) of C features (V 0: a linear SVM whose
// coefficients are [E, C]); E = the labels. Y [N] labels, Z [N, scores]: the E*(E-1)/2 pairs' decision
// values without probabilities (2 columns for E = 2), E probabilities with prob_a.
struct SvmDims {
  int64_t e = 0, v = 0, c = 0, extra = 0, post = 0, score_cols = 0;
  bool proba = false;
};

SvmDims decode_svm_classifier(InferContext* c, const Node& n) {
  SvmDims d;
  d.e = label_count(n);
  for (int64_t k : ints_of(n, "vectors_per_class")) d.v += k;
  const int64_t sv = static_cast<int64_t>(floats_of(n, "support_vectors").size());
  const int64_t coefs = static_cast<int64_t>(floats_of(n, "coefficients").size());
  const int64_t rows = d.v > 0 ? d.v : d.e;
  const int64_t cells = d.v > 0 ? sv : coefs;
  if (d.e <= 0 || rows <= 0 || cells == 0 || cells % rows != 0) {
    if (c)
      c->fail("support_vectors (or a linear SVM's coefficients) must be " + std::to_string(rows) +
              " rows of features, got " + std::to_string(cells) + " values");
    return SvmDims{};
  }
  d.c = cells / rows;
  d.extra = d.v > 0 ? kernel_extra(c, n, d.c) : 0;
  d.post = post_of(c, n);
  d.proba = !floats_of(n, "prob_a").empty();
  d.score_cols = d.v > 0 && !d.proba ? (d.e > 2 ? d.e * (d.e - 1) / 2 : 2) : d.e;
  return d;
}

void infer_svm_classifier(InferContext& c) {
  const SvmDims d = decode_svm_classifier(&c, c.node());
  const Rows r = decode_rows(&c, c.in_shape(0));
  check_features(c, r, d.c, "X's features vs the support vectors' (or coefficients') width");
  set_rows_out(c, 0, label_dtype(c.node()), r);
  set_rows_cols_out(c, 1, DType::Float32, r, Dim(d.score_cols));
}

// Per row: V kernel evaluations (C MACs + kernel_extra each); the E*(E-1)/2 one-vs-one decisions weigh
// the kernel values of their two classes' vectors ((E-1)*V MACs in all) and add rho (1 per pair); the
// vote counts 1 per pair. A linear SVM: E*C MACs and rho per class. Then post_transform per score and
// 1 per score for the label. Probabilities (prob_a): Platt's sigmoid 5 per pair; for E > 2 ORT couples
// them iteratively until they converge (data-dependent): FLOPs unknown there.
OpCost cost_svm_classifier(const CostContext& c) {
  const SvmDims d = decode_svm_classifier(nullptr, c.node);
  const Count n = rows_count(c.in_shape(0));
  if (d.v == 0) {
    const Count macs = n * Count{d.e * d.c};
    return OpCost{macs, macs * Count{2} + n * Count{d.e + d.score_cols * (d.post + 1)}};
  }
  const int64_t pairs = d.e * (d.e - 1) / 2;
  const Count macs = n * Count{d.v * d.c + (d.e - 1) * d.v};
  Count flops = macs * Count{2} + n * Count{d.v * d.extra + 2 * pairs + d.score_cols * (d.post + 1)};
  if (d.proba) flops = d.e > 2 ? Count::unknown() : flops + n * Count{5 * pairs + 1};
  return OpCost{macs, flops};
}

Count params_svm(const Node& n) {
  int64_t k = 0;
  for (const char* a : {"support_vectors", "coefficients", "rho", "prob_a", "prob_b"})
    k += static_cast<int64_t>(floats_of(n, a).size());
  return Count{k};
}

// SVMRegressor: n_supports V vectors of C features and V coefficients (V 0: a linear model of C
// coefficients) -> Y [N, 1].
SvmDims decode_svm_regressor(InferContext* c, const Node& n) {
  SvmDims d;
  d.e = 1;
  d.v = n.attr_i("n_supports", 0);
  const int64_t sv = static_cast<int64_t>(floats_of(n, "support_vectors").size());
  const int64_t coefs = static_cast<int64_t>(floats_of(n, "coefficients").size());
  const int64_t cells = d.v > 0 ? sv : coefs;
  if (d.v < 0 || cells == 0 || (d.v > 0 && (cells % d.v != 0 || coefs != d.v))) {
    if (c)
      c->fail("support_vectors must be n_supports (" + std::to_string(d.v) + ") rows with a coefficient " +
              "each, got " + std::to_string(sv) + " values and " + std::to_string(coefs) + " coefficients");
    return SvmDims{};
  }
  d.c = d.v > 0 ? cells / d.v : cells;
  d.extra = d.v > 0 ? kernel_extra(c, n, d.c) : 0;
  d.post = post_of(c, n);
  return d;
}

void infer_svm_regressor(InferContext& c) {
  const SvmDims d = decode_svm_regressor(&c, c.node());
  const Rows r = decode_rows(&c, c.in_shape(0));
  check_features(c, r, d.c, "X's features vs the support vectors' width");
  set_rows_cols_out(c, 0, DType::Float32, r, Dim(1));
}

// Per row: V kernel evaluations (C MACs + kernel_extra) and V coefficient MACs (a linear model: C MACs),
// rho 1, post_transform, one_class's sign 1.
OpCost cost_svm_regressor(const CostContext& c) {
  const SvmDims d = decode_svm_regressor(nullptr, c.node);
  const Count n = rows_count(c.in_shape(0));
  const Count macs = n * Count{d.v > 0 ? d.v * (d.c + 1) : d.c};
  const int64_t one_class = c.node.attr_i("one_class", 0) != 0 ? 1 : 0;
  return OpCost{macs, macs * Count{2} + n * Count{d.v * d.extra + 1 + d.post + one_class}};
}

// ---- per-element transformers ---------------------------------------------------------------------
void infer_same_float(InferContext& c) { c.set_output(0, DType::Float32, c.in_shape(0)); }

// Scaler: Y = (X - offset) * scale, offset and scale of length 1 or C (X's last dim).
void infer_scaler(InferContext& c) {
  const Shape& x = c.in_shape(0);
  for (const char* a : {"offset", "scale"}) {
    const int64_t k = static_cast<int64_t>(floats_of(c.node(), a).size());
    if (k > 1 && x.rank_known && x.rank() > 0) merge_dim(c, x.dims.back(), Dim(k), a);
  }
  infer_same_float(c);
}

OpCost cost_scaler(const CostContext& c) { return cost_per_out_elem(c, 2); }

Count params_scaler(const Node& n) {
  return Count{static_cast<int64_t>(floats_of(n, "offset").size() + floats_of(n, "scale").size())};
}

// Normalizer: per row of [N, C] (or [C]): MAX 2 per element (max, divide); L1 3 (abs, add, divide);
// L2 3 (square, add, divide) + 1 per row (sqrt).
int64_t normalizer_per_elem(InferContext* c, const Node& n) {
  const std::string norm = n.attr_s("norm", "MAX");
  if (norm == "MAX" || norm == "L1" || norm == "L2") return norm == "MAX" ? 2 : 3;
  if (c) c->fail("norm must be MAX, L1 or L2, got '" + norm + "'");
  return 0;
}

void infer_normalizer(InferContext& c) {
  normalizer_per_elem(&c, c.node());
  decode_rows(&c, c.in_shape(0));
  infer_same_float(c);
}

OpCost cost_normalizer(const CostContext& c) {
  const int64_t k = normalizer_per_elem(nullptr, c.node);
  const Count sqrt = c.node.attr_s("norm", "MAX") == "L2" ? rows_count(c.in_shape(0)) : Count{};
  return OpCost{Count{}, c.out_numel(0) * Count{k} + sqrt};
}

// Imputer: replaces replaced_value_* by imputed_value_* (1 or C values): 1 per element (compare, select).
Count params_imputer(const Node& n) {
  return Count{static_cast<int64_t>(floats_of(n, "imputed_value_floats").size())};
}

// ---- encoders and containers: lookups and copies, no arithmetic -----------------------------------
// OneHotEncoder: X [...] -> Y [..., categories] float.
void infer_one_hot_encoder(InferContext& c) {
  const Node& n = c.node();
  const int64_t k =
      static_cast<int64_t>(ints_of(n, "cats_int64s").size() + strings_of(n, "cats_strings").size());
  if (k == 0) c.fail("cats_int64s or cats_strings must be non-empty");
  const Shape& x = c.in_shape(0);
  if (!x.rank_known) return c.set_output(0, DType::Float32, Shape::unknown_rank());
  std::vector<Dim> out = x.dims;
  out.emplace_back(k);
  c.set_output(0, DType::Float32, Shape(out));
}

// LabelEncoder: same shape; the element type of its values (values_strings/int64s/floats, opset 4's
// values_tensor); opset 1 maps strings to int64 and int64 to strings.
void infer_label_encoder(InferContext& c) {
  const Node& n = c.node();
  DType t = c.in_dtype(0) == DType::String ? DType::Int64 : DType::String;
  if (!strings_of(n, "values_strings").empty()) t = DType::String;
  if (!ints_of(n, "values_int64s").empty()) t = DType::Int64;
  if (!floats_of(n, "values_floats").empty()) t = DType::Float32;
  auto vt = n.attrs.find("values_tensor");
  if (vt != n.attrs.end() && vt->second.kind == Attribute::Kind::Tensor) t = vt->second.tensor.dtype;
  c.set_output(0, t, c.in_shape(0));
}

// CategoryMapper: strings to int64 and back, same shape.
void infer_category_mapper(InferContext& c) {
  c.set_output(0, c.in_dtype(0) == DType::String ? DType::Int64 : DType::String, c.in_shape(0));
}

// ArrayFeatureExtractor: X [..., C] and indices Y (K of them) -> [..., K]; a 1-D X gives [1, K].
void infer_array_feature_extractor(InferContext& c) {
  const Shape& x = c.in_shape(0);
  const Dim k = c.in_shape(1).numel();
  if (!x.rank_known || x.rank() == 0) return c.set_output(0, c.in_dtype(0), Shape::unknown_rank());
  std::vector<Dim> out = x.rank() == 1 ? std::vector<Dim>{Dim(1)} : x.dims;
  if (x.rank() == 1)
    out.push_back(k);
  else
    out.back() = k;
  c.set_output(0, c.in_dtype(0), Shape(out));
}

// FeatureVectorizer: inputs [N, C_i] -> [N, sum(inputdimensions)] float.
void infer_feature_vectorizer(InferContext& c) {
  int64_t cols = 0;
  for (int64_t d : ints_of(c.node(), "inputdimensions")) cols += d;
  const Shape& x = c.in_shape(0);
  const Dim n = x.rank_known && x.rank() >= 1 ? (x.rank() == 1 ? Dim(1) : x.dims[0]) : Dim::unknown();
  c.set_output(0, DType::Float32, Shape({n, Dim(cols)}));
}

// ZipMap: scores [N, C] -> a sequence of N maps of C entries. The IR has neither type: the output is
// described as the [N, C] float scores it holds (so its bytes are known).
void infer_zip_map(InferContext& c) { c.set_output(0, DType::Float32, c.in_shape(0)); }

// CastMap: a map -> [1, max_map] (SPARSE), [1, the map's size] (DENSE: not known here).
void infer_cast_map(InferContext& c) {
  const Node& n = c.node();
  const std::string to = n.attr_s("cast_to", "TO_FLOAT");
  const DType t = to == "TO_STRING" ? DType::String : to == "TO_INT64" ? DType::Int64 : DType::Float32;
  const bool sparse = n.attr_s("map_form", "DENSE") == "SPARSE";
  c.set_output(0, t, Shape({Dim(1), sparse ? Dim(n.attr_i("max_map", 1)) : Dim::unknown()}));
}

// DictVectorizer: a map -> [1, vocabulary] of the map's value type (float where not known).
void infer_dict_vectorizer(InferContext& c) {
  const Node& n = c.node();
  const int64_t v =
      static_cast<int64_t>(strings_of(n, "string_vocabulary").size() + ints_of(n, "int64_vocabulary").size());
  const DType t = c.in_dtype(0) == DType::Undefined ? DType::Float32 : c.in_dtype(0);
  c.set_output(0, t, Shape({Dim(1), Dim(v)}));
}

void register_ml_transforms(OpRegistry& r) {
  reg_ml(r, "Scaler", 1, 0, "2 per element ((X - offset) * scale); params: offset + scale", infer_scaler,
         cost_scaler, params_scaler);
  reg_ml(r, "Normalizer", 1, 0, "per element MAX 2, L1 3, L2 3 + 1 per row (sqrt)", infer_normalizer,
         cost_normalizer);
  reg_ml(r, "Binarizer", 1, 0, "1 per element (compare with threshold)", infer_same_as_input0,
         cost_per_out_elem_1);
  reg_ml(r, "Imputer", 1, 0, "1 per element (compare, select); params: imputed_value_floats",
         infer_same_as_input0, cost_per_out_elem_1, params_imputer);
  reg_ml(r, "OneHotEncoder", 1, 0, "0: a lookup per element (layout only)", infer_one_hot_encoder, cost_zero);
  reg_ml(r, "LabelEncoder", 1, 0, "0: a lookup per element (layout only)", infer_label_encoder, cost_zero);
  reg_ml(r, "CategoryMapper", 1, 0, "0: a lookup per element (layout only)", infer_category_mapper,
         cost_zero);
  reg_ml(r, "ArrayFeatureExtractor", 1, 0, "0: a gather (layout only)", infer_array_feature_extractor,
         cost_zero);
  reg_ml(r, "FeatureVectorizer", 1, 0, "0: a concat (layout only)", infer_feature_vectorizer, cost_zero);
  reg_ml(r, "ZipMap", 1, 0, "0: scores into maps (layout only)", infer_zip_map, cost_zero);
  reg_ml(r, "CastMap", 1, 0, "0: a map into a tensor (layout only)", infer_cast_map, cost_zero);
  reg_ml(r, "DictVectorizer", 1, 0, "0: a map into a tensor (layout only)", infer_dict_vectorizer, cost_zero);
}

}  // namespace

void register_ml_ops(OpRegistry& r) {
  reg_ml(r, "LinearClassifier", 1, 0,
         "2*MACs (N * classes * C) + N*classes intercepts + per score: post_transform (LOGISTIC/PROBIT 1, "
         "SOFTMAX 5) + 1 label choice; params: coefficients + intercepts",
         infer_linear_classifier, cost_linear_classifier, params_linear);
  reg_ml(
      r, "LinearRegressor", 1, 0,
      "2*MACs (N * targets * C) + N*targets intercepts + post_transform per target; params: coefficients + "
      "intercepts",
      infer_linear_regressor, cost_linear_regressor, params_linear);
  reg_ml(
      r, "SVMClassifier", 1, 0,
      "2*MACs (N * (V*C kernel products + (classes-1)*V vote weights)) + N*V kernel extra (POLY/SIGMOID 3, "
      "RBF C+2) + 2 per class pair + per score post_transform + 1; E>2 with probabilities: unknown "
      "(iterative coupling); params: support vectors + coefficients + rho + prob_a/b",
      infer_svm_classifier, cost_svm_classifier, params_svm);
  reg_ml(r, "SVMRegressor", 1, 0,
         "2*MACs (N * V*(C+1); linear: N*C) + N*V kernel extra (POLY/SIGMOID 3, RBF C+2) + N (rho, "
         "post_transform, one_class sign); params: support vectors + coefficients + rho",
         infer_svm_regressor, cost_svm_regressor, params_svm);
  register_ml_transforms(r);
}

}  // namespace flopwise
