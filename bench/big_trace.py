#!/usr/bin/env python3
"""Writes a large PyTorch profiler trace by repeating a real one (bench/README.md, "PyTorch traces at scale").

    big_trace.py SRC.json[.gz] OUT.json --mb 1024

Each copy of SRC's traceEvents is shifted in time past the previous copy, and its ids (External id,
correlation, flow ids, ProfilerStep numbers) are offset, so the copies are distinct steps of one long trace
that attribute as the original does. The other top-level keys are kept once. Written event by event.
"""
import argparse
import gzip
import json
import re


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--mb", type=float, default=1024)
    a = ap.parse_args()
    op = gzip.open if a.src.endswith(".gz") else open
    with op(a.src, "rt") as f:
        d = json.load(f)
    events = d.pop("traceEvents")
    ts = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    span = (max(ts) - min(ts)) * 1.01 + 1000
    max_id = 0
    for e in events:
        args = e.get("args") or {}
        for k in ("External id", "correlation"):
            if isinstance(args.get(k), int):
                max_id = max(max_id, args[k])
        if isinstance(e.get("id"), int):
            max_id = max(max_id, e["id"])
    step_re = re.compile(r"^ProfilerStep#(\d+)$")
    steps = [int(m.group(1)) for e in events for m in [step_re.match(str(e.get("name", "")))] if m]
    n_steps = (max(steps) - min(steps) + 1) if steps else 1
    limit = int(a.mb * 1024 * 1024)
    written = 0
    copies = 0
    with open(a.out, "w") as out:
        head = json.dumps(d)[:-1]
        out.write(head + (", " if d else "") + '"traceEvents": [\n')
        first = True
        while written < limit:
            for e in events:
                x = dict(e)
                if isinstance(x.get("ts"), (int, float)):
                    x["ts"] = x["ts"] + copies * span
                if isinstance(x.get("id"), int):
                    x["id"] = x["id"] + copies * (max_id + 1)
                m = step_re.match(str(x.get("name", "")))
                if m:
                    x["name"] = "ProfilerStep#%d" % (int(m.group(1)) + copies * n_steps)
                args = x.get("args")
                if isinstance(args, dict):
                    args = dict(args)
                    for k in ("External id", "correlation"):
                        if isinstance(args.get(k), int):
                            args[k] = args[k] + copies * (max_id + 1)
                    x["args"] = args
                s = json.dumps(x)
                out.write(("" if first else ",\n") + s)
                first = False
                written += len(s) + 2
            copies += 1
        out.write("\n]}\n")
    print(f"{a.out}: {copies} copies of {len(events)} events, {written / 1048576:.0f} MiB")


if __name__ == "__main__":
    main()
