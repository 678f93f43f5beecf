"""bench/analyze_meta.py [LAYERS] — flopwise.analyze on Llama-3-70B's config built on the meta device (80 layers
unless LAYERS), as a torch 2.x user calls it: run in the modern root with the package built there,
    bash scripts/modern_torch.sh sh -c 'PYTHONPATH=build-modern/python python3 bench/analyze_meta.py'
(scripts/modern_python.sh builds build-modern). Prints each stage's wall time: building the module, torch.export
as torch does it by default, torch.export.save into memory (for comparison), torch.export without stack traces
(what analyze does), the program's JSON alone as analyze serializes it, flopwise's analysis of those bytes, and
flopwise.analyze(module) end to end."""
import io
import sys
import time

import torch
import transformers

import flopwise


def main():
    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 80
    cfg = transformers.LlamaConfig(vocab_size=128256, hidden_size=8192, intermediate_size=28672,
                                   num_hidden_layers=layers, num_attention_heads=64, num_key_value_heads=8,
                                   max_position_embeddings=8192, rope_theta=500000.0, attn_implementation="sdpa",
                                   use_cache=False)
    t = [time.perf_counter()]
    with torch.device("meta"):
        m = transformers.LlamaForCausalLM(cfg).eval()
    ids = torch.zeros(2, 16, dtype=torch.long, device="meta")
    dyn = ({0: torch.export.Dim("batch", min=1, max=64), 1: torch.export.Dim("seq", min=2, max=8192)},)
    t.append(time.perf_counter())
    ep = torch.export.export(m, (ids,), dynamic_shapes=dyn, strict=False)
    t.append(time.perf_counter())
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    t.append(time.perf_counter())
    with flopwise._stack_traces(False):
        ep = torch.export.export(m, (ids,), dynamic_shapes=dyn, strict=False)
    t.append(time.perf_counter())
    program = flopwise._program_json(ep)
    t.append(time.perf_counter())
    r = flopwise._native().analyse_program(program, "llama", [], [], [], "default", False)
    t.append(time.perf_counter())
    whole = time.perf_counter()
    report = flopwise.analyze(m, (ids,), dynamic_shapes=dyn)
    whole = time.perf_counter() - whole
    stages = ["module on meta", "torch.export", "torch.export.save", "export, no traces", "the program's JSON",
              "flopwise analysis"]
    for name, a, b in zip(stages, t, t[1:]):
        print(f"{name:>18}: {b - a:7.3f} s")
    print(f"{'analyze(module)':>18}: {whole:7.3f} s  ({len(buf.getvalue())} bytes saved, {len(program)} analysed,"
          f" params {report.totals.params},"
          f" torch {sum(p.numel() for p in m.parameters())}, keys {len(r.keys())})")


if __name__ == "__main__":
    main()
