#!/usr/bin/python3
"""Writes the fuzzing regression corpus (tests/fuzz/regressions/): one small file per class of hostile input
issue 16 reported, each rebuilt by hand with onnx.helper. Inputs that fuzzing or tools/mutate.py find later
are copied into the same directory as they are (their names say where they came from).

    /usr/bin/python3 tools/regressions.py [OUT_DIR]
"""
import os
import sys

import onnx
from onnx import TensorProto, helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                                         "fuzz", "regressions")
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def save(name, nodes, inputs, outputs, inits=(), functions=(), opsets=(("", 17),)):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets], functions=list(functions))
    m.ir_version = 8
    with open(os.path.join(OUT, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def vi(name, dims, t=F):
    return helper.make_tensor_value_info(name, t, dims)


def const(name, vals, t=I64):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name + "_v", t, [len(vals)], vals))


def external(name, dims):
    """A float initializer declared with its data in an external file (never read)."""
    t = TensorProto()
    t.name, t.data_type = name, F
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    e = t.external_data.add()
    e.key, e.value = "location", "absent.bin"
    return t


def main():
    os.makedirs(OUT, exist_ok=True)
    # A Gather whose output is named as its input.
    save("gather_self_named", [const("i", [0]), helper.make_node("Gather", ["x", "i"], ["x"])], [vi("x", [3, 4])],
         [vi("x", None)])
    # Elementwise folds: too few inputs, shapes that do not broadcast.
    save("add_one_input", [const("a", [1, 2, 3]), helper.make_node("Add", ["a"], ["y"])], [], [vi("y", None, I64)])
    save("add_not_broadcast", [const("a", [1, 2, 3]), const("b", [1, 2, 3, 4]), helper.make_node("Add", ["a", "b"], ["y"]),
                               helper.make_node("Reshape", ["x", "y"], ["z"])], [vi("x", [24])], [vi("z", None)])
    # Floats folded into integers: NaN, inf, out of range.
    save("nan_to_int", [const("f", [float("nan"), float("inf"), -1e300], F), helper.make_node("Cast", ["f"], ["c"], to=I64),
                        helper.make_node("Reshape", ["x", "c"], ["z"])], [vi("x", [6])], [vi("z", None)])
    # Dims whose products overflow 64 bits.
    save("huge_dims", [helper.make_node("MatMul", ["x", "w"], ["y"])], [vi("x", [4611686018427387904, 3037000500, 8])],
         [vi("y", None)], [external("w", [8, 3037000500])])
    # A scope 10,000 levels deep, and names with escape sequences and invalid UTF-8.
    deep = "/".join("m%d" % i for i in range(10000)) + "/Relu"
    save("deep_scope", [helper.make_node("Relu", ["x"], ["y"], name=deep)], [vi("x", [2])], [vi("y", None)])
    n = helper.make_node("Relu", ["x"], ["y"])
    n.name = "\x1b[2J\x1b[31mred/\x07bell"
    save("escapes", [n], [vi("x", [2])], [vi("y", None)])
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="ok")], "utf8", [vi("x", [2])],
                                            [vi("y", None)]), opset_imports=[helper.make_opsetid("", 17)])
    raw = m.SerializeToString().replace(b"ok", b"\xff\xfe")
    with open(os.path.join(OUT, "invalid_utf8.onnx"), "wb") as f:
        f.write(raw)
    # Functions calling each other twice per level, 30 levels deep.
    funcs = []
    for i in range(30):
        body = [helper.make_node("f%d" % (i + 1), ["x"], ["t"], domain="local"),
                helper.make_node("f%d" % (i + 1), ["t"], ["y"], domain="local")] if i < 29 else \
               [helper.make_node("Relu", ["x"], ["y"])]
        funcs.append(helper.make_function("local", "f%d" % i, ["x"], ["y"], body, [helper.make_opsetid("", 17)]))
    save("function_fanout", [helper.make_node("f0", ["x"], ["y"], domain="local")], [vi("x", [2])], [vi("y", None)],
         functions=funcs, opsets=(("", 17), ("local", 1)))
    # A polynomial of 2^24 terms: a rank-24 broadcast of 24 sums of two dims.
    nodes, ins, prev = [], [], None
    for i in range(24):
        ins += [vi("a%d" % i, ["s%d" % i]), vi("b%d" % i, ["t%d" % i])]
        nodes.append(helper.make_node("Concat", ["a%d" % i, "b%d" % i], ["c%d" % i], axis=0))
        shape = [1] * 24
        shape[i] = -1
        nodes.append(const("sh%d" % i, shape))
        nodes.append(helper.make_node("Reshape", ["c%d" % i, "sh%d" % i], ["r%d" % i]))
        if prev is not None:
            nodes.append(helper.make_node("Mul", [prev, "r%d" % i], ["p%d" % i]))
            prev = "p%d" % i
        else:
            prev = "r0"
    save("poly_blowup", nodes, ins, [vi(prev, None)])
    # A Reshape whose rank comes from a shape tensor of 20 M elements.
    save("huge_rank", [const("n", [20000000]), helper.make_node("ConstantOfShape", ["n"], ["ones"],
                                                                value=helper.make_tensor("one", I64, [1], [1])),
                       helper.make_node("Reshape", ["x", "ones"], ["y"])], [vi("x", [1])], [vi("y", None)])
    # Structure: a cycle, a self-loop, two nodes writing one value, a dangling input.
    save("cycle", [helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])], [vi("x", [2])],
         [vi("a", None)])
    save("self_loop", [helper.make_node("Add", ["x", "y"], ["y"])], [vi("x", [2])], [vi("y", None)])
    save("duplicate_outputs", [helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Sigmoid", ["x"], ["y"])],
         [vi("x", [2])], [vi("y", None)])
    save("dangling_input", [helper.make_node("Add", ["x", "nowhere"], ["y"])], [vi("x", [2])], [vi("y", None)])
    print(OUT)


if __name__ == "__main__":
    main()
