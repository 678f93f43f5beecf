// tests/test_ops_ml.cc — the ai.onnx.ml family (shape_inference/ops/ml.cc): linear models and SVMs (MACs of
// coefficients and kernel evaluations), per-element transformers, encoders (no arithmetic); and the params
// each record counts from its attributes. Expected figures by the formulas on the records, from the
// attributes.
#include "op_test_util.h"

using namespace fwtest;

namespace {
constexpr const char* kML = "ai.onnx.ml";

Attribute strings(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::Strings;
  a.strings = std::move(v);
  return a;
}
Attribute zeros(size_t n) { return A::floats(std::vector<double>(n, 0.5)); }

using Attrs = std::map<std::string, Attribute>;
// LogisticRegression: 3 classes, 4 features, softmax.
const Attrs kLogistic = {{"coefficients", zeros(12)},
                         {"intercepts", zeros(3)},
                         {"classlabels_ints", A::ints({0, 1, 2})},
                         {"post_transform", A::s("SOFTMAX")}};
// Binary: one coefficient row scores both classes.
const Attrs kBinary = {{"coefficients", zeros(4)},
                       {"intercepts", zeros(1)},
                       {"classlabels_ints", A::ints({0, 1})},
                       {"post_transform", A::s("LOGISTIC")}};
const Attrs kLinReg = {{"coefficients", zeros(8)}, {"intercepts", zeros(2)}, {"targets", A::i(2)}};
// SVC, RBF: 3 classes with 2, 2, 1 support vectors of 4 features; coefficients (E-1)*V; rho per pair.
const Attrs kSvcRbf = {{"kernel_type", A::s("RBF")},
                       {"kernel_params", A::floats({0.25, 0, 3})},
                       {"support_vectors", zeros(20)},
                       {"vectors_per_class", A::ints({2, 2, 1})},
                       {"coefficients", zeros(10)},
                       {"rho", zeros(3)},
                       {"classlabels_ints", A::ints({0, 1, 2})}};
const Attrs kSvcLinear2 = {{"kernel_type", A::s("LINEAR")},      {"kernel_params", A::floats({0.1, 0, 3})},
                           {"support_vectors", zeros(8)},        {"vectors_per_class", A::ints({1, 1})},
                           {"coefficients", zeros(2)},           {"rho", zeros(1)},
                           {"classlabels_ints", A::ints({0, 1})}};
const Attrs kSvcLinearMode = {
    {"coefficients", zeros(12)}, {"rho", zeros(1)}, {"classlabels_ints", A::ints({0, 1, 2})}};
const Attrs kSvrPoly = {{"kernel_type", A::s("POLY")},  {"kernel_params", A::floats({0.5, 1, 2})},
                        {"support_vectors", zeros(12)}, {"n_supports", A::i(3)},
                        {"coefficients", zeros(3)},     {"rho", zeros(1)}};

Attrs with(Attrs a, const std::string& k, Attribute v) {
  a[k] = std::move(v);
  return a;
}
}  // namespace

