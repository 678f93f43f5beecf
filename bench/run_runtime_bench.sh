#!/usr/bin/env bash
# bench/run_runtime_bench.sh [BUILD_DIR] [ITERS]: the runtime harness against a plain LibTorch loop, one run,
# side by side (ratios; this machine is noisy). For each bundled TorchScript model (BUILD_DIR/pt_models):
#   - plain: Debian's python3-torch (the same LibTorch 1.13 library, 1 thread) loads the .pt and times ITERS forwards
#     under no_grad after 3 warm-ups, steady clock per call: the median;
#   - clean: `flopwise run --iters ITERS --warmup 3` clean-phase median (summary.fwd_latency_ms.median);
#   - profiled: the profiled phase's median forward (summary.profiled_fwd_ms) -> its overhead vs clean.
# Goals (issue 8): clean within 3 % of plain; profiled overhead <= 10 % on resnet18.
set -euo pipefail
BUILD=${1:-build}
ITERS=${2:-30}
printf "%-22s %10s %10s %10s %9s %9s\n" model plain_ms clean_ms profiled clean/plain overhead
for spec in "resnet18.trace.pt 1x3x224x224:float32" "mobilenet_v2.trace.pt 1x3x224x224:float32" \
            "bert.trace.pt 1x64:int64,1x64:int64"; do
  set -- $spec
  file="$BUILD/pt_models/$1"
  [ -f "$file" ] || { echo "missing $file (run the TorchScript tests first)"; exit 1; }
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
print(f"{statistics.median(ts):.3f}")
PY
)
  json=$("$BUILD/flopwise" run "$file" --device cpu --threads 1 --warmup 3 --iters "$ITERS" --profile-iters 10 --format json)
  read -r clean prof < <(echo "$json" | /usr/bin/python3 -c \
    'import json,sys; s=json.load(sys.stdin)["summary"]; print(s["fwd_latency_ms"]["median"], s["profiled_fwd_ms"])')
  /usr/bin/python3 -c "p,c,f=$plain,$clean,$prof; print(f'%-22s %10.2f %10.2f %10.2f %9.3f %8.1f%%' % ('$1', p, c, f, c/p, 100*(f/c-1)))"
done
