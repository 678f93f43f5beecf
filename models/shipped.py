#!/usr/bin/python3
"""Generates the "ONNX as it is shipped" test models (issue 15) into models/shipped/.

Run with Debian's python (torch 1.13, onnx 1.12), no downloads, random weights:

    /usr/bin/python3 models/shipped.py                 # every model, into models/shipped/
    /usr/bin/python3 models/shipped.py --only llama_mha --out DIR

Each model reproduces one exporter idiom that `torch.onnx.export` in its default form does not produce.
Beside each `<name>.onnx` the generator writes `<name>.expect.json`: the figures a test pins, computed here
independently of flopwise (initializer/constant element counts by dtype from the generator's own arrays,
MACs by hand formula), never read back from flopwise.

KV-cache decoders (`llama_mha`, `llama_gqa`): a LLaMA-style decoder (RMSNorm, rotary positions computed in
the graph as `arange(seq) + past` in float and an outer product with the inverse frequencies, q/k/v/o
projections, grouped-query attention by repeat_interleave of the kv heads, SwiGLU MLP, LM head), inputs
`input_ids [batch, seq]` and `past_key_values.N.key/value [batch, kv_heads, past, head_dim]`, outputs
`logits` and `present.N.key/value [batch, kv_heads, past_plus_seq, head_dim]`. The expectation holds the
hand formula of its MACs as coefficients of `batch*seq`, `batch*seq*seq` and `batch*seq*past`.
"""

import argparse
import json
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17


def write_expect(out_dir, name, expect):
    with open(os.path.join(out_dir, name + ".expect.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")


def save_graph_only(m, path):
    """Weights over 1 KiB go to `<name>.onnx.data` (not committed; flopwise never reads it)."""
    data = os.path.basename(path) + ".data"
    if os.path.exists(path + ".data"):
        os.remove(path + ".data")
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True, location=data,
                    size_threshold=1024)


# --------------------------------------------------------------------------------------------------
# KV-cache decoders (torch)


