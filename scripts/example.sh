#!/usr/bin/env bash
# Set-up, then analyse a bundled model (ResNet-18, graph-only ONNX: weights are not needed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
./build/flopwise models/resnet18.onnx --dim batch=1 --depth 2 "$@"
