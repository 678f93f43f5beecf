"""A notebook in script form (tests/python/test_notebook.py runs it): profile a module, show its table,
compare two variants, sweep a dynamic dim and plot it (when matplotlib is installed).

    PYTHONPATH=build/python python3 examples/notebook.py [OUT_DIR]
"""
import os
import sys

import torch

import flopwise

out_dir = sys.argv[1] if len(sys.argv) > 1 else "."


class Block(torch.nn.Module):
    def __init__(self, d=32, ffn=64):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(d, 4, batch_first=True)
        self.ffn = torch.nn.Sequential(torch.nn.Linear(d, ffn), torch.nn.GELU(), torch.nn.Linear(ffn, d))

    def forward(self, x):
        x = x + self.attn(x, x, x, need_weights=False)[0]
        return x + self.ffn(x)


# 1. Profile a module with example inputs, as thop/fvcore take them.
model = Block().eval()
x = torch.randn(2, 16, 32)
r = flopwise.analyze(model, x)
print(r)
print(r.table(depth=2))
print("MACs:", r.totals.macs, "params:", r.totals.params)

# 2. The same as a table pandas can use (when installed).
try:
    print(r.to_pandas("scope")[["name", "depth", "params", "macs"]].to_string(index=False))
except ImportError:
    print("(pandas not installed)")

# 3. Compare two variants: a wider feed-forward.
d = flopwise.diff(Block(ffn=64), Block(ffn=128), x)
print("diff:", {k: d["totals"][k] for k in ("macs", "params")} if "totals" in d else sorted(d))

# 4. Sweep the sequence length of an ONNX export with a dynamic seq dim, and plot it.
onnx_path = os.path.join(out_dir, "block.onnx")
torch.onnx.export(model, (x,), onnx_path, input_names=["x"], dynamic_axes={"x": {1: "seq"}})
sym = flopwise.analyze(onnx_path)
print("MACs as a formula:", sym.totals.macs, "= at seq=128:", sym.totals.macs(seq=128))
s = flopwise.sweep(onnx_path, seq=[16, 32, 64, 128, 256])
for row in s.rows:
    print(row["point"]["seq"], row["macs"])
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("(matplotlib not installed: no plot)")
else:
    plt.plot([row["point"]["seq"] for row in s.rows], [row["macs"] for row in s.rows], marker="o")
    plt.xlabel("seq")
    plt.ylabel("MACs")
    plt.savefig(os.path.join(out_dir, "sweep.png"))
    print("plot:", os.path.join(out_dir, "sweep.png"))