def llama(out_dir, name, heads, kv_heads, hf=False, experts=0, top_k=0, cache=True):
    import torch
    import torch.nn as nn

    torch.manual_seed(15 + heads * 7 + kv_heads)
    hidden, layers, ffn, vocab = 64, 2, 160, 256
    head_dim = hidden // heads
    rep = heads // kv_heads

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d) + 0.01 * torch.randn(d))

        def forward(self, x):
            var = x.pow(2).mean(-1, keepdim=True)
            return self.weight * (x * torch.rsqrt(var + 1e-6))

    class Rotary(nn.Module):
        def __init__(self):
            super().__init__()
            inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
            self.register_buffer("inv_freq", inv)

        def forward(self, seq, past):
            # positions in the graph: arange(seq) + past, in float, outer product with inv_freq
            t = torch.arange(seq, dtype=torch.float32) + past
            freqs = torch.outer(t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos(), emb.sin()

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj = nn.Linear(hidden, heads * head_dim, bias=False)
            self.k_proj = nn.Linear(hidden, kv_heads * head_dim, bias=False)
            self.v_proj = nn.Linear(hidden, kv_heads * head_dim, bias=False)
            self.o_proj = nn.Linear(heads * head_dim, hidden, bias=False)

        def forward(self, x, cos, sin, past_k, past_v, mask):
            b, s, _ = x.shape
            q = self.q_proj(x).view(b, s, heads, head_dim).transpose(1, 2)
            k = self.k_proj(x).view(b, s, kv_heads, head_dim).transpose(1, 2)
            v = self.v_proj(x).view(b, s, kv_heads, head_dim).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            if cache:
                k = torch.cat((past_k, k), dim=2)
                v = torch.cat((past_v, v), dim=2)
            present = (k, v)
            if rep > 1:
                total = k.shape[2]
                k = k[:, :, None, :, :].expand(b, kv_heads, rep, total, head_dim).reshape(b, heads, total, head_dim)
                v = v[:, :, None, :, :].expand(b, kv_heads, rep, total, head_dim).reshape(b, heads, total, head_dim)
            scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(head_dim)
            total = k.shape[2]
            past_len = total - s
            # causal mask over [seq, past + seq]: query i sees keys j <= past + i
            qi = torch.arange(s).unsqueeze(1) + past_len
            kj = torch.arange(total).unsqueeze(0)
            scores = scores.masked_fill(kj > qi, float("-inf"))
            if mask is not None:  # Hugging Face style: a [batch, past + seq] padding mask, additive in float
                scores = scores + (1.0 - mask[:, None, None, :].to(scores.dtype)) * -10000.0
            probs = torch.softmax(scores, dim=-1)
            out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, heads * head_dim)
            return self.o_proj(out), present

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj = nn.Linear(hidden, ffn, bias=False)
            self.up_proj = nn.Linear(hidden, ffn, bias=False)
            self.down_proj = nn.Linear(ffn, hidden, bias=False)

        def forward(self, x):
            g = self.gate_proj(x)
            return self.down_proj(g * torch.sigmoid(g) * self.up_proj(x))

    class MoE(nn.Module):
        """Mixtral-style router (softmax, top-k, renormalised), written densely as exporters can trace it:
        every expert runs on every token and is weighted by its gate (0 where the router did not pick it)."""

        def __init__(self):
            super().__init__()
            self.gate = nn.Linear(hidden, experts, bias=False)
            self.experts = nn.ModuleList([MLP() for _ in range(experts)])

        def forward(self, x):
            w = torch.softmax(self.gate(x), dim=-1)
            topw, topi = torch.topk(w, top_k, dim=-1)
            topw = topw / topw.sum(-1, keepdim=True)
            out = None
            for e, expert in enumerate(self.experts):
                we = (topw * (topi == e).to(topw.dtype)).sum(-1, keepdim=True)
                y = we * expert(x)
                out = y if out is None else out + y
            return out

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_layernorm = RMSNorm(hidden)
            self.self_attn = Attention()
            self.post_attention_layernorm = RMSNorm(hidden)
            self.mlp = MoE() if experts else MLP()

        def forward(self, x, cos, sin, pk, pv, mask):
            a, present = self.self_attn(self.input_layernorm(x), cos, sin, pk, pv, mask)
            x = x + a
            return x + self.mlp(self.post_attention_layernorm(x)), present

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(vocab, hidden)
            self.rotary = Rotary()
            self.layers = nn.ModuleList([Layer() for _ in range(layers)])
            self.norm = RMSNorm(hidden)
            self.lm_head = nn.Linear(hidden, vocab, bias=False)

        def forward(self, input_ids, *rest):
            mask, past = (rest[0], rest[1:]) if hf else (None, rest)
            if not cache:
                past = [None] * (2 * layers)
            s = input_ids.shape[1]
            past_len = past[0].shape[2] if cache else 0
            cos, sin = self.rotary(s, past_len)
            x = self.embed_tokens(input_ids)
            presents = []
            for i, layer in enumerate(self.layers):
                x, (k, v) = layer(x, cos, sin, past[2 * i], past[2 * i + 1], mask)
                presents += [k, v] if cache else []
            return (self.lm_head(self.norm(x)), *presents)

    model = Decoder().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.01 * torch.randn_like(p))

    batch, seq, past = 2, 5, 3
    ids = torch.randint(0, vocab, (batch, seq))
    pkv = [torch.randn(batch, kv_heads, past, head_dim) for _ in range(2 * layers)] if cache else []
    # Hugging Face Optimum's names: dims spelled as expressions ("past_sequence_length + sequence_length")
    B, S, P = ("batch_size", "sequence_length", "past_sequence_length") if hf else ("batch", "seq", "past")
    total = P + " + " + S if hf else "past_plus_seq"
    in_names = ["input_ids"]
    out_names = ["logits"]
    axes = {"input_ids": {0: B, 1: S}, "logits": {0: B, 1: S}}
    extra = ()
    if hf:
        in_names.append("attention_mask")
        axes["attention_mask"] = {0: B, 1: total}
        extra = (torch.ones(batch, past + seq, dtype=torch.int64),)
    for i in range(layers if cache else 0):
        for kv in ("key", "value"):
            n = f"past_key_values.{i}.{kv}"
            o = f"present.{i}.{kv}"
            in_names.append(n)
            out_names.append(o)
            axes[n] = {0: B, 2: P}
            axes[o] = {0: B, 2: total}
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, (ids, *extra, *pkv), path, input_names=in_names, output_names=out_names,
                      dynamic_axes=axes, opset_version=OPSET, do_constant_folding=True)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    save_graph_only(m, path)

    params = sum(p.numel() for p in model.parameters())
    # MACs by hand, per layer: q,o: hidden*heads*hd each; k,v: hidden*kv_heads*hd each; MLP 3*hidden*ffn;
    # QK^T and AV: heads*hd*(past+seq) each per query token; LM head hidden*vocab.
    # A MoE layer's MLP MACs per token: its router (hidden*experts) and every expert (the graph runs them all);
    # activated: the router and top_k experts.
    mlp = hidden * experts + experts * 3 * hidden * ffn if experts else 3 * hidden * ffn
    mlp_active = hidden * experts + top_k * 3 * hidden * ffn if experts else mlp
    attn_proj = 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim
    per_tok = layers * (attn_proj + mlp) + hidden * vocab
    attn = layers * 2 * heads * head_dim  # times batch*seq*(past+seq)
    rotary = head_dim // 2  # the outer product positions x inv_freq: seq*head_dim/2, once (no batch)
    formula = {"batch*seq": per_tok, "batch*seq*seq": attn, "seq": rotary}
    if cache:
        formula["batch*seq*past"] = attn
    expect = {
        "torch_params": params,
        "float32_initializer_numel": int(sum(np.prod(t.dims) for t in m.graph.initializer
                                             if t.data_type == TensorProto.FLOAT)),
        "macs_formula": formula,
        "macs_formula_text": "batch*seq*(%d + %d*(seq+past)) + %d*seq" % (per_tok, attn, rotary),
        "dims": {"hidden": hidden, "heads": heads, "kv_heads": kv_heads, "head_dim": head_dim,
                 "layers": layers, "ffn": ffn, "vocab": vocab, "experts": experts, "top_k": top_k},
        "kv_cache": cache,
    }
    if experts:
        # torch's own count of one expert's parameters; activated = all but the experts the router skips
        one = sum(p.numel() for p in model.layers[0].mlp.experts[0].parameters())
        expect["torch_expert_params"] = one
        expect["activated_params"] = params - layers * (experts - top_k) * one
        expect["activated_macs_per_token"] = layers * (attn_proj + mlp_active) + hidden * vocab
    write_expect(out_dir, name, expect)
    return path


# --------------------------------------------------------------------------------------------------
# Exporter idioms built with onnx.helper (each weight perturbed so no two are equal)

RNG = np.random.default_rng(15)


def arr(shape, dtype=np.float32, lo=-1.0, hi=1.0):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(dtype)
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


