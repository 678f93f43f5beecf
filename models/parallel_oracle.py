# models/parallel_oracle.py — the fixtures and the measured oracle of --parallel (issue 53). Run in the modern
# root (torch 2.x):
#   bash scripts/modern_torch.sh python3 models/parallel_oracle.py
# writes
#   models/pt2/parallel_gpt.pt2         a GPT built to Korthikanti et al. 2022's assumptions (pre-LN, fused qkv, no
#                                       mask, GELU, dropout on the attention probabilities and after each block's
#                                       two products), exported in train mode at batch 2, seq 16; weights stripped
#   models/pt2/parallel_gpt_nodrop.pt2  the same without dropout (what the measured runs below execute)
#   models/pt2/parallel_moe.pt2         the no-dropout GPT with a mixture of experts for MLP (4 experts, top 2,
#                                       Mixtral's router written densely, as models/shipped.py's)
#   models/parallel_oracle.json         torch running the no-dropout GPT on the CPU across 2 processes (gloo):
#                                       DTensor tensor parallelism (Megatron's plan through parallelize_module) and
#                                       FSDP2 (fully_shard on each block and the root; on the MoE too), each rank's
#                                       collectives (as
#                                       CommDebugMode counts them, with each call's tensor bytes), local parameter
#                                       elements and the bytes autograd keeps (saved_tensors_hooks, each storage once,
#                                       parameters and inputs apart)
# Processes start with torch.multiprocessing.spawn and a tcp:// rendezvous, USE_LIBUV=0 (Debian's torch has no
# libuv); torch.distributed.run's rendezvous fails in the root.
import json
import math
import os
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "pt2"))
from generate import strip_archive  # noqa: E402  (the same stripping as the other .pt2 fixtures)

CFG = dict(vocab=128, hidden=64, heads=4, layers=2, positions=16)
BATCH, SEQ = 2, 16


class Attention(nn.Module):
    def __init__(self, h, a, p):
        super().__init__()
        self.qkv = nn.Linear(h, 3 * h)
        self.proj = nn.Linear(h, h)
        self.d, self.p = h // a, p

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        # -1 heads: under tensor parallelism each rank holds its own heads
        q, k, v = (t.reshape(b, s, -1, self.d).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.d))
        att = F.dropout(att.softmax(-1), self.p, self.training)
        y = (att @ v).transpose(1, 2).reshape(b, s, -1)
        return self.proj(y)


