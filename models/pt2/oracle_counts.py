"""models/pt2/oracle_counts.py — the contraction MACs of an eager run, counted per dispatched aten call (the
oracle of models/pt2/generate.py's fixtures, tests/python_modern and zoo_sweep.py), and the dense unrolling of
the loop higher-order ops FlopCounterMode has no rule for."""
import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

CONTRACTION_FORMULAS = {
    "mm": "M*K*N for (M,K)@(K,N)",
    "addmm": "M*K*N of its mm (the bias add is not a MAC)",
    "bmm": "B*M*K*N",
    "baddbmm": "B*M*K*N of its bmm",
    "convolution": "out_numel * (Cin/groups) * prod(kernel); transposed: in_numel * (Cout/groups) * prod(kernel)",
    "sdpa": "B*H*L*S*E + B*H*L*S*Ev (QK^T and PV; H = query heads; the _scaled_dot_product_* kernels)",
    "_grouped_mm": "(M,K)@(G,K,N): M*K*N; (G,M,K)@(G,K,N): G*M*K*N; (M,Ktot)@(Ktot,N): M*Ktot*N",
    "convolution_backward": "the forward convolution's MACs per gradient output_mask asks (input's, weight's)",
    "sdpa_backward": "3*B*H*L*S*E + 2*B*H*L*S*Ev (torch.utils.flop_counter.sdpa_backward_flop_count's five"
                     " products: QK^T again, dO V^T, P^T dO, dS K, dS^T Q; H = query heads)",
}
SDPA_OPS = {"_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
            "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
            "_scaled_dot_product_fused_attention_overrideable"}
SDPA_BACKWARD_OPS = {op + "_backward" for op in SDPA_OPS}
CONTRACTIONS = ({"mm", "addmm", "bmm", "baddbmm", "convolution", "convolution_backward", "_grouped_mm"} | SDPA_OPS
                | SDPA_BACKWARD_OPS)


def contraction_macs_of(func, args):
    """(kind, MACs) of one aten call, or None when it is not a contraction."""
    name = func._overloadpacket.__name__
    if name in ("mm", "addmm", "bmm", "baddbmm"):
        a, b = (args[0], args[1]) if name in ("mm", "bmm") else (args[1], args[2])
        return name, a.numel() * b.shape[-1]
    if name == "convolution":
        x, w, transposed = args[0], args[1], args[6]
        kernel = math.prod(w.shape[2:])
        if transposed:
            return name, x.numel() * w.shape[1] * kernel
        out = args[-1]  # the output, appended by the mode
        return name, out.numel() * w.shape[1] * kernel
    if name in SDPA_OPS:
        q, k, v = args[0], args[1], args[2]
        b, h, l, e = q.shape
        s, ev = k.shape[-2], v.shape[-1]
        return "sdpa", b * h * l * s * e + b * h * l * s * ev
    if name in SDPA_BACKWARD_OPS:  # (grad_out, query, key, value, ...)
        q, k, v = args[1], args[2], args[3]
        b, h, l, e = q.shape
        s, ev = k.shape[-2], v.shape[-1]
        return "sdpa_backward", 3 * b * h * l * s * e + 2 * b * h * l * s * ev
    if name == "convolution_backward":  # each gradient asked (input's, weight's) is one forward's products
        grad_out, x, w, transposed, mask = args[0], args[1], args[2], args[7], args[10]
        kernel = math.prod(w.shape[2:])
        forward = (x.numel() if transposed else grad_out.numel()) * w.shape[1] * kernel
        return name, forward * (int(bool(mask[0])) + int(bool(mask[1])))
    if name == "_grouped_mm":
        a, b = args[0], args[1]
        if a.dim() == 2 and b.dim() == 3:
            return name, a.shape[0] * a.shape[1] * b.shape[2]
        if a.dim() == 3 and b.dim() == 3:
            return name, a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
        if a.dim() == 2 and b.dim() == 2:
            return name, a.shape[0] * a.shape[1] * b.shape[1]
        return name, None
    return None


class HopUnroller(TorchDispatchMode):
    """Runs while_loop, scan and map_impl, which FlopCounterMode has no rule for, by their dense (eager) kernels
    under the modes below it, so each iteration's aten calls are counted. Other calls pass through."""
    supports_higher_order_operators = True
    UNROLLED = {"while_loop", "scan", "map_impl"}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if isinstance(func, torch._ops.HigherOrderOperator) and func.name() in self.UNROLLED:
            with self:
                if func.name() == "scan":  # its dense kernel refuses any mode; this is the loop it runs
                    from torch._higher_order_ops.scan import generic_scan
                    combine_fn, init, xs, additional_inputs = args[:4]
                    return generic_scan(combine_fn, init, xs, additional_inputs=additional_inputs)
                return func.py_kernels[torch._C.DispatchKey.CompositeExplicitAutograd](*args, **(kwargs or {}))
        return func(*args, **(kwargs or {}))


class ContractionCounter(TorchDispatchMode):
    """MACs of the contractions by kind. Composite ops decompose first, as in FlopCounterMode. cond: both
    branches run and each kind keeps the larger count, as FlopCounterMode's cond rule does (an upper bound)."""
    supports_higher_order_operators = True

    def __init__(self):
        super().__init__()
        self.by_kind = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.higher_order.cond:
            pred, branches, operands = args[0], args[1:3], args[3]
            before, counts, outs = self.by_kind, [], []
            for branch in branches:
                self.by_kind = dict(before)
                with self:
                    outs.append(branch(*operands))
                counts.append(self.by_kind)
            self.by_kind = {k: max(c.get(k, 0) for c in counts) for k in set(counts[0]) | set(counts[1])}
            return outs[0] if bool(pred) else outs[1]
        kwargs = kwargs or {}
        if func._overloadpacket.__name__ not in CONTRACTIONS:  # a composite op (linear) decomposes, as there
            with self:
                r = func.decompose(*args, **kwargs)
            if r is not NotImplemented:
                return r
        out = func(*args, **kwargs)
        hit = contraction_macs_of(func, list(args) + [out])
        if hit is not None:
            kind, macs = hit
            if macs is None:
                self.by_kind[kind] = None
            elif self.by_kind.get(kind, 0) is not None:
                self.by_kind[kind] = self.by_kind.get(kind, 0) + int(macs)
        return out
