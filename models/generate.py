#!/usr/bin/python3
"""Generates flopwise's bundled test models and their torch-side expectations.

Run with Debian's python (torch 1.13, torchvision 0.14, onnx 1.12), no downloads, random weights:

    /usr/bin/python3 models/generate.py                   # every bundled model into models/
    /usr/bin/python3 models/generate.py --only resnet50 --inline --out DIR   # the bench model

Each model is exported with torch.onnx.export (opset 17, constant folding, eval mode, named inputs and
outputs, dynamic batch/seq axes) and re-saved with its weights in a side file `<name>.onnx.data`
(external data; not committed). Beside it, `<name>.expect.json` holds what torch itself says about the
model, computed here from the module structure and never read back from the ONNX file:
  - torch params (unique parameters) and buffers;
  - what the exporter folds (BatchNorm into the preceding Conv) and the ONNX param count that follows;
  - MACs from forward hooks on Conv2d/Linear (out_elems * in_ch/groups * kh*kw; out_elems * in_features)
    plus, by formula, the contractions that are not modules (attention's QK^T and AV, a tied LM head).
The generator then checks its structural prediction against the written ONNX file and fails if they
disagree, so a committed expectation is always consistent with the committed graph.
"""

import argparse
import json
import math
import os
import sys
import tempfile

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

OPSET = 17
HERE = os.path.dirname(os.path.abspath(__file__))


# --------------------------------------------------------------------------------------------------
# BERT-style encoder


class BertEmbeddings(nn.Module):
    def __init__(self, vocab, hidden, max_pos, type_vocab):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_pos, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)
        # As in HF BERT: position ids are an int64 buffer sliced to the sequence length.
        self.register_buffer("position_ids", torch.arange(max_pos).unsqueeze(0))

    def forward(self, input_ids, token_type_ids):
        seq = input_ids.size(1)
        pos = self.position_ids[:, :seq]
        x = self.word_embeddings(input_ids) + self.position_embeddings(pos) + self.token_type_embeddings(token_type_ids)
        return self.LayerNorm(x)


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def split_heads(self, x):
        b, s, _ = x.size()
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x):
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        b, s = ctx.size(0), ctx.size(1)
        return ctx.view(b, s, self.heads * self.head_dim)


class BertSelfOutput(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, h, residual):
        return self.LayerNorm(self.dense(h) + residual)


class BertAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.self = BertSelfAttention(hidden, heads)
        self.output = BertSelfOutput(hidden)

    def forward(self, x):
        return self.output(self.self(x), x)


class BertIntermediate(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.dense = nn.Linear(hidden, ffn)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.dense(x))


class BertOutput(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.dense = nn.Linear(ffn, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, h, residual):
        return self.LayerNorm(self.dense(h) + residual)


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attention = BertAttention(hidden, heads)
        self.intermediate = BertIntermediate(hidden, ffn)
        self.output = BertOutput(hidden, ffn)

    def forward(self, x):
        a = self.attention(x)
        return self.output(self.intermediate(a), a)


class BertEncoder(nn.Module):
    def __init__(self, layers, hidden, heads, ffn):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(hidden, heads, ffn) for _ in range(layers)])

    def forward(self, x):
        for layer in self.layer:
            x = layer(x)
        return x


class BertModel(nn.Module):
    def __init__(self, layers=4, hidden=128, heads=4, ffn=512, vocab=1000, max_pos=128, type_vocab=2):
        super().__init__()
        self.config = dict(layers=layers, hidden=hidden, heads=heads, ffn=ffn, vocab=vocab, max_pos=max_pos,
                           type_vocab=type_vocab)
        self.embeddings = BertEmbeddings(vocab, hidden, max_pos, type_vocab)
        self.encoder = BertEncoder(layers, hidden, heads, ffn)

    def forward(self, input_ids, token_type_ids):
        return self.encoder(self.embeddings(input_ids, token_type_ids))


