#!/usr/bin/python3
"""models/ort/zero_weights.py MODEL.onnx: writes the external-data files a graph-only model names, filled
with zeros and just long enough for every initializer's offset + length, so that ONNX Runtime can load
the graph (flopwise never reads them; ORT does). Needs Debian's python3-onnx."""
import os
import sys

import onnx

model = onnx.load(sys.argv[1], load_external_data=False)
ends = {}
for t in model.graph.initializer:
    if t.data_location != onnx.TensorProto.EXTERNAL:
        continue
    kv = {e.key: e.value for e in t.external_data}
    end = int(kv.get("offset", 0)) + int(kv["length"])
    ends[kv["location"]] = max(ends.get(kv["location"], 0), end)
for loc, size in ends.items():
    with open(os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), loc), "wb") as f:
        f.truncate(size)
    print(loc, size)
