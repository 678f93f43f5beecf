"""flopwise.suite: the calibration suite. Random networks built of the blocks of common architectures, to
calibrate `--predict` on a device that has measured nothing yet, and to fill the gaps of one that has
(nn-Meter's method: kernels measured over sampled configurations rather than only over whole zoo models).

    import flopwise.suite
    flopwise.suite.calibrate_device("cpu.calibration.json")        # LibTorch on this CPU, end to end
    python3 -m flopwise.suite OUT --count 40 --onnx                # the networks as files, to measure yourself

Every network is drawn from a fixed seed: a kind (convolutional, transformer, recurrent or video), an input
size, and a random stack of that kind's blocks with random widths, kernel sizes, strides, expansions, groups,
activations, sequence lengths and heads. The blocks are those of published families (residual and bottleneck,
inverted residual with squeeze-excitation, dense concatenation, channel shuffle, fire, grouped, ConvNeXt,
Inception's parallel branches (factorized 1xk and kx1 convolutions, stride-1 pooling), multi-head, windowed
and causal attention, LSTM and GRU, 3-D and (2+1)-D convolutions); the configurations are random, not any
published model's. Random weights, no downloads; needs torch (any version with
torch.onnx.export and torch.jit.trace; Debian's 1.13 writes them here), imported only by this module.

bench/README.md ("Predicted latency") measures what the suite adds to a calibration, model families held out.
"""
import argparse
import json
import os
import random

import torch
from torch import nn

ACTS = {"relu": nn.ReLU, "relu6": nn.ReLU6, "hardswish": nn.Hardswish, "silu": nn.SiLU, "gelu": nn.GELU}


# --small: the sizes of models/torch_zoo.py's narrow models (Debian's LibTorch runs on reference BLAS):
# channels and widths / 4 (multiples of 4), inputs of 32 to 64 pixels, 8 to 32 tokens.
SMALL = False


def r8(x, most=768):
    q = 4 if SMALL else 8
    most = most // 4 if SMALL else most
    return min(most, max(q, int(round(x / q)) * q))


def pick(rng, full, small):
    return rng.choice(small if SMALL else full)


class ConvBN(nn.Sequential):
    def __init__(self, cin, cout, k, s=1, groups=1, act="relu", dims=2):
        conv = nn.Conv2d if dims == 2 else nn.Conv3d
        bn = nn.BatchNorm2d if dims == 2 else nn.BatchNorm3d
        pad = tuple(x // 2 for x in k) if isinstance(k, tuple) else k // 2
        layers = [conv(cin, cout, k, s, pad, groups=groups, bias=False), bn(cout)]
        if act:
            layers.append(ACTS[act]())
        super().__init__(*layers)


class Residual(nn.Module):
    def __init__(self, body, shortcut=None):
        super().__init__()
        self.body, self.shortcut = body, shortcut

    def forward(self, x):
        return self.body(x) + (self.shortcut(x) if self.shortcut is not None else x)


class SE(nn.Module):
    def __init__(self, c, r, act):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Conv2d(c, r8(c / r), 1), ACTS[act](), nn.Conv2d(r8(c / r), c, 1)

    def forward(self, x):
        s = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.fc2(self.act(self.fc1(s))))


class Dense(nn.Module):
    def __init__(self, cin, growth, layers):
        super().__init__()
        self.layers = nn.ModuleList()
        for i in range(layers):
            c = cin + i * growth
            self.layers.append(nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, 4 * growth, 1, bias=False),
                                             nn.BatchNorm2d(4 * growth), nn.ReLU(),
                                             nn.Conv2d(4 * growth, growth, 3, 1, 1, bias=False)))

    def forward(self, x):
        feats = [x]
        for layer in self.layers:
            feats.append(layer(torch.cat(feats, 1)))
        return torch.cat(feats, 1)


class Shuffle(nn.Module):
    def __init__(self, c, act):
        super().__init__()
        h = c // 2
        self.branch = nn.Sequential(ConvBN(h, h, 1, act=act), ConvBN(h, h, 3, groups=h, act=None),
                                    ConvBN(h, h, 1, act=act))

    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        y = torch.cat((a, self.branch(b)), 1)
        n, c, hh, ww = y.shape
        return y.view(n, 2, c // 2, hh, ww).transpose(1, 2).reshape(n, c, hh, ww)


class Fire(nn.Module):
    def __init__(self, cin, squeeze, expand):
        super().__init__()
        self.s = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU())
        self.e1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, 1, 1), nn.ReLU())

    def forward(self, x):
        s = self.s(x)
        return torch.cat((self.e1(s), self.e3(s)), 1)


