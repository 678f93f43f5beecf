#!/usr/bin/python3
"""models/exported/ml_real_expect.py [OUT_JSON]: what flopwise's ai.onnx.ml cost rules give for the converter-
written files in this directory (skl2onnx_*.onnx, onnxmltools_*.onnx; sources in models/README.md), computed
from each file's own attributes with the onnx library alone (Debian's python3-onnx; nothing of flopwise's).

The rules are the ones the records state (shape_inference/ops/ml.cc, ml_trees.cc, `flopwise --list-ops`):
- LinearClassifier: E = len(intercepts) (else the labels), C = len(coefficients) / E; MACs E*C; FLOPs 2*MACs
  + E (intercepts) + per score column (E; 2 for a one-row binary model) post_transform + 1 (the label).
- SVMClassifier: V = sum(vectors_per_class), C = len(support_vectors) / V, E labels, P = E*(E-1)/2 pairs;
  MACs V*C + (E-1)*V; FLOPs 2*MACs + V*kernel extra (LINEAR 0, POLY/SIGMOID 3, RBF C+2) + 2*P + per score
  column (P, 2 for E = 2, E with probabilities) post_transform + 1; probabilities: E = 2 5*P + 1 more, E > 2
  unknown (none of these files).
- SVMRegressor: V = n_supports; MACs V*(C+1); FLOPs 2*MACs + V*kernel extra + 1 (rho) + post_transform +
  one_class.
- TreeEnsembleClassifier/Regressor: per row each tree's depth (branch nodes on its longest root-to-leaf
  path, found here by walking the nodes from each root), plus each tree's most leaf weights on one leaf;
  per class: base value (when base_values is given), post_transform, 1 label choice; per target: base
  value, AVERAGE 1, post_transform.
- Scaler 2, Normalizer MAX 2 / L1 3 / L2 3 (+1 per row), Imputer 1, Binarizer 1, Sign 1 per element; the
  encoders, ZipMap, Cast, Concat, Reshape: 0.
- post_transform: NONE 0, LOGISTIC 1, PROBIT 1, SOFTMAX 5, SOFTMAX_ZERO 5.
- params: the learned attributes (coefficients + intercepts; support vectors + coefficients + rho + prob_a/b;
  a threshold per branch node + the leaf weights + base_values; Scaler offset + scale; imputed values).
Per-element counts need each value's width per row: the script follows the graph from the inputs' declared
widths with each op's output width (a one-hot adds a dim of its categories, a classifier's scores have one
column per score, FeatureVectorizer sums inputdimensions, ...).

Writes ml_real.expect.json: per file, per node (op, per-row MACs and FLOPs, params, what went in) and the
totals per row (multiply by the rows) with the producer and its version.
"""
import collections
import json
import os
import sys

import onnx
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "ml_real.expect.json")
FILES = ["skl2onnx_titanic", "skl2onnx_logreg_iris", "skl2onnx_rf_iris", "skl2onnx_xgboost", "skl2onnx_lightgbm",
         "skl2onnx_ocsvm", "onnxmltools_xgb_regressor", "onnxmltools_nusvc_rbf", "onnxmltools_svc_linear",
         "onnxmltools_onehot", "onnxmltools_dictvectorizer", "onnxmltools_labelencoder"]
POST = {"NONE": 0, "LOGISTIC": 1, "PROBIT": 1, "SOFTMAX": 5, "SOFTMAX_ZERO": 5}


def attrs(node):
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, list):
            v = [x.decode() if isinstance(x, bytes) else x for x in v]
        out[a.name] = v
    return out


def labels(a):
    return len(a.get("classlabels_strings") or a.get("classlabels_ints") or a.get("classlabels_int64s") or [])


def kernel_extra(a, c):
    k = a.get("kernel_type", "LINEAR")
    return {"LINEAR": 0, "POLY": 3, "SIGMOID": 3, "RBF": c + 2}[k]


