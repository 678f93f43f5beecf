"""models/torch_zoo_check.py — what models/torch_zoo.py checks each saved module against: contraction MACs
counted in eager mode (a TorchDispatchMode over mm/addmm/bmm/convolution/SDPA..., cross-checked by module
forward hooks), and what the saved TorchScript file holds (its method, node kinds, outputs read back)."""
import re
from collections import Counter

import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode

# Eager expectations


def prod(xs):
    r = 1
    for x in xs:
        r *= int(x)
    return r


def _trilinear_macs(args):
    i1, i2, i3, e1, e2, e3 = args[:6]
    rank = i1.dim() + len(e1)
    full = [1] * rank
    for t, e in ((i1, e1), (i2, e2), (i3, e3)):
        shape = list(t.shape)
        for d in sorted(e):
            shape.insert(d, 1)
        assert len(shape) == rank
        full = [max(a, b) for a, b in zip(full, shape)]
    return prod(full)


def _conv_macs(inp, w, out, transposed):
    per = int(w.shape[1]) * prod(w.shape[2:])
    return (inp.numel() if transposed else out.numel()) * per


# op name -> MACs(args, out)
CONTRACTIONS = {
    "mm": lambda a, o: a[0].shape[0] * a[0].shape[1] * a[1].shape[1],
    "addmm": lambda a, o: a[1].shape[0] * a[1].shape[1] * a[2].shape[1],
    "bmm": lambda a, o: a[0].shape[0] * a[0].shape[1] * a[0].shape[2] * a[1].shape[2],
    "baddbmm": lambda a, o: a[1].shape[0] * a[1].shape[1] * a[1].shape[2] * a[2].shape[2],
    "addbmm": lambda a, o: a[1].shape[0] * a[1].shape[1] * a[1].shape[2] * a[2].shape[2],
    "mv": lambda a, o: a[0].shape[0] * a[0].shape[1],
    "addmv": lambda a, o: a[1].shape[0] * a[1].shape[1],
    "dot": lambda a, o: a[0].shape[0],
    "vdot": lambda a, o: a[0].shape[0],
    "addr": lambda a, o: a[1].shape[0] * a[2].shape[0],
    "convolution": lambda a, o: _conv_macs(a[0], a[1], o, bool(a[6])),
    "_convolution": lambda a, o: _conv_macs(a[0], a[1], o, bool(a[6])),
    "convolution_overrideable": lambda a, o: _conv_macs(a[0], a[1], o, bool(a[6])),
    "mkldnn_convolution": lambda a, o: _conv_macs(a[0], a[1], o, False),
    "_trilinear": lambda a, o: _trilinear_macs(a),  # does not decompose: explicit formula
}


def _sdpa_macs(a, o):
    """q [..., L, E], k [..., S, E], v [..., S, Ev]: the two products q k^T and p v, dense (a causal mask
    or a dropout does not change them)."""
    q, k, v = a[0], a[1], a[2]
    batch = prod(q.shape[:-2])
    return batch * q.shape[-2] * k.shape[-2] * (q.shape[-1] + v.shape[-1])


# torch 2.x: F.scaled_dot_product_attention (nn.MultiheadAttention with need_weights=False, the
# Transformer layers) reaches the Python key as one fused backend op, not as matmuls.
for _sdpa in ("_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
              "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
              "_scaled_dot_product_fused_attention_overrideable"):
    CONTRACTIONS[_sdpa] = _sdpa_macs
LOOKS_LIKE_CONTRACTION = re.compile(r"mm|matmul|conv|linear|dot|einsum|bilinear|attention|lstm|gru|rnn_|"
                                    r"transformer|tensordot|_mha|addr|addmv|^mv")
# Ops whose names match LOOKS_LIKE_CONTRACTION but that are interpolation, not contraction: no MACs.
# Exact names only, so that any other matching op still stops the generator.
NOT_CONTRACTIONS = {"upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d", "_upsample_bilinear2d_aa"}
FAST_PATHS = {"_native_multi_head_attention", "_transformer_encoder_layer_fwd", "_transformer_decoder_only_layer_fwd"}


class ContractionCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.by_op = Counter()
        self.seen = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        self.seen[name] += 1
        if name in FAST_PATHS:
            raise RuntimeError(f"fused fast path aten::{name} reached under grad mode; expectation invalid")
        if name in CONTRACTIONS:
            self.by_op["aten::" + name] += int(CONTRACTIONS[name](args, out))
        elif LOOKS_LIKE_CONTRACTION.search(name) and name not in NOT_CONTRACTIONS:
            raise RuntimeError(f"aten::{name} looks like a contraction but has no MAC formula here")
        return out


def hook_macs(model):
    """Registers forward hooks; returns (rows list, handles)."""
    rows = []

    def conv(mod, inp, out):
        rows.append(out.numel() * (mod.in_channels // mod.groups) * prod(mod.kernel_size))

    def convt(mod, inp, out):
        rows.append(inp[0].numel() * (mod.out_channels // mod.groups) * prod(mod.kernel_size))

    def linear(mod, inp, out):
        rows.append(out.numel() * mod.in_features)

    def bilinear(mod, inp, out):
        rows.append(out.numel() * mod.in1_features * mod.in2_features)

    handles = []
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            handles.append(m.register_forward_hook(conv))
        elif isinstance(m, (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)):
            handles.append(m.register_forward_hook(convt))
        elif isinstance(m, nn.Linear):
            handles.append(m.register_forward_hook(linear))
        elif isinstance(m, nn.Bilinear):
            handles.append(m.register_forward_hook(bilinear))
    return rows, handles


def eager_expectations(model, inputs):
    """One eager pass in grad mode under the dispatch counter, with module hooks; returns
    (macs_by_op, hook_macs, output)."""
    for p in model.parameters():
        p.requires_grad_(True)
    rows, handles = hook_macs(model)
    counter = ContractionCounter()
    try:
        # oneDNN off: torch 2.x runs a CPU LSTM/GRU as one fused aten::mkldnn_rnn_layer per layer; without it
        # the RNN decomposes into the per-step linear products the counter sees (as torch 1.13 always did).
        with torch.enable_grad(), torch.backends.mkldnn.flags(enabled=False), counter:
            out = model(*inputs)
    finally:
        for h in handles:
            h.remove()
    return dict(sorted(counter.by_op.items())), sum(rows), out


# --------------------------------------------------------------------------------------------------
# Saved files: node kinds, outputs


def tensor_method(m):
    """The name of the method to analyse: forward, or for scripted RNNs (overloads only) the
    forward__N whose first argument is a Tensor."""
    names = m._c._method_names()
    if "forward" in names:
        return "forward", names
    for n in names:
        if n.startswith("forward"):
            args = m._c._get_method(n).schema.arguments
            if len(args) > 1 and str(args[1].type) == "Tensor":
                return n, names
    raise RuntimeError(f"no forward taking a Tensor among {names}")


def graph_kinds(m, method):
    g = m._c._get_method(method).graph.copy()
    torch._C._jit_pass_inline(g)
    kinds = set()

    def walk(block):
        for n in block.nodes():
            kinds.add(n.kind())
            for b in n.blocks():
                walk(b)

    walk(g)
    return sorted(kinds)


def flat_tensors(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t for y in x for t in flat_tensors(y)]
    if isinstance(x, dict):
        return [t for y in x.values() for t in flat_tensors(y)]
    return []


def max_diff(a, b):
    ta, tb = flat_tensors(a), flat_tensors(b)
    if len(ta) != len(tb) or any(x.shape != y.shape for x, y in zip(ta, tb)):
        return None
    return max((float((x.detach().double() - y.detach().double()).abs().max()) if x.numel() else 0.0)
               for x, y in zip(ta, tb)) if ta else 0.0


def read_back(path, inputs):
    m = torch.jit.load(path)
    method, names = tensor_method(m)
    with torch.no_grad():
        out = m._c._get_method(method)(*inputs)
    return m, method, names, out