class Expert(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(h, 4 * h), nn.GELU(), nn.Linear(4 * h, h)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class MoE(nn.Module):
    """Mixtral-style router (softmax, top-k, renormalised), written densely as exporters trace it (as
    models/shipped.py's): every expert runs on every token, weighted by its gate (0 where not picked)."""

    def __init__(self, h, experts, top_k):
        super().__init__()
        self.gate = nn.Linear(h, experts, bias=False)
        self.experts = nn.ModuleList(Expert(h) for _ in range(experts))
        self.top_k = top_k

    def forward(self, x):
        topw, topi = torch.topk(torch.softmax(self.gate(x), dim=-1), self.top_k, dim=-1)
        topw = topw / topw.sum(-1, keepdim=True)
        out = None
        for e, expert in enumerate(self.experts):
            y = (topw * (topi == e).to(topw.dtype)).sum(-1, keepdim=True) * expert(x)
            out = y if out is None else out + y
        return out


class Block(nn.Module):
    def __init__(self, h, a, p, experts=0, top_k=0):
        super().__init__()
        self.ln1, self.attn, self.ln2 = nn.LayerNorm(h), Attention(h, a, p), nn.LayerNorm(h)
        self.mlp = MoE(h, experts, top_k) if experts else Expert(h)
        self.p = p

    def forward(self, x):
        x = x + F.dropout(self.attn(self.ln1(x)), self.p, self.training)
        return x + F.dropout(self.mlp(self.ln2(x)), self.p, self.training)


class GPT(nn.Module):
    def __init__(self, vocab, hidden, heads, layers, positions, dropout, experts=0, top_k=0):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Parameter(torch.randn(positions, hidden) * 0.02)
        self.blocks = nn.ModuleList(Block(hidden, heads, dropout, experts, top_k) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, ids):
        x = self.tok(ids) + self.pos[: ids.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def ids():
    return torch.randint(0, CFG["vocab"], (BATCH, SEQ))


MOE = dict(experts=4, top_k=2)


def export_fixture(name, dropout, moe=None):
    torch.manual_seed(0)
    m = GPT(**CFG, dropout=dropout, **(moe or {})).train()
    ep = torch.export.export(m, (ids(),), strict=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}.pt2")
        torch.export.save(ep, path)
        with open(path, "rb") as f:
            full = f.read()
    stripped, _ = strip_archive(full)
    with open(os.path.join(HERE, "pt2", f"{name}.pt2"), "wb") as out:
        out.write(stripped)
    return sum(p.numel() for p in m.parameters())


# ---------------------------------------------------------------------------------------------------------------
# Measured on 2 processes.
def local(t):
    from torch.distributed.tensor import DTensor
    return t._local_tensor if isinstance(t, DTensor) else t


class Collectives(torch.utils._python_dispatch.TorchDispatchMode):
    """Each collective op dispatched (DTensor's functional collectives, FSDP2's c10d calls): its name and the
    bytes of its largest tensor argument, the whole message (an all-gather's output, a reduce-scatter's input)."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name
        if "c10d" in name and not name.endswith(("wait_tensor", "_wrap_tensor_autograd")):
            size = 0
            for a in list(args) + list((kwargs or {}).values()):
                for t in a if isinstance(a, (list, tuple)) else [a]:
                    if isinstance(t, torch.Tensor):
                        size = max(size, t.numel() * t.element_size())
            self.calls.append([name.split("::")[-1], size])
        return func(*args, **(kwargs or {}))


def step(model, inputs, apart):
    """One forward and backward: the collectives, and the bytes kept for backward (each storage once; the
    parameters apart, FSDP's gathered ones too: the module's parameters when the tensor is packed)."""
    from torch.distributed.tensor.debug import CommDebugMode
    seen = {}

    def pack(t):
        lt = local(t)
        st = lt.untyped_storage()
        params = {local(p).untyped_storage().data_ptr() for p in model.parameters()}
        if st.data_ptr() not in apart and st.data_ptr() not in params:
            seen.setdefault(st.data_ptr(), st.nbytes())
        return t

    rec = Collectives()
    with CommDebugMode() as cdm, rec:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = model(inputs)
        local(out).sum().backward()
    counts = {str(k).split(".")[-1]: v for k, v in cdm.get_comm_counts().items()}
    return rec.calls, counts, sum(seen.values())


def worker(rank, port, mode, result_dir):
    os.environ["USE_LIBUV"] = "0"
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    from torch.distributed.device_mesh import init_device_mesh
    mesh = init_device_mesh("cpu", (2,))
    torch.manual_seed(0)
    model = GPT(**CFG, dropout=0.0, **(MOE if mode.startswith("moe") else {})).train()
    torch.manual_seed(1)
    x = ids()
    if mode == "tp":
        from torch.distributed.tensor import Replicate
        from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
        plan = {"tok": RowwiseParallel(input_layouts=Replicate()), "head": ColwiseParallel()}
        for i in range(CFG["layers"]):
            plan.update({f"blocks.{i}.attn.qkv": ColwiseParallel(), f"blocks.{i}.attn.proj": RowwiseParallel(),
                         f"blocks.{i}.mlp.fc1": ColwiseParallel(), f"blocks.{i}.mlp.fc2": RowwiseParallel()})
        parallelize_module(model, mesh, plan)
    else:
        from torch.distributed.fsdp import fully_shard
        for blk in model.blocks:
            fully_shard(blk, mesh=mesh)
        fully_shard(model, mesh=mesh)
    params = sum(local(p).numel() for p in model.parameters())
    apart = {local(p).untyped_storage().data_ptr() for p in model.parameters()} | {x.untyped_storage().data_ptr()}
    calls, counts, kept = step(model, x, apart)
    with open(os.path.join(result_dir, f"{mode}{rank}.json"), "w") as f:
        json.dump({"local_params": params, "saved_bytes": kept, "calls": calls, "comm_debug_counts": counts}, f)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(mode):
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(worker, args=(free_port(), mode, tmp), nprocs=2, join=True)
        ranks = []
        for r in range(2):
            with open(os.path.join(tmp, f"{mode}{r}.json")) as f:
                ranks.append(json.load(f))
    return ranks


def summarise(calls):
    """(op, bytes) -> count."""
    out = {}
    for op, size in calls:
        key = f"{op} {size}"
        out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def main():
    params = export_fixture("parallel_gpt", 0.1)
    export_fixture("parallel_gpt_nodrop", 0.0)
    moe_params = export_fixture("parallel_moe", 0.0, MOE)
    oracle = {"torch": torch.__version__, "config": CFG, "batch": BATCH, "seq": SEQ, "params": params,
              "dtype": "float32", "device": "cpu", "world_size": 2, "backend": "gloo"}
    oracle["moe"] = dict(MOE, params=moe_params)
    for mode in ("tp", "fsdp", "moe_fsdp"):
        ranks = measure(mode)
        oracle[mode] = [{"local_params": r["local_params"], "saved_bytes": r["saved_bytes"],
                         "comm_debug_counts": r["comm_debug_counts"], "collectives": summarise(r["calls"])}
                        for r in ranks]
    with open(os.path.join(HERE, "parallel_oracle.json"), "w") as f:
        json.dump(oracle, f, indent=1)
        f.write("\n")
    print(json.dumps(oracle, indent=1))


if __name__ == "__main__":
    main()
