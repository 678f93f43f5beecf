#!/usr/bin/env python3
# models/traces/serving/cut_tracelens.py — small fixtures from TraceLens's serving traces (github.com/AMD-AGI/
# TraceLens, tests/traces/inference/, MIT licence): an execution trace whose decode step replays a HIP graph,
# and the capture trace of that graph with its execution_details.json. Kept: what flopwise reads of a trace
# (cpu_op, user_annotation, nn.Module frames, runtime calls, kernels, memcpy/memset, deviceProperties); dropped:
# Python frames, flow arrows, instant events. Times, names, shapes and correlations are left as recorded.
#   python3 cut_tracelens.py TRACELENS/tests/traces/inference/sglang_decode sglang_decode
import gzip, json, os, shutil, sys

KEEP = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset"}


def cut(src, dst):
    with gzip.open(src, "rt") as f:
        d = json.load(f)
    ev = [e for e in d["traceEvents"] if e.get("cat") in KEEP or
          (e.get("cat") == "python_function" and e.get("name", "").startswith("nn.Module: "))]
    for e in ev:
        e.get("args", {}).pop("Python parent id", None)
    out = {k: v for k, v in d.items() if k in ("schemaVersion", "deviceProperties")}
    out["traceEvents"] = ev
    with gzip.open(dst, "wt", compresslevel=9) as f:
        json.dump(out, f, separators=(",", ":"))


def main(src_dir, dst_dir):
    os.makedirs(os.path.join(dst_dir, "capture_traces"), exist_ok=True)
    for name in os.listdir(src_dir):
        if name.endswith(".json.gz"):
            cut(os.path.join(src_dir, name), os.path.join(dst_dir, name))
    caps = os.path.join(src_dir, "capture_traces")
    with open(os.path.join(caps, "execution_details.json")) as f:
        details = json.load(f)
    shutil.copy(os.path.join(caps, "execution_details.json"), os.path.join(dst_dir, "capture_traces"))
    for d in details:
        cut(os.path.join(caps, d["file"]), os.path.join(dst_dir, "capture_traces", d["file"]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
