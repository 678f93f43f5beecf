#!/usr/bin/env python3
"""Full-width ResNet-50 (torchvision, random weights) and a BERT-base encoder (models/generate.py's
BertModel at 12 layers, hidden 768, 12 heads, FFN 3072, vocabulary 30522), traced with the running torch
into OUT/resnet50.trace.pt and OUT/bert_base.trace.pt for the GPU latency runs (bench/gpu/device_run.sh).
Each carries flopwise_inputs.json (names, batch-1 shapes), as models/generate.py writes it.

    python3 bench/gpu/big_models.py OUT
"""
import json
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models"))
from generate import BertModel  # noqa: E402


def save(model, inputs, names, path):
    model.eval()
    meta = json.dumps([{"name": n, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                       for n, t in zip(names, inputs)])
    with torch.no_grad():
        traced = torch.jit.trace(model, inputs, check_trace=False)
    torch.jit.save(traced, path, _extra_files={"flopwise_inputs.json": meta})
    print(path, sum(p.numel() for p in model.parameters()), "params", flush=True)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    save(torchvision.models.resnet50(weights=None), (torch.randn(1, 3, 224, 224),), ["input"],
         os.path.join(out, "resnet50.trace.pt"))
    bert = BertModel(layers=12, hidden=768, heads=12, ffn=3072, vocab=30522, max_pos=512)
    save(bert, (torch.randint(0, 30522, (1, 128)), torch.randint(0, 2, (1, 128))),
         ["input_ids", "token_type_ids"], os.path.join(out, "bert_base.trace.pt"))


if __name__ == "__main__":
    main()