def const_node(name, a):
    return helper.make_node("Constant", [], [name], name=name + "_node", value=numpy_helper.from_array(a, name))


def init(name, a):
    return numpy_helper.from_array(a, name)


def numel_by_dtype(arrays):
    out = {}
    for a in arrays:
        k = {np.float32: "float32", np.float16: "float16", np.uint8: "uint8", np.int8: "int8",
             np.int32: "int32"}[a.dtype.type]
        out[k] = out.get(k, 0) + int(a.size)
    return out


def save(out_dir, name, model, expect, graph_only=False):
    path = os.path.join(out_dir, name + ".onnx")
    model.producer_name = "flopwise-shipped"
    if graph_only:
        save_graph_only(model, path)
    else:
        onnx.save(model, path)
    write_expect(out_dir, name, expect)
    return path


def colon_inputs(out_dir):
    """tf2onnx and PyTorch name inputs `input:0` and `onnx::Flatten_0`."""
    w = arr((34 * 96, 10))
    g = helper.make_graph(
        [helper.make_node("Flatten", ["onnx::Flatten_0"], ["flat"], name="flatten"),
         helper.make_node("MatMul", ["flat", "w"], ["y"], name="fc"),
         helper.make_node("Relu", ["input:0"], ["z"], name="relu")],
        "colons",
        [helper.make_tensor_value_info("onnx::Flatten_0", TensorProto.FLOAT, ["N", 34, 96]),
         helper.make_tensor_value_info("input:0", TensorProto.FLOAT, [1, 128, 128, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 128, 128, 3])],
        [init("w", w)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    return save(out_dir, "colon_inputs", m, {"params_by_dtype": numel_by_dtype([w]),
                                              "macs_per_N": 34 * 96 * 10}, graph_only=True)


def constant_weights(out_dir):
    """Paddle2ONNX: every weight is a Constant node, no initializers. A conv (+bias), a decomposed layer norm
    (scale and shift applied elementwise), a linear layer (MatMul + bias Add); scalars (eps, 2.0) are no
    weights."""
    cw, cb = arr((16, 3, 3, 3)), arr((16,))
    gamma, beta = arr((16,)), arr((16,))
    fw, fb = arr((16, 10)), arr((10,))
    weights = [cw, cb, gamma, beta, fw, fb]
    nodes = [const_node(n, a) for n, a in [("conv_w", cw), ("conv_b", cb), ("ln_g", gamma), ("ln_b", beta),
                                           ("fc_w", fw), ("fc_b", fb)]]
    nodes += [const_node("eps", np.array(1e-5, np.float32)), const_node("two", np.array(2.0, np.float32)),
              const_node("axes", np.array([2, 3], np.int64))]
    nodes += [
        helper.make_node("Conv", ["x", "conv_w", "conv_b"], ["c"], name="conv2d_0", pads=[1, 1, 1, 1]),
        helper.make_node("Transpose", ["c"], ["ct"], name="transpose_0", perm=[0, 2, 3, 1]),
        helper.make_node("ReduceMean", ["ct"], ["mu"], name="mean_0", axes=[-1], keepdims=1),
        helper.make_node("Sub", ["ct", "mu"], ["d"], name="sub_0"),
        helper.make_node("Pow", ["d", "two"], ["d2"], name="pow_0"),
        helper.make_node("ReduceMean", ["d2"], ["var"], name="mean_1", axes=[-1], keepdims=1),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="add_eps"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="sqrt_0"),
        helper.make_node("Div", ["d", "sd"], ["xn"], name="div_0"),
        helper.make_node("Mul", ["xn", "ln_g"], ["xs"], name="mul_gamma"),
        helper.make_node("Add", ["xs", "ln_b"], ["xb"], name="add_beta"),
        helper.make_node("ReduceMean", ["xb"], ["pooled"], name="pool_0", axes=[1, 2], keepdims=0),
        helper.make_node("MatMul", ["pooled", "fc_w"], ["h"], name="linear_0"),
        helper.make_node("Add", ["h", "fc_b"], ["y"], name="linear_0_bias"),
    ]
    g = helper.make_graph(nodes, "paddle_style",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    return save(out_dir, "constant_weights", m, {
        "params_by_dtype": numel_by_dtype(weights),
        "macs_per_N": 16 * 32 * 32 * 3 * 3 * 3 + 16 * 10})


def if_branch_weights(out_dir):
    """Scripted PyTorch and spox: weights only inside If branches. The then branch has its own initializer;
    the else branch uses an outer initializer nothing else uses."""
    w_then = arr((8, 8))
    w_else = arr((8, 4))
    pad = arr((4, 8))
    then_g = helper.make_graph([helper.make_node("MatMul", ["x", "w_then"], ["t"], name="then_mm")], "then_branch",
                               [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, ["N", 8])],
                               [init("w_then", w_then)])
    else_g = helper.make_graph([helper.make_node("MatMul", ["x", "w_else"], ["e0"], name="else_mm"),
                                helper.make_node("MatMul", ["e0", "pad"], ["e"], name="else_mm2")],
                               "else_branch", [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, ["N", 8])])
    g = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)],
        "if_weights",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8]),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8])],
        [init("w_else", w_else), init("pad", pad)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    return save(out_dir, "if_branch_weights", m, {
        "params_by_dtype": numel_by_dtype([w_then, w_else, pad]),
        "params_then": int(w_then.size), "params_else": int(w_else.size + pad.size)})


def slice_weights(out_dir):
    """spox and hand-written exports (silero-vad v5, issue 31): float weights that reach their product through
    layout-only ops, each counted once with its own element count however many paths read it. A [4H, I] gate
    matrix as a Constant node and one as an initializer, each sliced per gate by four Slices into four
    MatMuls (through a Transpose); a Constant through Transpose->Reshape, a table through Gather of a constant
    index, one through Split into two MatMuls, a Concat of two Constants, a float16 Constant through Cast,
    Squeeze into Gemm's B and Unsqueeze into its C; and silero's LSTM idiom: weight_ih/weight_hh sliced in
    three (torch's i,f,g,o gate rows reordered to ONNX's i,o,f,c), concatenated, unsqueezed into W and R, the
    two biases sliced, concatenated, concatenated together and unsqueezed into B. A scalar float Constant
    through Cast into Pow's exponent is no weight."""
    H, I = 5, 6
    gates_c, gates_i = arr((4 * H, I)), arr((4 * H, I))  # Constant node; initializer
    tr, table, split_w = arr((3, 2, H)), arr((3, I, H)), arr((I, 2 * H))
    cat_a, cat_b = arr((I, 2)), arr((I, 3))
    half = arr((I, H), np.float16)
    sq_w, bias = arr((1, I, H)), arr((H,))
    w_ih, w_hh, b_ih, b_hh = arr((4 * H, I)), arr((4 * H, H)), arr((4 * H,)), arr((4 * H,))
    two = np.array(2.0, np.float32)
    consts = {"gates_c": gates_c, "tr": tr, "table": table, "split_w": split_w, "cat_a": cat_a, "cat_b": cat_b,
              "half": half, "sq_w": sq_w, "bias": bias, "w_ih": w_ih, "w_hh": w_hh, "b_ih": b_ih, "b_hh": b_hh,
              "two": two}
    ints = {"zero": [0], "tr_shape": [I, H], "gather_idx": 2, "split": [H, H]}
    for k in range(4):
        ints[f"g{k}_start"], ints[f"g{k}_end"] = [k * H], [(k + 1) * H]
    # torch's gate rows i, f, g, o -> ONNX's i, o, f, c: rows 0:H, 3H:4H, H:3H
    for j, (s, e) in enumerate([(0, H), (3 * H, 4 * H), (H, 3 * H)]):
        ints[f"r{j}_start"], ints[f"r{j}_end"] = [s], [e]
    nodes = [const_node(n, a) for n, a in consts.items()]
    nodes += [const_node(n, np.array(v, np.int64)) for n, v in ints.items()]
    mk = helper.make_node
    outs = []
    for src in ("gates_c", "gates_i"):
        for k in range(4):
            nodes += [mk("Slice", [src, f"g{k}_start", f"g{k}_end", "zero"], [f"{src}_{k}"], name=f"{src}_slice{k}"),
                      mk("Transpose", [f"{src}_{k}"], [f"{src}_{k}t"], name=f"{src}_t{k}", perm=[1, 0]),
                      mk("MatMul", ["x", f"{src}_{k}t"], [f"{src}_y{k}"], name=f"{src}_gate{k}")]
            outs.append(f"{src}_y{k}")
    nodes += [
        mk("Transpose", ["tr"], ["tr_t"], name="tr_transpose", perm=[1, 0, 2]),
        mk("Reshape", ["tr_t", "tr_shape"], ["tr_w"], name="tr_reshape"),
        mk("MatMul", ["x", "tr_w"], ["tr_y"], name="tr_mm"),
        mk("Gather", ["table", "gather_idx"], ["table_w"], name="table_gather", axis=0),
        mk("MatMul", ["x", "table_w"], ["table_y"], name="table_mm"),
        mk("Split", ["split_w", "split"], ["split_0", "split_1"], name="split", axis=1),
        mk("MatMul", ["x", "split_0"], ["split_y0"], name="split_mm0"),
        mk("MatMul", ["x", "split_1"], ["split_y1"], name="split_mm1"),
        mk("Concat", ["cat_a", "cat_b"], ["cat_w"], name="cat", axis=1),
        mk("MatMul", ["x", "cat_w"], ["cat_y"], name="cat_mm"),
        mk("Cast", ["half"], ["half_f"], name="half_cast", to=TensorProto.FLOAT),
        mk("MatMul", ["x", "half_f"], ["half_y"], name="half_mm"),
        mk("Squeeze", ["sq_w", "zero"], ["sq_b"], name="sq_squeeze"),
        mk("Unsqueeze", ["bias", "zero"], ["bias_c"], name="bias_unsqueeze"),
        mk("Gemm", ["x", "sq_b", "bias_c"], ["gemm_y"], name="gemm"),
    ]
    outs += ["tr_y", "table_y", "split_y0", "split_y1", "cat_y", "half_y", "gemm_y"]
    for w in ("w_ih", "w_hh", "b_ih", "b_hh"):
        nodes += [mk("Slice", [w, f"r{j}_start", f"r{j}_end", "zero"], [f"{w}_{j}"], name=f"{w}_slice{j}")
                  for j in range(3)]
        nodes.append(mk("Concat", [f"{w}_{j}" for j in range(3)], [f"{w}_iofc"], name=f"{w}_concat", axis=0))
    nodes += [
        mk("Concat", ["b_ih_iofc", "b_hh_iofc"], ["b_cat"], name="b_concat", axis=0),
        mk("Unsqueeze", ["w_ih_iofc", "zero"], ["W"], name="W_unsqueeze"),
        mk("Unsqueeze", ["w_hh_iofc", "zero"], ["R"], name="R_unsqueeze"),
        mk("Unsqueeze", ["b_cat", "zero"], ["B"], name="B_unsqueeze"),
        mk("LSTM", ["seq", "W", "R", "B"], ["lstm_y"], name="lstm", hidden_size=H),
        mk("Sum", outs, ["total"], name="sum"),
        mk("Cast", ["two"], ["two_f"], name="two_cast", to=TensorProto.FLOAT),
        mk("Pow", ["total", "two_f"], ["y"], name="square"),
    ]
    g = helper.make_graph(nodes, "slice_weights",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", I]),
                           helper.make_tensor_value_info("seq", TensorProto.FLOAT, ["T", "N", I])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", H]),
                           helper.make_tensor_value_info("lstm_y", TensorProto.FLOAT, ["T", 1, "N", H])],
                          [init("gates_i", gates_i)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    weights = [a for n, a in consts.items() if n != "two"] + [gates_i]
    return save(out_dir, "slice_weights", m, {
        # every source tensor once, by its own element count (the Gather reads one of three table rows, the
        # LSTM slices read every row): float32 and the float16 Constant apart
        "params_by_dtype": numel_by_dtype(weights),
        "params_by_source": {n: int(a.size) for n, a in list(consts.items()) + [("gates_i", gates_i)]
                             if n != "two"},
        # MatMul and Gemm MACs per row of x (the LSTM's aside): 8 gate products I*H, tr, table, two split
        # halves, cat, half, gemm I*H each
        "matmul_gemm_macs_per_N": (8 + 7) * I * H})


def if_known_condition(out_dir):
    """silero-vad legacy and v5 (issue 31): the graph branches on the sample rate, `If(Equal(sr, 16000))`,
    each branch with its own weights; inside, Ifs whose conditions are decided too, with the same weights
    duplicated in both of their bodies. The 16 kHz branch (then) holds a Constant [8, 12] and a nested If on
    `Greater(sr, 8000)` whose bodies each hold a copy of a [12, 8] Constant; the 8 kHz branch (else) a body
    initializer [8, 4] and a nested If on `Cast(Squeeze(Gather(Shape(x), [1])), bool)` (x is [N, 8]: always
    then, silero's test of its state's shape) whose bodies each hold a copy of a [4, 8] Constant."""
    w16, wn = arr((8, 12)), arr((12, 8))
    w8, wm = arr((8, 4)), arr((4, 8))
    mk = helper.make_node

    def mm_body(name, act, w, out):
        return helper.make_graph([const_node(name, w.copy()), mk("MatMul", [act, name], [out], name=name + "_mm")],
                                 name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["N", 8])])

    then_g = helper.make_graph(
        [const_node("w16", w16), mk("MatMul", ["x", "w16"], ["h16"], name="w16_mm"),
         const_node("sr8000", np.array(8000, np.int64)),
         mk("Greater", ["sr", "sr8000"], ["above_8k"], name="above_8k_test"),
         mk("If", ["above_8k"], ["y16"], name="rate_16k_if",
            then_branch=mm_body("wn_then", "h16", wn, "y16_then"),
            else_branch=mm_body("wn_else", "h16", wn, "y16_else"))],
        "sr_16000", [], [helper.make_tensor_value_info("y16", TensorProto.FLOAT, ["N", 8])])
    else_g = helper.make_graph(
        [mk("MatMul", ["x", "w8"], ["h8"], name="w8_mm"),
         mk("Shape", ["x"], ["x_shape"], name="x_shape"),
         const_node("one", np.array([1], np.int64)), const_node("axis0", np.array([0], np.int64)),
         mk("Gather", ["x_shape", "one"], ["x_cols1"], name="x_cols", axis=0),
         mk("Squeeze", ["x_cols1", "axis0"], ["x_cols"], name="x_cols_squeeze"),
         mk("Cast", ["x_cols"], ["has_cols"], name="has_cols", to=TensorProto.BOOL),
         mk("If", ["has_cols"], ["y8"], name="shape_8k_if",
            then_branch=mm_body("wm_then", "h8", wm, "y8_then"),
            else_branch=mm_body("wm_else", "h8", wm, "y8_else"))],
        "sr_8000", [], [helper.make_tensor_value_info("y8", TensorProto.FLOAT, ["N", 8])],
        [init("w8", w8)])
    g = helper.make_graph(
        [const_node("sr16000", np.array(16000, np.int64)),
         mk("Equal", ["sr", "sr16000"], ["is_16k"], name="is_16k"),
         mk("If", ["is_16k"], ["y"], name="rate", then_branch=then_g, else_branch=else_g)],
        "if_known_condition",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    n16, nn, n8, nm = (int(a.size) for a in (w16, wn, w8, wm))
    return save(out_dir, "if_known_condition", m, {
        # every body's weights, the duplicated copies included (the condition undecided, as today)
        "params_all_branches": n16 + 2 * nn + n8 + 2 * nm,
        # unpinned, but shape_8k_if decided by x's static dim (then): one copy of wm
        "params_unpinned_decided": n16 + 2 * nn + n8 + nm,
        # --value sr=16000: rate -> then, rate_16k_if (16000 > 8000) -> then; sr=8000: rate -> else,
        # shape_8k_if -> then
        "params_sr16000": n16 + nn,
        "params_sr8000": n8 + nm,
        # the top-level If's bodies, nested bodies included (JSON branch_params: node "rate")
        "branch_params": {"then_branch": n16 + 2 * nn, "else_branch": n8 + 2 * nm},
        "macs_per_N_sr16000": 8 * 12 + 12 * 8,
        "macs_per_N_sr8000": 8 * 4 + 4 * 8})


def dynamic_quant(out_dir):
    """ONNX Runtime's dynamic quantizer: activations quantised on the fly (DynamicQuantizeLinear), uint8 weights
    in MatMulInteger and ConvInteger, int32 results rescaled in float. One float MatMul stays unquantised."""
    cw, cw_zp = arr((8, 3, 3, 3), np.uint8), np.array(128, np.uint8)
    mw, mw_zp = arr((8 * 30 * 30, 16), np.uint8), np.array(128, np.uint8)
    fw = arr((16, 4))
    c_scale, m_scale = np.array(0.02, np.float32), np.array(0.01, np.float32)
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="quant_x"),
        helper.make_node("ConvInteger", ["xq", "cw", "xz", "cw_zp"], ["c32"], name="conv_int"),
        helper.make_node("Cast", ["c32"], ["cf"], name="cast_c", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "c_scale"], ["cs"], name="scale_c0"),
        helper.make_node("Mul", ["cf", "cs"], ["c"], name="scale_c"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Flatten", ["r"], ["fl"], name="flatten"),
        helper.make_node("DynamicQuantizeLinear", ["fl"], ["fq", "fs", "fz"], name="quant_fl"),
        helper.make_node("MatMulInteger", ["fq", "mw", "fz", "mw_zp"], ["m32"], name="matmul_int"),
        helper.make_node("Cast", ["m32"], ["mf"], name="cast_m", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["fs", "m_scale"], ["ms"], name="scale_m0"),
        helper.make_node("Mul", ["mf", "ms"], ["h"], name="scale_m"),
        helper.make_node("MatMul", ["h", "fw"], ["y"], name="head"),
    ]
    g = helper.make_graph(nodes, "dynamic_quant",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
                          [init("cw", cw), init("cw_zp", cw_zp), init("mw", mw), init("mw_zp", mw_zp),
                           init("fw", fw), init("c_scale", c_scale), init("m_scale", m_scale)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    return save(out_dir, "dynamic_quant", m, {
        # weights: the uint8 tensors and the float head; scales and zero points describe the encoding
        "params_by_dtype": numel_by_dtype([cw, mw, fw]),
        "int8_macs_per_N": 8 * 30 * 30 * 3 * 3 * 3 + 8 * 30 * 30 * 16,
        "float32_macs_per_N": 16 * 4}, graph_only=True)


def qdq(out_dir):
    """A QDQ model (ORT's static quantizer): int8 weights dequantised, activations quantised and dequantised
    around a Conv and a MatMul; an int32 conv bias through its own DequantizeLinear."""
    cw, cb = arr((8, 3, 3, 3), np.int8), arr((8,), np.int32)
    mw = arr((8 * 32 * 32, 10), np.int8)
    f = lambda v: np.array(v, np.float32)
    z8 = np.array(0, np.int8)
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="q_x"),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dq_x"),
        helper.make_node("DequantizeLinear", ["cw", "cws", "xz"], ["cwd"], name="dq_cw"),
        helper.make_node("DequantizeLinear", ["cb", "cbs"], ["cbd"], name="dq_cb"),
        helper.make_node("Conv", ["xd", "cwd", "cbd"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "cs", "xz"], ["cq"], name="q_c"),
        helper.make_node("DequantizeLinear", ["cq", "cs", "xz"], ["cd"], name="dq_c"),
        helper.make_node("Flatten", ["cd"], ["fl"], name="flatten"),
        helper.make_node("DequantizeLinear", ["mw", "mws", "xz"], ["mwd"], name="dq_mw"),
        helper.make_node("MatMul", ["fl", "mwd"], ["y"], name="fc"),
    ]
    g = helper.make_graph(nodes, "qdq",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
                          [init("cw", cw), init("cb", cb), init("mw", mw), init("xs", f(0.05)), init("xz", z8),
                           init("cws", f(0.01)), init("cbs", f(0.0005)), init("cs", f(0.1)), init("mws", f(0.02))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    return save(out_dir, "qdq", m, {
        "params_by_dtype": numel_by_dtype([cw, cb, mw]),
        "int8_macs_per_N": 8 * 32 * 32 * 3 * 3 * 3 + 8 * 32 * 32 * 10}, graph_only=True)


def fp16_shuffled(out_dir):
    """An fp16 converter's output: float16 weights, a Cast in and out, nodes not in topological order, and
    value_info with the converter's placeholder dims (unk__N)."""
    ws = [arr((64, 64), np.float16) for _ in range(3)]
    bs = [arr((64,), np.float16) for _ in range(3)]
    nodes = [helper.make_node("Cast", ["x"], ["h0"], name="cast_in", to=TensorProto.FLOAT16)]
    vis = []
    for i in range(3):
        nodes += [helper.make_node("MatMul", [f"h{i}", f"w{i}"], [f"m{i}"], name=f"fc{i}"),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"fc{i}_bias"),
                  helper.make_node("Relu", [f"a{i}"], [f"h{i + 1}"], name=f"relu{i}")]
        vis += [helper.make_tensor_value_info(f"m{i}", TensorProto.FLOAT16, [f"unk__{2 * i}", 64]),
                helper.make_tensor_value_info(f"h{i + 1}", TensorProto.FLOAT16, [f"unk__{2 * i + 1}", 64])]
    nodes.append(helper.make_node("Cast", ["h3"], ["y"], name="cast_out", to=TensorProto.FLOAT))
    order = [5, 9, 0, 3, 10, 1, 7, 2, 8, 4, 6]
    assert sorted(order) == list(range(len(nodes)))
    g = helper.make_graph([nodes[i] for i in order], "fp16",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 64])],
                          [init(f"w{i}", ws[i]) for i in range(3)] + [init(f"b{i}", bs[i]) for i in range(3)],
                          value_info=vis)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    return save(out_dir, "fp16_shuffled", m, {
        "params_by_dtype": numel_by_dtype(ws + bs), "float16_macs_per_N": 3 * 64 * 64})