TEST_CASE("ai.onnx.ml linear models and SVMs") {
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs, domain, opset
      // LinearClassifier: MACs N*E*C; 2*MACs + N*E intercepts + N*Z*(post + 1).
      {"linclf static", "LinearClassifier", {"5x4"}, kLogistic, {"5", "5x3"}, 60, 225, kML, 1},
      // 5*3*4 = 60; 120 + 15 + 5*3*(5 + 1) = 225
      {"linclf symbolic", "LinearClassifier", {"Nx4"}, kLogistic, {"N", "Nx3"}, kUnknown, kUnknown, kML, 1},
      {"linclf unknown rank", "LinearClassifier", {"*"}, kLogistic, {"*", "?x3"}, kUnknown, kUnknown, kML, 1},
      {"linclf binary", "LinearClassifier", {"2x4"}, kBinary, {"2", "2x2"}, 8, 26, kML, 1},
      // 2*1*4 = 8; 16 + 2 + 2*2*(1 + 1) = 26
      {"linclf 1-D", "LinearClassifier", {"4"}, kBinary, {"1", "1x2"}, 4, 13, kML, 1},
      {"linclf features clash", "LinearClassifier", {"5x3"}, kLogistic, {"!"}, -1, -1, kML, 1},
      {"linclf rank 3", "LinearClassifier", {"2x5x4"}, kLogistic, {"!"}, -1, -1, kML, 1},
      {"linclf bad post",
       "LinearClassifier",
       {"5x4"},
       with(kLogistic, "post_transform", A::s("X")),
       {"!"},
       -1,
       -1,
       kML,
       1},
      // LinearRegressor: MACs N*T*C; 2*MACs + N*T intercepts.
      {"linreg static", "LinearRegressor", {"3x4"}, kLinReg, {"3x2"}, 24, 54, kML, 1},  // 48 + 6
      {"linreg probit",
       "LinearRegressor",
       {"3x4"},
       with(kLinReg, "post_transform", A::s("PROBIT")),
       {"3x2"},
       24,
       60,
       kML,
       1},  // 48 + 6 + 6
      {"linreg symbolic", "LinearRegressor", {"Nx4"}, kLinReg, {"Nx2"}, kUnknown, kUnknown, kML, 1},
      {"linreg unknown rank", "LinearRegressor", {"*"}, kLinReg, {"?x2"}, kUnknown, kUnknown, kML, 1},
      {"linreg coefficients not targets*C",
       "LinearRegressor",
       {"3x4"},
       with(kLinReg, "coefficients", zeros(7)),
       {"!"},
       -1,
       -1,
       kML,
       1},
      // SVMClassifier: per row V*C + (E-1)*V MACs; FLOPs 2*MACs + V*extra + 2*pairs + Z*(post + 1).
      {"svc rbf", "SVMClassifier", {"3x4"}, kSvcRbf, {"3", "3x3"}, 90, 297, kML, 1},
      // per row 5*4 + 2*5 = 30 -> 90; 180 + 3*(5*(4 + 2) + 2*3 + 3*1) = 180 + 117
      {"svc binary linear kernel", "SVMClassifier", {"3x4"}, kSvcLinear2, {"3", "3x2"}, 30, 72, kML, 1},
      // per row 2*4 + 1*2 = 10 -> 30; 60 + 3*(0 + 2*1 + 2*1) = 72
      {"svc rbf probabilities",
       "SVMClassifier",
       {"3x4"},
       with(kSvcRbf, "prob_a", zeros(3)),
       {"3", "3x3"},
       90,
       kUnknown,
       kML,
       1},  // 3 classes: ORT couples the pairs' probabilities iteratively
      {"svc binary probabilities",
       "SVMClassifier",
       {"3x4"},
       with(kSvcLinear2, "prob_a", zeros(1)),
       {"3", "3x2"},
       30,
       90,
       kML,
       1},  // 72 + 3*(5*1 + 1)
      {"svc linear mode", "SVMClassifier", {"3x4"}, kSvcLinearMode, {"3", "3x3"}, 36, 90, kML, 1},
      // 3*3*4 = 36; 72 + 3*(3 rho + 3*1)
      {"svc symbolic", "SVMClassifier", {"Nx4"}, kSvcRbf, {"N", "Nx3"}, kUnknown, kUnknown, kML, 1},
      {"svc unknown rank", "SVMClassifier", {"*"}, kSvcRbf, {"*", "?x3"}, kUnknown, kUnknown, kML, 1},
      {"svc vectors not rows",
       "SVMClassifier",
       {"3x4"},
       with(kSvcRbf, "support_vectors", zeros(19)),
       {"!"},
       -1,
       -1,
       kML,
       1},
      {"svc features clash", "SVMClassifier", {"3x5"}, kSvcRbf, {"!"}, -1, -1, kML, 1},
      {"svc bad kernel",
       "SVMClassifier",
       {"3x4"},
       with(kSvcRbf, "kernel_type", A::s("CUBIC")),
       {"!"},
       -1,
       -1,
       kML,
       1},
      // SVMRegressor: per row V*(C + 1) MACs; FLOPs 2*MACs + V*extra + 1 rho (+ post, one_class).
      {"svr poly", "SVMRegressor", {"2x4"}, kSvrPoly, {"2x1"}, 30, 80, kML, 1},  // 2*3*5; 60 + 2*(3*3 + 1)
      {"svr rbf one class",
       "SVMRegressor",
       {"2x4"},
       with(with(kSvrPoly, "kernel_type", A::s("RBF")), "one_class", A::i(1)),
       {"2x1"},
       30,
       100,
       kML,
       1},
      // 60 + 2*(3*(4 + 2) + 1 + 1)
      {"svr linear mode",
       "SVMRegressor",
       {"2x4"},
       {{"coefficients", zeros(4)}, {"rho", zeros(1)}},
       {"2x1"},
       8,
       18,
       kML,
       1},  // 2*4; 16 + 2*1
      {"svr symbolic", "SVMRegressor", {"Nx4"}, kSvrPoly, {"Nx1"}, kUnknown, kUnknown, kML, 1},
      {"svr unknown rank", "SVMRegressor", {"*"}, kSvrPoly, {"?x1"}, kUnknown, kUnknown, kML, 1},
      {"svr coefficients not n_supports",
       "SVMRegressor",
       {"2x4"},
       with(kSvrPoly, "coefficients", zeros(2)),
       {"!"},
       -1,
       -1,
       kML,
       1},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("ai.onnx.ml transformers and encoders") {
  const Attrs scaler = {{"offset", zeros(4)}, {"scale", zeros(4)}};
  const Attrs cats = {{"cats_int64s", A::ints({1, 2, 3, 5, 8})}};
  const Attrs words = {{"keys_strings", strings({"a", "b"})}, {"values_int64s", A::ints({0, 1})}};
  const Attrs mapper = {{"cats_strings", strings({"a", "b"})}, {"cats_int64s", A::ints({0, 1})}};
  const std::vector<OpCase> cases = {
      {"scaler", "Scaler", {"3x4"}, scaler, {"3x4"}, 0, 24, kML, 1},  // 2 per element
      {"scaler symbolic", "Scaler", {"Nx4"}, scaler, {"Nx4"}, 0, kUnknown, kML, 1},
      {"scaler unknown rank", "Scaler", {"*"}, scaler, {"*"}, 0, kUnknown, kML, 1},
      {"scaler offset clash", "Scaler", {"3x5"}, scaler, {"!"}, -1, -1, kML, 1},
      {"normalizer L2", "Normalizer", {"3x4"}, {{"norm", A::s("L2")}}, {"3x4"}, 0, 39, kML, 1},  // 3*12 + 3
      {"normalizer L1", "Normalizer", {"3x4"}, {{"norm", A::s("L1")}}, {"3x4"}, 0, 36, kML, 1},
      {"normalizer MAX 1-D", "Normalizer", {"4"}, {}, {"4"}, 0, 8, kML, 1},
      {"normalizer symbolic", "Normalizer", {"Nx4"}, {{"norm", A::s("L2")}}, {"Nx4"}, 0, kUnknown, kML, 1},
      {"normalizer unknown rank", "Normalizer", {"*"}, {}, {"*"}, 0, kUnknown, kML, 1},
      {"normalizer bad norm", "Normalizer", {"3x4"}, {{"norm", A::s("L3")}}, {"!"}, -1, -1, kML, 1},
      {"binarizer", "Binarizer", {"3x4"}, {{"threshold", A::f(0.5)}}, {"3x4"}, 0, 12, kML, 1},
      {"binarizer symbolic", "Binarizer", {"N"}, {}, {"N"}, 0, kUnknown, kML, 1},
      {"imputer", "Imputer", {"3x4"}, {{"imputed_value_floats", zeros(4)}}, {"3x4"}, 0, 12, kML, 1},
      {"imputer unknown rank", "Imputer", {"*"}, {}, {"*"}, 0, kUnknown, kML, 1},
      {"onehot", "OneHotEncoder", {"3x1:int64"}, cats, {"3x1x5"}, 0, 0, kML, 1},
      {"onehot symbolic", "OneHotEncoder", {"N:int64"}, cats, {"Nx5"}, 0, 0, kML, 1},
      {"onehot unknown rank", "OneHotEncoder", {"*:int64"}, cats, {"*"}, 0, 0, kML, 1},
      {"onehot no categories", "OneHotEncoder", {"3:int64"}, {}, {"!"}, -1, -1, kML, 1},
      {"label encoder", "LabelEncoder", {"3:string"}, words, {"3"}, 0, 0, kML, 2},
      {"label encoder symbolic", "LabelEncoder", {"Nx1:string"}, words, {"Nx1"}, 0, 0, kML, 2},
      {"category mapper", "CategoryMapper", {"N:string"}, mapper, {"N"}, 0, 0, kML, 1},
      {"afe", "ArrayFeatureExtractor", {"3x4", "2:int64"}, {}, {"3x2"}, 0, 0, kML, 1},
      {"afe 1-D", "ArrayFeatureExtractor", {"4", "2:int64"}, {}, {"1x2"}, 0, 0, kML, 1},  // ORT: [1, K]
      {"afe rank 3", "ArrayFeatureExtractor", {"2x3x4", "K:int64"}, {}, {"2x3xK"}, 0, 0, kML, 1},
      {"afe unknown rank", "ArrayFeatureExtractor", {"*", "2:int64"}, {}, {"*"}, 0, 0, kML, 1},
      {"feature vectorizer",
       "FeatureVectorizer",
       {"3x2", "3x4"},
       {{"inputdimensions", A::ints({2, 4})}},
       {"3x6"},
       0,
       0,
       kML,
       1},
      {"feature vectorizer symbolic",
       "FeatureVectorizer",
       {"Nx2", "Nx4"},
       {{"inputdimensions", A::ints({2, 4})}},
       {"Nx6"},
       0,
       0,
       kML,
       1},
      {"zipmap", "ZipMap", {"3x3"}, {{"classlabels_int64s", A::ints({0, 1, 2})}}, {"3x3"}, 0, 0, kML, 1},
      {"zipmap symbolic",
       "ZipMap",
       {"Nx3"},
       {{"classlabels_int64s", A::ints({0, 1, 2})}},
       {"Nx3"},
       0,
       0,
       kML,
       1},
      {"castmap sparse",
       "CastMap",
       {"*"},
       {{"map_form", A::s("SPARSE")}, {"max_map", A::i(10)}},
       {"1x10"},
       0,
       0,
       kML,
       1},
      {"castmap dense", "CastMap", {"*"}, {}, {"1x?"}, 0, 0, kML, 1},
      {"dict vectorizer",
       "DictVectorizer",
       {"*"},
       {{"string_vocabulary", strings({"a", "b", "c"})}},
       {"1x3"},
       0,
       0,
       kML,
       1},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("ai.onnx.ml element types") {
  CHECK(run_op("LinearClassifier", {"2x4"}, kLogistic, 2, kML, 1).out(0).dtype == DType::Int64);
  CHECK(run_op("LinearClassifier", {"2x4"}, with(kLogistic, "classlabels_strings", strings({"a", "b", "c"})),
               2, kML, 1)
            .out(0)
            .dtype == DType::String);
  CHECK(run_op("LinearClassifier", {"2x4"}, kLogistic, 2, kML, 1).out(1).dtype == DType::Float32);
  CHECK(run_op("Scaler", {"2x4:int64"}, {}, 1, kML, 1).out(0).dtype == DType::Float32);
  CHECK(run_op("LabelEncoder", {"3:string"}, {{"values_int64s", A::ints({1})}}, 1, kML, 2).out(0).dtype ==
        DType::Int64);
  CHECK(run_op("LabelEncoder", {"3:int64"}, {}, 1, kML, 1).out(0).dtype == DType::String);
  CHECK(run_op("CategoryMapper", {"3:int64"}, {}, 1, kML, 1).out(0).dtype == DType::String);
}

// Params: the learned values an op keeps in its attributes (docs/COUNTING.md).
TEST_CASE("ai.onnx.ml params from attributes") {
  auto params = [](const char* op, const Attrs& a) {
    OneNode r = run_op(op, {"3x4"}, a, 2, kML, 1);
    const OpRecord* rec = OpRegistry::instance().find(kML, op, 1);
    REQUIRE(rec);
    REQUIRE(static_cast<bool>(rec->attr_params));
    return rec->attr_params(r.node()).v;
  };
  CHECK(params("LinearClassifier", kLogistic) == 15);  // 12 coefficients + 3 intercepts
  CHECK(params("LinearRegressor", kLinReg) == 10);     // 8 + 2
  CHECK(params("SVMClassifier", kSvcRbf) == 33);       // 20 support vector values + 10 coefficients + 3 rho
  CHECK(params("SVMRegressor", kSvrPoly) == 16);       // 12 + 3 + 1
  CHECK(params("Scaler", {{"offset", zeros(4)}, {"scale", zeros(4)}}) == 8);
  CHECK(params("Imputer", {{"imputed_value_floats", zeros(4)}}) == 4);
  const bool onehot_none = OpRegistry::instance().find(kML, "OneHotEncoder", 1)->attr_params == nullptr;
  CHECK(onehot_none);  // categories are not weights
}
