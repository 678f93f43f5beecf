#!/usr/bin/env python3
"""Analyse every archive of a models/torch_zoo.py directory with a flopwise build and compare with the
generator's eager counts (expect.json: MACs from the dispatch counter, params from module.parameters()).

    python3 bench/gpu/zoo_check.py FLOPWISE ZOO_DIR [--timeout 60] [--jobs 4]

Prints one JSON line per file and a summary line: {"files", "loaded", "exact_macs", "exact_params",
"failures": [...]}; a failure names the file, the exit code and the first line of stderr.
"""
import argparse
import collections
import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("flopwise")
    ap.add_argument("zoo")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--jobs", type=int, default=4)
    a = ap.parse_args()
    n = collections.Counter()
    failures, not_lowered = [], collections.Counter()
    work = []
    for f in sorted(os.listdir(a.zoo)):
        if not f.endswith(".expect.json"):
            continue
        e = json.load(open(os.path.join(a.zoo, f)))
        for kind in ("trace", "script"):
            name = (e.get("files") or {}).get(kind)
            if name:
                work.append((name, e))

    def analyse(item):
        name, _ = item
        try:
            return subprocess.run([a.flopwise, os.path.join(a.zoo, name), "--format", "json"],
                                  capture_output=True, text=True, timeout=a.timeout)
        except subprocess.TimeoutExpired:
            return None

    with ThreadPoolExecutor(a.jobs) as pool:
        results = list(pool.map(analyse, work))
    for (name, e), p in zip(work, results):
        n["files"] += 1
        if p is None:
            failures.append({"file": name, "rc": "timeout"})
            continue
        if p.returncode != 0:
            err = (p.stderr.strip().splitlines() or [""])[0][:300]
            failures.append({"file": name, "rc": p.returncode, "error": err})
            print(json.dumps(failures[-1]), flush=True)
            continue
        n["loaded"] += 1
        r = json.loads(p.stdout)
        t = r["totals"]
        row = {"file": name, "macs": t.get("macs"), "expect_macs": e["macs"], "params": t.get("params"),
               "expect_params": e["params"], "uncounted": t.get("uncounted_nodes"),
               "unsupported": [u.get("op") if isinstance(u, dict) else u for u in r.get("unsupported", [])]}
        for u in row["unsupported"]:
            not_lowered[str(u)] += 1
        n["exact_macs"] += row["macs"] == row["expect_macs"]
        n["exact_params"] += row["params"] == row["expect_params"]
        if row["macs"] != row["expect_macs"] or row["params"] != row["expect_params"]:
            print(json.dumps(row), flush=True)
    print(json.dumps({"summary": dict(n), "failures": failures,
                      "unsupported_ops": dict(not_lowered.most_common())}), flush=True)


if __name__ == "__main__":
    main()