class Inception(nn.Module):
    """GoogLeNet's and Inception's block: parallel branches on one input, concatenated (a 1x1; a 1x1 then a
    3x3 or 5x5; a 1x1 then a factorized 1xk and kx1; a 3x3 pooling of stride 1 then a 1x1)."""

    def __init__(self, branches):
        super().__init__()
        self.branches = nn.ModuleList(branches)

    def forward(self, x):
        return torch.cat([b(x) for b in self.branches], 1)


class ChannelsLastNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.LayerNorm(c)

    def forward(self, x):
        return self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self, c, k, ratio):
        super().__init__()
        self.dw, self.norm = nn.Conv2d(c, c, k, 1, k // 2, groups=c), nn.LayerNorm(c)
        self.fc1, self.act, self.fc2 = nn.Linear(c, ratio * c), nn.GELU(), nn.Linear(ratio * c, c)

    def forward(self, x):
        y = self.norm(self.dw(x).permute(0, 2, 3, 1))
        return x + self.fc2(self.act(self.fc1(y))).permute(0, 3, 1, 2)


def conv_net(rng):
    hw = pick(rng, [64, 96, 128, 160, 192, 224], [32, 48, 64])
    c = pick(rng, [16, 24, 32, 48, 64], [4, 8, 12, 16])
    act = rng.choice(list(ACTS))
    layers, desc = [ConvBN(3, c, 3, 2, act=act)], [f"stem 3->{c} s2"]
    size = hw // 2
    for _ in range(rng.randint(4, 9)):
        kind = rng.choice(["basic", "bottleneck", "inverted", "dense", "shuffle", "fire", "grouped", "convnext",
                           "inception", "pool", "down"])
        if size <= 4 and kind in ("pool", "down"):
            kind = "basic"
        if kind == "basic":
            co = r8(c * rng.choice([0.5, 1, 1.5, 2]))
            k = rng.choice([1, 3, 3, 5])
            layers.append(ConvBN(c, co, k, act=act))
        elif kind == "bottleneck":
            mid = r8(c * rng.choice([0.25, 0.5, 1]))
            co = r8(c * rng.choice([1, 2]))
            body = nn.Sequential(ConvBN(c, mid, 1, act=act), ConvBN(mid, mid, 3, act=act), ConvBN(mid, co, 1, act=None))
            layers.append(Residual(body, None if co == c else ConvBN(c, co, 1, act=None)))
        elif kind == "inverted":
            t, k, s = rng.choice([1, 3, 4, 6]), rng.choice([3, 3, 5, 7]), rng.choice([1, 1, 2]) if size > 4 else 1
            mid, co = r8(c * t), r8(c * rng.choice([1, 1, 1.5]))
            body = [ConvBN(c, mid, 1, act=act)] if t != 1 else []
            body.append(ConvBN(mid, mid, k, s, groups=mid, act=act))
            if rng.random() < 0.5:
                body.append(SE(mid, rng.choice([4, 16]), act))
            body.append(ConvBN(mid, co, 1, act=None))
            block = nn.Sequential(*body)
            layers.append(Residual(block) if s == 1 and co == c else block)
            size = (size + s - 1) // s
        elif kind == "dense":
            g, n = pick(rng, [12, 16, 24, 32], [4, 8]), rng.randint(2, 6)
            layers.append(Dense(c, g, n))
            co = c + g * n
        elif kind == "shuffle":
            co = c
            layers.append(Shuffle(c, act))
        elif kind == "fire":
            sq = r8(c * rng.choice([0.125, 0.25]))
            e = r8(c * rng.choice([0.5, 1]), 384)
            layers.append(Fire(c, sq, e))
            co = 2 * e
        elif kind == "grouped":
            g = rng.choice([2, 4, 8, 32])
            mid = max(g, (c * rng.choice([1, 2])) // g * g)
            co = c
            body = nn.Sequential(ConvBN(c, mid, 1, act=act), ConvBN(mid, mid, 3, groups=g, act=act),
                                 ConvBN(mid, c, 1, act=None))
            layers.append(Residual(body))
        elif kind == "inception":
            b, m, bp = r8(c * rng.choice([0.25, 0.5])), r8(c * rng.choice([0.25, 0.5])), r8(c * rng.choice([0.125, 0.25]))
            k, kf = rng.choice([3, 5]), rng.choice([3, 5, 7])
            pool = nn.MaxPool2d(3, 1, 1) if rng.random() < 0.6 else nn.AvgPool2d(3, 1, 1)
            layers.append(Inception([
                ConvBN(c, b, 1, act=act),
                nn.Sequential(ConvBN(c, m, 1, act=act), ConvBN(m, b, k, act=act)),
                nn.Sequential(ConvBN(c, m, 1, act=act), ConvBN(m, m, (1, kf), act=act), ConvBN(m, b, (kf, 1), act=act)),
                nn.Sequential(pool, ConvBN(c, bp, 1, act=act))]))
            co = 3 * b + bp
        elif kind == "convnext":
            co = c
            layers.append(ConvNeXt(c, rng.choice([3, 7]), rng.choice([2, 4])))
        elif kind == "pool":
            co = c
            layers.append(nn.MaxPool2d(3, 2, 1) if rng.random() < 0.5 else nn.AvgPool2d(2))
            size //= 2
        else:
            co = r8(c * rng.choice([1, 1.5, 2]))
            if rng.random() < 0.3:
                layers.append(nn.Sequential(ChannelsLastNorm(c), nn.Conv2d(c, co, 2, 2)))
            else:
                layers.append(ConvBN(c, co, 3, 2, act=act))
            size //= 2
        desc.append(f"{kind} {c}->{co} @{size}")
        c = co
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(c, pick(rng, [10, 100, 1000], [10, 100]))]
    return nn.Sequential(*layers), [("input", (1, 3, hw, hw), torch.float32)], desc


class Attention(nn.Module):
    """Hand-written multi-head attention (the language models' and Swin's way): q, k, v projections,
    batched matrix products, softmax; optional causal mask and windows of W tokens."""

    def __init__(self, d, heads, causal, window):
        super().__init__()
        self.h, self.causal, self.window = heads, causal, window
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        w = self.window or s
        x = x.reshape(b * (s // w), w, d)
        q, k, v = self.qkv(x).reshape(x.shape[0], w, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = (q @ k.transpose(-2, -1)) * (d // self.h) ** -0.5
        if self.causal:
            a = a.masked_fill(torch.ones(w, w, dtype=torch.bool).triu(1), float("-inf"))
        y = (a.softmax(-1) @ v).transpose(1, 2).reshape(b, s, d)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d, heads, ratio, causal, window, mha, act):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.mha = mha
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True) if mha else Attention(d, heads, causal, window)
        self.mlp = nn.Sequential(nn.Linear(d, ratio * d), ACTS[act](), nn.Linear(ratio * d, d))

    def forward(self, x):
        y = self.n1(x)
        x = x + (self.attn(y, y, y, need_weights=False)[0] if self.mha else self.attn(y))
        return x + self.mlp(self.n2(x))


class Transformer(nn.Module):
    def __init__(self, rng):
        super().__init__()
        self.tokens = rng.random() < 0.5
        hd = pick(rng, [32, 64], [8, 16])
        d = hd * rng.choice([2, 3, 4, 6, 8, 12])
        heads = d // hd
        self.window = rng.choice([0, 0, 7, 8]) if not self.tokens else 0
        if self.tokens:
            self.s = pick(rng, [16, 32, 48, 64, 96, 128, 256], [8, 16, 32])
            self.embed, self.pos = nn.Embedding(pick(rng, [1000, 8000, 30000], [100, 1000]), d), nn.Parameter(torch.randn(1, self.s, d))
        else:
            side = self.window * rng.choice([1, 2]) if self.window else pick(rng, [7, 8, 12, 14], [4, 7, 8])
            self.s, self.side = side * side, side
            self.p = 4 if SMALL else 16
            self.embed = nn.Conv2d(3, d, self.p, self.p)
            self.pos = nn.Parameter(torch.randn(1, self.s, d))
        mha = not self.window and rng.random() < 0.3
        causal = self.tokens and rng.random() < 0.5
        act = rng.choice(["gelu", "relu"])
        self.blocks = nn.Sequential(*[Block(d, heads, rng.choice([2, 4]), causal, self.window * self.window, mha, act)
                                      for _ in range(rng.randint(1, 4))])
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, pick(rng, [10, 1000, 8000], [10, 100, 1000])
                                                            if self.tokens else pick(rng, [1000], [10, 100]))
        self.desc = [f"{'tokens' if self.tokens else 'patches'} s={self.s} d={d} heads={heads} "
                     f"layers={len(self.blocks)} window={self.window} mha={mha} causal={causal}"]

    def inputs(self):
        if self.tokens:
            return [("ids", (1, self.s), torch.int64)]
        return [("input", (1, 3, self.p * self.side, self.p * self.side), torch.float32)]

    def forward(self, x):
        x = self.embed(x) if self.tokens else self.embed(x).flatten(2).transpose(1, 2)
        x = self.norm(self.blocks(x + self.pos))
        return self.head(x if self.tokens else x.mean(1))


class Recurrent(nn.Module):
    """An embedding, 1 to 4 recurrent layers (each its own LSTM or GRU module, of its own width, one or two
    directions), and a classifier over the vocabulary."""

    def __init__(self, rng):
        super().__init__()
        self.s = pick(rng, [8, 16, 32, 64], [8, 16])
        d = pick(rng, [64, 128, 256], [16, 32])
        vocab = pick(rng, [5000], [100, 1000])
        self.embed = nn.Embedding(vocab, d)
        self.rnns = nn.ModuleList()
        self.desc = []
        for _ in range(rng.randint(1, 4)):
            cell, h = rng.choice([nn.LSTM, nn.GRU]), pick(rng, [64, 128, 256, 512], [16, 32, 64])
            bi = rng.random() < 0.3
            self.rnns.append(cell(d, h, 1, batch_first=True, bidirectional=bi))
            self.desc.append(f"{cell.__name__} s={self.s} {d}->{h}{' bidirectional' if bi else ''}")
            d = h * (2 if bi else 1)
        self.head = nn.Linear(d, vocab)

    def inputs(self):
        return [("ids", (1, self.s), torch.int64)]

    def forward(self, x):
        x = self.embed(x)
        for rnn in self.rnns:
            x = rnn(x)[0]
        return self.head(x)


def video_net(rng):
    t0 = t = pick(rng, [4, 8], [4])
    side = pick(rng, [56, 64, 112], [16, 32])
    c, hw = pick(rng, [16, 32], [4, 8]), side // 2
    layers, desc = [ConvBN(3, c, (3, 7, 7), (1, 2, 2), dims=3)], [f"stem 3->{c}"]
    for _ in range(rng.randint(2, 5)):
        co = r8(c * rng.choice([1, 1.5, 2]))
        s = rng.choice([1, 1, 2]) if hw >= 8 and t >= 2 else 1
        if rng.random() < 0.5:
            body = nn.Sequential(ConvBN(c, co, 3, s, dims=3), ConvBN(co, co, 3, act=None, dims=3))
            kind = "3d"
        else:
            mid = r8((c + co) / 2)
            body = nn.Sequential(ConvBN(c, mid, (1, 3, 3), (1, s, s), dims=3), ConvBN(mid, co, (3, 1, 1), (s, 1, 1), dims=3))
            kind = "2+1d"
        short = None if s == 1 and co == c else ConvBN(c, co, 1, s, act=None, dims=3)
        layers.append(Residual(body, short))
        desc.append(f"{kind} {c}->{co} s{s}")
        c, hw, t = co, (hw + s - 1) // s, (t + s - 1) // s
    layers += [nn.AdaptiveAvgPool3d(1), nn.Flatten(), nn.Linear(c, pick(rng, [400], [10]))]
    return nn.Sequential(*layers), [("input", (1, 3, t0, side, side), torch.float32)], desc


def network(seed, small=False):
    """The network of `seed`: (kind, module in eval mode, inputs as (name, shape, dtype), blocks described);
    `small`: the sizes of narrow test models (SMALL)."""
    global SMALL
    rng = random.Random(seed)
    kind = rng.choices(["conv", "transformer", "recurrent", "video"], weights=[4, 3, 2, 2])[0]
    torch.manual_seed(seed)
    SMALL, before = small, SMALL  # read by the builders below (r8, pick, Transformer)
    try:
        if kind == "conv":
            model, inputs, desc = conv_net(rng)
        elif kind == "video":
            model, inputs, desc = video_net(rng)
        else:
            model = Transformer(rng) if kind == "transformer" else Recurrent(rng)
            inputs, desc = model.inputs(), model.desc
    finally:
        SMALL = before
    return kind, model.eval(), inputs, desc


def example(inputs):
    return tuple(torch.zeros(shape, dtype=dt) if dt == torch.int64 else torch.randn(shape) for _, shape, dt in inputs)


def write(out, count=40, seed=1000, onnx=True, torchscript=True, small=False):
    """Writes networks seed .. seed + count - 1 into `out`: suite_K.onnx (opset 17, eval mode, weights in
    suite_K.onnx.data) and/or suite_K.trace.pt (torch.jit.trace, eval, no grad, with the extra file
    flopwise_inputs.json that `flopwise` reads its inputs from), and suite.json (each network's kind, seed,
    inputs and blocks). `small`: the sizes of narrow test models (SMALL). Returns suite.json's list."""
    os.makedirs(out, exist_ok=True)
    listing = []
    for k in range(count):
        kind, model, inputs, desc = network(seed + k, small)
        name = f"suite_{k}"
        x = example(inputs)
        names = [n for n, _, _ in inputs]
        meta = [{"name": n, "shape": list(s), "dtype": str(d).replace("torch.", "")} for n, s, d in inputs]
        if onnx:
            import onnx as onnx_lib
            tmp = os.path.join(out, name + ".tmp.onnx")
            # with grad on: torch 1.13 cannot export nn.MultiheadAttention's inference fast path
            torch.onnx.export(model, x, tmp, opset_version=17, input_names=names, output_names=["output"])
            m = onnx_lib.load(tmp)
            onnx_lib.save_model(m, os.path.join(out, name + ".onnx"), save_as_external_data=True,
                                all_tensors_to_one_file=True, location=name + ".onnx.data", size_threshold=1024)
            os.remove(tmp)
        if torchscript:
            with torch.no_grad():
                traced = torch.jit.trace(model, x, check_trace=False)
            torch.jit.save(traced, os.path.join(out, name + ".trace.pt"),
                           _extra_files={"flopwise_inputs.json": json.dumps(meta)})
        listing.append({"name": name, "kind": kind, "seed": seed + k, "inputs": meta, "blocks": desc})
    with open(os.path.join(out, "suite.json"), "w") as f:
        json.dump(listing, f, indent=1)
    return listing


def calibrate_device(output, *, count=24, repeat=2, seed=1000, small=True, runs=(), workdir=None, device="cpu",
                     threads=1, profile_iters=20, **opts):
    """Calibrates `--predict` for LibTorch on this machine with nothing measured before: writes `count`
    networks as TorchScript, measures each `repeat` times with `flopwise run --device DEVICE --threads THREADS
    --profile-iters PROFILE_ITERS` (the runs interleaved), and fits them with `flopwise calibrate`, together
    with the run reports in `runs` (your own models' measurements: they sharpen the fit where your models
    are). Writes the calibration to `output` and returns it as a dict. `workdir`: where the networks and
    their run reports stay (default: a temporary directory, removed). Options as keywords go to calibrate
    (min_samples=10, weighting="sqrt", local_bandwidth=0.1). Raises RunError when a run fails."""
    import shutil
    import tempfile

    from . import calibrate, run_cli

    tmp = None
    if workdir is None:
        workdir = tmp = tempfile.mkdtemp(prefix="flopwise-suite-")
    try:
        listing = write(workdir, count=count, seed=seed, onnx=False, torchscript=True, small=small)
        reports = []
        for r in range(repeat):
            for e in listing:
                model = os.path.join(workdir, e["name"] + ".trace.pt")
                report = os.path.join(workdir, f"{e['name']}.r{r + 1}.run.json")
                run_cli(["run", model, "--device", device, "--threads", str(threads), "--warmup", "2", "--iters",
                         "5", "--profile-iters", str(profile_iters), "--format", "json", "-o", report])
                reports.append(report)
        return calibrate(reports + [os.fspath(p) for p in runs], output, **opts)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(prog="python3 -m flopwise.suite", description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="the directory to write the networks into")
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--onnx", action="store_true", help="write ONNX files (default: both formats)")
    ap.add_argument("--torchscript", action="store_true", help="write TorchScript files (default: both formats)")
    ap.add_argument("--small", action="store_true", help="the sizes of narrow test models (SMALL)")
    args = ap.parse_args()
    if not args.onnx and not args.torchscript:
        args.onnx = args.torchscript = True
    for e in write(args.out, args.count, args.seed, args.onnx, args.torchscript, args.small):
        print(e["name"], e["kind"], " | ".join(e["blocks"]))


if __name__ == "__main__":
    main()
