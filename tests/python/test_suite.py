"""flopwise.suite: the calibration suite's networks are files flopwise reads exactly (params: torch's own count;
MACs: the eager dispatcher's count, conftest.eager_macs), the same for a seed on every call, and
calibrate_device measures them with LibTorch and writes a calibration that --predict reads. Small widths
(--small): Debian's LibTorch runs reference BLAS."""
import json
import os

import pytest

import flopwise
from conftest import eager_macs

torch = pytest.importorskip("torch")
suite = pytest.importorskip("flopwise.suite")

# Seeds 1000.. with the kinds weighted 4:3:2:2; these cover all four kinds and most block types.
COUNT = 14


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("suite")
    return out, suite.write(str(out), count=COUNT, small=True)


def test_kinds_and_files(written):
    out, listing = written
    assert [e["name"] for e in listing] == [f"suite_{k}" for k in range(COUNT)]
    assert {e["kind"] for e in listing} == {"conv", "transformer", "recurrent", "video"}
    for e in listing:
        assert os.path.exists(out / (e["name"] + ".onnx")) and os.path.exists(out / (e["name"] + ".trace.pt"))
    assert json.load(open(out / "suite.json")) == listing
    # a seed draws the same network on every call
    again = suite.write(str(out / "again"), count=2, small=True, onnx=False)
    assert [e["blocks"] for e in again] == [e["blocks"] for e in listing[:2]]


def test_counts_exact(written):
    out, listing = written
    for e in listing:
        kind, model, inputs, _ = suite.network(e["seed"], small=True)
        x = suite.example(inputs)
        r = flopwise.analyze(str(out / (e["name"] + ".trace.pt")))
        assert r.totals.params == sum(p.numel() for p in model.parameters()), e["name"]
        if kind in ("conv", "video"):  # products only; the recurrent cells' are not aten::mm calls
            macs = eager_macs(model, x)
            assert r.totals.macs == macs, e["name"]
            assert flopwise.analyze(str(out / (e["name"] + ".onnx"))).totals.macs == macs, e["name"]


def test_calibrate_device(tmp_path):
    cal = tmp_path / "cpu.calibration.json"
    c = suite.calibrate_device(cal, count=3, repeat=1, profile_iters=3, workdir=str(tmp_path / "work"),
                               min_samples=3)
    assert c["schema"] == "flopwise.calibration/1"
    assert c["runtime"].startswith("libtorch")
    assert len(c["models"]) == 3 and c["ops"]
    assert len(list((tmp_path / "work").glob("*.r1.run.json"))) == 3
    # the calibration predicts a model it did not see
    r = flopwise.analyze(os.path.join(os.path.dirname(__file__), "..", "..", "models", "resnet18.onnx"),
                         dims={"batch": 1}, predict=cal)
    assert r.to_dict()["prediction"]["total_ms"] > 0


def test_inception_block_counts_exact(tmp_path):
    # The first seed whose network has an Inception block (parallel 1x1, kxk, factorized 1xk + kx1 and
    # stride-1 pooling branches): its counts as torch counts them, from the TorchScript and the ONNX file.
    seed = next(s for s in range(1000, 1200) if any(d.startswith("inception") for d in suite.network(s, small=True)[3]))
    kind, model, inputs, _ = suite.network(seed, small=True)
    x = suite.example(inputs)
    listing = suite.write(str(tmp_path), count=1, seed=seed, small=True)
    name = listing[0]["name"]
    macs = eager_macs(model, x)
    r = flopwise.analyze(str(tmp_path / (name + ".trace.pt")))
    assert r.totals.params == sum(p.numel() for p in model.parameters())
    assert r.totals.macs == macs
    # the ONNX export folds BatchNormalization into the convolutions (its params change), not the MACs
    assert flopwise.analyze(str(tmp_path / (name + ".onnx"))).totals.macs == macs
