#!/usr/bin/python3
"""torch's own figures for the bytes autograd keeps for backward, on the CPU and with CUDA's dropout kernel:
the oracle of `flopwise --train --device cpu|cuda` (tests/train/test_keep_device.py).

    /usr/bin/python3 models/train_keep.py --json models/train_keep.json     # the figures (~10 s)
    /usr/bin/python3 models/train_keep.py --out DIR                          # each case traced, DIR/<name>.pt

Each number is Debian's torch 1.13 running the module's forward in train mode under
torch.autograd.graph.saved_tensors_hooks: every tensor the pack hook receives, each storage once
(storage().size() * element_size()), the parameters, buffers and the model's inputs apart
(tests/train/oracle.py's saved_bytes, the same count). Nothing here restates a flopwise rule.

- "cpu": the forward as torch runs it on the CPU. F.dropout there multiplies by a noise tensor in the input's
  dtype, and the product keeps that noise.
- "cuda": the same forward with F.dropout as CUDA runs it: an out-of-place element dropout with 0 < p < 1 goes
  to the fused kernel aten::native_dropout (which torch also runs on the CPU), keeping a bool mask; an in-place
  or a feature (Dropout2d/3d) dropout stays on the noise path on CUDA too (ATen's Dropout.cpp:
  is_fused_kernel_acceptable is asked only by the out-of-place at::dropout). Every other op saves the same
  tensors on either device (derivatives.yaml has no device in it); an LSTM is measured as torch's CPU cells
  run it (cuDNN's reserve space on CUDA is not measured here).

Cases: one op at a time after Conv2d -> BatchNorm2d (its input a fresh tensor that needs a gradient, its output
read by a 1x1 Conv2d), in place and not; torchvision's SqueezeExcitation; a 2-layer LSTM; and three whole
models: torchvision's mobilenet_v3_small at 2x3x96x96, a language model with a 2-layer LSTM, and a
TransformerEncoder with dropout 0.1 (traced in train mode, where nn.MultiheadAttention's dropout is recorded).
"""
import argparse
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "train"))
import oracle  # noqa: E402


def after_conv_bn(act, c=8):
    """x [2,3,8,8] -> Conv2d(3, c) -> BatchNorm2d -> act -> Conv2d(c, 4, 1)."""
    return nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), act, nn.Conv2d(c, 4, 1))


class SEBlock(nn.Module):
    """Conv2d -> BatchNorm2d -> ReLU, then torchvision's SqueezeExcitation as mobilenet_v3 builds it (adaptive
    average pool, 1x1 convs with a ReLU between, Hardsigmoid scale, the scale times the input)."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.se = torchvision.ops.SqueezeExcitation(16, 8, scale_activation=nn.Hardsigmoid)
        self.out = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        return self.out(self.se(self.stem(x)))


class LSTMAfterLinear(nn.Module):
    def __init__(self, batch_first=False, dropout=0.0):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.rnn = nn.LSTM(8, 16, num_layers=2, batch_first=batch_first, dropout=dropout)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.rnn(self.lin(x))[0])


class LSTMLM(nn.Module):
    """Embedding -> 2-layer LSTM (batch_first) -> Linear over the vocabulary."""

    def __init__(self, vocab=100, emb=32, hidden=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens):
        return self.head(self.rnn(self.emb(tokens))[0])


class Encoder(nn.Module):
    """Embedding -> TransformerEncoder (2 layers, d 64, 4 heads, FFN 128, dropout 0.1, batch first) -> Linear."""

    def __init__(self, vocab=100, d=64):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, 4, 128, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.emb(tokens)))


def img(*shape):
    return (torch.randn(*shape),)


def tokens(*shape):
    return (torch.randint(0, 100, shape),)


class Case:
    """A module maker, its inputs' maker; traced in train mode (else eval); measured with CUDA's dropout kernel
    too (not where the dropout is the one aten::lstm applies between layers in its C++: cuDNN's on CUDA)."""

    def __init__(self, make, inputs, train_trace=False, cuda=True):
        self.make, self.inputs, self.train_trace, self.cuda = make, inputs, train_trace, cuda


def one_op(act):
    return Case(lambda: after_conv_bn(act()), lambda: img(2, 3, 8, 8))


CASES = {
    "hardswish": one_op(nn.Hardswish),
    "hardswish_inplace": one_op(lambda: nn.Hardswish(inplace=True)),
    "hardsigmoid": one_op(nn.Hardsigmoid),
    "hardsigmoid_inplace": one_op(lambda: nn.Hardsigmoid(inplace=True)),
    "relu_inplace": one_op(lambda: nn.ReLU(inplace=True)),
    "relu6_inplace": one_op(lambda: nn.ReLU6(inplace=True)),
    "silu_inplace": one_op(lambda: nn.SiLU(inplace=True)),
    "leaky_relu_inplace": one_op(lambda: nn.LeakyReLU(0.1, inplace=True)),
    "dropout": one_op(lambda: nn.Dropout(0.3)),
    "dropout_inplace": one_op(lambda: nn.Dropout(0.3, inplace=True)),
    "dropout2d": one_op(lambda: nn.Dropout2d(0.3)),
    "se_block": Case(SEBlock, lambda: img(2, 3, 8, 8)),
    "lstm": Case(LSTMAfterLinear, lambda: img(5, 3, 8)),
    "lstm_batch_first": Case(lambda: LSTMAfterLinear(batch_first=True), lambda: img(3, 5, 8)),
    "lstm_dropout": Case(lambda: LSTMAfterLinear(dropout=0.3), lambda: img(5, 3, 8), cuda=False),
    "mobilenet_v3_small": Case(torchvision.models.mobilenet_v3_small, lambda: img(2, 3, 96, 96)),
    "lstm_lm": Case(LSTMLM, lambda: tokens(2, 16)),
    "transformer_dropout": Case(Encoder, lambda: tokens(2, 16), train_trace=True),
}


def build(name):
    c = CASES[name]
    torch.manual_seed(0)
    return c.make().train(), c.inputs()


def pins(inputs):
    """flopwise's --input pins of the inputs: 2x3x8x8:float32."""
    return ["%s:%s" % ("x".join(map(str, t.shape)), str(t.dtype).replace("torch.", "")) for t in inputs]


@torch.no_grad()
def trace(name, path):
    m, x = build(name)
    if not CASES[name].train_trace:
        m.eval()
    torch.jit.trace(m, x, check_trace=False).save(path)


def figures(name):
    m, x = build(name)
    cpu = oracle.saved_bytes(m, x)
    cuda = None
    if CASES[name].cuda:
        with oracle.cuda_dropout():
            cuda = oracle.saved_bytes(m, x)
    return {"inputs": pins(x), "cpu": cpu, "cuda": cuda}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--out", help="trace each case to DIR/<name>.pt")
    ap.add_argument("--only", action="append", help="a case (repeat)")
    a = ap.parse_args()
    names = a.only or list(CASES)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        for n in names:
            trace(n, os.path.join(a.out, n + ".pt"))
    if a.json:
        out = {"torch": torch.__version__, "how": "models/train_keep.py", "cases": {n: figures(n) for n in names}}
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")
    if not (a.out or a.json):
        for n in names:
            print(n, figures(n))


if __name__ == "__main__":
    main()
