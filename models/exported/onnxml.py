#!/usr/bin/python3
"""models/exported/onnxml.py [OUT_DIR]: ai.onnx.ml graphs as skl2onnx and onnxmltools write them, and what ONNX
Runtime says of them (issue 55). Debian has no skl2onnx: the graphs are built with onnx.helper, node for node
as those converters emit them (attribute names and layouts of the ai.onnx.ml schemas). Runs in the modern root
(onnx 1.20, onnxruntime 1.23):
    scripts/modern_torch.sh python3 models/exported/onnxml.py

- ml_linear.onnx: StandardScaler -> LogisticRegression (3 classes, 4 features) -> ZipMap, and a Normalizer(L2)
  -> LinearRegressor (2 targets) branch: skl2onnx's pipeline layout.
- ml_svm.onnx: SVC (RBF, 3 classes, 2+2+1 support vectors) and SVR (POLY, 3 support vectors) on 4 features.
- ml_trees.onnx (ai.onnx.ml 3): a gradient-boosted classifier (2 classes, 2 trees: depth 3 full, depth 4
  chain) and a random-forest regressor (2 targets, AVERAGE, 2 trees: depth 2, depth 1).
- ml_tree5.onnx (ai.onnx.ml 5): TreeEnsemble with the same 2 classifier trees, 1 target.
- ml_encoders.onnx: Imputer, Binarizer, OneHotEncoder, LabelEncoder, CategoryMapper, ArrayFeatureExtractor,
  FeatureVectorizer: skl2onnx's ColumnTransformer pieces.
ml.expect.json: for each file, each output's shape as ONNX Runtime (CPU) returns it for 3 rows.
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(55)
ML = "ai.onnx.ml"


def floats(n):
    return [float(v) for v in np.round(rng.standard_normal(n), 3)]


def model(name, nodes, inputs, outputs, ml_opset=3):
    g = helper.make_graph(nodes, name, inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, ml_opset)])
    m.ir_version = 8
    return m


def x_in(name="X", c=4, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, ["N", c])


def out(name, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, None)


def linear():
    n = [
        helper.make_node("Scaler", ["X"], ["xs"], domain=ML, offset=floats(4), scale=floats(4)),
        helper.make_node("LinearClassifier", ["xs"], ["label", "probs"], domain=ML, coefficients=floats(12),
                         intercepts=floats(3), classlabels_ints=[0, 1, 2], multi_class=1, post_transform="SOFTMAX"),
        helper.make_node("ZipMap", ["probs"], ["prob_map"], domain=ML, classlabels_int64s=[0, 1, 2]),
        helper.make_node("Normalizer", ["X"], ["xn"], domain=ML, norm="L2"),
        helper.make_node("LinearRegressor", ["xn"], ["y"], domain=ML, coefficients=floats(8), intercepts=floats(2),
                         targets=2),
    ]
    zip_t = helper.make_sequence_type_proto(helper.make_map_type_proto(TensorProto.INT64,
                                                                       helper.make_tensor_type_proto(1, None)))
    outs = [out("label", TensorProto.INT64), out("probs"), helper.make_value_info("prob_map", zip_t), out("y")]
    return model("ml_linear", n, [x_in()], outs)


def svm():
    sv = floats(5 * 4)
    n = [
        helper.make_node("SVMClassifier", ["X"], ["label", "scores"], domain=ML, kernel_type="RBF",
                         kernel_params=[0.25, 0.0, 3.0], support_vectors=sv, vectors_per_class=[2, 2, 1],
                         coefficients=floats(2 * 5), rho=floats(3), classlabels_ints=[0, 1, 2]),
        helper.make_node("SVMRegressor", ["X"], ["y"], domain=ML, kernel_type="POLY",
                         kernel_params=[0.5, 1.0, 2.0], support_vectors=floats(3 * 4), n_supports=3,
                         coefficients=floats(3), rho=floats(1)),
    ]
    return model("ml_svm", n, [x_in()], [out("label", TensorProto.INT64), out("scores"), out("y")])


def full_tree(depth, first_id=0):
    """A full binary tree: nodes in breadth order; returns (modes, true, false, features, leaves)."""
    branches = 2 ** depth - 1
    modes, yes, no, feat = [], [], [], []
    for i in range(2 ** (depth + 1) - 1):
        if i < branches:
            modes.append("BRANCH_LEQ"), yes.append(2 * i + 1), no.append(2 * i + 2), feat.append(i % 4)
        else:
            modes.append("LEAF"), yes.append(0), no.append(0), feat.append(0)
    return modes, yes, no, feat, list(range(branches, 2 ** (depth + 1) - 1))


def chain_tree(depth):
    """A chain: branch i's true side is a leaf, its false side branch i+1; the last branch has two leaves."""
    modes, yes, no, feat = [], [], [], []
    for i in range(depth):
        leaf = depth + i
        modes.append("BRANCH_LT"), yes.append(leaf), no.append(i + 1 if i + 1 < depth else 2 * depth), feat.append(i % 4)
    for i in range(depth + 1):
        modes.append("LEAF"), yes.append(0), no.append(0), feat.append(0)
    return modes, yes, no, feat, list(range(depth, 2 * depth + 1))


