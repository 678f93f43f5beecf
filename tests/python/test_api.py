"""The Python package against the CLI on the bundled models: every entry point, formulas, pandas, errors."""
import glob
import json
import os
import subprocess
import sys

import pytest

import flopwise
from conftest import MODELS, ROOT, cli_json

ONNX_MODELS = sorted(glob.glob(os.path.join(MODELS, "*.onnx")))


@pytest.mark.parametrize("path", ONNX_MODELS, ids=os.path.basename)
def test_to_dict_equals_cli_json(cli, path):
    assert flopwise.analyze(path).to_dict() == cli_json(cli, path)


def test_dims_bound_and_bytes_and_proto(cli):
    path = os.path.join(MODELS, "resnet18.onnx")
    expect = cli_json(cli, path, "--dim", "batch=2")
    assert flopwise.analyze(path, dims={"batch": 2}).to_dict() == expect
    with open(path, "rb") as f:
        data = f.read()
    r = flopwise.analyze(data, dims={"batch": 2})
    assert r.totals.macs == expect["totals"]["macs"]
    onnx = pytest.importorskip("onnx")
    r = flopwise.analyze(onnx.load(path, load_external_data=False), dims={"batch": 2})
    assert r.totals.params == expect["totals"]["params"] == 11684712


def test_formula_evaluates_as_bound_analysis():
    path = os.path.join(MODELS, "bert.onnx")
    r = flopwise.analyze(path)
    assert isinstance(r.totals.macs, flopwise.Formula)
    assert str(r.totals.macs) == r.to_dict()["totals"]["macs"]
    bound = flopwise.analyze(path, dims={"batch": 8, "seq": 128})
    for key in ("macs", "flops"):
        assert getattr(r.totals, key)(batch=8, seq=128) == getattr(bound.totals, key)
        assert isinstance(getattr(bound.totals, key), int)


def test_formula_parser():
    f = flopwise.Formula("1024*batch*seq*seq + 3/2*seq^2 - floor((seq - 1)/2) + min(past:0, n.x) + max(2, seq)")
    assert f.symbols == {"batch", "seq", "past:0", "n.x"}
    # 1024*2*16 + 24 - floor(3/2) + min(5, 7) + max(2, 4) = 32768 + 24 - 1 + 5 + 4
    assert f({"past:0": 5, "n.x": 7}, batch=2, seq=4) == 32800
    with pytest.raises(ValueError):
        flopwise.Formula("2 * (seq")
    with pytest.raises(ValueError):
        flopwise.Formula("__import__('os')")


def test_sections_and_scopes():
    r = flopwise.analyze(os.path.join(MODELS, "resnet18.onnx"), dims={"batch": 1}, peak_memory=True,
                         hardware="a100-40gb")
    assert r.peak_memory is not None and r.roofline is not None
    assert r.llm is None
    root = r.scopes
    assert root.macs == r.totals.macs
    assert sum(c.macs for c in root.children) + sum(
        n["macs"] for n in r.nodes if n["scope"] == "") == r.totals.macs
    assert sum(o["macs"] for o in r.op_types) == r.totals.macs
    assert isinstance(r.warnings, list) and isinstance(r.unsupported, list)


def test_to_pandas_sums_equal_totals():
    pytest.importorskip("pandas")
    r = flopwise.analyze(os.path.join(MODELS, "resnet34.onnx"), dims={"batch": 1})
    nodes = r.to_pandas("node")
    ops = r.to_pandas("op")
    scopes = r.to_pandas("scope")
    for key in ("macs", "flops", "params"):
        assert int(nodes[key].sum()) == getattr(r.totals, key)
        assert int(ops[key].sum()) == getattr(r.totals, key)
        assert scopes[scopes.depth == 0][key].iloc[0] == getattr(r.totals, key)


def test_table_and_html_are_the_cli_outputs(cli):
    path = os.path.join(MODELS, "resnet18.onnx")
    r = flopwise.analyze(path, dims={"batch": 1})
    text = subprocess.run([cli, path, "--dim", "batch=1", "--depth", "2"], stdout=subprocess.PIPE).stdout.decode()
    assert r.table(depth=2) == text
    assert r._repr_html_().lstrip().lower().startswith("<!doctype html")


