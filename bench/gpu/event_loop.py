#!/usr/bin/env python3
"""The plain-PyTorch baseline of `flopwise run --device cuda`: the same TorchScript file, loaded with
torch.jit.load onto the GPU, eval mode, under torch.no_grad(), forwards timed with torch.cuda.Event pairs.

    python3 bench/gpu/event_loop.py MODEL.pt --input NAME:Bx3x224x224[:dtype] [--input ...]
        [--batches 1,8,64] [--int-high N[,N...]] [--warmup 10] [--iters 50]

A "B" in a shape is each of --batches in turn (default 1). Prints one JSON line per batch: {"model",
"batch", "inputs", "iters", "fwd_ms": [...], "median_ms"}. Integer inputs are drawn from [0, high) (one high
per integer input, in order; default 2).
"""
import argparse
import json
import statistics

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--int-high", default="")
    ap.add_argument("--batches", default="1")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    a = ap.parse_args()
    highs = [int(x) for x in a.int_high.split(",") if x]
    m = torch.jit.load(a.model, map_location="cuda").eval()
    for batch in [int(b) for b in a.batches.split(",")]:
        torch.manual_seed(0)
        xs, k, specs = [], 0, []
        for spec in a.input:
            parts = spec.replace("B", str(batch)).split(":")
            specs.append(":".join(parts))
            shape = [int(d) for d in parts[1].split("x")]
            dtype = getattr(torch, parts[2]) if len(parts) > 2 else torch.float32
            if dtype.is_floating_point:
                xs.append(torch.randn(shape, dtype=dtype, device="cuda"))
            else:
                high = highs[k] if k < len(highs) else 2
                k += 1
                xs.append(torch.randint(0, high, shape, dtype=dtype, device="cuda"))
        times = []
        with torch.no_grad():
            for _ in range(a.warmup):
                m(*xs)
            torch.cuda.synchronize()
            for _ in range(a.iters):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                m(*xs)
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e))
        print(json.dumps({"model": a.model, "batch": batch, "inputs": specs, "iters": a.iters, "fwd_ms": times,
                          "median_ms": statistics.median(times)}), flush=True)


if __name__ == "__main__":
    main()
