"""flopwise.analyze on live torch 2.x modules, as a torch 2.x user calls it (scripts/modern_python.sh: the module
built for the modern root's Python, beside torch 2.14): torch.export in this process, the program kept in memory
and analysed by the compiled module, no child process and no LibTorch of flopwise's own.

The oracles are torch's own, computed here: parameters as sum(p.numel()), FLOPs as FlopCounterMode's total
(`--convention torch` counts what it counts), MACs as the contractions the dispatcher runs (models/pt2/generate.py's
ContractionCounter), each at the export's sizes and, through dims=, at others."""
import os
import subprocess
import sys

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import flopwise

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models", "pt2"))
import generate  # noqa: E402  (the fixtures' models and the contraction counter)


@pytest.fixture(autouse=True)
def no_child_process(monkeypatch):
    """The analysis runs in this process: starting any program fails the test."""
    def refuse(*a, **k):
        raise AssertionError(f"a child process was started: {a[:1]}")
    monkeypatch.setattr(subprocess, "Popen", refuse)


def torch_counts(model, args):
    """FlopCounterMode's total and the dispatched contraction MACs of one forward, autograd on as torch.export
    traces it: under no_grad an eval nn.MultiheadAttention takes its fused fast path, whose projections neither
    mode sees (ViT-B/16 at 32x32: 285,482,496 MACs counted there, against 427,501,056 by hand: 12 layers of
    5 tokens x 768 x (2,304 + 768 + 2 x 3,072) + 5 x 5 x 768 x 2, the patch convolution and the head)."""
    flop, macs = FlopCounterMode(display=False), generate.ContractionCounter()
    with flop:
        model(*args)
    with macs:
        model(*args)
    kinds = macs.by_kind
    assert all(v is not None for v in kinds.values())
    # torch 2.14's FlopCounterMode has no rule for the CPU's fused attention kernel nor for _grouped_mm: their
    # products are added at 2 FLOPs a MAC, its own formulas (sdpa_flop_count, mm_flop), as in
    # tests/test_export_programs.cc.
    uncovered = 2 * (kinds.get("sdpa", 0) + kinds.get("_grouped_mm", 0))
    return flop.get_total_flops() + uncovered, sum(kinds.values())


def params(model):
    return sum(p.numel() for p in model.parameters())


def analyse_both(model, args, **kw):
    """The default report (MACs) and the torch convention's (FLOPs) of one export each."""
    return flopwise.analyze(model, args, **kw), flopwise.analyze(model, args, convention="torch", **kw)


VISION = [
    ("resnet18", {}, (1, 3, 64, 64)),
    ("mobilenet_v3_small", {}, (2, 3, 64, 64)),
    ("vit_b_16", {"image_size": 32, "num_classes": 10}, (1, 3, 32, 32)),
    ("convnext_tiny", {"num_classes": 10}, (1, 3, 32, 32)),
]


@pytest.mark.parametrize("name,kw,shape", VISION, ids=[v[0] for v in VISION])
def test_torchvision(name, kw, shape):
    model = generate.vision(name, **kw).eval()
    x = torch.randn(*shape)
    report, torch_report = analyse_both(model, (x,))
    flops, macs = torch_counts(model, (x,))
    assert report.to_dict()["model"]["format"] == "pt2"
    assert report.totals.params == params(model)
    assert report.totals.macs == macs
    assert torch_report.totals.flops == flops


def decoder(meta):
    """A small Llama (GQA) from its config; on the meta device no weight is ever allocated."""
    with torch.device("meta" if meta else "cpu"):
        return generate.hf("LlamaForCausalLM", "LlamaConfig", vocab_size=1000, hidden_size=64,
                           intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                           num_key_value_heads=2, max_position_embeddings=128, use_cache=False).eval()


def test_meta_device_decoder_with_dynamic_batch_and_sequence():
    """A module on the meta device, exported with a dynamic batch and sequence: the report's formula, bound with
    dims= at other sizes, equals torch's counts there (counted on the same config built on the CPU: transformers'
    forward calls .item(), which meta tensors refuse)."""
    model, eager = decoder(meta=True), decoder(meta=False)
    assert next(model.parameters()).is_meta
    batch, seq = torch.export.Dim("batch", max=16), torch.export.Dim("seq", min=2, max=128)
    ids = torch.zeros(2, 8, dtype=torch.long, device="meta")
    kw = dict(dynamic_shapes=({0: batch, 1: seq},))
    report, torch_report = analyse_both(model, (ids,), **kw)
    assert report.totals.params == params(model)
    for b, s in [(2, 8), (3, 17), (1, 100)]:
        dims = {"input_ids.0": b, "input_ids.1": s}
        flops, macs = torch_counts(eager, (torch.zeros(b, s, dtype=torch.long),))
        assert flopwise.analyze(model, (ids,), dims=dims, **kw).totals.macs == macs, (b, s)
        assert flopwise.analyze(model, (ids,), dims=dims, convention="torch", **kw).totals.flops == flops, (b, s)
    assert "input_ids.1" in str(report.totals.macs)  # a formula while the dims are unbound


