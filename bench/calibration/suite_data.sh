#!/usr/bin/env bash
# bench/calibration/suite_data.sh OUT ort|torch: the calibration suite's measurements (bench/README.md,
# "Predicted latency"). Generates COUNT random networks (python3 -m flopwise.suite, seed SEED) into OUT and
# measures each REPEAT times, the rounds interleaved, as ort_data.sh and torch_data.sh measure the zoo:
#   ort    ONNX Runtime (onnxruntime-node, CPU, one thread, graph optimisation disabled, RUNS runs):
#          OUT/suite_K.rR.run.json = `flopwise run suite_K.onnx --profile ...`
#   torch  `flopwise run suite_K.trace.pt --device cpu --threads 1` (PROFILE_ITERS profiled forwards), the
#          networks at models/torch_zoo.py's sizes (--small: Debian's LibTorch runs on reference BLAS).
# The reports join the zoo's in `flopwise calibrate` (loo.py --extra OUT keeps them in every fold).
#   ORT_NODE_MODULES=DIR/node_modules bash bench/calibration/suite_data.sh /tmp/suite-ort ort
set -euo pipefail
OUT="$1"
RUNTIME="$2"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
FW="${FLOPWISE:-$ROOT/build/flopwise}"
COUNT="${COUNT:-40}"
SEED="${SEED:-1000}"
REPEAT="${REPEAT:-1}"
RUNS="${RUNS:-8}"
PROFILE_ITERS="${PROFILE_ITERS:-20}"
mkdir -p "$OUT"
case "$RUNTIME" in
  ort) : "${ORT_NODE_MODULES:?set ORT_NODE_MODULES to the node_modules holding onnxruntime-node}"; kind=--onnx ;;
  torch) kind="--torchscript --small" ;;
  *) echo "suite_data.sh: runtime must be ort or torch" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086
[[ -f "$OUT/suite.json" ]] || PYTHONPATH="$ROOT/python" /usr/bin/python3 -m flopwise.suite "$OUT" --count "$COUNT" \
  --seed "$SEED" $kind >/dev/null 2>&1
for ((k = 1; k <= REPEAT; k++)); do
  for ((i = 0; i < COUNT; i++)); do
    name="suite_$i"
    run="$OUT/$name.r$k.run.json"
    [[ -f "$run" ]] && continue
    if [[ "$RUNTIME" == ort ]]; then
      mapfile -t specs < <(/usr/bin/python3 "$ROOT/models/ort/input_specs.py" "$OUT/suite.json" "$name")
      NODE_PATH="$ORT_NODE_MODULES" node "$ROOT/models/ort/profile.js" "$OUT/$name.onnx" disabled \
        "$OUT/$name.r$k.prof.json" "$RUNS" "${specs[@]}" >/dev/null
      "$FW" run "$OUT/$name.onnx" --profile "$OUT/$name.r$k.prof.json" --format json -o "$run"
    else
      "$FW" run "$OUT/$name.trace.pt" --device cpu --threads 1 --warmup 2 --iters 10 \
        --profile-iters "$PROFILE_ITERS" --format json -o "$run" || echo "failed: $name"
    fi
    echo "$name $k"
  done
done
