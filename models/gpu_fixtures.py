#!/usr/bin/env python3
"""Fixtures only a modern PyTorch (2.x with CUDA and Kineto) can write (../shared/GPU.md, item 3).

Run on a machine with an NVIDIA GPU and torch >= 2.5 (the GPU machine's torch 2.11 made the committed
ones), no downloads, random weights:

    python3 models/gpu_fixtures.py --out DIR [--only traces pt2 onnx] [--deadline SECONDS]

It builds three entries of models/torch_zoo.py (resnet18 channels/8 at 64x64, the BERT-like encoder and the
GPT-2-like decoder, d 32), each under the zoo's seed and perturbation, and writes into DIR:

  traces/NAME.MODE.EXEC.pt.trace.json.gz   torch.profiler traces (activities CPU+CUDA, record_shapes,
        with_stack, with_flops, with_modules; schedule wait 1, warmup 1, active 3, so three ProfilerStep#N),
        export_chrome_trace, gzipped. MODE: infer (no_grad forward) or train (forward, cross-entropy loss,
        backward, SGD step, each in a record_function label "forward" / "loss" / "backward" /
        "optimizer"). EXEC: eager, compiled (torch.compile, compiled and run twice before profiling),
        torchscript (torch.jit.trace of the module: the trace's "Module Hierarchy" field), eager-notf32
        (eager with torch.backends.cudnn.allow_tf32 = False) or eager-tf32 (eager with
        torch.backends.cuda.matmul.allow_tf32 = True): the same FLOPs as eager at other kernel times.
        Inputs are the zoo's repeated to batch 8.
  traces/NAME.MODE.EXEC.oracle.json   torch's own view of the same profiled steps: key_averages() rows
        (name, count, cpu/self-cpu/device/self-device time totals in us, flops) and the same grouped by
        input shape; torch's with_flops counts only a few ops (mm, addmm, bmm, conv), which is the point.
  pt2/NAME.pt2        torch.export.save of torch.export.export(module, inputs, dynamic_shapes=...) with a
        dynamic batch (and seq for the language models), falling back to fewer dynamic dims when export
        refuses (the manifest says which). Example inputs: the zoo's at batch 2 (EXPORT_BATCH).
  onnx/NAME.dynamo.onnx   torch.onnx.export(..., dynamo=True) with the same dynamic dims, saved with its
        weights as external data, then the data file deleted: graph-only, as flopwise reads it. Example
        inputs at batch 2, as for pt2; a file whose batch stayed static holds batch 2.
  NAME.expect.json    the eager counts (models/torch_zoo.py's dispatch counter: params, buffers, MACs by op)
        at the zoo's batch 1, the exports' batch 2 and the traces' batch 8 (onnx/NAME.expect.json for the
        other zoo entries exported: batch 1 and 2).
  manifest.json       torch/CUDA/device versions and, per file, what was asked, what was written, or the
        error's first line.

Every step is independent: one that fails is recorded in the manifest and the others go on.
"""
import argparse
import gzip
import json
import os
import shutil
import sys
import time
import traceback

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_zoo as zoo  # noqa: E402

MODELS = ["resnet18", "bert", "gpt2"]
TRACE_BATCH = 8
# torch.export specializes a dim whose example size is 1 (it cannot tell it from a broadcast), so a dynamic
# batch needs an example batch of at least 2; the files' counts at batch 1 come from binding batch=1.
EXPORT_BATCH = 2
# (model, mode, exec) recorded; compiled runs cost a compile each, so not every pair is compiled.
TRACES = [
    ("resnet18", "infer", "eager"), ("resnet18", "train", "eager"), ("resnet18", "infer", "compiled"),
    ("resnet18", "infer", "torchscript"),
    ("bert", "infer", "eager"), ("bert", "train", "eager"), ("bert", "train", "compiled"),
    ("gpt2", "infer", "eager"), ("gpt2", "train", "eager"), ("gpt2", "infer", "compiled"),
    # Pairs at equal FLOPs for trace diffs: TF32 off for cuDNN's convolutions (on by default), and on for
    # cuBLAS's products (off by default).
    ("resnet18", "infer", "eager-notf32"), ("bert", "infer", "eager-tf32"),
]


def first_line(ex):
    lines = [ln for ln in str(ex).strip().splitlines() if ln.strip()]
    return f"{type(ex).__name__}: {lines[0] if lines else ''}"[:400]


def build(name):
    """(model, inputs, names) of the zoo entry, as models/torch_zoo.py makes its files."""
    return zoo.instantiate(next(x for x in zoo.ZOO if x.name == name))


def batched(inputs, b):
    return [t.repeat(b, *([1] * (t.dim() - 1))) for t in inputs]


