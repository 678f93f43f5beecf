#!/usr/bin/python3
"""A zoo of small TorchScript test models with independently computed expectations.

Run with Debian's python (torch 1.13, torchvision 0.14), no downloads, random weights:

    /usr/bin/python3 models/torch_zoo.py --out DIR                  # every entry
    /usr/bin/python3 models/torch_zoo.py --out DIR --only resnet18 lstm   # some entries
    /usr/bin/python3 models/torch_zoo.py --list                     # names and families

For every entry NAME of ZOO it writes into DIR:
  NAME.trace.pt    torch.jit.trace of the module (eval mode, under torch.no_grad(), check_trace=False,
                   strict=False so that dict and list outputs, e.g. the segmentation models' OrderedDict,
                   are traced as they are);
  NAME.script.pt   torch.jit.script of the same module, when torch 1.13 can script it (otherwise the
                   first line of the error goes to expect.json "script_error" and the file is absent);
  NAME.expect.json what eager PyTorch says about the module (see below).
Both .pt files carry the extra file `flopwise_inputs.json`: the example inputs, one
{"name", "shape", "dtype"} per tensor argument of forward, in order, named after forward's arguments.
DIR/zoo.json lists the names written (with a summary) and DIR/aten_ops.json maps every graph node kind
found in the written files (aten::*, prim::*) to the models using it.

Every entry is built under a fixed seed derived from its name, every parameter and float buffer gets a
small per-tensor noise (no two layers are identical), and the module is put in eval mode. Architectures
keep their structure (block types, depths, groups, skip connections, attention layout) but are made
narrow and fed small inputs, so that each file stays small and the whole zoo builds in seconds.
Families: torchvision classification, segmentation (FCN, DeepLabV3, LR-ASPP: IntermediateLayerGetter
backbones, OrderedDict outputs) and video (R3D / MC3 / R(2+1)D, S3D, MViT v1/v2) models, hand-written
language models and a UNet, modules returning containers (Dict[str, Tensor], Tuple[Tensor, List[Tensor]]),
and every torch.nn layer with parameters.

How the expectations are computed (independently of TorchScript and of flopwise):
  - "params" = sum(p.numel() for p in module.parameters()) (unique tensors: a tied weight counts
    once); "buffers" = sum of buffers' numel (all dtypes).
  - "macs" = multiply-accumulates of contractions only (matrix products and convolutions; no
    elementwise, norm, softmax or pooling work). They come from one EAGER forward pass of the very
    module and inputs that were traced, run under torch.enable_grad() with every parameter requiring
    grad, inside a torch.utils._python_dispatch.TorchDispatchMode that sees every aten op reaching the
    Python dispatch key. Grad mode matters: nn.MultiheadAttention and nn.TransformerEncoderLayer take
    fused inference fast paths (aten::_native_multi_head_attention, aten::_transformer_encoder_layer_fwd)
    only when grad is off or no parameter requires grad, so here every contraction is a plain aten op
    (the traced files, made under no_grad, do hold the fused ops; their MACs are the same). Composite ops
    (linear, matmul, einsum, conv1d/2d/3d, conv_transpose*, lstm/gru/rnn on CPU, tensordot, ...)
    decompose above the Python key, so the mode sees what they decompose into. Counted:
        mm, addmm: M*N*K;  bmm, baddbmm, addbmm: B*M*N*K;  mv, addmv: M*K;  dot, vdot: K;
        addr (outer product): M*N;
        convolution / _convolution: not transposed: out.numel() * w.shape[1] * prod(w.shape[2:]);
                                    transposed (w is [Cin, Cout/groups, k...]):
                                    input.numel() * w.shape[1] * prod(w.shape[2:]);
        _trilinear (nn.Bilinear; it does not decompose): the product of the broadcast extent of all
            dimensions, i.e. batch*out*in1*in2 for Bilinear (counted by this explicit formula).
    Any op whose name looks like a contraction (mm, conv, linear, attention, lstm, ...) and is not in
    that table stops the generator (except the interpolations upsample_linear1d / upsample_bilinear2d /
    upsample_trilinear3d / _upsample_bilinear2d_aa, named one by one in NOT_CONTRACTIONS: no MACs), as
    do the fused fast-path ops (they would mean the grad trick failed), so nothing is silently counted
    as zero. "macs_by_op" splits the total by aten op.
  - "macs_from_hooks" is a cross-check from forward hooks on modules, in the same pass:
    Conv1d/2d/3d: out_elems * in_ch/groups * prod(kernel); ConvTranspose1d/2d/3d:
    in_elems * out_ch/groups * prod(kernel); Linear: out_elems * in_features; Bilinear:
    out_elems * in1 * in2. Hooks miss functional contractions (attention products, F.linear with a
    module's weight, nn.MultiheadAttention's projections, RNN cells), so the generator asserts
    macs_from_hooks <= macs always, and == for the entries marked exact (CNNs and bare conv/linear
    layers, which have no functional contraction).
  - "aten_ops" = the node kinds of the written files, read back with torch.jit.load: forward's graph
    (for a scripted bare RNN/LSTM/GRU, which has only the overloads forward__0 (Tensor input) and
    forward__1 (PackedSequence), the method whose first argument is a Tensor), inlined with
    torch._C._jit_pass_inline, walked recursively through sub-blocks.
  - "check": max |output - eager output| of the reloaded trace/script files (eager = the grad-mode
    pass above, so fast paths in the trace are compared with the slow path); container outputs are
    compared tensor by tensor (dict values in insertion order).
  - "output_shapes": the shapes of the eager outputs (container outputs flattened, as for "check").
  - "onnx": NAME.onnx, torch.onnx.export of the same module and inputs at opset 13, for entries marked
    onnx=True (the losses torch 1.13 can export); null otherwise.
expect.json keys: name, family, note (how the entry was made small), inputs, params, buffers, macs,
macs_by_op, macs_from_hooks, hooks_exact, files {trace, script|null}, file_bytes, script_error,
methods (the method analysed, and all methods when it is not forward), aten_ops {trace, script},
check, output_shapes, onnx, seconds.

To add an entry, add one line to ZOO: E(name, family, builder, inputs, exact=..., note=...).
"""

import argparse
import inspect
import json
import math
import os
import re
import sys
import time
import warnings
import zlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.models as tvm

from torch_zoo_check import eager_expectations, flat_tensors, graph_kinds, max_diff, read_back  # noqa: E402