def keyed(trees):
    a = dict(nodes_treeids=[], nodes_nodeids=[], nodes_modes=[], nodes_truenodeids=[], nodes_falsenodeids=[],
             nodes_featureids=[], nodes_values=[])
    for t, (modes, yes, no, feat, _) in enumerate(trees):
        a["nodes_treeids"] += [t] * len(modes)
        a["nodes_nodeids"] += list(range(len(modes)))
        a["nodes_modes"] += modes
        a["nodes_truenodeids"] += yes
        a["nodes_falsenodeids"] += no
        a["nodes_featureids"] += feat
        a["nodes_values"] += floats(len(modes))
    return a


def trees():
    gb = [full_tree(3), chain_tree(4)]  # 7 + 4 branches; depths 3, 4; 8 + 5 leaves, one weight each
    a = keyed(gb)
    leaves = [(t, l) for t, tr in enumerate(gb) for l in tr[4]]
    clf = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probs"], domain=ML, **a,
                           class_treeids=[t for t, _ in leaves], class_nodeids=[l for _, l in leaves],
                           class_ids=[0] * len(leaves), class_weights=floats(len(leaves)),
                           classlabels_int64s=[0, 1], base_values=[0.5], post_transform="LOGISTIC")
    rf = [full_tree(2), full_tree(1)]  # 3 + 1 branches; depths 2, 1; 4 + 2 leaves, two weights each
    b = keyed(rf)
    leaves = [(t, l, k) for t, tr in enumerate(rf) for l in tr[4] for k in range(2)]
    reg = helper.make_node("TreeEnsembleRegressor", ["X"], ["y"], domain=ML, **b, n_targets=2,
                           target_treeids=[t for t, _, _ in leaves], target_nodeids=[l for _, l, _ in leaves],
                           target_ids=[k for _, _, k in leaves], target_weights=floats(len(leaves)),
                           aggregate_function="AVERAGE")
    outs = [out("label", TensorProto.INT64), out("probs"), out("y")]
    return model("ml_trees", [clf, reg], [x_in()], outs)


