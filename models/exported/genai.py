#!/usr/bin/python3
"""models/exported/genai.py [OUT_DIR]: decoders in the layout ONNX Runtime GenAI's model builder writes, and
what ONNX Runtime says of them (issue 55). Runs in the modern root (onnx 1.20, onnxruntime 1.23):
    scripts/modern_torch.sh python3 models/exported/genai.py

- genai_llama.onnx: a LLaMA-style decoder as the builder writes it for CPU fp32: input_ids, attention_mask
  [batch_size, total_sequence_length] and past_key_values.N.key/value [batch_size, kv, past_sequence_length,
  head]; seqlens_k = ReduceSum(mask) - 1 and total_sequence_length = Shape(mask)[1] (int32);
  SimplifiedLayerNormalization then SkipSimplifiedLayerNormalization; q, k, v, o and the SwiGLU MLP as MatMul;
  GroupQueryAttention with do_rotary (cos/sin caches); the LM head MatMul. Hidden 64, 4 query heads of 16,
  2 kv heads, 2 layers, FFN 128, vocab 256, caches for 128 positions.
- genai_llama_int4.onnx: the same through ONNX Runtime's MatMulNBitsQuantizer (4 bits, blocks of 32, zero points): every
  MatMul with a weight becomes MatMulNBits.
Both graph-only (weights in NAME.onnx.data, not committed). NAME.expect.json: the config, and the shapes of
logits and present.0.key that ONNX Runtime (CPU) returns at a prefill (batch 2, 5 tokens) and a decode step
(1 token after 5).
"""
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

CFG = dict(hidden=64, heads=4, kv_heads=2, head=16, layers=2, ffn=128, vocab=256, max_len=128)
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(55)