def eager_counts(model, inputs, names):
    macs_by_op, _, _ = zoo.eager_expectations(model, inputs)
    for p in model.parameters():
        p.requires_grad_(True)
    return {
        "inputs": [{"name": n, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                   for n, t in zip(names, inputs)],
        "params": sum(p.numel() for p in model.parameters()),
        "buffers": sum(b.numel() for b in model.buffers()),
        "macs": sum(macs_by_op.values()),
        "macs_by_op": macs_by_op,
        "source": "eager forward under models/torch_zoo.py's TorchDispatchMode counter (torch "
                  + torch.__version__ + "); params = sum(p.numel() for p in module.parameters())",
    }


def loss_of(out):
    """Cross-entropy against fixed random labels over the last dimension (classes or vocabulary)."""
    logits = out.reshape(-1, out.shape[-1]).float()
    g = torch.Generator(device="cpu").manual_seed(0)
    labels = torch.randint(0, logits.shape[-1], (logits.shape[0],), generator=g).to(logits.device)
    return F.cross_entropy(logits, labels)


def key_rows(prof, by_shape):
    rows = []
    for k in prof.key_averages(group_by_input_shape=by_shape):
        row = {"name": k.key, "count": k.count,
               "cpu_time_total_us": k.cpu_time_total, "self_cpu_time_total_us": k.self_cpu_time_total,
               "device_time_total_us": getattr(k, "device_time_total", getattr(k, "cuda_time_total", 0)),
               "self_device_time_total_us": getattr(k, "self_device_time_total",
                                                    getattr(k, "self_cuda_time_total", 0)),
               "flops": k.flops}
        if by_shape:
            row["input_shapes"] = k.input_shapes
        rows.append(row)
    return rows


def record_trace(name, mode, exe, out_dir, device):
    from torch.profiler import ProfilerActivity, profile, record_function, schedule
    model, inputs, _ = build(name)
    inputs = [t.to(device) for t in batched(inputs, TRACE_BATCH)]
    model = model.to(device)
    train = mode == "train"
    model.train(train)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3) if train else None
    runner = model
    tf32 = (torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32)
    if exe == "eager-notf32":
        torch.backends.cudnn.allow_tf32 = False
    elif exe == "eager-tf32":
        torch.backends.cuda.matmul.allow_tf32 = True
    if exe == "compiled":
        runner = torch.compile(model)
    elif exe == "torchscript":
        with torch.no_grad():
            runner = torch.jit.trace(model, tuple(inputs), check_trace=False, strict=False)

    def step():
        if train:
            with record_function("forward"):
                out = runner(*inputs)
            with record_function("loss"):
                loss = loss_of(out)
            with record_function("backward"):
                loss.backward()
            with record_function("optimizer"):
                opt.step()
                opt.zero_grad(set_to_none=True)
        else:
            with torch.no_grad():
                runner(*inputs)

    for _ in range(2):  # compile (torch.compile, the TorchScript profiling executor) and warm up, unprofiled
        step()
    torch.cuda.synchronize()
    base = f"{name}.{mode}.{exe}"
    raw = os.path.join(out_dir, base + ".pt.trace.json")
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with profile(activities=acts, record_shapes=True, with_stack=True, with_flops=True, with_modules=True,
                 profile_memory=True, schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
        for _ in range(5):
            step()
            torch.cuda.synchronize()
            prof.step()
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = tf32
    with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(raw)
    oracle = {"trace": base + ".pt.trace.json.gz", "torch": torch.__version__,
              "device": torch.cuda.get_device_name(0), "batch": TRACE_BATCH, "mode": mode, "exec": exe,
              "profiled_steps": 3, "tf32": {"cudnn": torch.backends.cudnn.allow_tf32 if exe != "eager-notf32" else False,
                                             "cublas": exe == "eager-tf32" or torch.backends.cuda.matmul.allow_tf32},
              "note": "torch.profiler key_averages() over the three active steps; times in microseconds",
              "by_name": key_rows(prof, False), "by_input_shape": key_rows(prof, True)}
    with open(os.path.join(out_dir, base + ".oracle.json"), "w") as f:
        json.dump(oracle, f, indent=1)
    return {"file": base + ".pt.trace.json.gz", "bytes": os.path.getsize(raw + ".gz")}


def dynamic_spec(name, names, inputs, level):
    """dynamic_shapes for torch.export / the dynamo exporter: level 2 batch and seq, 1 batch, 0 none."""
    from torch.export import Dim
    if level == 0:
        return None, []
    batch = Dim("batch", min=1, max=1024)
    spec, dims = {}, ["batch"]
    for n, t in zip(names, inputs):
        d = {0: batch}
        if level == 2 and t.dim() == 2 and not t.is_floating_point():
            d[1] = Dim("seq", min=2, max=t.shape[1])  # the models' positional tables hold max_len = 16
            if "seq" not in dims:
                dims.append("seq")
        spec[n] = d
    return spec, dims


def export_dynamic(name, what, write):
    """Calls write(model, inputs, names, spec) -> {"file", "bytes", ...} with the batch-2 example inputs and
    dynamic batch and seq, then batch only, then none, until an exporter accepts; the result also says which
    dims stayed dynamic and why the others were refused."""
    model, inputs, names = build(name)
    inputs = batched(inputs, EXPORT_BATCH)
    errors = []
    for level in (2, 1, 0):
        spec, dims = dynamic_spec(name, names, inputs, level)
        try:
            return {**write(model, inputs, names, spec), "dynamic": dims, "refused": errors}
        except Exception as ex:  # noqa: BLE001 - try fewer dynamic dims, record why
            errors.append({"dynamic": dims, "error": first_line(ex)})
    raise RuntimeError(what + " refused every dynamic spec: " + json.dumps(errors))


def export_pt2(name, out_dir):
    def write(model, inputs, names, spec):
        ep = torch.export.export(model, tuple(inputs), dynamic_shapes=spec)
        path = os.path.join(out_dir, name + ".pt2")
        torch.export.save(ep, path)
        return {"file": name + ".pt2", "bytes": os.path.getsize(path)}
    return export_dynamic(name, "torch.export", write)


def export_onnx(name, out_dir):
    def write(model, inputs, names, spec):
        path = os.path.join(out_dir, name + ".dynamo.onnx")
        prog = torch.onnx.export(model, tuple(inputs), dynamo=True, input_names=names, dynamic_shapes=spec,
                                 external_data=True)
        prog.save(path, external_data=True)
        data = [f for f in os.listdir(out_dir) if f.startswith(name + ".dynamo.onnx") and f != name + ".dynamo.onnx"]
        for f in data:
            os.remove(os.path.join(out_dir, f))
        return {"file": name + ".dynamo.onnx", "bytes": os.path.getsize(path), "removed_external_data": data}
    return export_dynamic(name, "the dynamo exporter", write)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="+", default=["expect", "traces", "pt2", "onnx"])
    ap.add_argument("--onnx-models", nargs="*", default=None,
                    help="zoo entries for the dynamo exporter (default: the three fixtures' models)")
    ap.add_argument("--traces", nargs="*", default=None, help="only these NAME.MODE.EXEC traces")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds; steps after it are skipped")
    args = ap.parse_args()
    t_end = time.time() + args.deadline
    for sub in ("traces", "pt2", "onnx"):
        os.makedirs(os.path.join(args.out, sub), exist_ok=True)
    cuda = torch.cuda.is_available()
    man = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "device": torch.cuda.get_device_name(0) if cuda else None, "steps": []}

    def run(kind, label, fn):
        if time.time() > t_end:
            man["steps"].append({"kind": kind, "what": label, "skipped": "deadline"})
            return
        t0 = time.time()
        try:
            r = fn()
            man["steps"].append({"kind": kind, "what": label, "ok": True, "seconds": round(time.time() - t0, 2), **r})
        except Exception as ex:  # noqa: BLE001 - record and go on
            man["steps"].append({"kind": kind, "what": label, "ok": False, "error": first_line(ex),
                                 "seconds": round(time.time() - t0, 2)})
            traceback.print_exc()
        print(json.dumps(man["steps"][-1]), flush=True)
        with open(os.path.join(args.out, "manifest.json"), "w") as f:
            json.dump(man, f, indent=1)

    def write_expect(name, path, batches):
        model, inputs, names = build(name)
        doc = {"name": name}
        for b in batches:
            doc[f"batch_{b}"] = eager_counts(model, batched(inputs, b) if b > 1 else inputs, names)
        with open(os.path.join(args.out, path), "w") as f:
            json.dump(doc, f, indent=1)
        return {"file": path}

    if "expect" in args.only:
        for name in MODELS:
            run("expect", name, lambda name=name: write_expect(name, name + ".expect.json",
                                                                (1, EXPORT_BATCH, TRACE_BATCH)))
    if "traces" in args.only:
        if not cuda:
            man["steps"].append({"kind": "traces", "skipped": "no CUDA device"})
        else:
            for name, mode, exe in TRACES:
                if args.traces is not None and f"{name}.{mode}.{exe}" not in args.traces:
                    continue
                run("trace", f"{name}.{mode}.{exe}",
                    lambda a=(name, mode, exe): record_trace(*a, os.path.join(args.out, "traces"), "cuda"))
    if "pt2" in args.only:
        for name in MODELS:
            run("pt2", name, lambda name=name: export_pt2(name, os.path.join(args.out, "pt2")))
    if "onnx" in args.only:
        def onnx_step(name):
            if name not in MODELS:  # the three fixtures' models have theirs beside the traces
                write_expect(name, os.path.join("onnx", name + ".expect.json"), (1, EXPORT_BATCH))
            return export_onnx(name, os.path.join(args.out, "onnx"))
        for name in (args.onnx_models if args.onnx_models is not None else MODELS):
            run("onnx", name, lambda name=name: onnx_step(name))
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(man, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
