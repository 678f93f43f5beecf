"""Shared fixtures of the Python tests: the repository, the CLI, and an independent count of MACs."""
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "models")


@pytest.fixture(scope="session")
def cli():
    import flopwise
    return flopwise.cli_path()


def cli_json(cli, *args):
    return json.loads(subprocess.run([cli, *args, "--format", "json"], check=True, stdout=subprocess.PIPE).stdout)


def eager_macs(model, inputs, train=False):
    """MACs of one eager run, counted at the dispatcher (independent of flopwise): mm, addmm, bmm, baddbmm,
    convolution; products only, as flopwise's MACs are."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    aten = torch.ops.aten
    total = [0]

    def numel(shape):
        n = 1
        for d in shape:
            n *= int(d)
        return n

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            p = func.overloadpacket
            if p in (aten.mm, aten.bmm):
                a = args[0]
                total[0] += numel(a.shape) * int(args[1].shape[-1])
            elif p in (aten.addmm, aten.baddbmm):
                a = args[1]
                total[0] += numel(a.shape) * int(args[2].shape[-1])
            elif p in (aten.convolution, aten._convolution):
                w, groups = args[1], args[8]
                # every output element: (in_channels / groups) * kernel products = w[1] * prod(w[2:])
                total[0] += numel(out.shape) * numel(w.shape[1:])
            return out

    training = model.training
    # train=True: eval mode would take fused fast paths (TransformerEncoderLayer) the counter cannot see
    model.train(train)
    try:
        with torch.no_grad(), Count():
            model(*inputs)
    finally:
        model.train(training)
    return total[0]
