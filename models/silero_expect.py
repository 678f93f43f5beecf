#!/usr/bin/python3
"""Expected params of the real silero-vad ONNX files (issue 31, items 3 and 4), computed from the files' own
arrays, independently of flopwise.

    /usr/bin/python3 models/silero_expect.py                    # npm pack into a temp dir, verify, compute
    /usr/bin/python3 models/silero_expect.py --dir /tmp/silero  # use (and keep) the .onnx files there
    /usr/bin/python3 models/silero_expect.py --out -            # print the JSON instead of writing it

Needs Debian's python (onnx 1.12, numpy) and `npm` (the registry) unless --dir already holds the files
with the pinned sha256. The .onnx files are not committed (1.8 and 2.3 MB); only models/silero/expect.json.

Source: the npm package @ricky0123/vad-web 0.0.31 (dist/), which ships silero-vad v5 (spox export) and the
legacy model (torch 1.12 export). Both take `sr` (int64 scalar) and branch on `Equal(sr, 16000)`: then the
16 kHz model, else the 8 kHz one.

Rule followed (README "params" + the issue): a float stored tensor (initializer or Constant node) is a param
when it reaches a weight input of a layer (Conv/ConvTranspose/PRelu slots >= 1, MatMul/Gemm/Einsum any slot,
LSTM/GRU/RNN W, R, B, P; norm scales; a Gather's data with run-time indices, i.e. an embedding table), directly
or through layout-only ops (Identity, Cast, Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Slice, Split,
Gather with a constant index, Concat of constant-derived tensors), or when it is a non-scalar operand of an
elementwise Add/Mul/Sub/Div with an activation; counted once, with its own element count, however many
paths read it. An If whose condition folds to a constant (pinned `sr`, static input dims) runs one branch.
Beside the params of a pinned path, the float stored tensors its nodes read at all (params or not) and the
ones that are no params (issue 52: a scalar Pow exponent, the 2^20 and the 1 of log(1 + 2^20 |STFT|)).
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE, VERSION = "@ricky0123/vad-web", "0.0.31"
FILES = {  # name in the package's dist/ -> sha256
    "silero_vad_v5.onnx": "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f",
    "silero_vad_legacy.onnx": "a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28",
}
FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16}
LAYOUT = {"Identity", "Cast", "CastLike", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Slice",
          "Split", "Gather", "Concat"}
ELEMENTWISE = {"Add", "Mul", "Sub", "Div"}
DTYPE_NAMES = {TensorProto.FLOAT: "float32", TensorProto.FLOAT16: "float16", TensorProto.DOUBLE: "float64",
               TensorProto.BFLOAT16: "bfloat16"}


NOTES = {
    "silero_vad_v5.onnx": "spox export, no initializers: every weight is a Constant node inside If_0's bodies "
                          "(If_0 on Equal(sr, 16000): then = 16 kHz, else = 8 kHz). The LSTM cell's weight_ih, "
                          "weight_hh [512,128] and bias_ih, bias_hh [512] reach the ONNX LSTM's W, R, B through "
                          "3 Slices each (gate rows 0:128, 384:512, 128:384, torch's i,f,g,o reordered to ONNX's "
                          "i,o,f,c), a Concat, for B a second Concat (ih, hh), then Unsqueeze; both bodies of the "
                          "nested decoder/If_1 (condition Cast(Squeeze(Gather(Shape(state), [0]))) to bool, "
                          "state is [2, ?, 128], so then) read the same outer Constants.",
    "silero_vad_legacy.onnx": "torch 1.12 export: If_25 on Equal(sr, initializer 16000); then reads model.* "
                              "initializers (16 kHz), else model_8k.*, both outer initializers. In each, a "
                              "nested If (If_177 / If_651, condition Cast(Squeeze(Gather(Shape(h), [0]))) to "
                              "bool, h is [2, batch, 64], so then) holds the 2-layer LSTM, its weights "
                              "(4 x [1,256,64], 2 x [1,512]) duplicated as body initializers in both bodies.",
}


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(dest):
    """npm pack the pinned version into a temp dir and copy dist/<file> for each file into dest."""
    tmp = tempfile.mkdtemp(prefix="silero_npm_")
    try:
        subprocess.run(["npm", "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", tmp, "--loglevel=error"], check=True,
                       stdout=subprocess.DEVNULL)
        tgz = [f for f in os.listdir(tmp) if f.endswith(".tgz")][0]
        with tarfile.open(os.path.join(tmp, tgz)) as t:
            for name in FILES:
                src = t.extractfile("package/dist/" + name)
                with open(os.path.join(dest, name), "wb") as f:
                    shutil.copyfileobj(src, f)
    finally:
        shutil.rmtree(tmp)


def weight_slot(op, slot):
    if op in ("Conv", "ConvTranspose", "PRelu"):
        return slot >= 1
    if op in ("Gemm", "MatMul", "Einsum"):
        return True
    if op in ("LayerNormalization", "InstanceNormalization", "GroupNormalization", "BatchNormalization"):
        return slot in (1, 2)
    if op in ("LSTM", "GRU", "RNN"):
        return slot in (1, 2, 3, 7)
    return False


class Analysis:
    """One walk over the graph and every body, in node order (a body sees the values defined before its
    node). Values are keyed (graph id, name); names resolve to the nearest enclosing definition."""

    def __init__(self, model, pins):
        self.pins = pins  # graph-input name -> numpy value (the --value pins)
        self.sources = {}  # source id -> {name, numel, dtype, shape, graph}
        self.derived = {}  # value key -> frozenset of source ids (a layout-only function of stored tensors)
        self.const = {}  # value key -> numpy value (folded; object arrays hold None for unknown dims)
        self.uses = []  # (source ids, graph id, node name, op, slot, role)
        self.graphs = {}  # graph id -> {name, parent, node (If name), branch, decided (None|True|False)}
        self.ifs = []  # {node, graph, cond (None/True/False), then, else}
        self.walk(model.graph, None, None, None, [])

    # -- scopes
    def resolve(self, scopes, name):
        for gid, names in reversed(scopes):
            if name in names:
                return (gid, name)
        return None

    def walk(self, g, parent, if_node, branch, scopes):
        gid = len(self.graphs)
        self.graphs[gid] = {"name": g.name, "parent": parent, "node": if_node, "branch": branch}
        names = set()
        scopes = scopes + [(gid, names)]
        for i in g.input:
            names.add(i.name)
            key = (gid, i.name)
            if parent is None:
                t = i.type.tensor_type
                if i.name in self.pins:
                    self.const[key] = np.asarray(self.pins[i.name])
                self.graphs[gid].setdefault("shapes", {})[i.name] = [
                    d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        for t in g.initializer:
            names.add(t.name)
            a = numpy_helper.to_array(t)
            self.const[(gid, t.name)] = a
            if t.data_type in FLOAT_TYPES:
                self.add_source((gid, t.name), t.name, a, t.data_type, gid, "initializer")
        for n in g.node:
            self.visit(n, gid, scopes)
            names.update(o for o in n.output if o)
        return gid

    def add_source(self, key, name, a, dtype, gid, kind):
        sid = len(self.sources)
        self.sources[sid] = {"name": name, "numel": int(a.size), "shape": list(a.shape),
                             "dtype": DTYPE_NAMES[dtype], "graph": gid, "kind": kind,
                             "value": float(a.reshape(-1)[0]) if a.size == 1 else None}
        self.derived[key] = frozenset([sid])

    def shape_of(self, key):
        top = self.graphs[0].get("shapes", {})
        return top.get(key[1]) if key[0] == 0 else None

    # -- nodes
    def visit(self, n, gid, scopes):
        op = n.op_type
        ins = [self.resolve(scopes, x) if x else None for x in n.input]
        outs = [(gid, o) for o in n.output]
        if op == "Constant":
            a = self.constant_value(n)
            self.const[outs[0]] = a[0] if a is not None else None
            if a is not None and a[1] in FLOAT_TYPES:
                self.add_source(outs[0], n.output[0], a[0], a[1], gid, "Constant")
            return
        self.fold(n, ins, outs)
        # layout-only propagation of stored tensors
        der = [self.derived.get(k) if k else None for k in ins]
        if op in LAYOUT and der and der[0]:
            ok = True
            if op == "Gather":
                ok = ins[1] is not None and self.const.get(ins[1]) is not None
            if op == "Concat":
                ok = all(d for d in der)
            if ok:
                srcs = frozenset().union(*[d for d in der if d])
                for o in outs:
                    self.derived[o] = srcs
                return
        for slot, d in enumerate(der):
            if not d:
                continue
            role = None
            if weight_slot(op, slot):
                role = "weight"
            elif op == "Gather" and slot == 0:
                role = "embedding"
            elif op in ELEMENTWISE and len(ins) == 2:
                other = der[1 - slot]
                if not other and all(self.sources[s]["numel"] >= 2 for s in d):
                    role = "elementwise"
            self.uses.append((d, gid, n.name, op, slot, role))
        if op == "If":
            cond = self.const.get(ins[0])
            decided = None
            if cond is not None and cond.dtype != object:
                decided = bool(np.asarray(cond).reshape(-1)[0])
            bodies = {}
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    bodies[a.name] = self.walk(a.g, gid, n.name, a.name, scopes)
            self.ifs.append({"node": n.name, "graph": gid, "cond": decided, "then": bodies.get("then_branch"),
                             "else": bodies.get("else_branch")})
        else:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    self.walk(a.g, gid, n.name, a.name, scopes)

    @staticmethod
    def constant_value(n):
        for a in n.attribute:
            if a.name == "value":
                return numpy_helper.to_array(a.t), a.t.data_type
            if a.name == "value_float":
                return np.array(a.f, np.float32), TensorProto.FLOAT
            if a.name == "value_floats":
                return np.array(list(a.floats), np.float32), TensorProto.FLOAT
            if a.name == "value_int":
                return np.array(a.i, np.int64), TensorProto.INT64
            if a.name == "value_ints":
                return np.array(list(a.ints), np.int64), TensorProto.INT64
        return None

    def fold(self, n, ins, outs):
        """Constant-fold the few ops conditions are made of; a Shape reads the top graph's input types."""
        op = n.op_type
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        v = [self.const.get(k) if k else None for k in ins]

        def known(x):
            return x is not None and (x.dtype != object or all(e is not None for e in x.reshape(-1)))

        r = None
        try:
            if op == "Shape":
                s = self.shape_of(ins[0])
                if s is not None:
                    r = np.array(s, dtype=object) if None in s else np.array(s, np.int64)
            elif op == "Size" and v[0] is not None:
                r = np.array(v[0].size, np.int64)
            elif op == "Gather" and v[0] is not None and known(v[1]):
                r = np.take(v[0], v[1].astype(np.int64), axis=attrs.get("axis", 0))
                if r.dtype == object and known(r):
                    r = r.astype(np.int64)
            elif op == "Squeeze" and v[0] is not None:
                axes = tuple(int(x) for x in v[1]) if len(v) > 1 and known(v[1]) else attrs.get("axes")
                r = np.squeeze(v[0], axis=tuple(axes) if axes is not None else None)
            elif op == "Unsqueeze" and v[0] is not None and known(v[1]):
                r = v[0]
                for ax in sorted(int(x) for x in v[1]):
                    r = np.expand_dims(r, ax)
            elif op in ("Identity",) and v[0] is not None:
                r = v[0]
            elif op == "Cast" and known(v[0]):
                to = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[attrs["to"]]
                r = v[0].astype(to)
            elif op == "Not" and known(v[0]):
                r = np.logical_not(v[0])
            elif op in ("Equal", "Greater", "Less", "And", "Or") and known(v[0]) and known(v[1]):
                f = {"Equal": np.equal, "Greater": np.greater, "Less": np.less, "And": np.logical_and,
                     "Or": np.logical_or}[op]
                r = f(v[0].astype(np.int64) if v[0].dtype == object else v[0],
                      v[1].astype(np.int64) if v[1].dtype == object else v[1])
        except Exception:  # anything odd: unknown
            r = None
        if r is not None:
            self.const[outs[0]] = np.asarray(r)

    # -- figures
    def live_graphs(self, pinned=True):
        """Graphs that run: the top graph, and for each If in a live graph its decided branch or both."""
        live = {0}
        changed = True
        while changed:
            changed = False
            for f in self.ifs:
                if f["graph"] not in live:
                    continue
                take = [f["then"], f["else"]]
                if pinned and f["cond"] is not None:
                    take = [f["then"] if f["cond"] else f["else"]]
                for b in take:
                    if b is not None and b not in live:
                        live.add(b)
                        changed = True
        return live

    def param_sources(self, graphs=None):
        out = set()
        for srcs, gid, _, _, _, role in self.uses:
            if role and (graphs is None or gid in graphs):
                out |= srcs
        return out

    def numel(self, sids):
        return sum(self.sources[s]["numel"] for s in sids)

    def top_if(self, gid):
        """(top-level If node, branch) that holds graph gid, or None for the top graph."""
        if gid == 0:
            return None
        while self.graphs[gid]["parent"] != 0:
            gid = self.graphs[gid]["parent"]
        return self.graphs[gid]["node"], self.graphs[gid]["branch"]

    def subtree(self, gid):
        out = {gid}
        changed = True
        while changed:
            changed = False
            for k, g in self.graphs.items():
                if g["parent"] in out and k not in out:
                    out.add(k)
                    changed = True
        return out


