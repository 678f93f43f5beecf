#!/usr/bin/python3
"""What a user with only a few of their own profiles gets from `flopwise calibrate` + `--predict`
(bench/README.md, "Predicted latency with few models").

    /usr/bin/python3 bench/calibration/few.py RUN_DIR [--flopwise build/flopwise] [--json OUT]

RUN_DIR holds one NAME.run.json per model (`flopwise run MODEL --profile ... --format json`). For every
calibration size k from 1 to n-1 and every held-out model, every k-subset of the other models is calibrated
(`flopwise calibrate`, its defaults) and the held-out model predicted (`flopwise MODEL --predict`); the
prediction's op sum is compared with the sum of the held-out model's units' fastest times. Prints per k: how
many predictions land within +-10 % and +-20 %, the median absolute error, how often the error lies inside the
prediction's band (total_ms +- band_ms; a prediction without a band counts as not covered), how many
predictions said they were weak (LatencyPrediction::weak), and the same figures for those that did not."""
import argparse
import glob
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs")
    ap.add_argument("--flopwise", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "flopwise"))
    ap.add_argument("--json", help="write every prediction here")
    ap.add_argument("--calibrate-args", default="", help="more options for flopwise calibrate (one string)")
    args = ap.parse_args()
    fw = args.flopwise
    runs = {}
    for path in sorted(glob.glob(os.path.join(args.runs, "*.run.json"))):
        runs[os.path.basename(path)[: -len(".run.json")]] = (path, json.load(open(path)))
    names = sorted(runs)
    tmp = tempfile.mkdtemp()
    rows = []
    for k in range(1, len(names)):
        for held in names:
            path, d = runs[held]
            measured = sum(u["min_ms"] for u in d["measured_units"]["units"] if u["min_ms"] > 0)
            pins = [x for b in d["runtime"].get("input_bindings", []) for x in ("--dim", b)]
            others = [n for n in names if n != held]
            for subset in itertools.combinations(others, k):
                calib = os.path.join(tmp, "c.json")
                run([fw, "calibrate", *[runs[n][0] for n in subset], "-o", calib, *args.calibrate_args.split()])
                p = json.loads(run([fw, d["model"]["path"], *pins, "--predict", calib, "--format", "json"]))
                p = p["prediction"]
                err = p["total_ms"] / measured - 1
                band = p.get("band_ms")
                covered = band is not None and band >= 0 and abs(p["total_ms"] - measured) <= band
                rows.append({"k": k, "held_out": held, "calibrated": list(subset), "measured_ms": measured,
                             "predicted_ms": p["total_ms"], "band_ms": band, "error": err, "covered": covered,
                             "weak": p.get("weak", "")})
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    print("| models calibrated | predictions | within 10 % | within 20 % | median abs. error | inside the band | "
          "said weak | not weak: within 10 % | within 20 % | inside the band |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")

    def share(rs, test):
        return "%.0f %%" % (100 * sum(test(r) for r in rs) / len(rs)) if rs else "-"

    for k in range(1, len(names)):
        rs = [r for r in rows if r["k"] == k]
        strong = [r for r in rs if not r["weak"]]
        print("| %d | %d | %s | %s | %.1f %% | %s | %s | %s (%d) | %s | %s |" % (
            k, len(rs), share(rs, lambda r: abs(r["error"]) <= 0.1), share(rs, lambda r: abs(r["error"]) <= 0.2),
            100 * statistics.median(abs(r["error"]) for r in rs), share(rs, lambda r: r["covered"]),
            share(rs, lambda r: bool(r["weak"])), share(strong, lambda r: abs(r["error"]) <= 0.1), len(strong),
            share(strong, lambda r: abs(r["error"]) <= 0.2), share(strong, lambda r: r["covered"])))

if __name__ == "__main__":
    main()
