// tests/test_ops_ml_trees.cc — the ai.onnx.ml tree ensembles (shape_inference/ops/ml_trees.cc): comparisons
// per row bounded by each tree's depth, leaf weights, per-column aggregation; params from the attributes.
// Expected figures by the formulas on the records, from the trees written out below.
#include "op_test_util.h"

using namespace fwtest;

namespace {
constexpr const char* kML = "ai.onnx.ml";
using Attrs = std::map<std::string, Attribute>;

Attribute strings(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::Strings;
  a.strings = std::move(v);
  return a;
}
Attribute halves(size_t n) { return A::floats(std::vector<double>(n, 0.5)); }

// Two trees keyed by id (opsets 1, 3). Tree 0: a full tree of depth 2 (branches 0, 1, 2; leaves 3..6).
// Tree 1: one branch (node 0; leaves 1, 2). Depths 2 + 1 = 3; 4 branches, 6 leaves.
Attrs keyed_trees(const char* prefix, int64_t weights_per_leaf) {
  const std::string p = prefix;
  std::vector<int64_t> lt, ln, ids;
  const std::vector<std::pair<int64_t, int64_t>> leaves = {{0, 3}, {0, 4}, {0, 5}, {0, 6}, {1, 1}, {1, 2}};
  for (auto [t, l] : leaves)
    for (int64_t k = 0; k < weights_per_leaf; ++k) lt.push_back(t), ln.push_back(l), ids.push_back(k);
  return {{"nodes_treeids", A::ints({0, 0, 0, 0, 0, 0, 0, 1, 1, 1})},
          {"nodes_nodeids", A::ints({0, 1, 2, 3, 4, 5, 6, 0, 1, 2})},
          {"nodes_modes", strings({"BRANCH_LEQ", "BRANCH_LEQ", "BRANCH_LEQ", "LEAF", "LEAF", "LEAF", "LEAF",
                                   "BRANCH_LT", "LEAF", "LEAF"})},
          {"nodes_truenodeids", A::ints({1, 3, 5, 0, 0, 0, 0, 1, 0, 0})},
          {"nodes_falsenodeids", A::ints({2, 4, 6, 0, 0, 0, 0, 2, 0, 0})},
          {"nodes_featureids", A::ints({0, 1, 2, 0, 0, 0, 0, 2, 0, 0})},
          {"nodes_values", halves(10)},
          {p + "_treeids", A::ints(lt)},
          {p + "_nodeids", A::ints(ln)},
          {p + "_ids", A::ints(ids)},
          {p + "_weights", halves(lt.size())}};
}

Attrs with(Attrs a, const std::string& k, Attribute v) {
  a[k] = std::move(v);
  return a;
}

Attrs classifier() { return with(keyed_trees("class", 1), "classlabels_int64s", A::ints({0, 1})); }
Attrs regressor() {
  return with(with(keyed_trees("target", 2), "n_targets", A::i(2)), "aggregate_function", A::s("AVERAGE"));
}

// The same two trees as opset 5 writes them: branch nodes 0, 1, 2 (tree 0) and 3 (tree 1), leaves by index.
Attrs ensemble5() {
  return {{"tree_roots", A::ints({0, 3})},
          {"nodes_featureids", A::ints({0, 1, 2, 2})},
          {"nodes_modes", A::tensor(DType::UInt8, {4}, {0, 0, 0, 1})},
          {"nodes_splits", A::tensor(DType::Float32, {4}, {0.5, 0.5, 0.5, 0.5})},
          {"nodes_truenodeids", A::ints({1, 0, 2, 4})},
          {"nodes_trueleafs", A::ints({0, 1, 1, 1})},
          {"nodes_falsenodeids", A::ints({2, 1, 3, 5})},
          {"nodes_falseleafs", A::ints({0, 1, 1, 1})},
          {"leaf_targetids", A::ints({0, 0, 0, 0, 0, 0})},
          {"leaf_weights", A::tensor(DType::Float32, {6}, {1, 2, 3, 4, 5, 6})},
          {"n_targets", A::i(1)}};
}
}  // namespace