# --------------------------------------------------------------------------------------------------
# Hugging Face BERT as transformers' modeling_bert.py writes it (BertModel, eager attention, the
# torchscript=True export: tuple outputs), in plain torch: what `torch.jit.trace(BertModel, (input_ids,
# attention_mask))` records. Where it differs from BertModel above, as HF has it:
#   - the activation is transformers.activations.GELUActivation (ACT2FN["gelu"]), a module that stores
#     `nn.functional.gelu` in __init__ and calls that reference in forward: a profiler that patches F.gelu
#     after the model is built (DeepSpeed's, ptflops') never sees the call;
#   - an attention_mask input, made additive once per model ((1 - mask[:, None, None, :]) * finfo.min,
#     get_extended_attention_mask) and added to every layer's scores after the 1/sqrt(head_dim) division;
#   - token_type_ids omitted: an all-zeros int64 buffer sliced to seq and expanded to the batch;
#   - dropout modules (identity in eval, aten::dropout in the trace), `embeddings += position_embeddings`;
#   - BertPooler: dense + nn.Tanh on the first token; outputs (last_hidden_state, pooler_output).
# Class names other than GELUActivation carry an Hf prefix (BertModel above has HF's names).


class GELUActivation(nn.Module):
    """transformers.activations.GELUActivation: the function is looked up once, at construction."""

    def __init__(self):
        super().__init__()
        self.act = nn.functional.gelu

    def forward(self, input):
        return self.act(input)


class HfBertEmbeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h = cfg["hidden"]
        self.word_embeddings = nn.Embedding(cfg["vocab"], h, padding_idx=0)
        self.position_embeddings = nn.Embedding(cfg["max_pos"], h)
        self.token_type_embeddings = nn.Embedding(cfg["type_vocab"], h)
        self.LayerNorm = nn.LayerNorm(h, eps=1e-12)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("position_ids", torch.arange(cfg["max_pos"]).expand((1, -1)), persistent=False)
        self.register_buffer("token_type_ids", torch.zeros(self.position_ids.size(), dtype=torch.long),
                             persistent=False)

    def forward(self, input_ids):
        input_shape = input_ids.size()
        seq_length = input_shape[1]
        position_ids = self.position_ids[:, 0:seq_length]
        buffered_token_type_ids = self.token_type_ids[:, :seq_length]
        token_type_ids = buffered_token_type_ids.expand(input_shape[0], seq_length)
        inputs_embeds = self.word_embeddings(input_ids)
        token_type_embeddings = self.token_type_embeddings(token_type_ids)
        embeddings = inputs_embeds + token_type_embeddings
        position_embeddings = self.position_embeddings(position_ids)
        embeddings += position_embeddings
        embeddings = self.LayerNorm(embeddings)
        embeddings = self.dropout(embeddings)
        return embeddings


class HfBertSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.num_attention_heads = cfg["heads"]
        self.attention_head_size = int(cfg["hidden"] / cfg["heads"])
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(cfg["hidden"], self.all_head_size)
        self.key = nn.Linear(cfg["hidden"], self.all_head_size)
        self.value = nn.Linear(cfg["hidden"], self.all_head_size)
        self.dropout = nn.Dropout(0.1)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_scores = attention_scores + attention_mask
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(new_context_layer_shape)
        return (context_layer,)


class HfBertSelfOutput(nn.Module):
    def __init__(self, cfg, d_in=None):
        super().__init__()
        self.dense = nn.Linear(d_in or cfg["hidden"], cfg["hidden"])
        self.LayerNorm = nn.LayerNorm(cfg["hidden"], eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)


class HfBertAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self = HfBertSelfAttention(cfg)
        self.output = HfBertSelfOutput(cfg)

    def forward(self, hidden_states, attention_mask):
        self_outputs = self.self(hidden_states, attention_mask)
        attention_output = self.output(self_outputs[0], hidden_states)
        return (attention_output,) + self_outputs[1:]


class HfBertIntermediate(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg["hidden"], cfg["ffn"])
        self.intermediate_act_fn = GELUActivation()  # ACT2FN["gelu"]

    def forward(self, hidden_states):
        return self.intermediate_act_fn(self.dense(hidden_states))


class HfBertOutput(HfBertSelfOutput):
    """transformers' BertOutput: BertSelfOutput's code from the FFN width (a class of its own there too)."""

    def __init__(self, cfg):
        super().__init__(cfg, cfg["ffn"])


class HfBertLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention = HfBertAttention(cfg)
        self.intermediate = HfBertIntermediate(cfg)
        self.output = HfBertOutput(cfg)

    def forward(self, hidden_states, attention_mask):
        self_attention_outputs = self.attention(hidden_states, attention_mask)
        attention_output = self_attention_outputs[0]
        outputs = self_attention_outputs[1:]
        layer_output = self.feed_forward_chunk(attention_output)  # apply_chunking_to_forward, chunk size 0
        return (layer_output,) + outputs

    def feed_forward_chunk(self, attention_output):
        intermediate_output = self.intermediate(attention_output)
        return self.output(intermediate_output, attention_output)


class HfBertEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layer = nn.ModuleList([HfBertLayer(cfg) for _ in range(cfg["layers"])])

    def forward(self, hidden_states, attention_mask):
        for layer_module in self.layer:
            layer_outputs = layer_module(hidden_states, attention_mask)
            hidden_states = layer_outputs[0]
        return (hidden_states,)


class HfBertPooler(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg["hidden"], cfg["hidden"])
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        first_token_tensor = hidden_states[:, 0]
        pooled_output = self.dense(first_token_tensor)
        return self.activation(pooled_output)


class HfBertModel(nn.Module):
    """BERT-base is HfBertModel(layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, max_pos=512)."""

    def __init__(self, layers=2, hidden=64, heads=4, ffn=256, vocab=1000, max_pos=128, type_vocab=2):
        super().__init__()
        self.config = dict(layers=layers, hidden=hidden, heads=heads, ffn=ffn, vocab=vocab, max_pos=max_pos,
                           type_vocab=type_vocab)
        self.embeddings = HfBertEmbeddings(self.config)
        self.encoder = HfBertEncoder(self.config)
        self.pooler = HfBertPooler(self.config)

    def get_extended_attention_mask(self, attention_mask, dtype):
        extended_attention_mask = attention_mask[:, None, None, :]
        extended_attention_mask = extended_attention_mask.to(dtype=dtype)
        return (1.0 - extended_attention_mask) * torch.finfo(dtype).min

    def forward(self, input_ids, attention_mask):
        dtype = self.embeddings.word_embeddings.weight.dtype  # HF: self.dtype, the parameters' dtype
        extended_attention_mask = self.get_extended_attention_mask(attention_mask, dtype)
        embedding_output = self.embeddings(input_ids)
        encoder_outputs = self.encoder(embedding_output, extended_attention_mask)
        sequence_output = encoder_outputs[0]
        pooled_output = self.pooler(sequence_output)
        return (sequence_output, pooled_output) + encoder_outputs[1:]


# --------------------------------------------------------------------------------------------------
# torch's own nn.TransformerEncoder / nn.TransformerDecoderLayer (issue 52): given a string activation
# ("gelu", "relu") or none (the default argument F.relu), the layer stores the torch.nn.functional function
# itself when built and calls that reference in forward, so a profiler that patches F.gelu/F.relu after
# the model is built (DeepSpeed's, ptflops') never sees the call. Sequence-first (batch_first=False):
# torch 1.13's fused fast path is not taken, the trace holds the layers' own ops.


class TorchTransformer(nn.Module):
    """Two nn.TransformerEncoderLayer(activation="gelu") and one nn.TransformerDecoderLayer (default F.relu)
    attending to the encoder's output; src [S, 1, d], tgt [T, 1, d]."""

    def __init__(self, layers=2, d=64, heads=4, ffn=256):
        super().__init__()
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, heads, ffn, activation="gelu"), layers)
        self.decoder = nn.TransformerDecoderLayer(d, heads, ffn)

    def forward(self, src, tgt):
        return self.decoder(tgt, self.encoder(src))


# --------------------------------------------------------------------------------------------------
# GPT-2-style decoder


class GPT2Attention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.hidden = hidden
        self.c_attn = nn.Linear(hidden, 3 * hidden)  # q, k, v in one product, as GPT-2
        self.c_proj = nn.Linear(hidden, hidden)

    def split_heads(self, x):
        b, s, _ = x.size()
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.c_attn(x).split(self.hidden, dim=2)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = torch.where(mask, scores, torch.tensor(-1e4, dtype=scores.dtype))
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        b, sq = ctx.size(0), ctx.size(1)
        return self.c_proj(ctx.view(b, sq, self.hidden))


