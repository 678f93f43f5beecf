#!/usr/bin/env bash
# models/ort/zoo.sh: ONNX Runtime profiles of torchvision models the attribution was not written against
# (the fixtures of the "unseen models" tests): models/ort/zoo/NAME.onnx (graph-only: its weights,
# NAME.onnx.data, are not committed; flopwise never reads them) and NAME.LEVEL.json. Same ORT set-up as
# profiles.sh (CPU, one thread, 3 runs, input 1x3x224x224 of zeros). The profiles are minified: ORT's
# memory-arena args (mem_*, activation_size, ...) are dropped; name, ts, dur, op_name, provider and the
# input/output shapes are kept as ORT wrote them.
#   ORT_NODE_MODULES=DIR/node_modules bash models/ort/zoo.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
: "${ORT_NODE_MODULES:?set ORT_NODE_MODULES to the node_modules holding onnxruntime-node}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# mobilenet_v3_small: HardSwish, which ORT runs as its function body (HardSigmoid + Mul kernels);
# convnext_tiny: the transpose optimiser runs layer-scale Muls in NHWC (level "all" only);
# vgg11: GemmActivationFusion's kernels named "fused <Gemm node>" (level "all" only).
# ZOO="vgg11" makes only those.
for name in ${ZOO:-mobilenet_v3_small convnext_tiny vgg11}; do
  levels="disabled all"
  [[ $name == convnext_tiny || $name == vgg11 ]] && levels="all"
  /usr/bin/python3 "$ROOT/bench/export_torchvision.py" "$name" "$TMP" >/dev/null
  cp "$TMP/$name.onnx" "$HERE/zoo/$name.onnx"
  for level in $levels; do
    NODE_PATH="$ORT_NODE_MODULES" node "$HERE/profile.js" "$TMP/$name.onnx" "$level" "$TMP/$name.$level.json" 3 \
      input=1x3x224x224:float32 >/dev/null
    /usr/bin/python3 - "$TMP/$name.$level.json" "$HERE/zoo/$name.$level.json" <<'PY'
import json, sys
keep = {"op_name", "provider", "input_type_shape", "output_type_shape", "node_index"}
events = json.load(open(sys.argv[1]))
for e in events:
    if "args" in e:
        e["args"] = {k: v for k, v in e["args"].items() if k in keep}
with open(sys.argv[2], "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(e, separators=(",", ":")) for e in events) + "\n]\n")
PY
  done
done