def test_bad_files_raise_with_the_cli_message(cli, tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    err = subprocess.run([cli, str(bad)], stderr=subprocess.PIPE).stderr.decode().strip()
    with pytest.raises(flopwise.InputError) as e:
        flopwise.analyze(str(bad))
    assert err == "flopwise: error: " + str(e.value)
    with pytest.raises(flopwise.InputError):
        flopwise.analyze(str(tmp_path / "missing.onnx"))
    with pytest.raises(flopwise.UsageError):
        flopwise.analyze(os.path.join(MODELS, "resnet18.onnx"), convention="nonsense")
    with pytest.raises(flopwise.UsageError):
        flopwise.analyze(os.path.join(MODELS, "resnet18.onnx"), inputs=["nosuchinput:1x3"])
    assert issubclass(flopwise.InputError, ValueError)
    # through the CLI child process (a .pt path) the message is the CLI's too
    badpt = tmp_path / "bad.pt"
    badpt.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(flopwise.InputError) as e:
        flopwise.analyze(str(badpt))
    err = subprocess.run([cli, str(badpt), "--format", "json"], stderr=subprocess.PIPE).stderr.decode()
    assert str(e.value) in err


def test_fuzz_regressions_never_crash():
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "fuzz", "regressions", "*"))):
        try:
            flopwise.analyze(path)
        except flopwise.FlopwiseError:
            pass


def test_sweep():
    s = flopwise.sweep(os.path.join(MODELS, "bert.onnx"), seq=[16, 32], batch=[1])
    f = flopwise.Formula(s.data["formulas"]["macs"])
    assert [row["macs"] for row in s.rows] == [f(seq=16, batch=1), f(seq=32, batch=1)]


def test_diff():
    d = flopwise.diff(os.path.join(MODELS, "resnet18.onnx"), os.path.join(MODELS, "resnet34.onnx"),
                      dims={"batch": 1}, sort="macs")
    assert d["schema"].startswith("flopwise.diff/")


def test_check(tmp_path):
    path = os.path.join(MODELS, "resnet18.onnx")
    ok = flopwise.check(path, "[dims]\nbatch = 1\n[limits]\nparams = \"12M\"\n")
    assert ok.passed and "params" in ok.text
    over = flopwise.check(path, "[dims]\nbatch = 1\n[limits]\nparams = \"1M\"\n")
    assert not over.passed and over.exit_code == 1
    with pytest.raises(flopwise.InputError):
        flopwise.check(path, str(tmp_path / "missing.toml"))


def test_run_onnx_without_profile_is_a_usage_error():
    with pytest.raises(flopwise.FlopwiseError):
        flopwise.run(os.path.join(MODELS, "resnet18.onnx"))


def test_python_m_flopwise(cli):
    path = os.path.join(MODELS, "resnet18.onnx")
    out = subprocess.run([sys.executable, "-m", "flopwise", path, "--dim", "batch=1", "-f", "json"],
                         stdout=subprocess.PIPE, check=True).stdout
    assert json.loads(out) == cli_json(cli, path, "--dim", "batch=1")


def test_sections_are_parsed_when_read(cli):
    path = os.path.join(MODELS, "resnet18.onnx")
    r = flopwise.analyze(path, dims={"batch": 1})
    assert r.totals.macs == 1814073344  # torchvision's ResNet-18 at 224x224: 1.814 GMACs
    assert "nodes" not in r._data._parsed  # the totals alone leave the node table unwritten
    expect = cli_json(cli, path, "--dim", "batch=1")
    assert [n["name"] for n in r.nodes] == [n["name"] for n in expect["nodes"]]
    assert list(r.to_dict()) == list(expect)  # the CLI's members in the CLI's order
    assert r.to_dict() == expect


def test_a_kept_analysis_ends_with_the_interpreter():
    # The analysis is left to the OS at exit (not freed node by node); the process still ends cleanly.
    code = ("import flopwise; r = flopwise.analyze(%r, dims={'batch': 1}); print(r.totals.params)"
            % os.path.join(MODELS, "resnet18.onnx"))
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, check=True).stdout
    assert out.decode().strip() == "11684712"


