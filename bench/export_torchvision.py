#!/usr/bin/python3
"""Exports a torchvision model (random weights, no download) to graph-only ONNX for the benchmarks.

    /usr/bin/python3 bench/export_torchvision.py swin_t OUT_DIR   # OUT_DIR/swin_t.onnx (+ .onnx.data)

torch.onnx.export at opset 17, eval mode, input 1x3x224x224 with a dynamic batch axis; the weights go to
the side file OUT_DIR/NAME.onnx.data, which flopwise never reads (the bench times the graph alone).
"""
import contextlib
import os
import sys

import onnx
import torch
import torchvision


def main():
    name, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    model = getattr(torchvision.models, name)(weights=None).eval()
    path = os.path.join(out, name + ".onnx")
    tmp = path + ".tmp"
    # Under torch.no_grad() nn.MultiheadAttention takes its fast path (aten::_native_multi_head_attention),
    # which torch 1.13's exporter cannot write: the ViTs export with gradients on (the same graph otherwise).
    with contextlib.nullcontext() if name.startswith("vit") else torch.no_grad():
        torch.onnx.export(model, torch.randn(1, 3, 224, 224), tmp, opset_version=17, input_names=["input"],
                          output_names=["output"], dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    m = onnx.load(tmp)
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=name + ".onnx.data", size_threshold=1024)
    os.remove(tmp)
    print(path, len(m.graph.node), "nodes")


if __name__ == "__main__":
    main()