class GPT2MLP(nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.c_fc = nn.Linear(hidden, ffn)
        self.act = nn.GELU()
        self.c_proj = nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class GPT2Block(nn.Module):
    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden)
        self.attn = GPT2Attention(hidden, heads)
        self.ln_2 = nn.LayerNorm(hidden)
        self.mlp = GPT2MLP(hidden, ffn)

    def forward(self, x, mask):
        x = x + self.attn(self.ln_1(x), mask)
        return x + self.mlp(self.ln_2(x))


class TiedLMHead(nn.Module):
    """Logits from the token embedding's weight (tied, one shared tensor).

    Written as (W @ h^T)^T rather than F.linear(h, W): F.linear exports MatMul(h, Transpose(W)) and
    constant folding then materialises W^T as a SECOND initializer, so the ONNX file would hold the
    tied weight twice. This form feeds W itself to MatMul; the product is the same
    (batch*seq*vocab*hidden MACs)."""

    def __init__(self, embedding):
        super().__init__()
        self.embedding = [embedding]  # a list: not a registered submodule, the weight stays owned by wte

    def forward(self, h):
        w = self.embedding[0].weight  # [vocab, hidden]
        return torch.matmul(w, h.transpose(-1, -2)).transpose(-1, -2)


class GPT2Model(nn.Module):
    def __init__(self, layers=4, hidden=128, heads=4, ffn=512, vocab=1000, n_ctx=64):
        super().__init__()
        self.config = dict(layers=layers, hidden=hidden, heads=heads, ffn=ffn, vocab=vocab, n_ctx=n_ctx)
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(n_ctx, hidden)
        self.h = nn.ModuleList([GPT2Block(hidden, heads, ffn) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden)
        self.lm_head = TiedLMHead(self.wte)
        # One causal mask for all blocks, a bool buffer (no weight). HF GPT-2 keeps one per block; the
        # exporter then merges the identical copies behind Identity nodes, which we avoid.
        self.register_buffer("causal_mask", torch.tril(torch.ones(n_ctx, n_ctx, dtype=torch.bool)).view(1, 1, n_ctx, n_ctx))

    def forward(self, input_ids):
        seq = input_ids.size(1)
        pos = torch.arange(seq, dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        mask = self.causal_mask[:, :, :seq, :seq]
        for block in self.h:
            x = block(x, mask)
        return self.lm_head(self.ln_f(x))


# --------------------------------------------------------------------------------------------------
# Model table


def make_model(name):
    """Returns (module, example inputs, input names, output names, dynamic axes, dim bindings)."""
    img_axes = {"input": {0: "batch"}, "logits": {0: "batch"}}
    if name in ("resnet18", "resnet34", "resnet50", "mobilenet_v2"):
        m = getattr(torchvision.models, name)(weights=None)
        return m, (torch.randn(1, 3, 224, 224),), ["input"], ["logits"], img_axes, {"batch": 1}
    seq = 64
    tok_axes = {0: "batch", 1: "seq"}
    if name in ("bert", "bert6"):
        m = BertModel(layers=4 if name == "bert" else 6)
        ids = torch.randint(0, 1000, (1, seq))
        types = torch.randint(0, 2, (1, seq))
        return (m, (ids, types), ["input_ids", "token_type_ids"], ["last_hidden_state"],
                {"input_ids": tok_axes, "token_type_ids": tok_axes, "last_hidden_state": tok_axes},
                {"batch": 1, "seq": seq})
    if name == "hf_bert":
        m = HfBertModel()
        ids = torch.randint(1, 1000, (1, seq))
        mask = torch.ones(1, seq, dtype=torch.long)
        return (m, (ids, mask), ["input_ids", "attention_mask"], ["last_hidden_state", "pooler_output"],
                {"input_ids": tok_axes, "attention_mask": tok_axes, "last_hidden_state": tok_axes,
                 "pooler_output": {0: "batch"}},
                {"batch": 1, "seq": seq})
    if name == "torch_transformer":
        m = TorchTransformer()
        src, tgt = torch.randn(32, 1, 64), torch.randn(16, 1, 64)
        seq_axes = {0: "seq", 1: "batch"}
        return (m, (src, tgt), ["src", "tgt"], ["output"], {"src": seq_axes, "tgt": seq_axes, "output": seq_axes},
                {"batch": 1, "seq": 32})
    if name == "gpt2":
        m = GPT2Model()
        ids = torch.randint(0, 1000, (1, seq))
        return (m, (ids,), ["input_ids"], ["logits"], {"input_ids": tok_axes, "logits": tok_axes},
                {"batch": 1, "seq": seq})
    raise SystemExit("unknown model " + name)


BUNDLED = ["resnet18", "resnet34", "mobilenet_v2", "bert", "bert6", "gpt2"]


def perturb(model, seed):
    """Makes every parameter and float buffer distinct. Freshly initialised layers can be identical
    (LayerNorm/BatchNorm all ones and zeros; equal-shaped biases of zeros), and the exporter merges
    identical initializers behind Identity nodes; a tiny per-tensor noise keeps each layer its own."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1e-3 * torch.randn(p.shape, generator=g))
        for name, b in model.named_buffers():
            if b.is_floating_point():
                b.add_(1e-3 * torch.rand(b.shape, generator=g))  # running_var stays positive


# --------------------------------------------------------------------------------------------------
# Expectations from the module structure


def folded_batchnorms(model):
    """BatchNorm2d modules that directly follow a Conv2d in their parent Sequential/torchvision block.

    torch 1.13's ONNX eval peephole fuses Conv->BatchNorm into one Conv: the BN's gamma and beta and
    its running stats disappear, the conv weight keeps its size and gains a bias of out_channels
    (when it had none). We find the pairs from the module structure: in torchvision ResNet every
    bnN follows convN and downsample = Sequential(conv, bn); in MobileNetV2 every Conv2dNormActivation
    and the projection in InvertedResidual.conv are Sequential(..., Conv2d, BatchNorm2d, ...)."""
    pairs = []
    for parent_name, parent in model.named_modules():
        children = list(parent.named_children())
        if isinstance(parent, nn.Sequential):
            for (cn, c), (bn_name, b) in zip(children, children[1:]):
                if isinstance(c, nn.Conv2d) and isinstance(b, nn.BatchNorm2d):
                    pairs.append((f"{parent_name}.{cn}".lstrip("."), f"{parent_name}.{bn_name}".lstrip("."), c, b))
        else:
            named = dict(children)
            for cn, c in children:
                if isinstance(c, nn.Conv2d) and cn.startswith("conv"):
                    bn_name = "bn" + cn[len("conv"):]
                    if isinstance(named.get(bn_name), nn.BatchNorm2d):
                        pairs.append((f"{parent_name}.{cn}".lstrip("."), f"{parent_name}.{bn_name}".lstrip("."),
                                      c, named[bn_name]))
    return pairs


def hook_macs(model, inputs):
    """MACs of every Conv2d and Linear module from its real input/output shapes (forward hooks)."""
    rows = []

    def conv_hook(mod, inp, out):
        kh, kw = mod.kernel_size
        rows.append((mod._fw_name, "Conv2d", out.numel() * (mod.in_channels // mod.groups) * kh * kw))

    def linear_hook(mod, inp, out):
        rows.append((mod._fw_name, "Linear", out.numel() * mod.in_features))

    handles = []
    for name, mod in model.named_modules():
        mod._fw_name = name
        if isinstance(mod, nn.Conv2d):
            handles.append(mod.register_forward_hook(conv_hook))
        elif isinstance(mod, nn.Linear):
            handles.append(mod.register_forward_hook(linear_hook))
    with torch.no_grad():
        model(*inputs)
    for h in handles:
        h.remove()
    return rows


def expectations(name, model, inputs, input_names, dims):
    params = sum(p.numel() for p in model.parameters())  # unique parameters (a tied weight once)
    buffers = sum(b.numel() for b in model.buffers())
    float_buffers = sum(b.numel() for b in model.buffers() if b.is_floating_point())
    folds = []
    onnx_params = params
    for conv_name, bn_name, conv, bn in folded_batchnorms(model):
        c = bn.num_features
        added_bias = 0 if conv.bias is not None else conv.out_channels
        onnx_params += added_bias - 2 * c
        folds.append({"conv": conv_name, "batchnorm": bn_name, "removed_gamma_beta": 2 * c,
                      "added_conv_bias": added_bias, "removed_buffers": 2 * c + 1})
    notes = []
    if folds:
        removed = sum(f["removed_gamma_beta"] for f in folds)
        added = sum(f["added_conv_bias"] for f in folds)
        notes.append(f"{len(folds)} BatchNorm2d folded into the preceding Conv: params {params} - {removed} "
                     f"(BN gamma+beta) + {added} (new conv biases) = {onnx_params}; running stats vanish, "
                     f"so ONNX buffers = 0")
    else:
        notes.append("nothing folded away: every torch parameter is one ONNX initializer of the same size "
                     "(Linear weights are stored transposed for MatMul; same element count)")

    rows = hook_macs(model, inputs)
    module_macs = sum(r[2] for r in rows)
    formula = []
    cfg = getattr(model, "config", None)
    if name.startswith("bert") or name == "gpt2":
        b, s = dims["batch"], dims["seq"]
        h, heads, layers = cfg["hidden"], cfg["heads"], cfg["layers"]
        hd = h // heads
        per = b * heads * s * s * hd
        formula.append({"what": "attention QK^T per layer: batch*heads*seq*seq*head_dim", "layers": layers,
                        "macs_each": per, "macs": layers * per,
                        "arithmetic": f"{layers} * {b}*{heads}*{s}*{s}*{hd} = {layers * per}"})
        formula.append({"what": "attention probs*V per layer: batch*heads*seq*seq*head_dim", "layers": layers,
                        "macs_each": per, "macs": layers * per,
                        "arithmetic": f"{layers} * {b}*{heads}*{s}*{s}*{hd} = {layers * per}"})
    if name == "gpt2":
        v, h = cfg["vocab"], cfg["hidden"]
        lm = dims["batch"] * dims["seq"] * v * h
        formula.append({"what": "tied LM head W @ h^T: batch*seq*vocab*hidden", "macs": lm,
                        "arithmetic": f"{dims['batch']}*{dims['seq']}*{v}*{h} = {lm}"})
    macs = module_macs + sum(f["macs"] for f in formula)

    return {
        "model": name,
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "opset": OPSET,
        "config": cfg,
        "dims": dims,
        "inputs": {n: list(t.shape) for n, t in zip(input_names, inputs)},
        "torch_params": params,
        "torch_buffers": buffers,
        "torch_float_buffers": float_buffers,
        "folds": folds,
        "expected_onnx_params": onnx_params,
        "expected_onnx_buffers": 0,
        "param_notes": notes,
        "macs": macs,
        "macs_from_hooks": module_macs,
        "macs_from_formula": formula,
        "macs_notes": "hooks: Conv2d out_elems*in_ch/groups*kh*kw, Linear out_elems*in_features; "
                      "contractions that are not modules (attention products, tied LM head) by formula",
        "hook_rows": len(rows),
    }


# --------------------------------------------------------------------------------------------------
# Export


def onnx_float_initializer_numel(model_proto):
    float_types = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16,
                   onnx.TensorProto.BFLOAT16}
    used = {i for n in model_proto.graph.node for i in n.input}
    total = 0
    for t in model_proto.graph.initializer:
        if t.data_type in float_types and t.name in used:
            total += math.prod(t.dims)
    return total


def export(name, out_dir, inline):
    torch.manual_seed(sum(map(ord, name)))
    model, inputs, in_names, out_names, axes, dims = make_model(name)
    perturb(model, seed=sum(map(ord, name)) + 1)
    model.eval()
    expect = expectations(name, model, inputs, in_names, dims)

    path = os.path.join(out_dir, name + ".onnx")
    data_name = name + ".onnx.data"
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, name + ".onnx")
        torch.onnx.export(model, inputs, raw, opset_version=OPSET, do_constant_folding=True,
                          input_names=in_names, output_names=out_names, dynamic_axes=axes,
                          training=torch.onnx.TrainingMode.EVAL)
        proto = onnx.load(raw)
    if os.path.exists(os.path.join(out_dir, data_name)):
        os.remove(os.path.join(out_dir, data_name))
    if inline:
        onnx.save_model(proto, path)
    else:
        onnx.save_model(proto, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=data_name, size_threshold=1024)

    # Consistency checks against what we just wrote (the expectation above never reads it).
    check = onnx.load(path, load_external_data=False)
    names = [n.name for n in check.graph.node]
    if name.startswith("resnet"):
        assert "/layer1/layer1.0/conv1/Conv" in names, names[:10]
    if name.startswith("bert"):
        assert any(n.startswith("/encoder/layer.0/attention/self/query/") for n in names), names[:20]
    idents = [n.name for n in check.graph.node if n.op_type == "Identity"]
    assert not idents, f"{name}: exporter merged layers behind Identity nodes: {idents[:5]}"
    got = onnx_float_initializer_numel(check)
    assert got == expect["expected_onnx_params"], (name, got, expect["expected_onnx_params"])
    assert not any(n.op_type == "BatchNormalization" for n in check.graph.node), name
    sym = [d.dim_param for i in check.graph.input for d in i.type.tensor_type.shape.dim if d.dim_param]
    assert sym, f"{name}: no symbolic dims in the inputs"
    expect["onnx_nodes"] = len(check.graph.node)
    expect["onnx_op_types"] = sorted({n.op_type for n in check.graph.node})
    expect["symbolic_input_dims"] = sorted(set(sym))

    if not inline:
        with open(os.path.join(out_dir, name + ".expect.json"), "w") as f:
            json.dump(expect, f, indent=1, sort_keys=True)
            f.write("\n")
    size = os.path.getsize(path)
    print(f"{name}: {path} {size} bytes, {expect['onnx_nodes']} nodes, torch params {expect['torch_params']}, "
          f"onnx params {got}, MACs {expect['macs']}", file=sys.stderr)
    return path


# --------------------------------------------------------------------------------------------------
# TorchScript (.pt) exports for the TorchScript importer's tests (generated at test time, not committed)

TORCHSCRIPT = ["resnet18", "mobilenet_v2", "bert", "gpt2", "hf_bert", "torch_transformer"]
# Traced only: as Hugging Face exports its models (torchscript=True), torch.finfo does not script; torch's
# transformer layers as a user would trace them.
TRACE_ONLY = {"hf_bert", "torch_transformer"}


class CustomOpModel(nn.Module):
    """Calls a custom op (torch.ops.myns.op) that LibTorch does not know: the importer must say so."""

    def forward(self, x):
        return torch.ops.myns.op(x) + 1


class MiscOps(nn.Module):
    """One of each remaining lowering the four models do not use: GroupNorm, SiLU, AvgPool, nearest
    upsampling, adaptive pooling to 3x3, a batch-first LSTM, a two-layer bidirectional GRU, einsum."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.pool = nn.AvgPool2d(2)
        self.up = nn.Upsample(scale_factor=2.0, mode="nearest")
        self.apool = nn.AdaptiveAvgPool2d((3, 3))
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.gru = nn.GRU(16, 12, num_layers=2, bidirectional=True)
        self.head = nn.Linear(24, 4)

    def forward(self, x):  # x [1, 3, 16, 16]
        y = F.silu(self.gn(self.conv(x)))
        y = self.up(self.pool(y))  # [1, 8, 16, 16]
        s = self.apool(y).flatten(2).transpose(1, 2)  # [1, 9, 8]
        s, _ = self.lstm(s)  # [1, 9, 16]
        s, _ = self.gru(s)  # seq-first: seq 1, batch 9 -> [1, 9, 24]
        a = torch.einsum("bij,bkj->bik", s, s)  # [1, 9, 9]
        return self.head(s), F.softmax(a, -1)


class DataDependentIf(nn.Module):
    """A branch on tensor data (scripted): cannot be resolved statically, must be reported."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if bool(x.sum() > 0):
            return self.fc(x)
        return x


class _OutOfRangeLookup(nn.Module):
    """index_select with an index computed from the data, far past the end: fails only when it runs."""

    def forward(self, x):
        idx = (x.abs().sum() * 1000.0 + 1000.0).long().view(1)
        return torch.index_select(x, 0, idx)


class RaisesAtRun(nn.Module):
    """Analysable statically; raises inside `lookup` (aten::index_select) when LibTorch runs it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.lookup = _OutOfRangeLookup()

    def forward(self, x):
        return self.lookup(self.fc(x))


def register_custom_op():
    lib = torch.library.Library("myns", "DEF")
    lib.define("op(Tensor x) -> Tensor")
    lib.impl("op", lambda x: x * 2, "CompositeExplicitAutograd")
    return lib  # keep alive


def export_torchscript(out_dir):
    """Writes <name>.trace.pt (torch.jit.trace) and <name>.script.pt (torch.jit.script) of each model in
    TORCHSCRIPT, same seeds and perturbation as the ONNX export, eval mode. Each file carries an extra
    file `flopwise_inputs.json` with the example inputs' names, shapes and dtypes (LibTorch 1.13 drops the
    traced input types on save). Also writes the bad-input cases: not_a_zip.pt, not_torchscript.pt (a
    zip without TorchScript code), custom_op.pt (a traced module calling torch.ops.myns.op) and
    raises.script.pt (fails inside a submodule when run)."""
    import zipfile
    os.makedirs(out_dir, exist_ok=True)
    for name in TORCHSCRIPT:
        torch.manual_seed(sum(map(ord, name)))
        model, inputs, in_names, _, _, _ = make_model(name)
        perturb(model, seed=sum(map(ord, name)) + 1)
        model.eval()
        meta = json.dumps([{"name": n, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                           for n, t in zip(in_names, inputs)])
        extra = {"flopwise_inputs.json": meta}
        with torch.no_grad():
            traced = torch.jit.trace(model, inputs, check_trace=False)
        torch.jit.save(traced, os.path.join(out_dir, name + ".trace.pt"), _extra_files=extra)
        if name in TRACE_ONLY:
            print(f"{name}: TorchScript written to {out_dir} (trace only)", file=sys.stderr)
            continue
        try:
            scripted = torch.jit.script(model)
            # Scripted graphs name inputs after forward's arguments: no extra file, shapes come from --input.
            torch.jit.save(scripted, os.path.join(out_dir, name + ".script.pt"))
        except Exception as e:  # noqa: BLE001 - report and go on; the test skips a missing file
            print(f"{name}: torch.jit.script failed: {str(e).strip().splitlines()[0]}", file=sys.stderr)
        print(f"{name}: TorchScript written to {out_dir}", file=sys.stderr)
    misc = MiscOps().eval()
    with torch.no_grad():
        traced = torch.jit.trace(misc, (torch.zeros(1, 3, 16, 16),))
    torch.jit.save(traced, os.path.join(out_dir, "misc_ops.trace.pt"),
                   _extra_files={"flopwise_inputs.json": json.dumps([{"name": "x", "shape": [1, 3, 16, 16],
                                                                       "dtype": "float32"}])})
    torch.jit.save(torch.jit.script(DataDependentIf().eval()), os.path.join(out_dir, "data_if.script.pt"))
    torch.jit.save(torch.jit.script(RaisesAtRun().eval()), os.path.join(out_dir, "raises.script.pt"))
    with open(os.path.join(out_dir, "not_a_zip.pt"), "wb") as f:
        f.write(b"this is not a zip archive\n")
    with zipfile.ZipFile(os.path.join(out_dir, "not_torchscript.pt"), "w") as z:
        z.writestr("archive/hello.txt", "a zip, but no TorchScript inside\n")
    keep = register_custom_op()
    traced = torch.jit.trace(CustomOpModel(), (torch.zeros(2, 3),))
    torch.jit.save(traced, os.path.join(out_dir, "custom_op.pt"))
    del keep


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", help="model name (repeatable); default: the bundled set")
    ap.add_argument("--out", default=HERE, help="output directory (default: models/)")
    ap.add_argument("--inline", action="store_true", help="keep weights inside the .onnx (no .data file)")
    ap.add_argument("--torchscript", action="store_true",
                    help="write TorchScript .pt files (trace and script) of the TorchScript test models to --out")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.torchscript:
        export_torchscript(args.out)
        return
    for name in args.only or BUNDLED:
        export(name, args.out, args.inline)


if __name__ == "__main__":
    main()
