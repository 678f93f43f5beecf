#!/usr/bin/env bash
# bench/calibration/ort_data.sh OUT: the ONNX Runtime side of the calibration benchmark (bench/README.md,
# "Predicted latency"). Exports torchvision models (random weights; bench/export_torchvision.py, input
# 1x3x224x224), runs each through ONNX Runtime (onnxruntime-node, CPU, one thread, graph optimisation
# LEVEL: "disabled" by default, where every kernel is one node of the file; RUNS runs: the first is ORT's
# warm-up) with profiling on (models/ort/profile.js), and writes
# OUT/NAME.run.json = `flopwise run NAME.onnx --profile ... --format json`. The bundled BERT and GPT-2
# profiles (models/ort/) join them as the language-model family.
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
  regnet_y_400mf regnet_x_400mf mnasnet0_5 mnasnet1_0 googlenet alexnet convnext_tiny swin_t}"
for name in $MODELS; do
  [[ -f "$OUT/$name.run.json" ]] && continue
  /usr/bin/python3 "$ROOT/bench/export_torchvision.py" "$name" "$OUT" >/dev/null
  NODE_PATH="$ORT_NODE_MODULES" node "$ROOT/models/ort/profile.js" "$OUT/$name.onnx" "$LEVEL" "$OUT/$name.prof.json" \
    "$RUNS" input=1x3x224x224:float32 >/dev/null
  "$FW" run "$OUT/$name.onnx" --profile "$OUT/$name.prof.json" --format json -o "$OUT/$name.run.json"
  rm -f "$OUT/$name.onnx.data"
  echo "$name"
done
for name in bert bert6 gpt2; do
  "$FW" run "$ROOT/models/$name.onnx" --profile "$ROOT/models/ort/$name.$LEVEL.json" --format json \
    -o "$OUT/$name.run.json"
done
