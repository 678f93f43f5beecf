"""analyze(nn.Module, inputs): MACs equal the eager dispatcher count, params equal sum(p.numel()), both computed
here. Small widths: Debian's LibTorch runs reference BLAS."""
import pytest

import flopwise
from conftest import eager_macs

torch = pytest.importorskip("torch")


def params(m):
    return sum(p.numel() for p in m.parameters())


def cases():
    torch.manual_seed(0)
    out = [
        ("linear", lambda: torch.nn.Linear(16, 8), lambda: (torch.randn(4, 16),)),
        ("encoder_layer",
         lambda: torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
                                                 batch_first=True),
         lambda: (torch.randn(2, 8, 32),)),
    ]
    tv = pytest.importorskip("torchvision")
    out += [
        ("resnet18", lambda: tv.models.resnet18(), lambda: (torch.randn(1, 3, 32, 32),)),
        ("mobilenet_v2", lambda: tv.models.mobilenet_v2(width_mult=0.25), lambda: (torch.randn(1, 3, 32, 32),)),
    ]
    return out


@pytest.mark.parametrize("name,make,inputs", cases(), ids=lambda x: x if isinstance(x, str) else "")
def test_module_traced(name, make, inputs):
    m, x = make().eval(), inputs()
    r = flopwise.analyze(m, x)
    assert r.totals.params == params(m)
    assert r.totals.macs == eager_macs(m, x, train=name == "encoder_layer")


def test_lstm_hand_formula():
    m = torch.nn.LSTM(input_size=8, hidden_size=16, num_layers=1, batch_first=True).eval()
    x = torch.randn(2, 5, 8)
    r = flopwise.analyze(m, x)
    assert r.totals.params == params(m)
    # per step and batch row: 4 gates x hidden x (input + hidden) = 4*16*(8+16) = 1536; 2 rows x 5 steps
    assert r.totals.macs == 2 * 5 * 4 * 16 * (8 + 16)


def test_export_onnx_in_process():
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 6 * 6, 10)).eval()
    x = torch.randn(1, 3, 8, 8)
    r = flopwise.analyze(m, x, export="onnx")
    assert r.to_dict()["model"]["format"] == "onnx"
    assert r.totals.params == params(m)
    assert r.totals.macs == eager_macs(m, (x,))  # 8*6*6*27 + 288*10


def test_script_module_and_pt_path(tmp_path):
    m = torch.jit.script(torch.nn.Linear(16, 8))
    r = flopwise.analyze(m, torch.randn(4, 16))
    assert (r.totals.params, r.totals.macs) == (136, 4 * 16 * 8)
    path = tmp_path / "lin.pt"
    m.save(str(path))
    assert flopwise.analyze(str(path), ["4x16"]).totals.macs == 512
    d = flopwise.diff(torch.nn.Linear(16, 8), torch.nn.Linear(16, 32), torch.randn(4, 16))
    assert d["schema"].startswith("flopwise.diff/")


def test_newer_archive_is_an_input_error(tmp_path):
    import zipfile
    m = torch.jit.script(torch.nn.Linear(4, 4))
    path = tmp_path / "lin.pt"
    m.save(str(path))
    newer = tmp_path / "newer.pt"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(newer, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            if item.filename.endswith("/version"):
                data = b"99\n"
            dst.writestr(item, data)
    with pytest.raises(flopwise.InputError) as e:
        flopwise.analyze(str(newer), ["4x4"])
    assert "export=\"onnx\"" in str(e.value)


def test_training_step_of_a_module():
    """analyze(module, inputs, train=True, freeze=[...]): the backward MACs torch dispatches in
    loss.backward() (tests/train/oracle.py, the CLI's own test), trainable params as torch counts them."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "train"))
    import oracle
    tv = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    m, x = tv.models.resnet18(num_classes=10), (torch.randn(2, 3, 32, 32),)
    want = oracle.step_figures(m, x, ("conv1", "bn1", "layer1"))
    r = flopwise.analyze(m.eval(), x, train=True, freeze=["conv1", "bn1", "layer1"], optimizer="sgd")
    assert r.training["backward_macs"] == want["backward_macs"]
    assert r.training["trainable_params"] == want["trainable_params"]
    assert r.training["optimizer_state_bytes"] == 0
    with pytest.raises(flopwise.UsageError):
        flopwise.analyze(m, x, freeze=["layer1"])

