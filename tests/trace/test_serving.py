"""flopwise trace on serving traces: kernels replayed from HIP graphs joined to their capture.

Traces: models/traces/serving (cut from TraceLens's tests/traces/inference, github.com/AMD-AGI/TraceLens, MIT
licence; MI300X runs of vLLM and sglang). Every figure compared is computed here from the traces' own events
with Python's json module: the kernels whose correlation is a hipGraphLaunch's, the captured launches (runtime
calls naming a kernel, between hipStreamBeginCapture and hipStreamEndCapture, that no kernel event ran), their
pairing by name in order, and the step annotation's numbers.
"""
import gzip
import json
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVING = os.path.join(ROOT, "models", "traces", "serving")
CLI = os.environ.get("FLOPWISE_CLI") or os.path.join(ROOT, "build", "flopwise")
PAIRS = {
    "sglang_decode": "sglang_Qwen3-8B_decode.json.gz",
    "vllm_decode_full": "graph_execution.json.gz",
    "vllm_prefilldecode_piecewise": "graph_execution.json.gz",
}


def load(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]


def replays(ev):
    """Kernels of each graph launch, in time order, graph launches in time order."""
    launches = sorted((e for e in ev if e.get("cat") == "cuda_runtime" and "GraphLaunch" in e["name"]),
                      key=lambda e: e["ts"])
    by = {e["args"]["correlation"]: [] for e in launches}
    for e in ev:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e["args"].get("correlation") in by:
            by[e["args"]["correlation"]].append(e)
    return [sorted(by[e["args"]["correlation"]], key=lambda k: k["ts"]) for e in launches]


def captured_graphs(ev):
    ran = {e["args"].get("correlation") for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")}
    graphs, cur, open_ = [], [], False
    for e in sorted((e for e in ev if e.get("cat") == "cuda_runtime"), key=lambda e: e["ts"]):
        if "StreamBeginCapture" in e["name"]:
            cur, open_ = [], True
        elif "StreamEndCapture" in e["name"]:
            graphs.append(cur)
            open_ = False
        elif open_ and "kernel" in e["args"] and e["args"]["correlation"] not in ran:
            cur.append(e["args"]["kernel"])
    return graphs


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_replayed_kernels_take_their_captured_op(pair):
    d = os.path.join(SERVING, pair)
    ev = load(os.path.join(d, PAIRS[pair]))
    details = json.load(open(os.path.join(d, "capture_traces", "execution_details.json")))
    graphs = captured_graphs(load(os.path.join(d, "capture_traces", details[0]["file"])))
    reps = replays(ev)
    # Each replay's kernel names, in order, are one captured graph's (the next one in capture order).
    g = 0
    for r in reps:
        names = [k["name"] for k in r]
        while graphs[g % len(graphs)] != names:
            g += 1
            assert g < 10 * len(graphs), "a replay matches no captured graph"
        g += 1
    j = json.loads(subprocess.run([CLI, "trace", os.path.join(d, PAIRS[pair]), "--format", "json"],
                                  stdout=subprocess.PIPE, check=True).stdout)
    gr = j["graph_replay"]
    assert gr["graph_launches"] == len(reps)
    assert gr["graphs_captured"] == len(graphs)
    assert gr["replayed"] == sum(len(r) for r in reps)
    assert gr["matched"] == gr["replayed"]
    assert gr["replayed_us"] == pytest.approx(sum(k["dur"] for r in reps for k in r), rel=1e-9)
    # No replayed kernel is left without an op (the eager kernels' own launches may be outside the trace).
    assert j["gpu"]["unattributed_us"] <= j["gpu"]["event_us"] - gr["replayed_us"] + 1e-6
    # The step annotation's tokens and sum of sq*sk.
    step = next(e["name"] for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("execute_"))
    groups = [tuple(map(int, m)) for m in re.findall(r"\(sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)\)", step)]
    s = j["serving"]["steps"][0]
    assert s["context_tokens"] == groups[0][0]
    assert s["generated_tokens"] == groups[1][0]
    assert s["kv_tokens"] == groups[0][1] + groups[1][1]
    assert s["sq_sk"] == groups[0][3] + groups[1][3]


def test_capture_none_leaves_replays_unpriced():
    d = os.path.join(SERVING, "sglang_decode")
    j = json.loads(subprocess.run([CLI, "trace", os.path.join(d, PAIRS["sglang_decode"]), "--format", "json",
                                   "--capture", "none"], stdout=subprocess.PIPE, check=True).stdout)
    assert j["graph_replay"]["matched"] == 0
    assert j["graph_replay"]["replayed"] == 544
    assert j["gpu"]["unattributed_us"] > 0.9 * j["gpu"]["event_us"]
