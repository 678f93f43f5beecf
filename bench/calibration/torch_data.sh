#!/usr/bin/env bash
# bench/calibration/torch_data.sh OUT: the LibTorch side of the calibration benchmark (bench/README.md,
# "Predicted latency"). Builds the TorchScript zoo (models/torch_zoo.py: narrow models of every torchvision
# family, language models, a UNet; random weights) and measures each traced file with
# `flopwise run NAME.trace.pt --device cpu --threads 1 --format json` into OUT/NAME.rK.run.json.
#   bash bench/calibration/torch_data.sh /tmp/cal-torch
set -euo pipefail
OUT="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
FW="${FLOPWISE:-$ROOT/build/flopwise}"
mkdir -p "$OUT/zoo"
ONLY="${ONLY:-resnet18 resnet50 resnext50_32x4d wide_resnet50_2 vgg11_bn alexnet densenet121 googlenet
  inception_v3 mobilenet_v2 mobilenet_v3_small mobilenet_v3_large efficientnet_b0 efficientnet_v2_s
  regnet_y_400mf regnet_x_400mf mnasnet0_5 shufflenet_v2_x0_5 squeezenet1_0 squeezenet1_1 convnext_tiny vit
  swin bert gpt2 lstm_lm gru_lm unet r3d_18 mc3_18 r2plus1d_18}"
# shellcheck disable=SC2086
[[ -f "$OUT/zoo/zoo.json" ]] || /usr/bin/python3 "$ROOT/models/torch_zoo.py" --out "$OUT/zoo" --only $ONLY >/dev/null
# REPEAT=K: every model measured K times, the rounds interleaved: OUT/NAME.rK.run.json. PROFILE_ITERS: the
# profiled forwards of each run (each unit's fastest is over them).
REPEAT="${REPEAT:-1}"
PROFILE_ITERS="${PROFILE_ITERS:-20}"
for ((k = 1; k <= REPEAT; k++)); do
  for name in $ONLY; do
    run="$OUT/$name.r$k.run.json"
    [[ -f "$run" || ! -f "$OUT/zoo/$name.trace.pt" ]] && continue
    "$FW" run "$OUT/zoo/$name.trace.pt" --device cpu --threads 1 --warmup 2 --iters 10 --profile-iters "$PROFILE_ITERS" \
      --format json -o "$run" || echo "failed: $name"
    echo "$name $k"
  done
done