# Each cost function: (node's attributes, the widths of its inputs) -> (MACs, FLOPs, params, output widths,
# notes); MACs and FLOPs per row.
def linear_classifier(a, w):
    e = len(a.get("intercepts", [])) or labels(a)
    c = len(a["coefficients"]) // e
    cols = 2 if e == 1 and labels(a) == 2 else e
    macs = e * c
    flops = 2 * macs + (e if a.get("intercepts") else 0) + cols * (POST[a.get("post_transform", "NONE")] + 1)
    return macs, flops, len(a["coefficients"]) + len(a.get("intercepts", [])), [1, cols], dict(E=e, C=c)


def svm_classifier(a, w):
    e = labels(a)
    v = sum(a.get("vectors_per_class", []))
    assert v > 0, "a linear SVMClassifier (no support vectors): not in these files"
    c = len(a["support_vectors"]) // v
    pairs = e * (e - 1) // 2
    proba = bool(a.get("prob_a"))
    cols = e if proba else (pairs if e > 2 else 2)
    macs = v * c + (e - 1) * v
    flops = 2 * macs + v * kernel_extra(a, c) + 2 * pairs + cols * (POST[a.get("post_transform", "NONE")] + 1)
    assert not proba or e == 2, "E > 2 with probabilities: FLOPs unknown, not in these files"
    if proba:
        flops += 5 * pairs + 1
    params = sum(len(a.get(k, [])) for k in ("support_vectors", "coefficients", "rho", "prob_a", "prob_b"))
    return macs, flops, params, [1, cols], dict(E=e, V=v, C=c, kernel=a.get("kernel_type"))


def svm_regressor(a, w):
    v = a["n_supports"]
    c = len(a["support_vectors"]) // v
    macs = v * (c + 1)
    flops = 2 * macs + v * kernel_extra(a, c) + 1 + POST[a.get("post_transform", "NONE")] + a.get("one_class", 0)
    params = sum(len(a.get(k, [])) for k in ("support_vectors", "coefficients", "rho"))
    return macs, flops, params, [1], dict(V=v, C=c, kernel=a.get("kernel_type"))


def tree_depths(a):
    """Per tree: branch nodes on the longest root-to-leaf path. Nodes keyed by (tree id, node id)."""
    key = list(zip(a["nodes_treeids"], a["nodes_nodeids"]))
    at = {k: i for i, k in enumerate(key)}
    modes = a["nodes_modes"]
    children = {}
    for i, (t, _) in enumerate(key):
        if modes[i] != "LEAF":
            children[i] = [at[(t, a["nodes_truenodeids"][i])], at[(t, a["nodes_falsenodeids"][i])]]
    reached = {c for cs in children.values() for c in cs}
    roots = [i for i in range(len(key)) if i not in reached]

    def depth(i):  # iterative: the longest chains are deep
        best, stack = 0, [(i, 0)]
        while stack:
            j, d = stack.pop()
            if j in children:
                stack += [(c, d + 1) for c in children[j]]
            else:
                best = max(best, d)
        return best

    return [depth(r) for r in roots], sum(1 for m in modes if m != "LEAF")


def most_weights_per_leaf(a, prefix):
    per_leaf = collections.Counter(zip(a[prefix + "_treeids"], a[prefix + "_nodeids"]))
    most = collections.defaultdict(int)
    for (t, _), k in per_leaf.items():
        most[t] = max(most[t], k)
    return sum(most.values())


def tree_classifier(a, w):
    depths, branches = tree_depths(a)
    e = labels(a)
    base = 1 if a.get("base_values") else 0
    adds = most_weights_per_leaf(a, "class")
    flops = sum(depths) + adds + e * (base + POST[a.get("post_transform", "NONE")] + 1)
    params = branches + len(a["class_weights"]) + len(a.get("base_values", []))
    return 0, flops, params, [1, e], dict(trees=len(depths), depth_sum=sum(depths), max_depth=max(depths),
                                          branches=branches, leaf_adds=adds, E=e)