def build():
    c = CFG
    H, N, KV, D, F, V = c["hidden"], c["heads"], c["kv_heads"], c["head"], c["ffn"], c["vocab"]
    nodes, inits = [], []

    def w(name, *shape):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.05).astype(np.float32), name))
        return name

    def node(op, ins, outs, domain="", **attrs):
        nodes.append(helper.make_node(op, ins, outs, name="/" + outs[0].replace(".", "/"), domain=domain,
                                      **attrs))
        return outs[0]

    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                            ["batch_size", "total_sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", V])]
    for i in range(c["layers"]):
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", TensorProto.FLOAT,
                                                        ["batch_size", KV, "past_sequence_length", D]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kv}", TensorProto.FLOAT,
                                                         ["batch_size", KV, "total_sequence_length", D]))
    # seqlens_k and total_sequence_length, as the builder makes them from the mask.
    inits.append(numpy_helper.from_array(np.array([1], np.int64), "one_axis"))
    inits.append(numpy_helper.from_array(np.array(1, np.int64), "one_i64"))
    node("ReduceSum", ["attention_mask", "one_axis"], ["mask_sum"], keepdims=0)
    node("Sub", ["mask_sum", "one_i64"], ["mask_sum_m1"])
    node("Cast", ["mask_sum_m1"], ["seqlens_k"], to=TensorProto.INT32)
    node("Shape", ["attention_mask"], ["mask_shape"])
    inits.append(numpy_helper.from_array(np.array(1, np.int64), "idx1"))
    node("Gather", ["mask_shape", "idx1"], ["total_len_i64"], axis=0)
    node("Cast", ["total_len_i64"], ["total_seq_len"], to=TensorProto.INT32)
    # Rotary caches: cos/sin of position x inverse frequency, [max_len, head/2].
    inv = 1.0 / (10000 ** (np.arange(0, D, 2) / D))
    ang = np.outer(np.arange(c["max_len"]), inv)
    inits.append(numpy_helper.from_array(np.cos(ang).astype(np.float32), "cos_cache"))
    inits.append(numpy_helper.from_array(np.sin(ang).astype(np.float32), "sin_cache"))

    x = node("Gather", [w("model.embed_tokens.weight", V, H), "input_ids"], ["model.embed_tokens.output"])
    h = node("SimplifiedLayerNormalization", [x, w("model.layers.0.input_layernorm.weight", H)],
             ["model.layers.0.input_layernorm.output"], axis=-1, epsilon=1e-5)
    residual = x
    for i in range(c["layers"]):
        p = f"model.layers.{i}"
        q = node("MatMul", [h, w(f"{p}.attn.q_proj.weight", H, N * D)], [f"{p}.attn.q_proj.output"])
        k = node("MatMul", [h, w(f"{p}.attn.k_proj.weight", H, KV * D)], [f"{p}.attn.k_proj.output"])
        v = node("MatMul", [h, w(f"{p}.attn.v_proj.weight", H, KV * D)], [f"{p}.attn.v_proj.output"])
        nodes.append(helper.make_node(
            "GroupQueryAttention",
            [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value", "seqlens_k", "total_seq_len",
             "cos_cache", "sin_cache"],
            [f"{p}.attn.output", f"present.{i}.key", f"present.{i}.value"], name=f"/{p}/attn/GroupQueryAttention",
            domain="com.microsoft", num_heads=N, kv_num_heads=KV, do_rotary=1, scale=1.0 / np.sqrt(D)))
        o = node("MatMul", [f"{p}.attn.output", w(f"{p}.attn.o_proj.weight", N * D, H)], [f"{p}.attn.o_proj.output"])
        nodes.append(helper.make_node(
            "SkipSimplifiedLayerNormalization", [o, residual, w(f"{p}.post_attention_layernorm.weight", H)],
            [f"{p}.post_attention_layernorm.output", "", "", f"{p}.post_attention_layernorm.residual"],
            name=f"/{p}/post_attention_layernorm/SkipLayerNorm", domain="com.microsoft", epsilon=1e-5))
        h, residual = f"{p}.post_attention_layernorm.output", f"{p}.post_attention_layernorm.residual"
        g = node("MatMul", [h, w(f"{p}.mlp.gate_proj.weight", H, F)], [f"{p}.mlp.gate_proj.output"])
        u = node("MatMul", [h, w(f"{p}.mlp.up_proj.weight", H, F)], [f"{p}.mlp.up_proj.output"])
        s = node("Sigmoid", [g], [f"{p}.mlp.act.sigmoid"])
        a = node("Mul", [g, s], [f"{p}.mlp.act.output"])
        m = node("Mul", [a, u], [f"{p}.mlp.mul.output"])
        d = node("MatMul", [m, w(f"{p}.mlp.down_proj.weight", F, H)], [f"{p}.mlp.down_proj.output"])
        nxt = f"model.layers.{i + 1}.input_layernorm" if i + 1 < c["layers"] else "model.norm"
        nodes.append(helper.make_node(
            "SkipSimplifiedLayerNormalization", [d, residual, w(f"{nxt}.weight", H)],
            [f"{nxt}.output", "", "", f"{nxt}.residual"], name=f"/{nxt.replace('.', '/')}/SkipLayerNorm",
            domain="com.microsoft", epsilon=1e-5))
        h, residual = f"{nxt}.output", f"{nxt}.residual"
    node("MatMul", [h, w("lm_head.weight", H, V)], ["logits"])
    graph = helper.make_graph(nodes, "genai_llama", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              producer_name="flopwise models/exported/genai.py")
    model.ir_version = 10
    return model


def run(path):
    c = CFG
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    out = {}
    for phase, batch, seq, past in (("prefill", 2, 5, 0), ("decode", 2, 1, 5)):
        feeds = {"input_ids": rng.integers(0, c["vocab"], (batch, seq)).astype(np.int64),
                 "attention_mask": np.ones((batch, past + seq), np.int64)}
        for i in range(c["layers"]):
            for kv in ("key", "value"):
                feeds[f"past_key_values.{i}.{kv}"] = np.zeros((batch, c["kv_heads"], past, c["head"]), np.float32)
        res = sess.run(["logits", "present.0.key"], feeds)
        out[phase] = dict(batch=batch, seq=seq, past=past, logits=list(res[0].shape),
                          present_key=list(res[1].shape))
    return out


def save(model, name):
    path = os.path.join(OUT, name + ".onnx")
    if os.path.exists(path + ".data"):
        os.remove(path + ".data")  # onnx appends to an existing data file
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=name + ".onnx.data", size_threshold=1024)
    expect = dict(config=CFG, onnxruntime=ort.__version__, ops=sorted({n.op_type for n in model.graph.node}),
                  runs=run(path))
    with open(os.path.join(OUT, name + ".expect.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")
    print(name, json.dumps(expect["runs"]))


def main():
    model = build()
    save(model, "genai_llama")
    from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer
    cfg = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=False, bits=4)
    q = MatMulNBitsQuantizer(onnx.load(os.path.join(OUT, "genai_llama.onnx")), algo_config=cfg)
    q.process()
    save(q.model.model, "genai_llama_int4")


if __name__ == "__main__":
    main()
