#!/usr/bin/env bash
# bench/calibration/ort_data.sh OUT: the ONNX Runtime side of the calibration benchmark (bench/README.md,
# "Predicted latency"). Exports torchvision models (random weights; bench/export_torchvision.py, input
# 1x3x224x224), runs each through ONNX Runtime (onnxruntime-node, CPU, one thread, graph optimisation
# LEVEL: "disabled" by default, where every kernel is one node of the file; RUNS runs: the first is ORT's
# warm-up) with profiling on (models/ort/profile.js), and writes
# OUT/NAME.rK.run.json = `flopwise run NAME.onnx --profile ... --format json`. The bundled BERT, BERT-6 and
# GPT-2 join them as the language-model family. The weights (NAME.onnx.data) stay in
# OUT for the repeats; flopwise itself never reads them.
#   ORT_NODE_MODULES=DIR/node_modules bash bench/calibration/ort_data.sh /tmp/cal-ort
set -euo pipefail
OUT="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
FW="${FLOPWISE:-$ROOT/build/flopwise}"
RUNS="${RUNS:-4}"
LEVEL="${LEVEL:-disabled}"
: "${ORT_NODE_MODULES:?set ORT_NODE_MODULES to the node_modules holding onnxruntime-node}"
mkdir -p "$OUT"
MODELS="${MODELS:-resnet18 resnet34 resnet50 mobilenet_v2 mobilenet_v3_small mobilenet_v3_large efficientnet_b0
  efficientnet_b1 densenet121 vgg11 vgg13 squeezenet1_0 squeezenet1_1 shufflenet_v2_x0_5 shufflenet_v2_x1_0
  regnet_y_400mf regnet_x_400mf mnasnet0_5 mnasnet1_0 googlenet alexnet convnext_tiny swin_t
  resnext50_32x4d vit_b_16}"
# REPEAT=K: every model profiled K times, the rounds interleaved (all models, then all again) so that a slow
# spell of the machine does not fall on one model: OUT/NAME.rK.run.json.
REPEAT="${REPEAT:-1}"
for name in $MODELS; do
  [[ -f "$OUT/$name.onnx" ]] || /usr/bin/python3 "$ROOT/bench/export_torchvision.py" "$name" "$OUT" >/dev/null
done
for ((k = 1; k <= REPEAT; k++)); do
  for name in $MODELS; do
    run="$OUT/$name.r$k.run.json"
    [[ -f "$run" ]] && continue
    NODE_PATH="$ORT_NODE_MODULES" node "$ROOT/models/ort/profile.js" "$OUT/$name.onnx" "$LEVEL" \
      "$OUT/$name.r$k.prof.json" "$RUNS" input=1x3x224x224:float32 >/dev/null
    "$FW" run "$OUT/$name.onnx" --profile "$OUT/$name.r$k.prof.json" --format json -o "$run"
    echo "$name $k"
  done
done
# The bundled language models (BERT, BERT-6, GPT-2: the language-model family), profiled the same way on a
# copy with zero-filled weights (models/ort/zero_weights.py) and the inputs of models/NAME.expect.json.
for ((k = 1; k <= REPEAT; k++)); do
  for name in bert bert6 gpt2; do
    run="$OUT/$name.r$k.run.json"
    [[ -f "$run" ]] && continue
    if [[ ! -f "$OUT/$name.onnx" ]]; then
      cp "$ROOT/models/$name.onnx" "$OUT/"
      /usr/bin/python3 "$ROOT/models/ort/zero_weights.py" "$OUT/$name.onnx" >/dev/null
    fi
    mapfile -t specs < <(/usr/bin/python3 "$ROOT/models/ort/input_specs.py" "$ROOT/models/$name.expect.json")
    NODE_PATH="$ORT_NODE_MODULES" node "$ROOT/models/ort/profile.js" "$OUT/$name.onnx" "$LEVEL" \
      "$OUT/$name.r$k.prof.json" "$RUNS" "${specs[@]}" >/dev/null
    "$FW" run "$OUT/$name.onnx" --profile "$OUT/$name.r$k.prof.json" --format json -o "$run"
    echo "$name $k"
  done
done