def layout_sources(model, a):
    """Param sources some param use reads through layout-only ops (the input at the use is not the source
    itself), with the layout ops on those paths."""
    node_inputs = {}

    def collect(g):
        for n in g.node:
            node_inputs[n.name] = list(n.input)
            for at in n.attribute:
                if at.type == onnx.AttributeProto.GRAPH:
                    collect(at.g)
    collect(model.graph)
    via = set()
    for srcs, gid, node, op, slot, role in a.uses:
        if role:
            via |= {s for s in srcs if a.sources[s]["name"] != node_inputs[node][slot]}
    return via


def stored_read(a, graphs):
    """Float stored tensors some node of `graphs` reads (as a param or not), and each one's readers."""
    read, readers = set(), {}
    for srcs, gid, _, op, slot, _ in a.uses:
        if gid in graphs:
            read |= srcs
            for s in srcs:
                readers.setdefault(s, set()).add("%s input %d" % (op, slot))
    return read, readers


def describe(a, sid, readers):
    s = a.sources[sid]
    what = "scalar %.10g" % s["value"] if s["value"] is not None else "x".join(map(str, s["shape"]))
    return "%s (%s %s): %s" % (s["name"], s["kind"], what, ", ".join(sorted(readers)))


def figures(path):
    m = onnx.load(path)
    a = Analysis(m, {})
    allp = a.param_sources()
    via = layout_sources(m, a)
    branch = {}  # top-level If -> branch -> params read only inside it (nested bodies included)
    for sid in sorted(allp):
        holders = {a.top_if(g) for srcs, g, _, _, _, role in a.uses if role and sid in srcs}
        if None in holders:
            continue  # read by the top graph: a plain param
        node, br = sorted(holders)[0]
        branch.setdefault(node, {}).setdefault(br, 0)
        branch[node][br] += a.sources[sid]["numel"]
    ifs = []
    for f in a.ifs:
        def w(gid):
            return a.numel(a.param_sources(a.subtree(gid))) if gid is not None else 0
        if w(f["then"]) or w(f["else"]):
            ifs.append({"node": f["node"], "in_graph": a.graphs[f["graph"]]["name"],
                        "unpinned_condition": {None: "undecided", True: "then", False: "else"}[f["cond"]],
                        "params_then": w(f["then"]), "params_else": w(f["else"])})
    out = {
        "params_all_branches": a.numel(allp),
        "params_all_branches_by_dtype": {},
        "params_unpinned_decided": a.numel(a.param_sources(a.live_graphs())),
        "branch_params": branch,
        "ifs_with_weights": ifs,
        "params_via_layout_ops_all_branches": a.numel(via),
        "sources_via_layout_ops": sorted("%s (%s %s)" % (a.sources[s]["name"], a.sources[s]["kind"],
                                                         "x".join(map(str, a.sources[s]["shape"]))) for s in via),
        "float_stored_tensors_not_params": a.numel(set(a.sources) - allp),
        "pinned": {},
    }
    for s in allp:
        d = out["params_all_branches_by_dtype"]
        d[a.sources[s]["dtype"]] = d.get(a.sources[s]["dtype"], 0) + a.sources[s]["numel"]
    for sr in (16000, 8000):
        p = Analysis(m, {"sr": np.array(sr, np.int64)})
        run = p.param_sources(p.live_graphs())
        top = [f for f in p.ifs if f["graph"] == 0]
        read, readers = stored_read(p, p.live_graphs())
        out["pinned"]["sr=%d" % sr] = {
            "top_if_branch": {f["node"]: {True: "then_branch", False: "else_branch", None: "undecided"}[f["cond"]]
                              for f in top},
            "params_path_that_runs": p.numel(run),
            "params_via_layout_ops_path_that_runs": p.numel(layout_sources(m, p) & run),
            "float_stored_read_path_that_runs": p.numel(read),
            "float_stored_not_params_path_that_runs": sorted(describe(p, s, readers[s]) for s in read - run),
            "float_stored_not_params_elements_path_that_runs": p.numel(read - run),
        }
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", help="directory holding (or to receive) the .onnx files; default a temp dir")
    ap.add_argument("--out", default=os.path.join(HERE, "silero", "expect.json"), help="JSON path, or - for stdout")
    args = ap.parse_args()
    d = args.dir or tempfile.mkdtemp(prefix="silero_")
    os.makedirs(d, exist_ok=True)
    if not all(os.path.exists(os.path.join(d, f)) and sha256(os.path.join(d, f)) == h for f, h in FILES.items()):
        fetch(d)
    files = {}
    for f, h in FILES.items():
        p = os.path.join(d, f)
        got = sha256(p)
        if got != h:
            raise SystemExit(f"{f}: sha256 {got}, expected {h}")
        files[f] = {"sha256": h, "bytes": os.path.getsize(p)}
    expect = {"package": PACKAGE, "version": VERSION, "files": files, "models": {}, "notes": NOTES}
    for f in FILES:
        p = os.path.join(d, f)
        expect["models"][f] = figures(p)
    text = json.dumps(expect, indent=1, sort_keys=True) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as fh:
            fh.write(text)
        print(args.out)
    if not args.dir:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
