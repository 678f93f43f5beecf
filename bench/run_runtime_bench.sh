#!/usr/bin/env bash
# bench/run_runtime_bench.sh [BUILD_DIR] [ITERS] [ROUNDS]: the runtime harness against a plain LibTorch loop,
# side by side in one run (ratios; these machines are noisy). For each bundled TorchScript model
# (BUILD_DIR/pt_models), ROUNDS rounds, each of:
#   - plain: Debian's python3-torch (the same LibTorch 1.13 library, 1 thread) loads the .pt and times ITERS
#     forwards under no_grad after 3 warm-ups, steady clock per call: the median;
#   - clean: `flopwise run --threads 1 --warmup 3 --iters ITERS` clean-phase median, right after;
#   - profiled: in that same run, ITERS profiled forwards, each after an unprofiled one
#     (summary.profiling_overhead: the median of the pairs' ratios).
# Reported: the median over rounds of clean/plain (each round's two sides ran next to each other) and of the
# profiling overhead, with the rounds' min..max. Goals (issue 8): clean within 3 % of plain; profiling
# overhead <= 10 % on resnet18.
set -euo pipefail
BUILD=${1:-build}
ITERS=${2:-20}
ROUNDS=${3:-5}
printf "%-22s %14s %22s %24s\n" model "plain ms (med)" "clean/plain med [range]" "overhead med [range]"
for spec in "resnet18.trace.pt 1x3x224x224:float32" "mobilenet_v2.trace.pt 1x3x224x224:float32" \
            "bert.trace.pt 1x64:int64,1x64:int64"; do
  set -- $spec
  file="$BUILD/pt_models/$1"
  [ -f "$file" ] || { echo "missing $file (run the TorchScript tests first)"; exit 1; }
  rows=""
  for _ in $(seq "$ROUNDS"); do
    plain=$(/usr/bin/python3 - "$file" "$2" "$ITERS" <<'PY'
import statistics, sys, time, torch
path, spec, iters = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.set_num_threads(1)
m = torch.jit.load(path).eval()
args = []
for s in spec.split(","):
    shape, dtype = s.split(":")
    dims = [int(x) for x in shape.split("x")]
    args.append(torch.zeros(dims, dtype=torch.int64) if dtype == "int64" else torch.randn(dims))
ts = []
with torch.no_grad():
    for _ in range(3): m(*args)
    for _ in range(iters):
        t = time.perf_counter(); m(*args); ts.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(ts):.4f}")
PY
)
    read -r clean over < <("$BUILD/flopwise" run "$file" --device cpu --threads 1 --warmup 3 --iters "$ITERS" \
      --profile-iters "$ITERS" --format json | /usr/bin/python3 -c \
      'import json,sys; s=json.load(sys.stdin)["summary"]; print(s["fwd_latency_ms"]["median"], s["profiling_overhead"])')
    rows="$rows$plain $clean $over;"
  done
  /usr/bin/python3 - "$1" "$rows" <<'PY'
import statistics, sys
name, rows = sys.argv[1], [r.split() for r in sys.argv[2].strip(";").split(";")]
plain = [float(r[0]) for r in rows]; ratio = [float(r[1]) / float(r[0]) for r in rows]; over = [100 * float(r[2]) for r in rows]
print(f"{name:22s} {statistics.median(plain):14.2f} {statistics.median(ratio):8.3f} [{min(ratio):.3f}..{max(ratio):.3f}]"
      f" {statistics.median(over):8.1f} % [{min(over):.1f}..{max(over):.1f}]")
PY
done
