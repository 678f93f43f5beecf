#!/usr/bin/env python3
"""bench/pt2_gen.py — a synthetic torch.export program JSON of N decoder layers, in torch 2.14's shapes
(srepr sizes, nn_module_stack, stack traces), for bench/pt2_read_bench: python3 bench/pt2_gen.py LAYERS OUT.json
80 layers make ~5.8 k nodes and ~9 MB, the size of Llama-3-70B's program (issue 51)."""
import json, sys

S = "Symbol('s0', integer=True, positive=True)"
T = "Symbol('s1', integer=True, positive=True)"


def size(x):
    return {"as_int": x} if isinstance(x, int) else {"as_expr": {"expr_str": x, "hint": None}}


def meta(shape, dtype=13):
    return {"dtype": dtype, "sizes": [size(s) for s in shape], "requires_grad": False,
            "device": {"type": "meta", "index": None}, "strides": [], "storage_offset": {"as_int": 0}, "layout": 7}


def main(layers, out):
    nodes, values, inputs, specs = [], {}, [], []
    def param(name, shape):
        ph = "p_" + name.replace(".", "_")
        values[ph] = meta(shape)
        inputs.append({"as_tensor": {"name": ph}})
        specs.append({"parameter": {"arg": {"name": ph}, "parameter_name": name}})
        return ph
    prev = "input_ids"
    values[prev] = meta([S, T], 5)
    for i in range(layers):
        stack = f"L__self__,,M;L__self___layers_{i},L['self'].layers[{i}],transformers.models.llama.LlamaDecoderLayer"
        for j in range(72):  # ~72 nodes a layer: 80 layers make ~5.8 k
            w = param(f"layers.{i}.w{j}", [8192, 8192]) if j % 9 == 0 else None
            name = f"n_{i}_{j}"
            ins = [{"name": "input", "arg": {"as_tensor": {"name": prev}}, "kind": 1}]
            if w:
                ins.append({"name": "weight", "arg": {"as_tensor": {"name": w}}, "kind": 1})
            else:
                ins.append({"name": "dims", "arg": {"as_ints": [0, 2, 1, 3]}, "kind": 1})
            nodes.append({"target": "torch.ops.aten.linear.default" if w else "torch.ops.aten.permute.default",
                          "inputs": ins, "outputs": [{"as_tensor": {"name": name}}], "name": name,
                          "metadata": {"stack_trace": f'  File "modeling_llama.py", line {100 + j}, in forward\n'
                                       f"    hidden_states = self.mlp(hidden_states)  # layer {i}\n" * 6,
                                       "nn_module_stack": stack, "torch_fn": f"linear_{j};builtin_function_or_method.linear"},
                          "is_hop_single_tensor_return": None})
            values[name] = meta([S, T, 8192])
            prev = name
    inputs.append({"as_tensor": {"name": "input_ids"}})
    specs.append({"user_input": {"arg": {"as_tensor": {"name": "input_ids"}}}})
    program = {"graph_module": {"graph": {"inputs": inputs, "outputs": [{"as_tensor": {"name": prev}}], "nodes": nodes,
                                          "tensor_values": values, "sym_int_values": {}, "sym_bool_values": {},
                                          "is_single_tensor_return": False, "custom_obj_values": {}, "sym_float_values": {}},
                                "signature": {"input_specs": specs,
                                              "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": prev}}}}]},
                                "module_call_graph": [{"fqn": "", "signature": None}], "metadata": {},
                                "treespec_namedtuple_fields": {}},
               "opset_version": {"aten": 10}, "range_constraints": {"s0": {"min_val": 1, "max_val": None},
                                                                   "s1": {"min_val": 2, "max_val": 131072}},
               "schema_version": {"major": 8, "minor": 20}, "verifiers": [], "torch_version": "2.14.1", "guards_code": []}
    with open(out, "w") as f:
        json.dump(program, f)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
