"""Holistic Trace Analysis' own figures for the traces in models/traces, the oracle of tests/trace/test_census.py.

Runs HTA (github.com/facebookresearch/HolisticTraceAnalysis, pure Python) from its source in the modern root
(torch 2.14's Debian testing root has pandas, numpy and networkx; plotly, which HTA imports only to draw, is
replaced by an inert stand-in here since nothing is drawn):

    bash scripts/modern_torch.sh python3 models/traces/hta_oracle.py HTA_SOURCE_DIR WORK_DIR

HTA_SOURCE_DIR is a checkout of HTA (f4d0062 was used) with its tests/data; WORK_DIR a scratch directory inside
the checkout (the modern root sees only the checkout). Writes models/traces/hta_oracle.json:
  - trace_diff_default: TraceDiff.compare_traces(control, test) and ops_diff with HTA's defaults (first rank,
    first iteration) on HTA's trace_diff pair, split by device type (CPU: stream -1; GPU: the rest), and
    ops_diff's category counts over both;
  - trace_diff_all_steps: the same over every iteration (HTA's control_iteration/test_iteration lists);
  - trace_compare: HTA's unit-test pair (trace_compare base/test, rank 1, iteration 1010), CPU ops_diff;
  - dlrm: TraceAnalysis(trace_dir=models/traces/dlrm) get_temporal_breakdown and get_comm_comp_overlap, and
    the seconds HTA took to load the 8 ranks;
  - nccl: the same two views of nccl_rank0.json.gz (HTA's nccl_parser_config trace, torch 2.x, 3 steps).
"""
import json
import os
import shutil
import sys
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def stub_plotly():
    class Inert:
        def __init__(self, *a, **k):
            pass

        def __call__(self, *a, **k):
            return Inert()

        def __getattr__(self, name):
            return Inert()

    root = types.ModuleType("plotly")
    for sub in ("express", "graph_objects", "subplots", "io"):
        m = types.ModuleType("plotly." + sub)
        m.__getattr__ = lambda name: Inert()
        sys.modules["plotly." + sub] = m
        setattr(root, sub, m)
    sys.modules["plotly"] = root


def one_file_dir(work, name, src):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copy(src, d)
    return d


def compare(TraceDiff, DeviceType, c, t, **kw):
    out = {}
    for dev in ("CPU", "GPU"):
        df = TraceDiff.compare_traces(c, t, device_type=getattr(DeviceType, dev), **kw)
        cols = [col for col in df.columns if col.endswith("_counts") and not col.startswith("diff")]
        durs = [col for col in df.columns if col.endswith("_total_duration")]
        out[dev] = {str(name): [int(row[cols[0]]), float(row[durs[0]]), int(row[cols[1]]), float(row[durs[1]])]
                    for name, row in df.iterrows()}
    cats = TraceDiff.ops_diff(c, t, **kw)
    out["ops_diff"] = {k: len(v) for k, v in cats.items()}
    return out


def main():
    hta_dir, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    sys.path.insert(0, hta_dir)
    stub_plotly()
    from hta.trace_analysis import TraceAnalysis
    from hta.trace_diff import DeviceType, LabeledTrace, TraceDiff

    os.makedirs(work, exist_ok=True)
    hta_data = os.path.join(ROOT, "models", "traces", "hta")
    out = {"hta_commit": "f4d0062"}
    c = LabeledTrace(label="control", trace_dir=one_file_dir(work, "control", os.path.join(hta_data, "trace_diff_control.json.gz")))
    t = LabeledTrace(label="test", trace_dir=one_file_dir(work, "test", os.path.join(hta_data, "trace_diff_test.json.gz")))
    out["trace_diff_default"] = compare(TraceDiff, DeviceType, c, t)
    out["trace_diff_default"]["iteration"] = [c.iterations()[0], t.iterations()[0]]
    out["trace_diff_all_steps"] = compare(TraceDiff, DeviceType, c, t, control_iteration=c.iterations(),
                                          test_iteration=t.iterations())
    b = LabeledTrace(label="base", trace_dir=one_file_dir(work, "base", os.path.join(hta_data, "trace_compare_base.json.gz")))
    s = LabeledTrace(label="stest", trace_dir=one_file_dir(work, "stest", os.path.join(hta_data, "trace_compare_test.json.gz")))
    out["trace_compare"] = {k: len(v) for k, v in TraceDiff.ops_diff(b, s, 1, 1, 1010, 1010, DeviceType.CPU).items()}

    t0 = time.perf_counter()
    ta = TraceAnalysis(trace_dir=os.path.join(ROOT, "models", "traces", "dlrm"))
    load_s = time.perf_counter() - t0
    tb = ta.get_temporal_breakdown(visualize=False)
    ov = ta.get_comm_comp_overlap(visualize=False)
    ranks = {}
    for _, r in tb.iterrows():
        ranks[int(r["rank"])] = {"idle_time_us": float(r["idle_time(us)"]), "compute_time_us": float(r["compute_time(us)"]),
                                 "non_compute_time_us": float(r["non_compute_time(us)"]),
                                 "kernel_time_us": float(r["kernel_time(us)"])}
    for _, r in ov.iterrows():
        ranks[int(r["rank"])]["comm_comp_overlap_pct"] = float(r["comp_comm_overlap_pctg"])
    out["dlrm"] = {"load_s": round(load_s, 2), "ranks": [dict(rank=k, **v) for k, v in sorted(ranks.items())]}
    nccl = TraceAnalysis(trace_dir=one_file_dir(work, "nccl", os.path.join(hta_data, "nccl_rank0.json.gz")))
    tb = nccl.get_temporal_breakdown(visualize=False).iloc[0]
    out["nccl"] = {"kernel_time_us": float(tb["kernel_time(us)"]), "idle_time_us": float(tb["idle_time(us)"]),
                   "compute_time_us": float(tb["compute_time(us)"]),
                   "non_compute_time_us": float(tb["non_compute_time(us)"]),
                   "comm_comp_overlap_pct": float(nccl.get_comm_comp_overlap(visualize=False).iloc[0]["comp_comm_overlap_pctg"])}
    with open(os.path.join(ROOT, "models", "traces", "hta_oracle.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