def tree5():
    # The same trees as TreeEnsemble (opset 5): nodes by index, leaves by index (one weight each).
    gb = [full_tree(3), chain_tree(4)]
    roots, yes, no, yl, nl, feat, leaf_w = [], [], [], [], [], [], []
    for modes, t, f, ft, _ in gb:
        idx = {}  # old id -> new branch index / leaf index
        branches = [i for i, m in enumerate(modes) if m != "LEAF"]
        base = len(yes)
        for k, i in enumerate(branches):
            idx[i] = base + k
        roots.append(base)
        leaf_of = {}
        for i, m in enumerate(modes):
            if m == "LEAF":
                leaf_of[i] = len(leaf_of) + len(leaf_w)
        for i in branches:
            for child, dst, dst_leaf in ((t[i], yes, yl), (f[i], no, nl)):
                if modes[child] == "LEAF":
                    dst.append(leaf_of[child]), dst_leaf.append(1)
                else:
                    dst.append(idx[child]), dst_leaf.append(0)
            feat.append(ft[i])
        leaf_w += floats(len(leaf_of))
    m = len(yes)
    node = helper.make_node(
        "TreeEnsemble", ["X"], ["y"], domain=ML, tree_roots=roots, nodes_featureids=feat,
        nodes_modes=helper.make_tensor("modes", TensorProto.UINT8, [m], [0] * m),
        nodes_splits=helper.make_tensor("splits", TensorProto.FLOAT, [m], floats(m)), nodes_truenodeids=yes,
        nodes_trueleafs=yl, nodes_falsenodeids=no, nodes_falseleafs=nl, leaf_targetids=[0] * len(leaf_w),
        leaf_weights=helper.make_tensor("w", TensorProto.FLOAT, [len(leaf_w)], leaf_w), n_targets=1,
        aggregate_function=1, post_transform=2)
    return model("ml_tree5", [node], [x_in()], [out("y")], ml_opset=5)


def encoders():
    n = [
        helper.make_node("Imputer", ["X"], ["xi"], domain=ML, imputed_value_floats=floats(4),
                         replaced_value_float=float("nan")),
        helper.make_node("Binarizer", ["xi"], ["xb"], domain=ML, threshold=0.5),
        helper.make_node("OneHotEncoder", ["cat"], ["onehot"], domain=ML, cats_int64s=[1, 2, 3, 5, 8], zeros=1),
        helper.make_node("LabelEncoder", ["word"], ["word_id"], domain=ML, keys_strings=["a", "b", "c"],
                         values_int64s=[0, 1, 2], default_int64=-1),
        helper.make_node("CategoryMapper", ["word_id"], ["word_back"], domain=ML, cats_strings=["a", "b", "c"],
                         cats_int64s=[0, 1, 2], default_string="?"),
        helper.make_node("ArrayFeatureExtractor", ["xb", "cols"], ["picked"], domain=ML),
        helper.make_node("FeatureVectorizer", ["picked", "xi"], ["features"], domain=ML, inputdimensions=[2, 4]),
    ]
    ins = [x_in(), helper.make_tensor_value_info("cat", TensorProto.INT64, ["N", 1]),
           helper.make_tensor_value_info("word", TensorProto.STRING, ["N"])]
    g = helper.make_graph(n, "ml_encoders", ins,
                          [out("onehot"), out("word_back", TensorProto.STRING), out("features"), out("xb")],
                          initializer=[helper.make_tensor("cols", TensorProto.INT64, [2], [0, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML, 3)])
    m.ir_version = 8
    return m


def feeds(m):
    f = {}
    for i in m.graph.input:
        if i.name == "X":
            f[i.name] = rng.standard_normal((3, 4)).astype(np.float32)
        elif i.name == "cat":
            f[i.name] = np.array([[1], [5], [7]], dtype=np.int64)
        elif i.name == "word":
            f[i.name] = np.array(["a", "c", "z"], dtype=object)
    return f


def shape_of(v):
    return list(np.asarray(v).shape) if not isinstance(v, list) else ["seq", len(v)]


def main():
    expect = {}
    for build in (linear, svm, trees, tree5, encoders):
        m = build()
        name = m.graph.name
        path = os.path.join(OUT, name + ".onnx")
        onnx.save(m, path)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        names = [o.name for o in sess.get_outputs()]
        res = sess.run(names, feeds(m))
        expect[name] = {k: shape_of(v) for k, v in zip(names, res)}
    expect["onnxruntime"] = ort.__version__
    with open(os.path.join(OUT, "ml.expect.json"), "w") as fh:
        json.dump(expect, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print(json.dumps(expect))


if __name__ == "__main__":
    main()
