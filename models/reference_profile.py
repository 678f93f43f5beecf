#!/usr/bin/env python3
"""The model of ../shared/reference/deepspeed_flops_profiler_output.txt, rebuilt from its architecture.

The reference profile is DeepSpeed's flops profiler (an early release) printing NVIDIA's BERT-Large
pre-training model, `BertForPreTrainingPreLN` (DeepSpeedExamples bing_bert/nvidia/modelingpreln.py), at batch 80,
sequence 128. This script writes a module with the same structure, module names and classes, written here from
that architecture (random weights, nothing downloaded):

  BertForPreTrainingPreLN
    bert: BertModel
      embeddings: BertEmbeddings (word/position/token_type Embedding, LayerNorm: FusedLayerNorm, dropout)
      encoder: BertEncoder (FinalLayerNorm declared first, then layer: ModuleList of 24 BertLayer)
        BertLayer: attention (self: BertSelfAttention, output: BertSelfOutput), PreAttentionLayerNorm,
                   PostAttentionLayerNorm, intermediate (dense_act: LinearActivation), output (dense, dropout)
      pooler: BertPooler (dense_act: LinearActivation, tanh)
    cls: BertPreTrainingHeads
      predictions: BertLMPredictionHead (transform, decoder: Linear tied to the word embeddings, bias)
      seq_relationship: Linear(1024, 2)

forward takes the five tensors the original reads from its `batch` list and returns the pre-training loss: the
masked-LM head runs on the positions where masked_lm_labels != -1 only (torch.nonzero, then index_select), so its
decoder's size is data-dependent, and both losses are CrossEntropyLoss(ignore_index=-1).

Written to OUT:
  bert_preln.trace.pt    torch.jit.trace at batch 2, sequence 8 (with `flopwise_inputs.json`)
  bert_preln.expect.json what eager PyTorch says of the same module at that size: each module's parameters as
                         sum(p.numel() for p in m.parameters()) (tied ones in every module holding them), the
                         model's (each tensor once), each module's MACs as the early DeepSpeed profiler counted
                         them (its patched F.linear: input elements x out_features; F.softmax: input elements;
                         everything else it saw here: 0), summed over the module and its children, the number of
                         masked positions, and the loss's shape.
A smaller sibling (`--small`: 2 layers, hidden 64, vocab 1000) is written as bert_preln_small.* for quick tests.
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Config:
    def __init__(self, vocab=30528, hidden=1024, layers=24, heads=16, intermediate=4096, max_pos=512, type_vocab=2):
        self.vocab_size, self.hidden_size, self.num_hidden_layers = vocab, hidden, layers
        self.num_attention_heads, self.intermediate_size = heads, intermediate
        self.max_position_embeddings, self.type_vocab_size = max_pos, type_vocab


@torch.jit.script
def bias_gelu(bias, y):
    x = bias + y
    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))


@torch.jit.script
def bias_tanh(bias, y):
    return torch.tanh(bias + y)


class FusedLayerNorm(nn.Module):
    """apex.normalization.FusedLayerNorm's name and parameters; apex runs one CUDA kernel that no profiler patch
    sees, written here with tensor operators, which the profiler does not see either."""

    def __init__(self, hidden, eps=1e-12):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.bias = nn.Parameter(torch.zeros(hidden))
        self.eps = eps

    def forward(self, x):
        u = x.mean(-1, keepdim=True)
        s = (x - u).pow(2).mean(-1, keepdim=True)
        return self.weight * ((x - u) / torch.sqrt(s + self.eps)) + self.bias


class LinearActivation(nn.Module):
    """F.linear without its bias, then the bias fused into the activation (a scripted function)."""

    def __init__(self, n_in, n_out, act):
        super().__init__()
        self.act = act
        self.weight = nn.Parameter(torch.empty(n_out, n_in))
        self.bias = nn.Parameter(torch.empty(n_out))
        nn.init.normal_(self.weight, std=0.02)
        nn.init.normal_(self.bias, std=0.02)

    def forward(self, x):
        y = F.linear(x, self.weight, None)
        return bias_gelu(self.bias, y) if self.act == "gelu" else bias_tanh(self.bias, y)


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
        self.position_embeddings = nn.Embedding(c.max_position_embeddings, c.hidden_size)
        self.token_type_embeddings = nn.Embedding(c.type_vocab_size, c.hidden_size)
        self.LayerNorm = FusedLayerNorm(c.hidden_size)
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids, token_type_ids):
        positions = torch.arange(input_ids.size(1), dtype=torch.long, device=input_ids.device)
        positions = positions.unsqueeze(0).expand_as(input_ids)
        e = self.word_embeddings(input_ids) + self.position_embeddings(positions) + \
            self.token_type_embeddings(token_type_ids)
        return self.dropout(self.LayerNorm(e))


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c.num_attention_heads
        self.head_size = c.hidden_size // c.num_attention_heads
        self.query = nn.Linear(c.hidden_size, c.hidden_size)
        self.key = nn.Linear(c.hidden_size, c.hidden_size)
        self.value = nn.Linear(c.hidden_size, c.hidden_size)
        self.dropout = nn.Dropout(0.1)
        self.softmax = nn.Softmax(dim=-1)

    def split(self, x):
        return x.view(x.size()[:-1] + (self.heads, self.head_size))

    def forward(self, h, mask):
        q = self.split(self.query(h)).permute(0, 2, 1, 3)
        k = self.split(self.key(h)).permute(0, 2, 3, 1)
        v = self.split(self.value(h)).permute(0, 2, 1, 3)
        scores = torch.matmul(q, k) / math.sqrt(self.head_size) + mask
        probs = self.dropout(self.softmax(scores))
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (self.heads * self.head_size,))


class BertSelfOutput(nn.Module):
    def __init__(self, c, n_in=None):
        super().__init__()
        self.dense = nn.Linear(n_in or c.hidden_size, c.hidden_size)
        self.dropout = nn.Dropout(0.1)

    def forward(self, h):
        return self.dropout(self.dense(h))


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, h, mask):
        return self.output(self.self(h, mask))


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense_act = LinearActivation(c.hidden_size, c.intermediate_size, "gelu")

    def forward(self, h):
        return self.dense_act(h)


class BertOutput(BertSelfOutput):
    """The same dense + dropout from the FFN width (its own class name, as in the model)."""

    def __init__(self, c):
        super().__init__(c, c.intermediate_size)


class BertLayer(nn.Module):
    """Pre-LN: declared attention, PreAttentionLayerNorm, PostAttentionLayerNorm, intermediate, output; called
    PreAttentionLayerNorm first (declaration order is not call order)."""

    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.PreAttentionLayerNorm = FusedLayerNorm(c.hidden_size)
        self.PostAttentionLayerNorm = FusedLayerNorm(c.hidden_size)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, h, mask):
        mid = h + self.attention(self.PreAttentionLayerNorm(h), mask)
        return self.output(self.intermediate(self.PostAttentionLayerNorm(mid))) + mid


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.FinalLayerNorm = FusedLayerNorm(c.hidden_size)  # declared first, called last
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(c.num_hidden_layers)])

    def forward(self, h, mask):
        for layer in self.layer:
            h = layer(h, mask)
        return self.FinalLayerNorm(h)


class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense_act = LinearActivation(c.hidden_size, c.hidden_size, "tanh")

    def forward(self, h):
        return self.dense_act(h[:, 0])


class BertModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c)

    def forward(self, input_ids, token_type_ids, attention_mask):
        mask = attention_mask.unsqueeze(1).unsqueeze(2).to(dtype=torch.float32)
        mask = (1.0 - mask) * -10000.0
        seq = self.encoder(self.embeddings(input_ids, token_type_ids), mask)
        return seq, self.pooler(seq)


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense_act = LinearActivation(c.hidden_size, c.hidden_size, "gelu")
        self.LayerNorm = FusedLayerNorm(c.hidden_size)

    def forward(self, h):
        return self.LayerNorm(self.dense_act(h))


class BertLMPredictionHead(nn.Module):
    def __init__(self, c, embedding_weight):
        super().__init__()
        self.transform = BertPredictionHeadTransform(c)
        self.decoder = nn.Linear(embedding_weight.size(1), embedding_weight.size(0), bias=False)
        self.decoder.weight = embedding_weight  # tied: the word-embedding matrix
        self.bias = nn.Parameter(torch.zeros(embedding_weight.size(0)))

    def forward(self, h, masked_positions):
        h = self.transform(h)
        h = torch.index_select(h.view(-1, h.shape[-1]), 0, masked_positions)
        return self.decoder(h) + self.bias


class BertPreTrainingHeads(nn.Module):
    def __init__(self, c, embedding_weight):
        super().__init__()
        self.predictions = BertLMPredictionHead(c, embedding_weight)
        self.seq_relationship = nn.Linear(c.hidden_size, 2)

    def forward(self, seq, pooled, masked_positions):
        return self.predictions(seq, masked_positions), self.seq_relationship(pooled)


class BertForPreTrainingPreLN(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.vocab_size = c.vocab_size
        self.bert = BertModel(c)
        self.cls = BertPreTrainingHeads(c, self.bert.embeddings.word_embeddings.weight)

    def forward(self, input_ids, token_type_ids, attention_mask, masked_lm_labels, next_sentence_label):
        seq, pooled = self.bert(input_ids, token_type_ids, attention_mask)
        masked_positions = torch.nonzero((masked_lm_labels + 1).view(-1)).view(-1)
        scores, seq_relationship = self.cls(seq, pooled, masked_positions)
        target = torch.index_select(masked_lm_labels.view(-1), 0, masked_positions)
        loss = nn.CrossEntropyLoss(ignore_index=-1)
        return loss(scores.view(-1, self.vocab_size), target) + \
            loss(seq_relationship.view(-1, 2), next_sentence_label.view(-1))


# ---- the early DeepSpeed profiler's count, eagerly --------------------------------------------------------
# It patched torch.nn.functional (F.linear: input elements x out_features; F.softmax, F.relu, F.gelu, pools and
# norms: input elements) and summed one figure per call into the module running, reported as MACs (flops =
# 2 x MACs). torch.matmul, tensor operators, scripted functions and F.cross_entropy were not patched: 0. Here the
# module stack is kept by forward pre/post hooks and a call counts in every module on it.
def legacy_deepspeed_macs(model, inputs):
    names = {m: n for n, m in model.named_modules()}
    stack, macs = [], {n: 0 for n in names.values()}

    def count(k):
        if stack:
            macs[names[stack[-1]]] += k

    orig = {"linear": F.linear, "softmax": F.softmax}

    def linear(x, w, b=None):
        count(x.numel() * w.shape[0])
        return orig["linear"](x, w, b)

    def softmax(x, *a, **kw):
        count(x.numel())
        return orig["softmax"](x, *a, **kw)

    hooks = []
    for m in names:
        hooks.append(m.register_forward_pre_hook(lambda m, i: stack.append(m)))
        hooks.append(m.register_forward_hook(lambda m, i, o: stack.pop() and None))
    F.linear, F.softmax = linear, softmax
    try:
        with torch.no_grad():
            out = model(*inputs)
    finally:
        F.linear, F.softmax = orig["linear"], orig["softmax"]
        for h in hooks:
            h.remove()

    def total(m):
        return macs[names[m]] + sum(total(c) for c in m.children())
    return {names[m]: total(m) for m in names}, out


def build(c, batch, seq, masked):
    torch.manual_seed(0)
    model = BertForPreTrainingPreLN(c).eval()
    g = torch.Generator().manual_seed(1)
    input_ids = torch.randint(0, c.vocab_size, (batch, seq), generator=g)
    token_type_ids = torch.randint(0, c.type_vocab_size, (batch, seq), generator=g)
    attention_mask = torch.ones(batch, seq, dtype=torch.long)
    labels = torch.full((batch, seq), -1, dtype=torch.long)
    picked = torch.randperm(batch * seq, generator=g)[:masked]
    labels.view(-1)[picked] = torch.randint(0, c.vocab_size, (masked,), generator=g)
    nsp = torch.randint(0, 2, (batch,), generator=g)
    return model, (input_ids, token_type_ids, attention_mask, labels, nsp)


ARG_NAMES = ["input_ids", "token_type_ids", "attention_mask", "masked_lm_labels", "next_sentence_label"]


def write(c, stem, out_dir, batch=2, seq=8, masked=5):
    model, inputs = build(c, batch, seq, masked)
    # Each parameter becomes one stored number broadcast to its shape (stride 0): the archive keeps every
    # parameter's shape and the tying, not 1.3 GB of random weights. Counts depend on shapes only.
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.data = torch.full((), 0.01 * (i % 7 + 1)).expand(p.shape)
    macs, out = legacy_deepspeed_macs(model, inputs)
    scopes = {}
    for name, m in model.named_modules():
        scopes[name] = {"class": type(m).__name__, "params": sum(p.numel() for p in m.parameters()),
                        "legacy_macs": macs[name]}
    expect = {
        "inputs": [{"name": n, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                   for n, t in zip(ARG_NAMES, inputs)],
        "masked_positions": masked,
        "params": sum(p.numel() for p in model.parameters()),
        "loss_shape": list(out.shape),
        "declaration_order": [n for n, _ in model.named_modules()],
        "scopes": scopes,
    }
    for p in model.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        traced = torch.jit.trace(model, inputs, check_trace=False)
    extra = {"flopwise_inputs.json": json.dumps(expect["inputs"])}
    torch.jit.save(traced, os.path.join(out_dir, stem + ".trace.pt"), _extra_files=extra)
    with open(os.path.join(out_dir, stem + ".expect.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--small", action="store_true", help="only the small sibling (2 layers, hidden 64)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    write(Config(vocab=1000, hidden=64, layers=2, heads=4, intermediate=256, max_pos=64), "bert_preln_small", a.out)
    if not a.small:
        write(Config(), "bert_preln", a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
