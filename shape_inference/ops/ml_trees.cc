// shape_inference/ops/ml_trees.cc — the ai.onnx.ml tree ensembles: TreeEnsembleClassifier and
// TreeEnsembleRegressor (opsets 1 and 3: nodes keyed by tree and node id, leaves listed apart) and opset 5's
// TreeEnsemble (nodes by index from tree_roots, leaves by index). A row walks each tree from its root to a
// leaf, one comparison per branch node it passes, then adds the leaf's weights. Which leaf it reaches depends
// on the data: the cost counts each tree's depth (the branch nodes on its longest path), an upper bound,
// stated in each record's formula. Params: a threshold per branch node, the leaves' weights, base values.
#include <algorithm>
#include <map>
#include <utility>

#include "ml_common.h"

namespace flopwise {

namespace {

using namespace ml;

// What the cost and the params read from an ensemble: summed over its trees.
struct TreeStats {
  bool ok = false;
  int64_t trees = 0;
  int64_t branches = 0;      // branch nodes (one threshold each)
  int64_t depth_sum = 0;     // sum over trees of the branch nodes on the longest root-to-leaf path
  int64_t leaf_adds = 0;     // sum over trees of the most weights one leaf of the tree carries
  int64_t max_feature = -1;  // the largest feature id a branch reads
  std::string error;         // why not ok (an inconsistent ensemble)
};

// Longest path in branch nodes below `root`; child(i, k) gives node i's k-th child (-1: a leaf) for k 0, 1.
// An explicit stack: trees of depth 10^4 exist (LightGBM's linear chains). A cycle gives -1.
template <class Child>
int64_t tree_depth(size_t root, size_t nodes, const Child& child, std::vector<int64_t>& memo) {
  constexpr int64_t kBusy = -2, kUnseen = -1;
  std::vector<std::pair<size_t, int>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [i, k] = stack.back();
    if (k == 0) {
      if (memo[i] == kBusy) return -1;
      if (memo[i] >= 0) {
        stack.pop_back();
        continue;
      }
      memo[i] = kBusy;
    }
    if (k < 2) {
      const int64_t c = child(i, k++);
      if (c >= 0 && static_cast<size_t>(c) < nodes) {
        if (memo[static_cast<size_t>(c)] == kBusy) return -1;
        if (memo[static_cast<size_t>(c)] == kUnseen) stack.emplace_back(static_cast<size_t>(c), 0);
      }
      continue;
    }
    int64_t d = 0;
    for (int j = 0; j < 2; ++j) {
      const int64_t c = child(i, j);
      if (c >= 0 && static_cast<size_t>(c) < nodes) d = std::max(d, memo[static_cast<size_t>(c)]);
    }
    memo[i] = d + 1;
    stack.pop_back();
  }
  return memo[root];
}

// ---- opsets 1 and 3: nodes keyed by (tree id, node id) ---------------------------------------------
// Sum over the trees of the most weights one leaf carries (<prefix>_treeids/_nodeids name each weight's
// leaf).
int64_t keyed_leaf_adds(const Node& n, const char* leaf_prefix) {
  std::map<std::pair<int64_t, int64_t>, int64_t> per_leaf;
  const auto& lt = ints_of(n, std::string(leaf_prefix) + "_treeids");
  const auto& ln = ints_of(n, std::string(leaf_prefix) + "_nodeids");
  for (size_t i = 0; i < std::min(lt.size(), ln.size()); ++i) ++per_leaf[{lt[i], ln[i]}];
  std::map<int64_t, int64_t> most_per_tree;
  for (const auto& [leaf, k] : per_leaf) most_per_tree[leaf.first] = std::max(most_per_tree[leaf.first], k);
  int64_t adds = 0;
  for (const auto& [t, k] : most_per_tree) adds += k;
  return adds;
}

// `leaf_prefix` is "class" or "target": <prefix>_treeids/_nodeids name each leaf weight's leaf.
TreeStats decode_keyed_trees(const Node& n, const char* leaf_prefix) {
  TreeStats s;
  const auto& tree = ints_of(n, "nodes_treeids");
  const auto& id = ints_of(n, "nodes_nodeids");
  const auto& mode = strings_of(n, "nodes_modes");
  const auto& yes = ints_of(n, "nodes_truenodeids");
  const auto& no = ints_of(n, "nodes_falsenodeids");
  const auto& feat = ints_of(n, "nodes_featureids");
  const size_t m = tree.size();
  if (m == 0 || id.size() != m || mode.size() != m || yes.size() != m || no.size() != m) {
    s.error =
        "nodes_treeids, nodes_nodeids, nodes_modes, nodes_truenodeids and nodes_falsenodeids must be "
        "non-empty and of one length";
    return s;
  }
  std::map<std::pair<int64_t, int64_t>, size_t> at;
  for (size_t i = 0; i < m; ++i) at.emplace(std::make_pair(tree[i], id[i]), i);
  std::vector<uint8_t> is_child(m, 0);
  auto find = [&](size_t i, int64_t child_id) -> int64_t {
    auto it = at.find({tree[i], child_id});
    return it == at.end() ? -1 : static_cast<int64_t>(it->second);
  };
  auto child = [&](size_t i, int k) -> int64_t {
    return mode[i] == "LEAF" ? -1 : find(i, k ? no[i] : yes[i]);
  };
  for (size_t i = 0; i < m; ++i) {
    if (mode[i] == "LEAF") continue;
    ++s.branches;
    if (i < feat.size()) s.max_feature = std::max(s.max_feature, feat[i]);
    for (int k = 0; k < 2; ++k)
      if (const int64_t c = child(i, k); c >= 0) is_child[static_cast<size_t>(c)] = 1;
  }
  s.leaf_adds = keyed_leaf_adds(n, leaf_prefix);
  std::vector<int64_t> memo(m, -1);
  for (size_t i = 0; i < m; ++i) {
    if (is_child[i]) continue;  // a root: no branch of its tree leads to it
    const int64_t d = tree_depth(i, m, child, memo);
    if (d < 0) {
      s.error = "tree " + std::to_string(tree[i]) + " has a cycle";
      return s;
    }
    s.depth_sum += d - 1;  // memo counts the leaf as one level
    ++s.trees;
  }
  for (size_t i = 0; i < m; ++i)
    if (mode[i] != "LEAF" && memo[i] < 0) {  // no root leads to it: it is on a cycle
      s.error = "node " + std::to_string(id[i]) + " of tree " + std::to_string(tree[i]) + " is on a cycle";
      return s;
    }
  s.ok = true;
  return s;
}

// Aggregation per output column: base_values 1 (when given), AVERAGE 1 (divide), post_transform.
int64_t per_column(const Node& n, bool average_known) {
  const int64_t base = list_size(n, "base_values") > 0 ? 1 : 0;
  const int64_t avg = average_known && n.attr_s("aggregate_function", "SUM") == "AVERAGE" ? 1 : 0;
  return base + avg + std::max<int64_t>(post_transform_flops(n.attr_s("post_transform", "NONE")), 0);
}

// X [N, F]: the tree ops' schemas take rank 2 only (ONNX's shape inference rejects [F]).
Rows tree_rows(InferContext& c) {
  const Shape& x = c.in_shape(0);
  if (x.rank_known && x.rank() != 2) c.fail("input must be [N, F], got " + x.str());
  return decode_rows(&c, x);
}

void check_trees(InferContext& c, const TreeStats& s, const Rows& r) {
  if (!s.ok) c.fail(s.error);
  const int64_t post = post_transform_flops(c.node().attr_s("post_transform", "NONE"));
  if (post < 0) c.fail("unknown post_transform '" + c.node().attr_s("post_transform", "") + "'");
  if (r.known && r.c.is_known() && s.max_feature >= r.c.value())
    c.fail("a branch reads feature " + std::to_string(s.max_feature) + " of " + r.c.str());
}

void infer_tree_classifier(InferContext& c) {
  const Rows r = tree_rows(c);
  check_trees(c, decode_keyed_trees(c.node(), "class"), r);
  const int64_t e = label_count(c.node());
  if (e <= 0) c.fail("classlabels_ints or classlabels_strings must be non-empty");
  set_rows_out(c, 0, label_dtype(c.node()), r);
  set_rows_cols_out(c, 1, DType::Float32, r, Dim(e));
}

Count rows_of(const CostContext& c) {
  const Rows r = decode_rows(nullptr, c.in_shape(0));
  return r.known ? Count::of(r.n) : Count::unknown();
}

// Per row: sum of the trees' depths (comparisons, an upper bound) + each tree's leaf weights; per class:
// base value, post_transform, 1 for the label choice.
OpCost cost_tree_classifier(const CostContext& c) {
  const TreeStats s = decode_keyed_trees(c.node, "class");
  if (!s.ok) return cost_unknown(c);
  const int64_t e = label_count(c.node);
  return OpCost{Count{}, rows_of(c) * Count{s.depth_sum + s.leaf_adds + e * (per_column(c.node, false) + 1)}};
}

Count params_keyed(const Node& n, const char* leaf_prefix) {
  const TreeStats s = decode_keyed_trees(n, leaf_prefix);
  return Count{s.branches + list_size(n, std::string(leaf_prefix) + "_weights") +
               list_size(n, "base_values")};
}
Count params_tree_classifier(const Node& n) { return params_keyed(n, "class"); }
Count params_tree_regressor(const Node& n) { return params_keyed(n, "target"); }

void infer_tree_regressor(InferContext& c) {
  const Rows r = tree_rows(c);
  check_trees(c, decode_keyed_trees(c.node(), "target"), r);
  const int64_t t = c.node().attr_i("n_targets", 1);
  if (t <= 0) c.fail("n_targets must be positive, got " + std::to_string(t));
  set_rows_cols_out(c, 0, DType::Float32, r, Dim(t));
}

// Per row: sum of the trees' depths (an upper bound) + each tree's leaf weights; per target: base value,
// AVERAGE's divide, post_transform.
OpCost cost_tree_regressor(const CostContext& c) {
  const TreeStats s = decode_keyed_trees(c.node, "target");
  if (!s.ok) return cost_unknown(c);
  const int64_t t = c.node.attr_i("n_targets", 1);
  return OpCost{Count{}, rows_of(c) * Count{s.depth_sum + s.leaf_adds + t * per_column(c.node, true)}};
}

// ---- opset 5: TreeEnsemble --------------------------------------------------------------------------
// Node i's true child is leaf nodes_truenodeids[i] when nodes_trueleafs[i], else node nodes_truenodeids[i]
// (the false side alike). Each leaf holds one weight (leaf_targetids, leaf_weights).
TreeStats decode_tree_ensemble(const Node& n) {
  TreeStats s;
  const auto& roots = ints_of(n, "tree_roots");
  const auto& yes = ints_of(n, "nodes_truenodeids");
  const auto& no = ints_of(n, "nodes_falsenodeids");
  const auto& yes_leaf = ints_of(n, "nodes_trueleafs");
  const auto& no_leaf = ints_of(n, "nodes_falseleafs");
  const auto& feat = ints_of(n, "nodes_featureids");
  const size_t m = yes.size();
  if (roots.empty() || no.size() != m || yes_leaf.size() != m || no_leaf.size() != m) {
    s.error =
        "tree_roots must be non-empty and nodes_truenodeids, nodes_falsenodeids, nodes_trueleafs and "
        "nodes_falseleafs of one length";
    return s;
  }
  auto child = [&](size_t i, int k) -> int64_t {
    return (k ? no_leaf[i] : yes_leaf[i]) ? -1 : (k ? no[i] : yes[i]);
  };
  const int64_t leaves = list_size(n, "leaf_weights");
  for (size_t i = 0; i < m; ++i)
    for (int k = 0; k < 2; ++k) {
      const int64_t to = k ? no[i] : yes[i];
      const bool leaf = k ? no_leaf[i] : yes_leaf[i];
      if (to < 0 || to >= (leaf ? leaves : static_cast<int64_t>(m))) {
        s.error = "node " + std::to_string(i) + "'s " + (k ? "false" : "true") + " side is " +
                  (leaf ? "leaf " : "node ") + std::to_string(to) + " of " +
                  std::to_string(leaf ? leaves : static_cast<int64_t>(m));
        return s;
      }
    }
  std::vector<int64_t> memo(m, -1);
  for (int64_t root : roots) {
    if (root < 0 || static_cast<size_t>(root) >= m) {
      s.error = "tree root " + std::to_string(root) + " is not one of the " + std::to_string(m) + " nodes";
      return s;
    }
    const int64_t d = tree_depth(static_cast<size_t>(root), m, child, memo);
    if (d < 0) {
      s.error = "the tree at node " + std::to_string(root) + " has a cycle";
      return s;
    }
    s.depth_sum += d;
  }
  for (int64_t f : feat) s.max_feature = std::max(s.max_feature, f);
  s.trees = static_cast<int64_t>(roots.size());
  s.branches = static_cast<int64_t>(m);
  s.leaf_adds = s.trees;
  s.ok = true;
  return s;
}

// post_transform 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT; -1 otherwise.
int64_t post5_flops(const Node& n) {
  static const char* const names[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
  const int64_t p = n.attr_i("post_transform", 0);
  return p >= 0 && p < 5 ? post_transform_flops(names[p]) : -1;
}

void infer_tree_ensemble(InferContext& c) {
  const Rows r = tree_rows(c);
  const TreeStats s = decode_tree_ensemble(c.node());
  if (!s.ok) c.fail(s.error);
  if (post5_flops(c.node()) < 0) c.fail("post_transform must be 0..4");
  if (r.known && r.c.is_known() && s.max_feature >= r.c.value())
    c.fail("a branch reads feature " + std::to_string(s.max_feature) + " of " + r.c.str());
  const int64_t t = c.node().attr_i("n_targets", 0);
  if (t <= 0) c.fail("n_targets must be positive, got " + std::to_string(t));
  const DType dt = c.in_dtype(0) == DType::Undefined ? DType::Float32 : c.in_dtype(0);
  set_rows_cols_out(c, 0, dt, r, Dim(t));
}

// Per row: sum of the trees' depths (an upper bound) + 1 leaf weight per tree; per target: AVERAGE's divide
// (aggregate_function 0), post_transform.
OpCost cost_tree_ensemble(const CostContext& c) {
  const TreeStats s = decode_tree_ensemble(c.node);
  if (!s.ok) return cost_unknown(c);
  const int64_t per_target =
      (c.node.attr_i("aggregate_function", 1) == 0 ? 1 : 0) + std::max<int64_t>(post5_flops(c.node), 0);
  return OpCost{Count{},
                rows_of(c) * Count{s.depth_sum + s.leaf_adds + c.node.attr_i("n_targets", 1) * per_target}};
}

Count params_tree_ensemble(const Node& n) {
  return Count{list_size(n, "nodes_splits") + list_size(n, "leaf_weights")};
}

}  // namespace

void register_ml_trees_ops(OpRegistry& r) {
  reg_ml(
      r, "TreeEnsembleClassifier", 1, 0,
      "per row: each tree's depth in comparisons (an upper bound: the rows' paths are data-dependent) + its "
      "leaf's weights; per class: base value, post_transform, 1 label choice; params: a threshold per branch "
      "node + class_weights + base_values",
      infer_tree_classifier, cost_tree_classifier, params_tree_classifier);
  reg_ml(
      r, "TreeEnsembleRegressor", 1, 0,
      "per row: each tree's depth in comparisons (an upper bound: the rows' paths are data-dependent) + its "
      "leaf's weights; per target: base value, AVERAGE 1, post_transform; params: a threshold per branch "
      "node + target_weights + base_values",
      infer_tree_regressor, cost_tree_regressor, params_tree_regressor);
  reg_ml(
      r, "TreeEnsemble", 5, 0,
      "per row: each tree's depth in comparisons (an upper bound: the rows' paths are data-dependent; a set "
      "membership counts 1) + 1 leaf weight; per target: AVERAGE 1, post_transform; params: nodes_splits + "
      "leaf_weights",
      infer_tree_ensemble, cost_tree_ensemble, params_tree_ensemble);
}

}  // namespace flopwise
