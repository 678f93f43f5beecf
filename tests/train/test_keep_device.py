"""flopwise --train --device cpu|cuda: bytes kept for backward against torch's own figures in
models/train_keep.json, written by models/train_keep.py (Debian's torch 1.13 running each module's forward
under saved_tensors_hooks, each storage once: "cpu" as torch runs it on the CPU, "cuda" with F.dropout as
CUDA runs it). One op at a time (hardswish, hardsigmoid, ReLU and ReLU6 in place, dropout out of place, in
place and per channel, torchvision's SqueezeExcitation, LSTMs), then mobilenet_v3_small at 2x3x96x96, an
LSTM language model and a TransformerEncoder with dropout 0.1. The same script traces each module here."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "models"))
import train_keep  # noqa: E402

CLI = os.environ.get("FLOPWISE_CLI") or os.path.join(ROOT, "build", "flopwise")
with open(os.path.join(ROOT, "models", "train_keep.json")) as f:
    TORCH = json.load(f)["cases"]


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    d = tmp_path_factory.mktemp("keep")
    paths = {}
    for name in TORCH:
        paths[name] = str(d / (name + ".pt"))
        train_keep.trace(name, paths[name])
    return paths


def kept(path, pins, device):
    args = [CLI, path, "--train", "--format", "json", "--device", device]
    for p in pins:
        args += ["--input", p]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    t = json.loads(p.stdout)["training"]
    assert t["device"] == device and not t["warnings"]
    return t["saved_activation_bytes"]


@pytest.mark.parametrize("name", sorted(TORCH))
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_kept_bytes(traced, name, device):
    want = TORCH[name][device]
    if want is None:
        pytest.skip("not measured: " + name + " on " + device)
    assert kept(traced[name], TORCH[name]["inputs"], device) == want


def test_default_is_cuda(traced):
    """Without --device the step is CUDA's: the out-of-place dropout keeps a bool mask."""
    p = subprocess.run([CLI, traced["dropout"], "--train", "--format", "json", "--input", "2x3x8x8:float32"],
                       stdout=subprocess.PIPE, check=True)
    assert json.loads(p.stdout)["training"]["saved_activation_bytes"] == TORCH["dropout"]["cuda"]
    pin = ["--input", "2x3x8x8:float32"]
    bad = subprocess.run([CLI, traced["dropout"], *pin, "--train", "--device", "tpu"], stderr=subprocess.PIPE)
    assert bad.returncode == 2 and b"--device" in bad.stderr
    alone = subprocess.run([CLI, traced["dropout"], *pin, "--device", "cpu"], stderr=subprocess.PIPE)
    assert alone.returncode == 2 and b"add --train" in alone.stderr


@pytest.mark.parametrize("name", ["hardswish_inplace", "dropout", "dropout2d", "lstm_dropout"])
def test_committed_figures_are_torchs(name):
    """The committed JSON is what models/train_keep.py measures now."""
    assert train_keep.figures(name) == TORCH[name]
