#!/usr/bin/python3
"""Leave-one-family-out accuracy of `flopwise calibrate` + `--predict` (bench/README.md, "Predicted latency").

    /usr/bin/python3 bench/calibration/loo.py RUN_DIR [--extra SUITE_DIR] [--flopwise build/flopwise] [--weighting W]

RUN_DIR holds NAME.run.json or NAME.rK.run.json files (`flopwise run ... --format json`, one runtime:
bench/calibration/ort_data.sh or torch_data.sh; rK: the K-th of repeated measurements of NAME, each a sample
of the calibration, their median the held-out model's measured time). Each model's family is its name up to the first digit or '_' that names a
size (FAMILIES below, else the name itself). For every family: calibrate on every other family's runs,
predict each of its models with `flopwise MODEL --predict` (the model file and input bindings the run report
names), and compare the predicted total with what the run measured: the sum of the units it times (kernel
time: ORT's node time, LibTorch's op sum), and the predicted forward (the calibration's wall fit) with the
measured forward latency. --extra DIR: more run reports (the calibration suite's, bench/calibration/suite_data.sh)
in every family's calibration; they are never predicted. Three predictors side by side:
  per-op     the calibration as flopwise writes it (one fit per op type, the all-ops fit for rare types);
  all-ops    one fit for every op (calibrate --min-samples 1000000);
  FLOP/s     the static FLOPs at the calibration models' median FLOP/s (what a FLOP count alone predicts).
Prints, per predictor, the share of models within +-10 % and +-20 % of the measured op sum and of the wall
median, the median absolute error, and the mean per-model Spearman rank correlation of the depth-1 scopes'
predicted and measured times."""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

FAMILIES = {
    "resnext": "resnet", "wide_resnet": "resnet", "resnet": "resnet", "mobilenet_v2": "mobilenet",
    "mobilenet_v3": "mobilenet", "efficientnet": "efficientnet", "densenet": "densenet", "vgg": "vgg",
    "squeezenet": "squeezenet", "shufflenet": "shufflenet", "regnet": "regnet", "mnasnet": "mnasnet",
    "googlenet": "inception", "inception": "inception", "alexnet": "alexnet", "convnext": "convnext",
    "vit": "vit", "swin": "swin", "bert": "transformer_lm", "gpt2": "transformer_lm", "lstm_lm": "rnn_lm",
    "gru_lm": "rnn_lm", "unet": "unet", "r3d": "video", "mc3": "video", "r2plus1d": "video",
}


def family(name):
    for prefix in sorted(FAMILIES, key=len, reverse=True):
        if name.startswith(prefix):
            return FAMILIES[prefix]
    return name


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr))
    return p.stdout