NUM_CLASSES = 10


# --------------------------------------------------------------------------------------------------
# Inputs: float tensors (randn) and int64 token ids (randint in [0, high)).


def f(*shape):
    return ("float32", list(shape), None)


def ids(high, *shape):
    return ("int64", list(shape), high)


def unit(*shape):
    """Floats uniform in [0, 1): probabilities, and a loss's log arguments kept finite."""
    return ("float32", list(shape), "unit")


def img(h, w=None, c=3):
    return [f(1, c, h, w or h)]


# --------------------------------------------------------------------------------------------------
# Narrowing: the same torchvision module with every channel count divided by `div`.


def narrow(model, div, ceil=False):
    """Replaces every Conv2d / Conv3d / BatchNorm2d / BatchNorm3d / Linear of a torchvision CNN by the same
    layer (same class, so subclasses such as the video ResNets' Conv3DNoTemporal stay themselves) with its
    channel counts divided by `div` (3 image channels kept; NUM_CLASSES outputs of a Linear or of a
    1x1 classifier conv kept; groups kept, or equal to the channels for depthwise convs). Valid for modules
    whose forward does not compute channel counts (ResNet family, VGG, AlexNet, GoogLeNet, Inception3,
    the segmentation heads, video ResNets, S3D): concatenations of narrowed branches stay consistent
    because every channel count of these nets is a multiple of `div`. With ceil=True a count that is not
    a multiple of `div` is rounded up instead of rejected; that is only valid for nets without channel
    concatenation (R(2+1)D's computed mid-planes 45, 230, ...), where any fixed map n -> c(n) keeps
    every residual sum and layer-to-layer hand-over consistent."""

    def c(n):
        if n == 3:
            return n
        if ceil:
            return -(-n // div)
        assert n % div == 0, f"{n} channels not divisible by {div}"
        return n // div

    def same_class(m, base, *args):
        new = type(m).__new__(type(m))
        base.__init__(new, *args)
        return new

    for parent in list(model.modules()):
        for name, m in list(parent.named_children()):
            if isinstance(m, (nn.Conv2d, nn.Conv3d)):
                base = nn.Conv2d if isinstance(m, nn.Conv2d) else nn.Conv3d
                g = c(m.in_channels) if m.groups == m.in_channels and m.groups > 1 else m.groups
                classifier = m.out_channels == NUM_CLASSES and all(k == 1 for k in m.kernel_size)
                out = m.out_channels if classifier else c(m.out_channels)
                new = same_class(m, base, c(m.in_channels), out, m.kernel_size, m.stride, m.padding,
                                 m.dilation, g, m.bias is not None, m.padding_mode)
            elif isinstance(m, (nn.BatchNorm2d, nn.BatchNorm3d)):
                base = nn.BatchNorm2d if isinstance(m, nn.BatchNorm2d) else nn.BatchNorm3d
                new = same_class(m, base, c(m.num_features), m.eps, m.momentum, m.affine, m.track_running_stats)
            elif isinstance(m, nn.Linear):
                out = m.out_features if m.out_features == NUM_CLASSES else c(m.out_features)
                new = same_class(m, nn.Linear, c(m.in_features), out, m.bias is not None)
            else:
                assert not list(m.parameters(recurse=False)), f"narrow: unhandled {type(m).__name__}"
                continue
            setattr(parent, name, new)
    return model


def regnet(depth, w_0, w_a, w_m, group_width, se_ratio, div):
    """torchvision RegNet from the builder's init params, widths and group widths divided by div."""
    from torchvision.models.regnet import BlockParams, RegNet
    bp = BlockParams.from_init_params(depth=depth, w_0=w_0, w_a=w_a, w_m=w_m, group_width=group_width,
                                      se_ratio=se_ratio)
    assert all(w % div == 0 for w in bp.widths) and all(g % div == 0 for g in bp.group_widths)
    bp.widths = [w // div for w in bp.widths]
    bp.group_widths = [g // div for g in bp.group_widths]
    return RegNet(bp, num_classes=NUM_CLASSES, stem_width=32 // div)


def efficientnet(arch, div, **conf):
    """torchvision EfficientNet with the builder's block settings; for V1 width_mult is applied by the
    config itself (conf), for V2 (no width_mult) channels are divided by div."""
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
    setting, last = _efficientnet_conf(arch, **conf)
    if div > 1:
        for s in setting:
            s.input_channels //= div
            s.out_channels //= div
        last //= div
    return EfficientNet(setting, dropout=0.2, stochastic_depth_prob=0.0, num_classes=NUM_CLASSES,
                        last_channel=last)


def convnext_tiny(div):
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    d = [96 // div, 192 // div, 384 // div, 768 // div]
    setting = [CNBlockConfig(d[0], d[1], 3), CNBlockConfig(d[1], d[2], 3), CNBlockConfig(d[2], d[3], 9),
               CNBlockConfig(d[3], None, 3)]
    return ConvNeXt(setting, stochastic_depth_prob=0.0, num_classes=NUM_CLASSES)


def swin(v2):
    from torchvision.models import swin_transformer as st
    extra = dict(block=st.SwinTransformerBlockV2, downsample_layer=st.PatchMergingV2) if v2 else {}
    # 64x64 input, patch 4: stages at 16x16, 8x8, 4x4, 2x2; window 4 so stages 1-2 shift (torch.roll),
    # stages 3-4 have window >= feature size (no shift; stage 4 padded).
    return st.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2, 2, 2], num_heads=[2, 2, 4, 4],
                              window_size=[4, 4], stochastic_depth_prob=0.0, num_classes=NUM_CLASSES, **extra)


def segmentation(builder, div, aux):
    """torchvision.models.segmentation builder (random weights, no backbone weights), NUM_CLASSES
    classes, narrowed by div. The model keeps its IntermediateLayerGetter backbone and returns the
    OrderedDict {"out": ...} (plus "aux" with aux=True) that these models return."""
    kw = dict(weights=None, weights_backbone=None, num_classes=NUM_CLASSES)
    if aux is not None:
        kw["aux_loss"] = aux
    return narrow(getattr(tvm.segmentation, builder)(**kw), div)


def mvit(builder, div, spatial, temporal):
    """torchvision.models.video.mvit_v1_b / mvit_v2_s with the builder's own block table (16 blocks,
    heads, q/kv kernels and strides), every block's input/output channels divided by div (head dim
    96/div in every stage) and the given spatial_size / temporal_size (the positional embeddings are
    sized for them). The builder builds MViT from its table in one call and fixes spatial_size=(224, 224),
    temporal_size=16 itself, so both are changed by wrapping the MViT class for that call."""
    from torchvision.models.video import mvit as mod
    real = mod.MViT

    def small(block_setting, **kw):
        for b in block_setting:
            assert b.input_channels % div == 0 and b.output_channels % div == 0
            b.input_channels //= div
            b.output_channels //= div
        kw.update(spatial_size=spatial, temporal_size=temporal)  # the builder passes (224, 224), 16
        return real(block_setting=block_setting, **kw)

    mod.MViT = small
    try:
        return getattr(tvm.video, builder)(weights=None, num_classes=NUM_CLASSES, stochastic_depth_prob=0.0)
    finally:
        mod.MViT = real


# --------------------------------------------------------------------------------------------------
# Hand-written models


class BertLike(nn.Module):
    """BERT-style encoder: token + learned positional embedding, nn.TransformerEncoder, LN, MLM head."""

    def __init__(self, vocab=100, d=32, heads=4, ffn=64, layers=2, max_len=16):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, max_len, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model=d, nhead=heads, dim_feedforward=ffn, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, input_ids):
        x = self.tok(input_ids) + self.pos[:, : input_ids.size(1)]
        return self.head(self.norm(self.encoder(x)))


class GPT2Block(nn.Module):
    def __init__(self, d, heads, ffn, n_ctx):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, ffn), nn.GELU(approximate="tanh"), nn.Linear(ffn, d))
        self.register_buffer("bias", torch.tril(torch.ones(n_ctx, n_ctx, dtype=torch.bool)).view(1, 1, n_ctx, n_ctx))

    def forward(self, x):
        b, t, d = x.size()
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        att = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        att = att.masked_fill(~self.bias[:, :, :t, :t], float("-inf"))
        y = torch.matmul(torch.softmax(att, dim=-1), v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.c_proj(y)
        return x + self.mlp(self.ln_2(x))


class GPT2Like(nn.Module):
    """GPT-2-style decoder: pre-LN blocks with hand-written causal attention, LM head tied to wte."""

    def __init__(self, vocab=100, d=32, heads=4, ffn=128, layers=2, n_ctx=16):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(n_ctx, d)
        self.h = nn.ModuleList([GPT2Block(d, heads, ffn, n_ctx) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)

    def forward(self, input_ids):
        pos = torch.arange(input_ids.size(1), device=input_ids.device).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)  # tied LM head: one shared tensor


class RNNLM(nn.Module):
    """Embedding -> 2-layer LSTM or GRU (batch_first) -> Linear over the vocabulary."""

    def __init__(self, cell, vocab=100, emb=16, hidden=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.rnn = cell(emb, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, input_ids):
        out, _ = self.rnn(self.emb(input_ids))
        return self.head(out)


class VectorNorms(nn.Module):
    """torch.linalg.vector_norm as torch 2.x's F.normalize calls it (Swin V2's cosine attention): ord 2 over
    one dim, ord 1 over a dim tuple, and over every dim (dim=None)."""

    def forward(self, x):
        n = x / torch.linalg.vector_norm(x, 2, dim=-1, keepdim=True).clamp_min(1e-12)
        return n + torch.linalg.vector_norm(x, 1, dim=(1,), keepdim=True) + torch.linalg.vector_norm(x)


def double_conv(i, o):
    return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                         nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


class UNet(nn.Module):
    """Two-level UNet: max-pool down, ConvTranspose2d (stride 2) up, torch.cat skip connections."""

    def __init__(self, c=8, out=2):
        super().__init__()
        self.inc = double_conv(3, c)
        self.down1 = double_conv(c, 2 * c)
        self.bottom = double_conv(2 * c, 4 * c)
        self.up1 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.dec1 = double_conv(4 * c, 2 * c)
        self.up2 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.dec2 = double_conv(2 * c, c)
        self.outc = nn.Conv2d(c, out, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(F.max_pool2d(x1, 2))
        x3 = self.bottom(F.max_pool2d(x2, 2))
        y = self.dec1(torch.cat([self.up1(x3), x2], dim=1))
        y = self.dec2(torch.cat([self.up2(y), x1], dim=1))
        return self.outc(y)


class ContrastiveHead(nn.Module):
    """CLIP's similarity head: both embeddings projected and normalised, scaled by a learned 0-d temperature
    (logit_scale, a parameter of rank 0 applied elementwise)."""

    def __init__(self, d=8, e=4):
        super().__init__()
        self.image_proj = nn.Linear(d, e, bias=False)
        self.text_proj = nn.Linear(d, e, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(2.6592))

    def forward(self, image: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        a = F.normalize(self.image_proj(image), dim=-1)
        b = F.normalize(self.text_proj(text), dim=-1)
        return self.logit_scale.exp() * a @ b.t()


class DictHeads(nn.Module):
    """Multi-head model returning Dict[str, Tensor] (a shared conv trunk, a classification head and a
    dense head), as detection/segmentation-style user code does."""

    def __init__(self, c=8):
        super().__init__()
        self.trunk = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
                                   nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.ReLU())
        self.cls = nn.Linear(2 * c, NUM_CLASSES)
        self.dense = nn.Conv2d(2 * c, 4, 1)

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        feat = self.trunk(x)
        logits = self.cls(feat.mean(dim=(2, 3)))
        return {"logits": logits, "dense": self.dense(feat), "probs": torch.softmax(logits, dim=1)}


class TupleListOut(nn.Module):
    """FPN-style model returning Tuple[Tensor, List[Tensor]]: a pooled embedding and the feature maps of
    three stages (a list built in a loop over an nn.ModuleList)."""

    def __init__(self, c=8):
        super().__init__()
        self.stages = nn.ModuleList([nn.Sequential(nn.Conv2d(i, o, 3, stride=2, padding=1), nn.ReLU())
                                     for i, o in ((3, c), (c, 2 * c), (2 * c, 4 * c))])
        self.lateral = nn.ModuleList([nn.Conv2d(k * c, c, 1) for k in (1, 2, 4)])
        self.embed = nn.Linear(4 * c, 16)

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, List[torch.Tensor]]:
        feats: List[torch.Tensor] = []
        for stage, lat in zip(self.stages, self.lateral):
            x = stage(x)
            feats.append(lat(x))
        return self.embed(x.flatten(2).mean(dim=2)), feats


class LossHead(nn.Module):
    """A loss in forward, as models called with labels have it: loss(head(x), target), or loss(x, target...)
    when there is no head (features=None)."""

    def __init__(self, loss, features=None, classes=5):
        super().__init__()
        self.head = nn.Linear(features, classes) if features else nn.Identity()
        self.loss = loss

    def forward(self, x, target):
        return self.loss(self.head(x), target)


class PairLoss(nn.Module):
    """A loss of two inputs and a target (margin ranking, cosine embedding)."""

    def __init__(self, loss):
        super().__init__()
        self.loss = loss

    def forward(self, x1, x2, target):
        return self.loss(x1, x2, target)


class NllDirect(nn.Module):
    """aten::nll_loss2d and aten::nll_loss as called directly (F.nll_loss calls nll_loss_nd)."""

    def forward(self, x, t, y, u):
        return torch._C._nn.nll_loss2d(x, t, None, 2, -100) + torch._C._nn.nll_loss(y, u, None, 1, -100)


class LogSoftmaxNll(nn.Module):
    def forward(self, x, t):
        return F.nll_loss(F.log_softmax(x, 1), t)


def class_weight(n):
    return torch.linspace(0.5, 1.5, n)


def tel(**kw):
    return nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, **kw)


def tdl(**kw):
    return nn.TransformerDecoderLayer(d_model=16, nhead=2, dim_feedforward=32, **kw)


# --------------------------------------------------------------------------------------------------
# The zoo: one line per entry.


@dataclass
class E:
    name: str
    family: str
    build: Callable[[], nn.Module]
    inputs: list  # [(dtype, shape, high)], one per forward tensor argument, in order
    exact: bool = False  # hook MACs must equal dispatch MACs (no functional contraction)
    note: str = ""
    onnx: bool = False  # also torch.onnx.export it (opset 13) to NAME.onnx (the losses torch.onnx can export)


CNN = dict(exact=True)
RNN_IN = [f(5, 1, 8)]        # seq-first [T, N, I]
RNN_IN_BF = [f(1, 5, 8)]     # batch_first [N, T, I]

ZOO: List[E] = [
    # torchvision classification families
    E("resnet18", "resnet", lambda: narrow(tvm.resnet18(num_classes=10), 8), img(64), **CNN, note="channels/8"),
    E("resnet50", "resnet", lambda: narrow(tvm.resnet50(num_classes=10), 8), img(64), **CNN, note="bottleneck, channels/8"),
    E("resnext50_32x4d", "resnext", lambda: narrow(tvm.resnext50_32x4d(num_classes=10), 4), img(64), **CNN,
      note="channels/4, 32 groups kept (1..8 channels per group)"),
    E("wide_resnet50_2", "wide_resnet", lambda: narrow(tvm.wide_resnet50_2(num_classes=10), 8), img(64), **CNN, note="channels/8"),
    E("vgg11_bn", "vgg", lambda: narrow(tvm.vgg11_bn(num_classes=10), 16), img(32), **CNN,
      note="channels/16, classifier Linear-ReLU-Dropout x2 + Linear at 1568->256->256->10"),
    E("alexnet", "alexnet", lambda: narrow(tvm.alexnet(num_classes=10), 8), img(64), **CNN, note="channels/8"),
    E("densenet121", "densenet", lambda: tvm.DenseNet(growth_rate=4, block_config=(6, 12, 24, 16), num_init_features=8,
                                                     num_classes=10), img(64), **CNN, note="growth 4, init 8, blocks 6-12-24-16"),
    E("googlenet", "googlenet", lambda: narrow(tvm.googlenet(num_classes=10, aux_logits=False, init_weights=False), 8),
      img(64), **CNN, note="channels/8, no aux heads"),
    E("inception_v3", "inception", lambda: narrow(tvm.inception_v3(num_classes=10, aux_logits=False, init_weights=False), 8),
      img(75), **CNN, note="channels/8, no aux head, 75x75 (the minimum)"),
    E("mobilenet_v2", "mobilenet_v2", lambda: tvm.mobilenet_v2(num_classes=10, width_mult=0.25), img(64), **CNN, note="width 0.25"),
    E("mobilenet_v3_small", "mobilenet_v3", lambda: tvm.mobilenet_v3_small(num_classes=10, width_mult=0.5), img(64), **CNN, note="width 0.5"),
    E("mobilenet_v3_large", "mobilenet_v3", lambda: tvm.mobilenet_v3_large(num_classes=10, width_mult=0.25), img(64), **CNN, note="width 0.25"),
    E("efficientnet_b0", "efficientnet", lambda: efficientnet("efficientnet_b0", 1, width_mult=0.25, depth_mult=1.0), img(64), **CNN,
      note="width 0.25"),
    E("efficientnet_v2_s", "efficientnet", lambda: efficientnet("efficientnet_v2_s", 8), img(64), **CNN, note="channels/8, depths 2-4-4-6-9-15"),
    E("regnet_y_400mf", "regnet", lambda: regnet(16, 48, 27.89, 2.09, 8, 0.25, 4), img(64), **CNN, note="widths/4, SE"),
    E("regnet_x_400mf", "regnet", lambda: regnet(22, 24, 24.48, 2.54, 16, None, 4), img(64), **CNN, note="widths/4"),
    E("mnasnet0_5", "mnasnet", lambda: tvm.mnasnet0_5(num_classes=10), img(64), **CNN),
    E("shufflenet_v2_x0_5", "shufflenet_v2", lambda: tvm.shufflenet_v2_x0_5(num_classes=10), img(64), **CNN),
    E("squeezenet1_0", "squeezenet", lambda: tvm.squeezenet1_0(num_classes=10), img(64), **CNN),
    E("squeezenet1_1", "squeezenet", lambda: tvm.squeezenet1_1(num_classes=10), img(64), **CNN),
    E("convnext_tiny", "convnext", lambda: convnext_tiny(8), img(64), **CNN, note="dims/8 (12-24-48-96), depths 3-3-9-3"),
    E("vit", "vit", lambda: tvm.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16,
                                                   mlp_dim=32, num_classes=10), img(32), note="32x32, patch 8, 2 layers, hidden 16"),
    E("swin", "swin", lambda: swin(False), img(64), note="embed 16, depths 2-2-2-2, window 4 (shifted in stages 1-2)"),
    E("swin_v2", "swin", lambda: swin(True), img(64), note="V2 blocks and patch merging, as swin"),
    E("maxvit", "maxvit", lambda: tvm.MaxVit(input_size=(64, 64), stem_channels=8, partition_size=2,
                                             block_channels=[8, 16, 32, 64], block_layers=[2, 2, 5, 2], head_dim=8,
                                             stochastic_depth_prob=0.0, num_classes=10), img(64),
      note="64x64, partition 2, channels 8-64, head dim 8, layers 2-2-5-2"),
    # torchvision segmentation: IntermediateLayerGetter backbone, OrderedDict {"out"[, "aux"]}, bilinear upsampling
    E("fcn_resnet50", "fcn", lambda: segmentation("fcn_resnet50", 8, True), img(64), **CNN,
      note="channels/8, dilated ResNet-50 (output stride 8), aux head on layer3: out + aux"),
    E("deeplabv3_resnet50", "deeplabv3", lambda: segmentation("deeplabv3_resnet50", 8, False), img(64), **CNN,
      note="channels/8, ASPP rates 12-24-36 + image pooling, no aux head: out only"),
    E("deeplabv3_mobilenet_v3_large", "deeplabv3", lambda: segmentation("deeplabv3_mobilenet_v3_large", 4, False), img(64),
      **CNN, note="channels/4, dilated MobileNetV3-Large (output stride 16), no aux head: out only"),
    E("lraspp_mobilenet_v3_large", "lraspp", lambda: segmentation("lraspp_mobilenet_v3_large", 4, None), img(64), **CNN,
      note="channels/4, LR-ASPP head on C2 (low) and C5 (high): out"),
    # torchvision video classification: [N, C, T, H, W] input
    E("r3d_18", "video_resnet", lambda: narrow(tvm.video.r3d_18(num_classes=10), 8), [f(1, 3, 4, 32, 32)], **CNN,
      note="channels/8, 3x3x3 convs, T 4 -> 1"),
    E("mc3_18", "video_resnet", lambda: narrow(tvm.video.mc3_18(num_classes=10), 8), [f(1, 3, 4, 32, 32)], **CNN,
      note="channels/8, 3D conv in layer1, Conv3DNoTemporal (1x3x3) after"),
    E("r2plus1d_18", "video_resnet", lambda: narrow(tvm.video.r2plus1d_18(num_classes=10), 8, ceil=True),
      [f(1, 3, 4, 32, 32)], **CNN, note="channels/8 rounded up (computed mid-planes 45, 144, 230, ... -> 6, 18, 29, ...)"),
    E("s3d", "s3d", lambda: narrow(tvm.video.s3d(num_classes=10), 8), [f(1, 3, 13, 209, 209)], **CNN,
      note="channels/8; 13x209x209 is the minimum for the fixed AvgPool3d((2, 7, 7)) head"),
    E("mvit_v1_b", "mvit", lambda: mvit("mvit_v1_b", 8, (64, 64), 4), [f(1, 3, 4, 64, 64)],
      note="builder's 16-block table, channels/8 (head dim 12), spatial_size 64, temporal_size 4: tokens 1+2x16x16"),
    E("mvit_v2_s", "mvit", lambda: mvit("mvit_v2_s", 8, (64, 64), 4), [f(1, 3, 4, 64, 64)],
      note="as mvit_v1_b; relative position embeddings (einsum), residual pooling, projection after attention"),
    # language models
    E("bert", "transformer_lm", lambda: BertLike(), [ids(100, 1, 16)], note="nn.TransformerEncoder, d 32, 4 heads, 2 layers"),
    E("gpt2", "transformer_lm", lambda: GPT2Like(), [ids(100, 1, 16)], note="hand causal attention, tied LM head"),
    E("lstm_lm", "rnn_lm", lambda: RNNLM(nn.LSTM), [ids(100, 1, 16)]),
    E("gru_lm", "rnn_lm", lambda: RNNLM(nn.GRU), [ids(100, 1, 16)]),
    # container outputs (traced with strict=False)
    E("dict_out", "container_out", lambda: DictHeads(), img(16), note="forward -> Dict[str, Tensor] (3 entries)"),
    E("tuple_list_out", "container_out", lambda: TupleListOut(), img(16),
      note="forward -> Tuple[Tensor, List[Tensor]] (embedding, 3 feature maps)"),
    # UNet
    E("unet", "unet", lambda: UNet(), img(32), **CNN),
    E("contrastive_head", "contrastive", lambda: ContrastiveHead(), [f(3, 8), f(5, 8)],
      note="a 0-d parameter (CLIP's logit_scale): params 2*8*4 + 1"),
    # every torch.nn layer with parameters, bare
    E("linear", "nn_layer", lambda: nn.Linear(8, 4), [f(2, 8)], **CNN),
    E("linear_3d", "nn_layer", lambda: nn.Linear(8, 4), [f(2, 3, 8)], **CNN),
    E("bilinear", "nn_layer", lambda: nn.Bilinear(4, 5, 3), [f(2, 4), f(2, 5)], **CNN),
    E("conv1d", "nn_layer", lambda: nn.Conv1d(3, 4, 3), [f(1, 3, 16)], **CNN),
    E("conv2d", "nn_layer", lambda: nn.Conv2d(3, 4, 3), [f(1, 3, 8, 8)], **CNN),
    E("conv2d_groups", "nn_layer", lambda: nn.Conv2d(4, 8, 3, stride=2, padding=2, dilation=2, groups=2), [f(1, 4, 9, 9)], **CNN),
    E("conv2d_depthwise", "nn_layer", lambda: nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False), [f(1, 4, 8, 8)], **CNN),
    E("conv3d", "nn_layer", lambda: nn.Conv3d(3, 4, 3), [f(1, 3, 4, 6, 6)], **CNN),
    E("conv_transpose1d", "nn_layer", lambda: nn.ConvTranspose1d(3, 4, 3, stride=2), [f(1, 3, 8)], **CNN),
    E("conv_transpose2d", "nn_layer", lambda: nn.ConvTranspose2d(3, 4, 3, stride=2), [f(1, 3, 6, 6)], **CNN),
    E("conv_transpose2d_groups", "nn_layer", lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1,
                                                                       groups=2, dilation=2), [f(1, 4, 5, 5)], **CNN),
    E("conv_transpose3d", "nn_layer", lambda: nn.ConvTranspose3d(3, 4, 2, stride=2), [f(1, 3, 3, 4, 4)], **CNN),
    E("embedding", "nn_layer", lambda: nn.Embedding(20, 8), [ids(20, 2, 5)]),
    E("embedding_bag", "nn_layer", lambda: nn.EmbeddingBag(20, 8, mode="mean"), [ids(20, 2, 5)]),
    E("batchnorm1d", "nn_layer", lambda: nn.BatchNorm1d(4), [f(2, 4, 6)]),
    E("batchnorm2d", "nn_layer", lambda: nn.BatchNorm2d(4), [f(2, 4, 5, 5)]),
    E("batchnorm3d", "nn_layer", lambda: nn.BatchNorm3d(4), [f(1, 4, 3, 4, 4)]),
    E("layernorm", "nn_layer", lambda: nn.LayerNorm(8), [f(2, 5, 8)]),
    E("groupnorm", "nn_layer", lambda: nn.GroupNorm(2, 4), [f(1, 4, 5, 5)]),
    E("instancenorm1d", "nn_layer", lambda: nn.InstanceNorm1d(4, affine=True), [f(1, 4, 8)]),
    E("instancenorm2d", "nn_layer", lambda: nn.InstanceNorm2d(4, affine=True), [f(1, 4, 5, 5)]),
    E("prelu", "nn_layer", lambda: nn.PReLU(4), [f(1, 4, 5, 5)]),
    E("vector_norm", "nn_layer", lambda: VectorNorms(), [f(2, 3, 8)], note="torch.linalg.vector_norm"),
    E("rnn", "nn_layer", lambda: nn.RNN(8, 16, num_layers=2), RNN_IN),
    E("rnn_bi_bf", "nn_layer", lambda: nn.RNN(8, 16, num_layers=2, bidirectional=True, batch_first=True), RNN_IN_BF),
    E("lstm", "nn_layer", lambda: nn.LSTM(8, 16, num_layers=2), RNN_IN),
    E("lstm_bi_bf", "nn_layer", lambda: nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True), RNN_IN_BF),
    E("lstm_proj", "nn_layer", lambda: nn.LSTM(8, 16, proj_size=4), RNN_IN),
    E("gru", "nn_layer", lambda: nn.GRU(8, 16, num_layers=2), RNN_IN),
    E("gru_bi_bf", "nn_layer", lambda: nn.GRU(8, 16, num_layers=2, bidirectional=True, batch_first=True), RNN_IN_BF),
    E("rnn_cell", "nn_layer", lambda: nn.RNNCell(8, 16), [f(3, 8)]),
    E("lstm_cell", "nn_layer", lambda: nn.LSTMCell(8, 16), [f(3, 8)]),
    E("gru_cell", "nn_layer", lambda: nn.GRUCell(8, 16), [f(3, 8)]),
    E("mha", "nn_layer", lambda: nn.MultiheadAttention(16, 2), [f(5, 1, 16)] * 3),
    E("mha_bf", "nn_layer", lambda: nn.MultiheadAttention(16, 2, batch_first=True), [f(1, 5, 16), f(1, 4, 16), f(1, 4, 16)]),
    E("mha_kvdim", "nn_layer", lambda: nn.MultiheadAttention(16, 2, kdim=8, vdim=12), [f(5, 1, 16), f(4, 1, 8), f(4, 1, 12)]),
    E("transformer", "nn_layer", lambda: nn.Transformer(d_model=16, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                                                        dim_feedforward=32), [f(6, 1, 16), f(4, 1, 16)]),
    E("transformer_bf_nf", "nn_layer", lambda: nn.Transformer(d_model=16, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                                                              dim_feedforward=32, batch_first=True, norm_first=True),
      [f(1, 6, 16), f(1, 4, 16)], note="batch_first, norm_first (pre-LN encoder and decoder)"),
    E("transformer_encoder_layer", "nn_layer", lambda: tel(batch_first=True), [f(1, 5, 16)], note="fast path when traced"),
    E("transformer_encoder_layer_nf", "nn_layer", lambda: tel(norm_first=True, activation="gelu"), [f(5, 1, 16)],
      note="seq-first, norm_first, gelu: never the fast path"),
    E("transformer_decoder_layer", "nn_layer", lambda: tdl(), [f(4, 1, 16), f(6, 1, 16)]),
    E("transformer_encoder", "nn_layer", lambda: nn.TransformerEncoder(tel(batch_first=True), 2, norm=nn.LayerNorm(16)),
      [f(1, 5, 16)]),
    E("transformer_decoder", "nn_layer", lambda: nn.TransformerDecoder(tdl(), 2, norm=nn.LayerNorm(16)),
      [f(4, 1, 16), f(6, 1, 16)]),
    # losses in forward (issue 39): every aten loss op the importer lowers, scripted and traced; onnx=True
    # where torch 1.13's exporter can export it (label smoothing, probability targets, an unbatched input and
    # the pointwise losses other than BCE with logits and KL divergence it cannot)
    E("loss_ce", "loss", lambda: LossHead(nn.CrossEntropyLoss(), 8), [f(4, 8), ids(5, 4)], onnx=True,
      note="Linear(8, 5) + cross entropy, mean"),
    E("loss_ce_weight_sum", "loss", lambda: LossHead(nn.CrossEntropyLoss(class_weight(5), reduction="sum",
                                                                          ignore_index=1)),
      [f(4, 5), ids(5, 4)], onnx=True, note="class weights, ignore_index 1, sum"),
    E("loss_ce_kdim_none", "loss", lambda: LossHead(nn.CrossEntropyLoss(reduction="none")), [f(2, 5, 3, 4), ids(5, 2, 3, 4)],
      onnx=True, note="(N, C, d1, d2) scores, no reduction"),
    E("loss_ce_unbatched", "loss", lambda: LossHead(nn.CrossEntropyLoss(reduction="none")), [f(5), ids(5)],
      note="(C) scores, () target"),
    E("loss_ce_probs", "loss", lambda: LossHead(nn.CrossEntropyLoss()), [f(4, 5), f(4, 5)],
      note="probability (float) targets"),
    E("loss_ce_smoothing", "loss", lambda: LossHead(nn.CrossEntropyLoss(label_smoothing=0.1), 8), [f(4, 8), ids(5, 4)],
      note="Linear(8, 5) + cross entropy, label smoothing 0.1"),
    E("loss_ce_smoothing_weight_none", "loss",
      lambda: LossHead(nn.CrossEntropyLoss(class_weight(5), reduction="none", label_smoothing=0.2)),
      [f(2, 5, 3), ids(5, 2, 3)], note="class weights, label smoothing 0.2, (N, C, d1), no reduction"),
    E("loss_nll", "loss", lambda: LogSoftmaxNll(), [f(4, 5), ids(5, 4)], onnx=True, note="log_softmax + nll_loss"),
    E("loss_nll_direct", "loss", lambda: NllDirect(), [f(2, 5, 3, 3), ids(5, 2, 3, 3), f(4, 5), ids(5, 4)],
      note="aten::nll_loss2d (sum) + aten::nll_loss (mean)"),
    E("loss_mse", "loss", lambda: LossHead(nn.MSELoss()), [f(4, 5), f(4, 5)]),
    E("loss_mse_broadcast", "loss", lambda: LossHead(nn.MSELoss(reduction="none")), [f(3, 1), f(1, 4)],
      note="input and target broadcast (torch warns)"),
    E("loss_l1", "loss", lambda: LossHead(nn.L1Loss(reduction="sum")), [f(2, 3), f(2, 3)]),
    E("loss_smooth_l1", "loss", lambda: LossHead(nn.SmoothL1Loss(reduction="none", beta=0.5)), [f(2, 3, 4), f(2, 3, 4)]),
    E("loss_huber", "loss", lambda: LossHead(nn.HuberLoss(delta=2.0)), [f(10), f(10)]),
    E("loss_bce", "loss", lambda: LossHead(nn.BCELoss()), [unit(4, 5), unit(4, 5)],
      note="no weight: torch 1.13 cannot trace F.binary_cross_entropy with one (_infer_size of traced sizes)"),
    E("loss_bce_logits", "loss", lambda: LossHead(nn.BCEWithLogitsLoss(weight=class_weight(5),
                                                                       pos_weight=class_weight(5) * 2)),
      [f(4, 5), unit(4, 5)], onnx=True, note="weight and pos_weight per class"),
    E("loss_kl_batchmean", "loss", lambda: LossHead(nn.KLDivLoss(reduction="batchmean")), [f(4, 5), unit(4, 5)],
      onnx=True),
    E("loss_kl_log_target", "loss", lambda: LossHead(nn.KLDivLoss(reduction="sum", log_target=True)), [f(4, 5), f(4, 5)],
      onnx=True),
    E("loss_soft_margin", "loss", lambda: LossHead(nn.SoftMarginLoss()), [f(6), f(6)]),
    E("loss_margin_ranking", "loss", lambda: PairLoss(nn.MarginRankingLoss(margin=0.1, reduction="none")),
      [f(6), f(6), f(6)]),
    E("loss_hinge_embedding", "loss", lambda: LossHead(nn.HingeEmbeddingLoss(reduction="sum")), [f(2, 3), f(2, 3)]),
    E("loss_cosine_embedding", "loss", lambda: PairLoss(nn.CosineEmbeddingLoss()), [f(3, 8), f(3, 8), f(3)]),
    E("loss_poisson_full", "loss", lambda: LossHead(nn.PoissonNLLLoss(log_input=False, full=True, reduction="none")),
      [unit(4, 5), unit(4, 5)]),
]


