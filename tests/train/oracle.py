"""Torch's own figures for one training step (Debian's torch 1.13, CPU): the oracle of tests/train.

Backward MACs: a TorchDispatchMode around loss.backward() counts the products autograd dispatches (mm, addmm,
bmm, baddbmm; convolution_backward by its output_mask, each of grad_input and grad_weight costing the forward
convolution's MACs). Trainable params: sum(p.numel() for p in m.parameters() if p.requires_grad). Optimizer
state: the bytes of every tensor in opt.state after one step. See ../shared/design/training-step.md."""
import contextlib
from math import prod

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def product_macs(func, args, out):
    if func is aten.mm.default:
        return args[0].shape[0] * args[0].shape[1] * args[1].shape[1]
    if func is aten.addmm.default:
        return args[1].shape[0] * args[1].shape[1] * args[2].shape[1]
    if func is aten.bmm.default:
        return args[0].shape[0] * args[0].shape[1] * args[0].shape[2] * args[1].shape[2]
    if func is aten.baddbmm.default:
        return args[1].shape[0] * args[1].shape[1] * args[1].shape[2] * args[2].shape[2]
    if func is aten.convolution.default:  # (input, weight, bias, stride, padding, dilation, transposed, ...)
        x, w = args[0], args[1]
        return (x.numel() if args[6] else out.numel()) * w.shape[1] * prod(w.shape[2:])
    if func is aten.convolution_backward.default:
        # (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding,
        # groups, output_mask)
        grad_out, x, w, mask = args[0], args[1], args[2], args[10]
        fwd = (x.numel() if args[7] else grad_out.numel()) * w.shape[1] * prod(w.shape[2:])
        return fwd * (int(mask[0]) + int(mask[1]))
    return 0


class ProductCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.macs = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.macs += product_macs(func, args, out)
        return out


def freeze(m, scopes):
    for name, p in m.named_parameters():
        p.requires_grad_(not any(name == s or name.startswith(s + ".") for s in scopes))


def step_figures(m, inputs, frozen=(), loss=lambda y: y.float().sum()):
    """Backward MACs of one step with `frozen` module scopes, and the trainable params."""
    freeze(m, frozen)
    m.zero_grad(set_to_none=True)
    y = m(*inputs)
    if isinstance(y, tuple):
        y = y[0]
    counter = ProductCounter()
    with counter:
        loss(y).backward()
    trainable = sum(p.numel() for p in m.parameters() if p.requires_grad)
    return {"backward_macs": counter.macs, "trainable_params": trainable}


def forward_macs(m, inputs):
    counter = ProductCounter()
    with counter, torch.no_grad():
        m(*inputs)
    return counter.macs


def optimizer_state_bytes(m, inputs, make):
    """Bytes torch.optim keeps after one step (every tensor of opt.state)."""
    freeze(m, ())
    opt = make([p for p in m.parameters() if p.requires_grad])
    y = m(*inputs)
    if isinstance(y, tuple):
        y = y[0]
    y.float().sum().backward()
    opt.step()
    total = 0
    for state in opt.state.values():
        for v in state.values():
            if torch.is_tensor(v):
                total += v.numel() * v.element_size()
    return total


_KEEP = []  # the pack hook of saved_bytes while it runs


def keep(t):
    """Counts `t` as kept (what torch.utils.checkpoint holds in its closure, not through saved_tensors_hooks)."""
    if _KEEP:
        _KEEP[-1](t)


def saved_bytes(m, inputs, frozen=()):
    """Bytes autograd keeps for backward: every tensor saved_tensors_hooks' pack receives during the forward,
    each storage once, parameters, buffers and the inputs apart (a separate forward from step_figures': torch
    1.13 refuses a dispatch mode around a backward whose forward ran under these hooks)."""
    freeze(m, frozen)
    apart = {t.storage().data_ptr() for t in list(m.parameters()) + list(m.buffers()) + list(inputs)}
    seen = {}

    def pack(t):
        st = t.storage()
        if st.data_ptr() not in apart:
            seen.setdefault(st.data_ptr(), st.size() * t.element_size())
        return t

    _KEEP.append(pack)
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            m(*inputs)
    finally:
        _KEEP.pop()
    return sum(seen.values())


@contextlib.contextmanager
def cuda_dropout():
    """F.dropout as CUDA runs it: an out-of-place dropout with 0 < p < 1 goes to torch's fused kernel,
    aten::native_dropout (which torch also runs on CPU), keeping a bool mask; torch's CPU path would keep a
    noise tensor in the input's dtype instead. An in-place dropout takes the noise path on CUDA too (ATen's
    dropout_ never asks for the fused kernel), as does a feature dropout (F.dropout2d: not patched)."""
    plain = F.dropout

    def fused(x, p=0.5, training=True, inplace=False):
        if training and 0 < p < 1 and not inplace:
            return torch.native_dropout(x, p, training)[0]
        return plain(x, p, training, inplace)

    F.dropout = fused
    try:
        yield
    finally:
        F.dropout = plain


def mixed(precision):
    """torch.autocast on this CPU for --precision (bf16-mixed; torch 1.13's CPU autocast has no float16)."""
    if precision == "fp32":
        return contextlib.nullcontext()
    return torch.autocast("cpu", dtype=torch.bfloat16)