def spearman(a, b):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = (sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)) ** 0.5
    return num / den if den else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("runs")
    ap.add_argument("--flopwise", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "flopwise"))
    ap.add_argument("--json", help="write the per-model rows here")
    ap.add_argument("--extra", action="append", default=[],
                    help="a directory of more run reports (the calibration suite, bench/calibration/suite_data.sh) "
                         "in every fold's calibration, never held out")
    ap.add_argument("--weighting", default="sqrt")
    ap.add_argument("--min-samples", default="10", help="calibrate's --min-samples for the per-op predictor")
    ap.add_argument("--statistic", default="fastest", choices=("fastest", "median"),
                    help="calibrate's --statistic, and what a held-out model measured: the sum of its units' "
                         "fastest times over all its repeats (fastest) or the median of its repeats' op sums")
    ap.add_argument("--no-variants", action="store_true",
                    help="calibrate without the units' kernel variants (one fit per op type), for comparison")
    ap.add_argument("--no-params", action="store_true",
                    help="calibrate without the units' parameter bytes (as reports before stop 49), for comparison")
    ap.add_argument("--local-bandwidth", default=None, help="calibrate's --local-bandwidth (default: its own)")
    args = ap.parse_args()
    fw = args.flopwise
    local = ["--local-bandwidth", args.local_bandwidth] if args.local_bandwidth is not None else []
    runs = {}  # model -> [(path, doc)], its repeats
    for path in sorted(glob.glob(os.path.join(args.runs, "*.run.json"))):
        name = re.sub(r"\.r\d+$", "", os.path.basename(path)[: -len(".run.json")])
        runs.setdefault(name, []).append((path, json.load(open(path))))
    tmp = tempfile.mkdtemp()
    strip = [k for k, on in (("variant", args.no_variants), ("param_bytes", args.no_params))
             if on]

    def stripped(path, d, prefix=""):  # a copy of a report without the stripped members of its units
        for u in d["measured_units"]["units"]:
            for k in strip:
                u.pop(k, None)
            for p in u.get("parts", []):
                for k in strip:
                    p.pop(k, None)
        copy = os.path.join(tmp, prefix + os.path.basename(path))
        json.dump(d, open(copy, "w"))
        return copy

    if strip:
        for name, reps in runs.items():
            for i, (path, d) in enumerate(reps):
                reps[i] = (stripped(path, d), d)
    extra = [p for d in args.extra for p in sorted(glob.glob(os.path.join(d, "*.run.json")))]
    if strip:
        extra = [stripped(p, json.load(open(p)), "extra_") for p in extra]
    fams = {}
    for name in runs:
        fams.setdefault(family(name), []).append(name)
    rows = []
    for fam, members in sorted(fams.items()):
        train = [p for n in runs if family(n) != fam for p, _ in runs[n]] + extra
        per_op, all_ops = os.path.join(tmp, fam + ".json"), os.path.join(tmp, fam + ".all.json")
        w = ["--weighting", args.weighting, "--statistic", args.statistic]
        run([fw, "calibrate", *train, "-o", per_op, "--min-samples", args.min_samples, *w, *local])
        run([fw, "calibrate", *train, "-o", all_ops, "--min-samples", "1000000", *w])
        # FLOP/s of the calibration models: static FLOPs / measured op sum, median over them
        key = "min_ms" if args.statistic == "fastest" else "ms"
        rates = [d["static_totals"]["flops"] / (sum(u[key] for u in d["measured_units"]["units"]) * 1e-3)
                 for n in runs if family(n) != fam for p, d in runs[n] if d["summary"].get("profiled_op_sum_ms")]
        rate = statistics.median(rates)
        for n in members:
            path, d = runs[n][0]
            model = d["model"]["path"]
            pins = []
            for b in d["runtime"].get("input_bindings", []):
                pins += ["--dim", b]
            got = {}
            for label, calib in (("per-op", per_op), ("all-ops", all_ops)):
                rep = json.loads(run([fw, model, *pins, "--predict", calib, "--format", "json"]))
                got[label] = rep["prediction"]
            got_flops = rep["totals"]["flops"] / rate * 1e3
            measured = {s["name"]: statistics.median(s2["latency_ms"] for _, d2 in runs[n] for s2 in d2["scopes"]
                                                     if s2["name"] == s["name"]) for s in d["scopes"]}
            sums = [d2["summary"]["profiled_op_sum_ms"] for _, d2 in runs[n]]
            op_sum = statistics.median(sums)
            if args.statistic == "fastest":  # each unit's fastest time over every repeat, summed
                fastest = {}
                for _, d2 in runs[n]:
                    for u in d2["measured_units"]["units"]:
                        if u["min_ms"] > 0:
                            fastest[u["name"]] = min(fastest.get(u["name"], u["min_ms"]), u["min_ms"])
                op_sum = sum(fastest.values())
            if args.statistic == "fastest":  # the fastest forward of all repeats
                wall = min(d2["summary"]["fwd_latency_ms"]["min"] for _, d2 in runs[n])
            else:
                wall = statistics.median(d2["summary"]["fwd_latency_ms"]["median"] for _, d2 in runs[n])
            row = {"model": n, "family": fam, "op_sum_ms": op_sum, "wall_ms": wall, "flops": rep["totals"]["flops"],
                   "repeats": len(sums), "spread": (max(sums) - min(sums)) / op_sum}
            for label, p in got.items():
                row[label] = p["total_ms"]
                # the predicted forward (the calibration's wall fit), where it has one
                row[label + " wall"] = p["wall_ms"] if p.get("wall_ms") is not None else p["total_ms"]
                top = [s for s in p["scopes"] if s["name"] and "." not in s["name"] and s["name"] in measured]
                row[label + " rank"] = spearman([s["ms"] for s in top], [measured[s["name"]] for s in top])
            row["FLOP/s"] = got_flops
            rows.append(row)
            print("%-22s %-14s op sum %9.3f ms  per-op %9.3f  all-ops %9.3f  FLOP/s %9.3f" % (
                n, fam, op_sum, row["per-op"], row["all-ops"], got_flops), file=sys.stderr)
    spreads = [r["spread"] for r in rows if r["repeats"] > 1]
    if spreads:
        print("repeatability: %d models measured %d times; (max - min) / median of a model's op sums: median %.1f %%, "
              "largest %.1f %%" % (len(spreads), max(r["repeats"] for r in rows), 100 * statistics.median(spreads),
                                   100 * max(spreads)))
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    print("| predictor | models | within 10 % (op sum) | within 20 % (op sum) | median abs. error | "
          "within 10 % (wall) | within 20 % (wall) | scope rank corr. (mean) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label in ("per-op", "all-ops", "FLOP/s"):
        err = [r[label] / r["op_sum_ms"] - 1 for r in rows]
        werr = [r.get(label + " wall", r[label]) / r["wall_ms"] - 1 for r in rows]
        ranks = [r[label + " rank"] for r in rows if r.get(label + " rank") is not None]
        print("| %s | %d | %.0f %% | %.0f %% | %.1f %% | %.0f %% | %.0f %% | %s |" % (
            label, len(rows), 100 * sum(abs(e) <= 0.1 for e in err) / len(err),
            100 * sum(abs(e) <= 0.2 for e in err) / len(err), 100 * statistics.median(abs(e) for e in err),
            100 * sum(abs(e) <= 0.1 for e in werr) / len(werr), 100 * sum(abs(e) <= 0.2 for e in werr) / len(werr),
            "%.2f" % statistics.mean(ranks) if ranks else "-"))


if __name__ == "__main__":
    main()
