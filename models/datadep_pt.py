#!/usr/bin/python3
"""TorchScript test models whose sizes depend on tensor contents, and what torch says about them.

    /usr/bin/python3 models/datadep_pt.py --out DIR

Writes DIR/<name>.script.pt and DIR/<name>.trace.pt (torch 1.13, random weights, eval mode) for modules that
run a contraction on a data-dependent number of rows (nonzero, boolean-mask indexing, masked_select,
one-argument where, unique, unique along a dim, unique_consecutive), then DIR/datadep.json: per model its
inputs, the symbol flopwise is expected to name, the MACs per unit of that symbol by hand (rows * in * out
of the Linear it feeds), and torch's own run at fixed contents: the rows it selected (`rows`), so a test
can check `--value` folds the symbol to torch's count. tests/test_datadep.cc reads it.
"""

import argparse
import json
import os

import torch
import torch.nn as nn

H, V = 16, 32


class MlmHead(nn.Module):
    """A BERT pre-training MLM head on the masked positions only (DeepSpeed's BertForPreTrainingPreLN)."""

    def __init__(self):
        super().__init__()
        self.decoder = nn.Linear(H, V)
        self.hidden = H

    def forward(self, x, labels):
        h = x.view(-1, self.hidden)
        idx = torch.nonzero(labels.view(-1) != -1).view(-1)
        return self.decoder(h.index_select(0, idx))


class BoolIndex(nn.Module):
    """x[mask] with a 2-d mask over (batch, seq): rows of the selected positions."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(H, V)

    def forward(self, x, mask):
        return self.proj(x[mask])


class MaskedSelect(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(1, V)

    def forward(self, x):
        return self.proj(torch.masked_select(x, x > 0).view(-1, 1))


class WhereRows(nn.Module):
    """torch.where(cond), one argument: the row indices of the true entries."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(H, V)

    def forward(self, x, keep):
        rows = torch.where(keep)[0]
        return self.proj(x.index_select(0, rows))


class UniqueIds(nn.Module):
    """The distinct token ids, embedded and projected (a vocabulary-compression step)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, H)
        self.proj = nn.Linear(H, V)

    def forward(self, ids):
        return self.proj(self.emb(torch.unique(ids)))


class UniqueRows(nn.Module):
    """Distinct rows of a float matrix (unique along dim 0)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(H, V)

    def forward(self, x):
        return self.proj(torch.unique(x, dim=0))


class UniqueConsecutive(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(100, H)
        self.proj = nn.Linear(H, V)

    def forward(self, ids):
        return self.proj(self.emb(torch.unique_consecutive(ids)))


def long(vals, shape):
    return torch.tensor(vals, dtype=torch.long).view(*shape)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    labels = [-1, 4, -1, -1, -1, -1, 7, -1, -1, -1, -1, -1, -1, 9, -1, -1]  # 2 x 8, 3 masked
    mask = [1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]  # 2 x 8, 5 true
    rowsx = [float(v) for v in range(-10, 10)]  # 4 x 5: 9 entries > 0
    keep = [0, 1, 1, 0, 1, 0]  # 6: 3 true
    ids = [5, 3, 5, 7, 7, 7, 3, 1]  # distinct 1, 3, 5, 7; runs 5|3|5|7|3|1
    dup = torch.randn(3, H)
    dup_rows = torch.cat([dup, dup[:1], dup[2:]])  # 5 x H: 3 distinct rows
    # name: module, its inputs (name, shape, dtype, example, pinned contents or None), symbol, MACs per unit,
    # and the symbol's upper bound by hand (the elements the mask, condition or unique runs over)
    models = {
        "mlm_head": (MlmHead(), [("x", [2, 8, H], "float32", torch.randn(2, 8, H), None),
                                 ("labels", [2, 8], "int64", long(labels, [2, 8]), labels)], "nonzero_1", H * V, 16),
        "bool_index": (BoolIndex(), [("x", [2, 8, H], "float32", torch.randn(2, 8, H), None),
                                     ("mask", [2, 8], "bool", long(mask, [2, 8]).bool(), mask)], "masked_1", H * V, 16),
        "masked_select": (MaskedSelect(), [("x", [4, 5], "float32", torch.tensor(rowsx).view(4, 5), list(range(-10, 10)))],
                          "masked_select_1", V, 20),
        "where_rows": (WhereRows(), [("x", [6, H], "float32", torch.randn(6, H), None),
                                     ("keep", [6], "bool", long(keep, [6]).bool(), keep)], "nonzero_1", H * V, 6),
        "unique_ids": (UniqueIds(), [("ids", [8], "int64", long(ids, [8]), ids)], "unique_1", H * V, 8),
        "unique_rows": (UniqueRows(), [("x", [5, H], "float32", dup_rows, None)], "unique_1", H * V, 5),
        "unique_consecutive": (UniqueConsecutive(), [("ids", [8], "int64", long(ids, [8]), ids)],
                               "unique_consecutive_1", H * V, 8),
    }
    out = {}
    for name, (mod, inputs, symbol, per_unit, hi) in models.items():
        mod.eval()
        example = tuple(i[3] for i in inputs)
        with torch.no_grad():
            y = mod(*example)
            torch.jit.save(torch.jit.script(mod), os.path.join(args.out, name + ".script.pt"))
            torch.jit.save(torch.jit.trace(mod, example, check_trace=False), os.path.join(args.out, name + ".trace.pt"))
        out[name] = {
            "inputs": [{"name": i[0], "shape": i[1], "dtype": i[2], "value": i[4]} for i in inputs],
            "symbol": symbol,
            "macs_per_unit": per_unit,  # the Linear's in * out features, by hand
            "hi": hi,
            "rows": int(y.shape[0]),    # torch's count on the example contents
        }
    with open(os.path.join(args.out, "datadep.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