def test_trace(cli):
    """flopwise.trace mirrors `flopwise trace --format json`; flopwise.diff of two traces its diff."""
    import flopwise
    t = os.path.join(MODELS, "gpu", "traces", "resnet18.infer.eager.pt.trace.json.gz")
    r = flopwise.trace(t)
    assert r["schema"] == "flopwise.trace/1" and r == cli_json(cli, "trace", t)
    d = flopwise.diff(t, os.path.join(MODELS, "gpu", "traces", "resnet18.infer.eager-notf32.pt.trace.json.gz"))
    assert d["schema"] == "flopwise.trace_diff/1"


def test_predicted_latency(cli, tmp_path):
    """analyze(model, predict=CALIB): the report's prediction section as the CLI writes it (a calibration from
    the bundled ResNet-18's ONNX Runtime profile, flopwise calibrate)."""
    model = os.path.join(MODELS, "resnet18.onnx")
    run, calib = str(tmp_path / "r.json"), str(tmp_path / "c.json")
    subprocess.run([cli, "run", model, "--profile", os.path.join(MODELS, "ort", "resnet18.disabled.json"),
                    "--format", "json", "-o", run], check=True)
    subprocess.run([cli, "calibrate", run, "-o", calib], check=True, stdout=subprocess.DEVNULL)
    r = flopwise.analyze(model, dims={"batch": 1}, predict=calib)
    assert r.prediction == cli_json(cli, model, "--dim", "batch=1", "--predict", calib)["prediction"]
    assert r.prediction["total_ms"] > 0
    assert flopwise.analyze(model, dims={"batch": 1}).prediction is None


def test_pt2_in_process_and_through_the_cli_agree_with_torchvision(cli):
    """A torch.export archive (torch 2.14's, models/pt2) is analysed in-process, no LibTorch: ResNet-18's MACs
    per image are torchvision's published 1,814,073,344 and its params torch's 11,689,512; the CLI agrees."""
    path = os.path.join(MODELS, "pt2", "resnet18.pt2")
    r = flopwise.analyze(path, dims={"x.0": 1})
    assert r.totals.macs == 1814073344
    assert r.totals.params == 11689512
    assert cli_json(cli, path, "--dim", "x.0=1")["totals"]["macs"] == 1814073344


def test_pt2_program_of_several_is_chosen_by_name():
    path = os.path.join(MODELS, "pt2", "multi_program.pt2")
    with pytest.raises(flopwise.InputError):
        flopwise.analyze(path)
    assert flopwise.analyze(path, program="mlp").totals.params == 1732  # torch's sum(p.numel()), the oracle


def test_parallel_dict_is_the_cli_spec(cli):
    """parallel={...} is --parallel (docs/parallel.md): GPT-2 at tp 2 holds Megatron's per-rank share of params,
    L((12h^2 + 7h)/2 + 6h) + Vh/2 + Ph + 2h with h 128, L 4, V 1000, P 64 (tests/test_parallel.cc)."""
    path = os.path.join(MODELS, "gpt2.onnx")
    r = flopwise.analyze(path, dims={"batch": 2, "seq": 64}, parallel={"tp": 2, "sp": True},
                         precision="bf16-master")
    h, L, V, P = 128, 4, 1000, 64
    assert r.parallel["ranks"][0]["params"] == L * ((12 * h * h + 7 * h) // 2 + 6 * h) + V * h // 2 + P * h + 2 * h
    assert r.parallel["spec"].startswith("dp=1,tp=2,pp=1,ep=1,cp=1,sp=on,")
    assert r.parallel == cli_json(cli, path, "--dim", "batch=2", "--dim", "seq=64", "--parallel", "tp=2,sp=on",
                                  "--precision", "bf16-master")["parallel"]
    with pytest.raises(flopwise.UsageError, match="zero='7'"):
        flopwise.analyze(path, dims={"batch": 2, "seq": 64}, parallel="zero=7")
