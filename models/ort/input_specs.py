#!/usr/bin/python3
"""models/ort/input_specs.py FILE [NAME]: a model's inputs as profile.js takes them, one per line:
name=1x3x224x224:float32.
  FILE NAME.expect.json (a bundled model's expectation): its "inputs", {name: shape}; 4-D inputs are images
       (float32), others token ids (int64).
  FILE suite.json NAME (flopwise.suite's listing): the inputs of the network NAME, with their dtypes."""
import json
import sys

doc = json.load(open(sys.argv[1]))
if isinstance(doc, list):
    inputs = next(e["inputs"] for e in doc if e["name"] == sys.argv[2])
    specs = [(i["name"], i["shape"], i["dtype"]) for i in inputs]
else:
    specs = [(k, v, "float32" if len(v) == 4 else "int64") for k, v in doc["inputs"].items()]
for name, shape, dtype in specs:
    print(name + "=" + "x".join(map(str, shape)) + ":" + dtype)
