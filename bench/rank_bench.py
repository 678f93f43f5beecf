#!/usr/bin/env python3
"""A synthetic distributed run for `flopwise trace DIR` against HTA (bench/README.md, "Rank files: flopwise
trace DIR against HTA").

    rank_bench.py gen OUT_DIR --ranks 64 --repeat R    # host python: writes OUT_DIR/rank-N.json
    rank_bench.py hta HTA_SOURCE_DIR RUN_DIR           # in the modern root: HTA's load + both views, timed

`gen` makes rank N from models/traces/dlrm's rank N % 8 (a real V100 DLRM step), its events repeated R times,
each copy shifted in time past the previous and its correlation / External ids offset (so kernels still meet
their launches), and distributedInfo.rank set to N. `hta` prints HTA's wall seconds for TraceAnalysis(...)
(parse, align, filter: its load) and for get_temporal_breakdown + get_comm_comp_overlap, and the peak RSS of
the process and of its largest worker (HTA parses ranks in a multiprocessing pool).
"""
import glob
import gzip
import json
import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gen(out, ranks, repeat):
    os.makedirs(out, exist_ok=True)
    src = sorted(glob.glob(os.path.join(ROOT, "models", "traces", "dlrm", "*.json.gz")))
    base = [json.load(gzip.open(f, "rt")) for f in src]
    for r in range(ranks):
        d = dict(base[r % len(base)])
        events = d["traceEvents"]
        ts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
        span = (max(ts) - min(ts)) + 1000
        d["distributedInfo"] = dict(d["distributedInfo"], rank=r, world_size=ranks)
        with open(os.path.join(out, "rank-%d.json" % r), "w") as f:
            f.write("{" + ", ".join("%s: %s" % (json.dumps(k), json.dumps(v)) for k, v in d.items() if k != "traceEvents"))
            f.write(', "traceEvents": [\n')
            first = True
            for k in range(repeat):
                for e in events:
                    e2 = dict(e)
                    if "ts" in e2 and isinstance(e2["ts"], (int, float)):
                        e2["ts"] = e2["ts"] + k * span
                    if "args" in e2:
                        a = dict(e2["args"])
                        for key in ("correlation", "External id"):
                            if isinstance(a.get(key), int):
                                a[key] += k * 10_000_000
                        e2["args"] = a
                    if "id" in e2 and isinstance(e2["id"], int):
                        e2["id"] += k * 10_000_000
                    f.write(("" if first else ",\n") + json.dumps(e2))
                    first = False
            f.write("\n]}\n")


def hta(hta_dir, run_dir):
    sys.path.insert(0, os.path.join(ROOT, "models", "traces"))
    from hta_oracle import stub_plotly
    sys.path.insert(0, os.path.abspath(hta_dir))
    stub_plotly()
    from hta.trace_analysis import TraceAnalysis
    t0 = time.perf_counter()
    ta = TraceAnalysis(trace_dir=run_dir)
    t1 = time.perf_counter()
    ta.get_temporal_breakdown(visualize=False)
    ta.get_comm_comp_overlap(visualize=False)
    t2 = time.perf_counter()
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"ranks": len(ta.t.traces), "load_s": round(t1 - t0, 2), "views_s": round(t2 - t1, 2),
                      "peak_rss_mib": round(me / 1024, 1), "largest_worker_rss_mib": round(kids / 1024, 1)}))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[sys.argv.index("--ranks") + 1]), int(sys.argv[sys.argv.index("--repeat") + 1]))
    else:
        hta(sys.argv[2], sys.argv[3])