TEST_CASE("ai.onnx.ml tree ensembles") {
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs, domain, opset
      // Classifier: per row depths 2 + 1 + leaf weights 1 + 1 + 2 classes * (0 + 1 label choice) = 7.
      {"tec static", "TreeEnsembleClassifier", {"4x3"}, classifier(), {"4", "4x2"}, 0, 28, kML, 3},
      {"tec logistic, base values",
       "TreeEnsembleClassifier",
       {"4x3"},
       with(with(classifier(), "post_transform", A::s("LOGISTIC")), "base_values", halves(2)),
       {"4", "4x2"},
       0,
       44,
       kML,
       3},  // per row 3 + 2 + 2*(1 + 1 + 1) = 11
      {"tec symbolic", "TreeEnsembleClassifier", {"Nx3"}, classifier(), {"N", "Nx2"}, 0, kUnknown, kML, 3},
      {"tec unknown rank", "TreeEnsembleClassifier", {"*"}, classifier(), {"*", "?x2"}, 0, kUnknown, kML, 1},
      {"tec feature out of range", "TreeEnsembleClassifier", {"4x2"}, classifier(), {"!"}, -1, -1, kML, 3},
      {"tec rank 1", "TreeEnsembleClassifier", {"3"}, classifier(), {"!"}, -1, -1, kML, 3},
      {"tec cycle",
       "TreeEnsembleClassifier",
       {"4x3"},
       with(classifier(), "nodes_truenodeids", A::ints({1, 0, 5, 0, 0, 0, 0, 1, 0, 0})),
       {"!"},
       -1,
       -1,
       kML,
       3},
      {"tec ragged nodes",
       "TreeEnsembleClassifier",
       {"4x3"},
       with(classifier(), "nodes_nodeids", A::ints({0, 1})),
       {"!"},
       -1,
       -1,
       kML,
       3},
      // Regressor (2 weights per leaf, 2 targets, AVERAGE): per row 3 + 2 + 2 + 2 targets * 1 divide = 9.
      {"ter static", "TreeEnsembleRegressor", {"4x3"}, regressor(), {"4x2"}, 0, 36, kML, 3},
      {"ter sum",
       "TreeEnsembleRegressor",
       {"4x3"},
       with(regressor(), "aggregate_function", A::s("SUM")),
       {"4x2"},
       0,
       28,
       kML,
       1},  // per row 3 + 4 = 7
      {"ter symbolic", "TreeEnsembleRegressor", {"Nx3"}, regressor(), {"Nx2"}, 0, kUnknown, kML, 3},
      {"ter unknown rank", "TreeEnsembleRegressor", {"*"}, regressor(), {"?x2"}, 0, kUnknown, kML, 3},
      {"ter bad post",
       "TreeEnsembleRegressor",
       {"4x3"},
       with(regressor(), "post_transform", A::s("RELU")),
       {"!"},
       -1,
       -1,
       kML,
       3},
      // TreeEnsemble (opset 5): per row 2 + 1 + one leaf weight per tree (2) = 5; SUM, no post_transform.
      {"te5 static", "TreeEnsemble", {"4x3"}, ensemble5(), {"4x1"}, 0, 20, kML, 5},
      {"te5 average logistic",
       "TreeEnsemble",
       {"4x3"},
       with(with(ensemble5(), "aggregate_function", A::i(0)), "post_transform", A::i(2)),
       {"4x1"},
       0,
       28,
       kML,
       5},
      // per row 5 + 1 divide + 1 sigmoid = 7
      {"te5 symbolic", "TreeEnsemble", {"Nx3"}, ensemble5(), {"Nx1"}, 0, kUnknown, kML, 5},
      {"te5 unknown rank", "TreeEnsemble", {"*"}, ensemble5(), {"?x1"}, 0, kUnknown, kML, 5},
      {"te5 root out of range",
       "TreeEnsemble",
       {"4x3"},
       with(ensemble5(), "tree_roots", A::ints({0, 9})),
       {"!"},
       -1,
       -1,
       kML,
       5},
      {"te5 cycle",
       "TreeEnsemble",
       {"4x3"},
       with(ensemble5(), "nodes_trueleafs", A::ints({0, 0, 1, 1})),
       {"!"},
       -1,
       -1,
       kML,
       5},  // node 1's true side is node 0
      {"te5 child out of range",
       "TreeEnsemble",
       {"4x3"},
       with(ensemble5(), "nodes_falseleafs", A::ints({0, 1, 1, 0})),
       {"!"},
       -1,
       -1,
       kML,
       5},  // node 3's false side would be node 5 of 4
      {"te5 leaf out of range",
       "TreeEnsemble",
       {"4x3"},
       with(ensemble5(), "nodes_falsenodeids", A::ints({2, 1, 3, 6})),
       {"!"},
       -1,
       -1,
       kML,
       5},  // leaf 6 of 6
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("ai.onnx.ml tree ensemble params") {
  auto params = [](const char* op, const Attrs& a, int opset) {
    OneNode r = run_op(op, {"4x3"}, a, 2, kML, opset);
    const OpRecord* rec = OpRegistry::instance().find(kML, op, opset);
    REQUIRE(rec);
    REQUIRE(static_cast<bool>(rec->attr_params));
    return rec->attr_params(r.node()).v;
  };
  CHECK(params("TreeEnsembleClassifier", classifier(), 3) == 10);  // 4 thresholds + 6 leaf weights
  CHECK(params("TreeEnsembleRegressor", regressor(), 3) == 16);    // 4 + 12
  CHECK(params("TreeEnsemble", ensemble5(), 5) == 10);             // 4 splits + 6 leaf weights
}
