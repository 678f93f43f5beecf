#!/usr/bin/python3
"""Writes hostile TorchScript archives (tests/test_contain.cc): LibTorch runs an archive's __setstate__ when it
loads it, so a file can loop or allocate at load time; and a truncated archive.

    /usr/bin/python3 models/hostile_pt.py OUT_DIR
"""
import os
import sys
from typing import Tuple

import torch
from torch import Tensor


class Stateful(torch.nn.Module):
    """A module with its own pickled state: LibTorch calls its __setstate__ at load."""

    def __init__(self):
        super().__init__()
        self.w = torch.randn(4, 4)

    def forward(self, x):
        return x @ self.w

    @torch.jit.export
    def __getstate__(self) -> Tuple[Tensor, bool]:
        return (self.w, self.training)


class LoopsAtLoad(Stateful):
    @torch.jit.export
    def __setstate__(self, state: Tuple[Tensor, bool]):
        i = 0
        while i >= 0:  # never ends (i wraps only after 2^63 steps)
            i = i + 1
        self.w = state[0]
        self.training = state[1]


class AllocatesAtLoad(Stateful):
    @torch.jit.export
    def __setstate__(self, state: Tuple[Tensor, bool]):
        big = torch.ones(1 << 28)  # 1 GiB of float32, filled
        self.w = state[0] + big[0]
        self.training = state[1]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.jit.script(LoopsAtLoad()).save(os.path.join(out, "loops_at_load.pt"))
    torch.jit.script(AllocatesAtLoad()).save(os.path.join(out, "allocates_at_load.pt"))
    good = os.path.join(out, "linear.pt")
    torch.jit.script(torch.nn.Linear(8, 4)).save(good)
    data = open(good, "rb").read()
    with open(os.path.join(out, "truncated.pt"), "wb") as f:
        f.write(data[: len(data) * 2 // 3])


if __name__ == "__main__":
    main()