def test_a_transformers_model_as_configured_by_default():
    """use_cache on (transformers' default): torch.export refuses its cache object as an output, so analyze
    exports the forward without it; the counts are the forward's, with a dynamic batch and sequence too."""
    import transformers

    model = transformers.Qwen2ForCausalLM(transformers.Qwen2Config(
        vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=128)).eval()
    assert model.config.use_cache
    ids = torch.randint(0, 500, (2, 12))
    flops, macs = torch_counts(model, (ids,))
    report = flopwise.analyze(model, (ids,))
    assert (report.totals.params, report.totals.macs) == (params(model), macs)
    assert flopwise.analyze(model, (ids,), convention="torch").totals.flops == flops
    dyn = ({0: torch.export.Dim("batch", max=8), 1: torch.export.Dim("seq", min=2, max=64)},)
    assert flopwise.analyze(model, (ids,), dynamic_shapes=dyn, dims={"input_ids.0": 2,
                                                                      "input_ids.1": 12}).totals.macs == macs


def test_exported_program_and_module_agree():
    model = decoder(meta=False)
    ids = torch.randint(0, 1000, (2, 8))
    ep = torch.export.export(model, (ids,), strict=False)
    a, b = flopwise.analyze(ep), flopwise.analyze(model, (ids,))
    assert (a.totals.params, a.totals.macs) == (b.totals.params, b.totals.macs) == (params(model),
                                                                                     torch_counts(model, (ids,))[1])
    assert "in memory" in a.to_dict()["model"]["path"]


def test_a_zero_dimensional_parameter_is_a_parameter():
    """CLIP's logit_scale: nn.Parameter(torch.tensor(2.6592)), one element, counted as torch counts it."""
    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.logit_scale = torch.nn.Parameter(torch.tensor(2.6592))

        def forward(self, x):
            return self.lin(x) * self.logit_scale.exp()

    m = Scaled()
    assert flopwise.analyze(m, (torch.randn(2, 4),)).totals.params == params(m) == 4 * 4 + 4 + 1


def test_no_second_libtorch_in_this_process():
    """torch's own LibTorch is the only one mapped: flopwise's TorchScript plugin is never loaded here."""
    flopwise.analyze(torch.nn.Linear(8, 4), (torch.randn(2, 8),))
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if ".so" in line}
    torch_cpu = {os.path.basename(p) for p in libs if "libtorch_cpu" in p}
    assert len({p for p in libs if "libtorch_cpu" in p}) == 1, torch_cpu
    assert not any("flopwise_torch" in p for p in libs)


def test_options_needing_the_cli_get_the_program_as_a_file(monkeypatch):
    """peak_memory= runs the CLI: the in-memory program is written to a file for it (the CLI itself is
    tested elsewhere; here only that it is handed a .pt2 path)."""
    seen = []

    class Handed(Exception):
        pass

    def fake_cli(args, ok=(0,)):
        seen.append((args[0], os.path.getsize(args[0])))  # the file goes with the analysis' temporary folder
        raise Handed

    monkeypatch.setattr(flopwise, "run_cli", fake_cli)
    with pytest.raises(Handed):
        flopwise.analyze(torch.nn.Linear(8, 4), (torch.randn(2, 8),), peak_memory=True)
    assert len(seen) == 1 and seen[0][0].endswith(".pt2") and seen[0][1] > 0


def test_a_broken_program_is_a_typed_error():
    native = flopwise._native()
    with pytest.raises(flopwise.InputError):
        native.analyse_program(b"PK\x03\x04 not a zip", "broken", [], [], [], "default", False)


def test_the_program_json_is_the_one_torch_saves():
    """analyze serializes the program alone (no weights, no archive): byte for byte the program JSON that
    torch.export.save puts in the archive."""
    import io
    import zipfile

    ep = torch.export.export(decoder(meta=True), (torch.zeros(2, 8, dtype=torch.long, device="meta"),),
                             strict=False)
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        saved = [z.read(n) for n in z.namelist() if n.endswith(".json") and "/models/" in n]
    assert saved == [flopwise._program_json(ep)]


def test_analyze_exports_without_stack_traces_and_counts_the_same():
    """analyze(module) exports with torch.fx.config.do_not_emit_stack_traces (flopwise reads no stack trace):
    the kept program has none, torch's flag is as it was after, and the report (totals, scope tree) equals the
    one of the same module exported by torch.export with its stack traces."""
    import torch.fx.config as fx_config

    model = decoder(meta=True)
    ids = torch.zeros(2, 8, dtype=torch.long, device="meta")
    before = fx_config.do_not_emit_stack_traces
    ours = flopwise.analyze(model, (ids,))
    assert fx_config.do_not_emit_stack_traces == before
    with_traces = torch.export.export(model, (ids,), strict=False)
    assert any(n.meta.get("stack_trace") for n in with_traces.graph.nodes)  # torch's default records them
    theirs = flopwise.analyze(with_traces)
    a, b = ours.to_dict(), theirs.to_dict()
    assert (ours.totals.params, ours.totals.macs, ours.totals.flops) == (theirs.totals.params, theirs.totals.macs,
                                                                         theirs.totals.flops)
    assert a["scopes"]["children"] and a["scopes"]["children"] == b["scopes"]["children"]  # the root's label differs
    kept = flopwise._Source(model, (ids,), "export").program
    assert kept.count(b'"stack_trace"') * 10 < flopwise._program_json(with_traces).count(b'"stack_trace"')
