#!/usr/bin/env python3
"""CPU-only PyTorch profiler traces of stock models, with torch's own FLOPs per op as their oracle
(models/traces/cpu; tests/trace/test_census.py).

Run in the modern root (torch 2.14, torchvision 0.27, transformers 5.12; no downloads, random weights):

    bash scripts/modern_torch.sh python3 models/cpu_traces.py --out models/traces/cpu

For each model: torch.profiler on the CPU (record_shapes, with_flops, with_modules, with_stack; schedule wait 1,
warmup 1, active 2, so two ProfilerStep#N), export_chrome_trace, gzipped, as NAME.pt.trace.json.gz; and
NAME.oracle.json: key_averages() rows (name, count, cpu_time_total_us, self_cpu_time_total_us, flops) of the
same profiled steps. torch's with_flops counts a few ops (mm, addmm, bmm, conv2d, add, mul), 2 per MAC.
And mlp_train.pt.trace.json.gz: a small MLP's training steps under Adam and SGD with foreach=True;
fp8_gemm.pt.trace.json.gz: three torch._scaled_mm calls on float8_e4m3fn, fp8_gemm.oracle.json FlopCounterMode's
FLOPs of one.
"""
import argparse
import gzip
import json
import os
import shutil

import torch


def models():
    import torchvision
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    yield "resnet18", torchvision.models.resnet18(weights=None), (torch.randn(1, 3, 64, 64),)
    yield "mobilenet_v2", torchvision.models.mobilenet_v2(weights=None), (torch.randn(1, 3, 64, 64),)
    cfg = BertConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                     vocab_size=1000, max_position_embeddings=64)
    yield "bert_tiny", BertModel(cfg), (torch.randint(0, 1000, (1, 16)),)


def record(name, model, inputs, out):
    from torch.profiler import ProfilerActivity, profile, schedule
    model.eval()
    path = os.path.join(out, name + ".pt.trace.json")
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True,
                                  with_modules=True, with_stack=True,
                                  schedule=schedule(wait=1, warmup=1, active=2)) as p:
        for _ in range(4):
            model(*inputs)
            p.step()
    p.export_chrome_trace(path)
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(path)
    rows = [{"name": e.key, "count": e.count, "cpu_time_total_us": e.cpu_time_total,
             "self_cpu_time_total_us": e.self_cpu_time_total, "flops": e.flops} for e in p.key_averages()]
    with open(os.path.join(out, name + ".oracle.json"), "w") as f:
        json.dump({"torch": torch.__version__, "steps": 2, "by_name": rows}, f, indent=1)
        f.write("\n")


def record_train(out):
    """A small MLP's training steps under Adam(foreach=True) and SGD(foreach=True): the optimizers' _foreach_*
    ops with the shapes of their tensor lists (torch 2.14 records them)."""
    from torch.profiler import ProfilerActivity, profile, schedule
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    adam = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    sgd = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9, foreach=True)
    x, y = torch.randn(8, 32), torch.randint(0, 10, (8,))
    path = os.path.join(out, "mlp_train.pt.trace.json")
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True, with_modules=True,
                 schedule=schedule(wait=1, warmup=1, active=2)) as p:
        for _ in range(4):
            for opt in (adam, sgd):
                opt.zero_grad()
                torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
            p.step()
    p.export_chrome_trace(path)
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(path)


def record_fp8(out):
    """An FP8 GEMM (torch._scaled_mm on float8_e4m3fn, bf16 out) on the CPU; its oracle torch's FlopCounterMode."""
    from torch.profiler import ProfilerActivity, profile
    from torch.utils.flop_counter import FlopCounterMode
    torch.manual_seed(0)
    a = torch.randn(32, 64).to(torch.float8_e4m3fn)
    b = torch.randn(48, 64).to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0)
    with FlopCounterMode(display=False) as fc:
        torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    path = os.path.join(out, "fp8_gemm.pt.trace.json")
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
        for _ in range(3):
            torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    p.export_chrome_trace(path)
    with open(path, "rb") as f, gzip.open(path + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(path)
    with open(os.path.join(out, "fp8_gemm.oracle.json"), "w") as f:
        json.dump({"torch": torch.__version__, "calls": 3, "flop_counter_per_call": fc.get_total_flops()}, f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*", help="the traces to write (resnet18 ... mlp_train fp8_gemm); default all")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    want = lambda name: not a.only or name in a.only
    for name, model, inputs in models():
        if want(name):
            record(name, model, inputs, a.out)
    if want("mlp_train"):
        record_train(a.out)
    if want("fp8_gemm"):
        record_fp8(a.out)


if __name__ == "__main__":
    main()