def tree_regressor(a, w):
    depths, branches = tree_depths(a)
    t = a.get("n_targets", 1)
    per = (1 if a.get("base_values") else 0) + (1 if a.get("aggregate_function", "SUM") == "AVERAGE" else 0)
    adds = most_weights_per_leaf(a, "target")
    flops = sum(depths) + adds + t * (per + POST[a.get("post_transform", "NONE")])
    params = branches + len(a["target_weights"]) + len(a.get("base_values", []))
    return 0, flops, params, [t], dict(trees=len(depths), depth_sum=sum(depths), max_depth=max(depths),
                                       branches=branches, leaf_adds=adds, T=t)


def per_elem(k):
    return lambda a, w: (0, k * w[0], 0, [w[0]], {})


def scaler(a, w):
    return 0, 2 * w[0], len(a.get("offset", [])) + len(a.get("scale", [])), [w[0]], {}


def normalizer(a, w):
    norm = a.get("norm", "MAX")
    return 0, (2 if norm == "MAX" else 3) * w[0] + (1 if norm == "L2" else 0), 0, [w[0]], dict(norm=norm)


def imputer(a, w):
    return 0, w[0], len(a.get("imputed_value_floats", [])), [w[0]], {}


def free(out):
    return lambda a, w: (0, 0, 0, out(a, w), {})


OPS = {
    "LinearClassifier": linear_classifier, "SVMClassifier": svm_classifier, "SVMRegressor": svm_regressor,
    "TreeEnsembleClassifier": tree_classifier, "TreeEnsembleRegressor": tree_regressor,
    "Scaler": scaler, "Normalizer": normalizer, "Imputer": imputer, "Sign": per_elem(1),
    "Cast": free(lambda a, w: [w[0]]), "ZipMap": free(lambda a, w: [w[0]]),
    "LabelEncoder": free(lambda a, w: [w[0]]), "Reshape": free(lambda a, w: [w[0]]),
    "Concat": free(lambda a, w: [sum(w)]),
    "OneHotEncoder": free(lambda a, w: [w[0] * len(a.get("cats_int64s") or a.get("cats_strings"))]),
    "ArrayFeatureExtractor": free(lambda a, w: [w[1]]),  # the indices' count
    "FeatureVectorizer": free(lambda a, w: [sum(a["inputdimensions"])]),
    "DictVectorizer": free(lambda a, w: [len(a.get("string_vocabulary") or a.get("int64_vocabulary"))]),
}


def row_width(vi):
    """Elements per row of a declared input: the dims after the first (1 for a [N] tensor or a map)."""
    t = vi.type
    if not t.HasField("tensor_type"):
        return 1
    dims = [d.dim_value for d in t.tensor_type.shape.dim]
    k = 1
    for d in dims[1:]:
        k *= d
    return k


def expect(name):
    m = onnx.load(os.path.join(HERE, name + ".onnx"))
    width = {vi.name: row_width(vi) for vi in m.graph.input}
    width.update({t.name: 1 for t in m.graph.initializer})
    nodes, macs, flops, params = [], 0, 0, 0
    for n in m.graph.node:
        a = attrs(n)
        mc, fl, pa, outs, notes = OPS[n.op_type](a, [width[i] for i in n.input])
        for o, k in zip(n.output, outs):
            width[o] = k
        nodes.append(dict(op=n.op_type, name=n.name, macs=mc, flops=fl, params=pa, **notes))
        macs, flops, params = macs + mc, flops + fl, params + pa
    return dict(producer=m.producer_name, producer_version=m.producer_version,
                ml_opset=[o.version for o in m.opset_import if o.domain == "ai.onnx.ml"][0],
                bytes=os.path.getsize(os.path.join(HERE, name + ".onnx")),
                per_row=dict(macs=macs, flops=flops), params=params, nodes=nodes)


if __name__ == "__main__":
    result = {f: expect(f) for f in FILES}
    with open(OUT, "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
        fh.write("\n")
    for f, r in result.items():
        print(f"{f:28} {r['producer']:12} {r['producer_version']:10} MACs/row {r['per_row']['macs']:6} "
              f"FLOPs/row {r['per_row']['flops']:6} params {r['params']}")
