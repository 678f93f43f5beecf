#!/usr/bin/python3
"""models/ort/input_specs.py NAME.expect.json: the inputs of a bundled model's expectation as profile.js takes
them, one per line: name=1x3x224x224:float32 (4-D inputs are images; others, token ids, are int64)."""
import json
import sys

for k, v in json.load(open(sys.argv[1]))["inputs"].items():
    print(k + "=" + "x".join(map(str, v)) + (":float32" if len(v) == 4 else ":int64"))
