#!/usr/bin/env bash
# models/ort/profiles.sh: ONNX Runtime profiles of the bundled models, the fixtures of the ORT-profile
# tests (issue 11). Each model runs RUNS times (default 3; the first is ORT's warm-up) at graph optimisation
# levels "disabled" and "all", one thread, CPU provider, inputs of the models/NAME.expect.json shapes
# (zeros), and ORT's profile is kept as models/ort/NAME.LEVEL.json.
# Needs Node.js and onnxruntime-node (no Debian package; its install script would fetch GPU binaries, so:
#   npm install --prefix DIR --ignore-scripts onnxruntime-node@1.30.0
# and pass ORT_NODE_MODULES=DIR/node_modules), and python3-onnx: ORT reads the weights, which are not
# committed, so a temporary copy of each graph gets zero-filled external data (zero_weights.py).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
MODELS="$(cd "$HERE/.." && pwd)"
RUNS="${RUNS:-3}"
: "${ORT_NODE_MODULES:?set ORT_NODE_MODULES to the node_modules holding onnxruntime-node}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
for name in resnet18 mobilenet_v2 bert bert6 gpt2; do
  cp "$MODELS/$name.onnx" "$TMP/"
  /usr/bin/python3 "$HERE/zero_weights.py" "$TMP/$name.onnx" >/dev/null
  # Inputs: name=1x3x224x224:float32 from the expectation's "inputs" (token ids are int64).
  mapfile -t specs < <(/usr/bin/python3 "$HERE/input_specs.py" "$MODELS/$name.expect.json")
  for level in disabled all; do
    NODE_PATH="$ORT_NODE_MODULES" node "$HERE/profile.js" "$TMP/$name.onnx" "$level" "$HERE/$name.$level.json" \
      "$RUNS" "${specs[@]}"
  done
done