# --------------------------------------------------------------------------------------------------


def write_json(path, obj):
    """indent=1, with lists of scalars (shapes, op lists) kept on one line."""
    text = json.dumps(obj, indent=1)
    text = re.sub(r"\[\n\s*([^\[\]{}]*?)\n\s*\]", lambda m: "[" + re.sub(r"\n\s*", " ", m.group(1)) + "]", text)
    with open(path, "w") as fp:
        fp.write(text + "\n")


def seed_of(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def perturb(model, seed):
    """Small per-tensor noise on every parameter and float buffer (running_var stays positive)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1e-3 * torch.randn(p.shape, generator=g))
        for b in model.buffers():
            if b.is_floating_point():
                b.add_(1e-3 * torch.rand(b.shape, generator=g))


def make_inputs(spec, seed):
    g = torch.Generator().manual_seed(seed)
    out = []
    for dtype, shape, high in spec:
        if dtype == "int64":
            out.append(torch.randint(0, high, shape, generator=g, dtype=torch.int64))
        elif high == "unit":
            out.append(torch.rand(shape, generator=g))
        else:
            out.append(torch.randn(shape, generator=g))
    return out


def input_names(model, n):
    params = [p for p in inspect.signature(model.forward).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    assert len(params) >= n, f"forward has {len(params)} positional arguments, {n} inputs given"
    return [p.name for p in params[:n]]


def generate(e: E, out_dir):
    with warnings.catch_warnings():  # torchvision's scripting / meshgrid notices; nothing actionable here
        warnings.simplefilter("ignore")
        return _generate(e, out_dir)


def instantiate(e: E):
    """The entry's module (its seed, perturbed, eval mode), example inputs and forward's argument names: what
    every file of the entry is made from (also models/reference_counts.py and models/gpu_fixtures.py)."""
    seed = seed_of(e.name)
    torch.manual_seed(seed)
    model = e.build()
    perturb(model, seed + 1)
    model.eval()
    inputs = make_inputs(e.inputs, seed + 2)
    return model, inputs, input_names(model, len(inputs))


def _generate(e: E, out_dir):
    t0 = time.time()
    model, inputs, names = instantiate(e)
    meta = [{"name": n, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
            for n, t in zip(names, inputs)]
    extra = {"flopwise_inputs.json": json.dumps(meta)}

    params = sum(p.numel() for p in model.parameters())
    buffers = sum(b.numel() for b in model.buffers())
    macs_by_op, macs_hooks, eager_out = eager_expectations(model, inputs)
    macs = sum(macs_by_op.values())
    if macs_hooks > macs or (e.exact and macs_hooks != macs):
        raise AssertionError(f"{e.name}: hook MACs {macs_hooks} vs dispatch MACs {macs} (exact={e.exact})")
    for p in model.parameters():
        p.requires_grad_(False)

    files = {"trace": f"{e.name}.trace.pt", "script": None}
    with torch.no_grad():
        traced = torch.jit.trace(model, tuple(inputs), check_trace=False, strict=False)
    torch.jit.save(traced, os.path.join(out_dir, files["trace"]), _extra_files=extra)
    script_error = None
    try:
        scripted = torch.jit.script(model)
        torch.jit.save(scripted, os.path.join(out_dir, f"{e.name}.script.pt"), _extra_files=extra)
        files["script"] = f"{e.name}.script.pt"
    except Exception as ex:  # noqa: BLE001 - record and go on
        lines = [ln for ln in str(ex).strip().splitlines() if ln.strip()]
        script_error = f"{type(ex).__name__}: {lines[0] if lines else ''}"

    kinds, methods, check, sizes = {}, {}, {}, {}
    for kind, fname in files.items():
        if fname is None:
            kinds[kind] = []
            continue
        path = os.path.join(out_dir, fname)
        sizes[kind] = os.path.getsize(path)
        m, method, mnames, out = read_back(path, inputs)
        kinds[kind] = graph_kinds(m, method)
        methods[kind] = {"analysed": method, "all": list(mnames)} if method != "forward" else {"analysed": "forward"}
        check[f"{kind}_max_abs_diff"] = max_diff(out, eager_out)

    onnx_file = None
    if e.onnx:
        onnx_file = f"{e.name}.onnx"
        with torch.no_grad():
            torch.onnx.export(model, tuple(inputs), os.path.join(out_dir, onnx_file), opset_version=13,
                              input_names=names)

    expect = {
        "name": e.name,
        "family": e.family,
        "note": e.note,
        "inputs": meta,
        "params": params,
        "buffers": buffers,
        "macs": macs,
        "macs_by_op": macs_by_op,
        "macs_from_hooks": macs_hooks,
        "hooks_exact": e.exact,
        "files": files,
        "file_bytes": sizes,
        "script_error": script_error,
        "methods": methods,
        "aten_ops": kinds,
        "check": check,
        "output_shapes": [list(t.shape) for t in flat_tensors(eager_out)],
        "onnx": onnx_file,
        "seconds": round(time.time() - t0, 3),
    }
    write_json(os.path.join(out_dir, f"{e.name}.expect.json"), expect)
    return expect


def torchvision_modules():
    """{torchvision.models submodule name: [its builders]} for classification (resnet, vgg, ...),
    segmentation ("segmentation.fcn", ...) and video ("video.resnet", "video.mvit", ...)."""
    by_module = defaultdict(list)
    for prefix, package in (("", tvm), ("segmentation.", tvm.segmentation), ("video.", tvm.video)):
        for b in tvm.list_models(module=package):
            by_module[prefix + tvm.get_model_builder(b).__module__.split(".")[-1]].append(b)
    return by_module


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--only", nargs="+", action="extend", metavar="NAME", help="entries to generate (default: all)")
    ap.add_argument("--list", action="store_true", help="print the entries and exit")
    args = ap.parse_args()
    names = [e.name for e in ZOO]
    assert len(set(names)) == len(names), "duplicate zoo names"
    if args.list:
        for e in ZOO:
            print(f"{e.name:32s} {e.family:16s} {e.note}")
        return 0
    if not args.out:
        ap.error("--out is required")
    unknown = sorted(set(args.only or []) - set(names))
    if unknown:
        ap.error("unknown entries: " + ", ".join(unknown))
    os.makedirs(args.out, exist_ok=True)
    wanted = [e for e in ZOO if not args.only or e.name in args.only]

    t0 = time.time()
    results = []
    for e in wanted:
        r = generate(e, args.out)
        results.append(r)
        size = sum(r["file_bytes"].values())
        print(f"{e.name:32s} {r['seconds']:6.2f} s  params {r['params']:>9,}  macs {r['macs']:>12,}  "
              f"{size / 1e6:6.2f} MB  script {'ok' if r['files']['script'] else 'FAILED: ' + r['script_error']}",
              file=sys.stderr, flush=True)
    total = time.time() - t0

    ops = defaultdict(list)
    for r in results:
        for k in sorted(set(r["aten_ops"]["trace"]) | set(r["aten_ops"]["script"])):
            ops[k].append(r["name"])
    write_json(os.path.join(args.out, "aten_ops.json"), dict(sorted(ops.items())))

    # torchvision classification / segmentation / video modules without a zoo entry (e.g. a family a
    # later torchvision adds)
    modules_in_zoo = set()
    for e in ZOO:
        if e.family not in ("transformer_lm", "rnn_lm", "unet", "nn_layer", "container_out", "loss"):
            modules_in_zoo.add(e.family)
    tv_modules = torchvision_modules()
    family_of_module = {"resnet": "resnet", "vgg": "vgg", "alexnet": "alexnet", "densenet": "densenet",
                        "googlenet": "googlenet", "inception": "inception", "mobilenetv2": "mobilenet_v2",
                        "mobilenetv3": "mobilenet_v3", "efficientnet": "efficientnet", "regnet": "regnet",
                        "mnasnet": "mnasnet", "shufflenetv2": "shufflenet_v2", "squeezenet": "squeezenet",
                        "convnext": "convnext", "vision_transformer": "vit", "swin_transformer": "swin",
                        "maxvit": "maxvit", "segmentation.fcn": "fcn", "segmentation.deeplabv3": "deeplabv3",
                        "segmentation.lraspp": "lraspp", "video.resnet": "video_resnet", "video.mvit": "mvit",
                        "video.s3d": "s3d"}
    missing = {mod: builders for mod, builders in sorted(tv_modules.items())
               if family_of_module.get(mod) not in modules_in_zoo}
    for fam, present in (("maxvit", hasattr(tvm, "MaxVit")), ("swin_v2", hasattr(tvm, "swin_v2_t")),
                         ("video.mvit", hasattr(tvm.video, "mvit_v2_s")), ("video.s3d", hasattr(tvm.video, "s3d"))):
        if not present:
            missing[fam] = f"not in torchvision {torchvision.__version__}"

    zoo = {
        "names": [r["name"] for r in results],
        "missing": missing,
        "summary": {
            "count": len(results),
            "total_seconds": round(total, 2),
            "torch": torch.__version__,
            "torchvision": torchvision.__version__,
            "script_failed": {r["name"]: r["script_error"] for r in results if r["script_error"]},
            "seconds": {r["name"]: r["seconds"] for r in results},
        },
    }
    write_json(os.path.join(args.out, "zoo.json"), zoo)
    print(f"{len(results)} models in {total:.1f} s -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