def unused_domains(out_dir):
    """Opset imports of domains no node uses (PyTorch exports, ORT's quantizer list them)."""
    w = arr((8, 8))
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")], "unused_domains",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8])], [init("w", w)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1),
                                            helper.make_opsetid("ai.onnx.ml", 3),
                                            helper.make_opsetid("com.microsoft.experimental", 1)])
    return save(out_dir, "unused_domains", m, {"params_by_dtype": numel_by_dtype([w]), "macs_per_N": 64})


def externalised_constants(out_dir):
    """`save_as_external_data(size_threshold=0)`: even the Reshape target and the Resize sizes went to the
    side file, which a graph-only copy lacks. Their values are needed to know the shapes."""
    w = arr((8, 3, 3, 3))
    shape = np.array([0, 8, 16, 64], np.int64)
    sizes = np.array([1, 8, 32, 128], np.int64)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Reshape", ["c", "target_shape"], ["r"], name="reshape"),
             helper.make_node("Resize", ["r", "", "", "out_sizes"], ["y"], name="resize", mode="nearest")]
    g = helper.make_graph(nodes, "externalised",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b", "c", "d"])],
                          [init("w", w), init("target_shape", shape), init("out_sizes", sizes)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(m)
    path = os.path.join(out_dir, "externalised_constants.onnx")
    if os.path.exists(path + ".data"):
        os.remove(path + ".data")  # onnx appends to an existing data file
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="externalised_constants.onnx.data", size_threshold=0)
    write_expect(out_dir, "externalised_constants", {
        "needs_values": ["target_shape", "out_sizes"], "target_shape": shape.tolist(),
        "out_sizes": sizes.tolist(), "resize_out_elems": int(np.prod(sizes))})
    return path


def llama7b_graph(out_dir):
    """A LLaMA-7B-shaped KV-cache decoder built node by node, weights declared only (their data in an absent
    external file): 32 layers, hidden 4096, 32 heads of 128, SwiGLU 11008, vocab 32000, untied LM head,
    float16. No rotary and no mask (they change no MACs of note); RMSNorm decomposed. HF's LLaMA-7B has
    6,738,415,616 parameters; this graph declares the same tensors."""
    L, H, NH, HD, F, V = 32, 4096, 32, 128, 11008, 32000
    f16 = TensorProto.FLOAT16
    inits, nodes = [], []

    def w(name, dims):
        t = TensorProto()
        t.name, t.data_type = name, f16
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", "llama7b_graph.absent"
        inits.append(t)
        return name

    def node(op, ins, outs, **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=outs[0] + "_n", **attrs))
        return outs[0]

    def const(name, arr_):
        inits.append(numpy_helper.from_array(arr_, name))
        return name

    eps = const("eps", np.array(1e-6, np.float16))
    scale = const("scale", np.array(math.sqrt(HD), np.float16))
    heads_shape = const("heads_shape", np.array([0, 0, NH, HD], np.int64))
    hidden_shape = const("hidden_shape", np.array([0, 0, H], np.int64))

    def rms(x, pfx):
        sq = node("Mul", [x, x], [pfx + "/sq"])
        mean = node("ReduceMean", [sq], [pfx + "/mean"], axes=[-1], keepdims=1)
        rs = node("Sqrt", [node("Add", [mean, eps], [pfx + "/add"])], [pfx + "/sqrt"])
        return node("Mul", [node("Div", [x, rs], [pfx + "/div"]), w(pfx + ".weight", [H])], [pfx + "/out"])

    x = node("Gather", [w("embed_tokens.weight", [V, H]), "input_ids"], ["/embed_tokens/out"])
    ins = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])]
    outs = []
    for i in range(L):
        p = f"/layers.{i}"
        xn = rms(x, p + "/input_layernorm")
        heads = {}
        for proj in ("q", "k", "v"):
            m = node("MatMul", [xn, w(f"layers.{i}.self_attn.{proj}_proj.weight", [H, H])], [f"{p}/self_attn/{proj}_proj/out"])
            r = node("Reshape", [m, heads_shape], [f"{p}/self_attn/{proj}/heads"])
            heads[proj] = node("Transpose", [r], [f"{p}/self_attn/{proj}/t"], perm=[0, 2, 1, 3])
        for kv in ("key", "value"):
            past = f"past_key_values.{i}.{kv}"
            ins.append(helper.make_tensor_value_info(past, f16, ["batch", NH, "past", HD]))
            present = f"present.{i}.{kv}"
            node("Concat", [past, heads["k" if kv == "key" else "v"]], [present], axis=2)
            outs.append(helper.make_tensor_value_info(present, f16, ["batch", NH, "past_plus_seq", HD]))
        kt = node("Transpose", [f"present.{i}.key"], [f"{p}/self_attn/kT"], perm=[0, 1, 3, 2])
        sc = node("Div", [node("MatMul", [heads["q"], kt], [f"{p}/self_attn/qk"]), scale], [f"{p}/self_attn/scores"])
        pr = node("Softmax", [sc], [f"{p}/self_attn/probs"], axis=-1)
        ctx = node("MatMul", [pr, f"present.{i}.value"], [f"{p}/self_attn/ctx"])
        ctx = node("Reshape", [node("Transpose", [ctx], [f"{p}/self_attn/ctx_t"], perm=[0, 2, 1, 3]), hidden_shape],
                   [f"{p}/self_attn/ctx_h"])
        o = node("MatMul", [ctx, w(f"layers.{i}.self_attn.o_proj.weight", [H, H])], [f"{p}/self_attn/o_proj/out"])
        x = node("Add", [x, o], [f"{p}/res1"])
        xn = rms(x, p + "/post_attention_layernorm")
        g = node("MatMul", [xn, w(f"layers.{i}.mlp.gate_proj.weight", [H, F])], [f"{p}/mlp/gate_proj/out"])
        u = node("MatMul", [xn, w(f"layers.{i}.mlp.up_proj.weight", [H, F])], [f"{p}/mlp/up_proj/out"])
        act = node("Mul", [g, node("Sigmoid", [g], [f"{p}/mlp/sig"])], [f"{p}/mlp/silu"])
        d = node("MatMul", [node("Mul", [act, u], [f"{p}/mlp/gu"]), w(f"layers.{i}.mlp.down_proj.weight", [F, H])],
                 [f"{p}/mlp/down_proj/out"])
        x = node("Add", [x, d], [f"{p}/res2"])
    logits = node("MatMul", [rms(x, "/norm"), w("lm_head.weight", [H, V])], ["logits"])
    outs.insert(0, helper.make_tensor_value_info(logits, f16, ["batch", "seq", V]))
    g = helper.make_graph(nodes, "llama7b", ins, outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    path = os.path.join(out_dir, "llama7b_graph.onnx")
    onnx.save(m, path)
    params = int(sum(np.prod(t.dims) for t in inits if t.data_location == TensorProto.EXTERNAL))
    write_expect(out_dir, "llama7b_graph", {"params": params, "hf_llama_7b_params": 6738415616,
                                            "dims": {"layers": L, "hidden": H, "heads": NH, "head_dim": HD,
                                                     "ffn": F, "vocab": V}})
    return path


def mixtral_dispatch(out_dir):
    """Hugging Face Mixtral's sparse MoE block as written there: softmax router, top-2 of 4, one_hot mask,
    torch.where per expert and index_add_ (the exported graph routes tokens with NonZero at run time)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(16)
    H, FF, E, K = 32, 64, 4, 2

    class Expert(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Linear(H, FF, bias=False)
            self.w2 = nn.Linear(FF, H, bias=False)
            self.w3 = nn.Linear(H, FF, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class SparseMoeBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = nn.Linear(H, E, bias=False)
            self.experts = nn.ModuleList([Expert() for _ in range(E)])

        def forward(self, h):
            b, t, d = h.shape
            h = h.view(-1, d)
            w = F.softmax(self.gate(h), dim=1, dtype=torch.float)
            w, sel = torch.topk(w, K, dim=-1)
            w = w / w.sum(dim=-1, keepdim=True)
            out = torch.zeros((b * t, d), dtype=h.dtype)
            mask = F.one_hot(sel, num_classes=E).permute(2, 1, 0)
            for e in range(E):
                idx, top = torch.where(mask[e])
                y = self.experts[e](h[None, top].reshape(-1, d)) * w[top, idx, None]
                out.index_add_(0, top, y.to(h.dtype))
            return out.reshape(b, t, d)

    m = SparseMoeBlock().eval()
    with torch.no_grad():
        for p in m.parameters():
            p.add_(0.01 * torch.randn_like(p))
    path = os.path.join(out_dir, "mixtral_dispatch.onnx")
    torch.onnx.export(m, (torch.randn(2, 5, H),), path, input_names=["h"], output_names=["y"],
                      dynamic_axes={"h": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}, opset_version=OPSET)
    save_graph_only(onnx.load(path), path)
    params = sum(p.numel() for p in m.parameters())
    one = sum(p.numel() for p in m.experts[0].parameters())
    write_expect(out_dir, "mixtral_dispatch", {"torch_params": params, "torch_expert_params": one,
                                               "experts": E, "top_k": K,
                                               "activated_params": params - (E - K) * one})
    return path


MODELS = {
    "llama7b_graph": llama7b_graph,
    "colon_inputs": colon_inputs,
    "constant_weights": constant_weights,
    "if_branch_weights": if_branch_weights,
    "slice_weights": slice_weights,
    "if_known_condition": if_known_condition,
    "dynamic_quant": dynamic_quant,
    "qdq": qdq,
    "fp16_shuffled": fp16_shuffled,
    "unused_domains": unused_domains,
    "externalised_constants": externalised_constants,
    "llama_mha": lambda out: llama(out, "llama_mha", heads=4, kv_heads=4),
    "llama_gqa": lambda out: llama(out, "llama_gqa", heads=4, kv_heads=2),
    "llama_hf": lambda out: llama(out, "llama_hf", heads=4, kv_heads=2, hf=True),
    "llama_moe": lambda out: llama(out, "llama_moe", heads=4, kv_heads=2, experts=8, top_k=2),
    "mixtral_dispatch": mixtral_dispatch,
    "llama_nocache": lambda out: llama(out, "llama_nocache", heads=4, kv_heads=4, cache=False),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", help="model name (repeatable); default: all")
    ap.add_argument("--out", default=os.path.join(HERE, "shipped"), help="output directory")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.only or MODELS:
        if name not in MODELS:
            raise SystemExit(f"unknown model {name}; known: {', '.join(MODELS)}")
        print(MODELS[name](args.out))


if __name__ == "__main__":
    main()
