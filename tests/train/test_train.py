"""flopwise --train against torch 1.13 running one training step of the same module (tests/train/oracle.py):
backward MACs as autograd dispatches them, trainable params as torch counts them, optimizer state as
torch.optim keeps it. The modules are built here with random weights; each is traced to TorchScript and
exported to ONNX, and both files must give torch's figures."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("FLOPWISE_CLI") or os.path.join(ROOT, "build", "flopwise")


def training(path, *args):
    p = subprocess.run([CLI, path, "--train", "--format", "json", *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    return json.loads(p.stdout)["training"]


def export(m, inputs, tmp, name):
    """The module traced to TorchScript and exported to ONNX (eval mode: the products are the same)."""
    m.eval()
    pt, onnx = str(tmp / (name + ".pt")), str(tmp / (name + ".onnx"))
    with torch.no_grad():
        torch.jit.trace(m, inputs).save(pt)
        torch.onnx.export(m, inputs, onnx, opset_version=14)
    m.train()
    shapes = ["x%d:%s:%s" % (i, "x".join(map(str, t.shape)), str(t.dtype).replace("torch.", ""))
              for i, t in enumerate(inputs)]
    pins = []
    for s in shapes:
        pins += ["--input", s.split(":", 1)[1]]
    return pt, onnx, pins


class Resnet(torch.nn.Module):
    pass


@pytest.fixture(scope="module")
def resnet18(tmp_path_factory):
    torch.manual_seed(0)
    m = torchvision.models.resnet18(num_classes=10)
    x = (torch.randn(2, 3, 64, 64),)
    pt, onnx, pins = export(m, x, tmp_path_factory.mktemp("r18"), "resnet18")
    return m, x, pt, onnx, pins


FROZEN_BACKBONE = ("conv1", "bn1", "layer1", "layer2")


@pytest.mark.parametrize("frozen", [(), FROZEN_BACKBONE], ids=["all", "frozen"])
def test_resnet18_backward_macs(resnet18, frozen):
    """All trainable: 2 x forward less the first conv's input gradient (a graph input needs none). Stem,
    layer1 and layer2 frozen: no weight gradient there, and no input gradient either."""
    m, x, pt, onnx, pins = resnet18
    want = oracle.step_figures(m, x, frozen)
    args = [a for s in frozen for a in ("--freeze", s)]
    got_pt = training(pt, *pins, *args)
    assert got_pt["backward_macs"] == want["backward_macs"]
    assert got_pt["trainable_params"] == want["trainable_params"]
    assert training(onnx, *args)["backward_macs"] == want["backward_macs"]
    if frozen:  # the frozen backbone: more than 2x less than the rule's
        assert want["backward_macs"] * 2 < 2 * oracle.forward_macs(m, x)
    # What autograd keeps: ReLU its result (in place: the batch norm's output), batch norm its input and two
    # per-channel statistics, max-pooling its input and int64 indices, a convolution its input where its weight
    # needs a gradient.
    assert got_pt["saved_activation_bytes"] == oracle.saved_bytes(m, x, frozen)
    # The forward in train mode (the file was traced in eval mode): each batch norm computes its batch's
    # statistics, 7 FLOPs per element where the inference report counts 2 (docs/COUNTING.md); elements from torch.
    bn_elems = []
    hooks = [b.register_forward_hook(lambda mod, i, o: bn_elems.append(o.numel()))
             for b in m.modules() if isinstance(b, torch.nn.BatchNorm2d)]
    with torch.no_grad():
        m(*x)
    for h in hooks:
        h.remove()
    assert got_pt["forward_extra_flops"] == 5 * sum(bn_elems)


@pytest.mark.parametrize("name,make", [
    ("sgd", lambda ps: torch.optim.SGD(ps, lr=0.1)),
    ("momentum", lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9)),
    ("adam", lambda ps: torch.optim.Adam(ps)),
    ("adamw", lambda ps: torch.optim.AdamW(ps)),
])
def test_optimizer_state(resnet18, name, make):
    m, x, pt, onnx, pins = resnet18
    got = training(pt, *pins, "--optimizer", name)
    assert got["optimizer_state_bytes"] == oracle.optimizer_state_bytes(m, x, make)
    assert got["gradient_bytes"] == 4 * sum(p.numel() for p in m.parameters())


def test_lstm(tmp_path):
    """A 2-layer LSTM and a head: 2 x forward less the first layer's input gradient and each layer's
    hidden-state gradient at the first step (its initial state is zeros made inside the op)."""
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = torch.nn.LSTM(8, 16, num_layers=2)
            self.head = torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.head(self.rnn(x)[0])

    m = Net()
    x = (torch.randn(5, 3, 8),)
    pt, onnx, pins = export(m, x, tmp_path, "lstm")
    for frozen in ((), ("rnn",)):
        want = oracle.step_figures(m, x, frozen)
        args = [a for s in frozen for a in ("--freeze", s)]
        assert training(pt, *pins, *args)["backward_macs"] == want["backward_macs"], frozen
        assert training(onnx, *args)["backward_macs"] == want["backward_macs"], frozen
    assert not training(onnx)["warnings"]


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_recurrent_keeps(tmp_path, kind):
    """What a recurrent layer keeps for backward, as torch's cells run step by step: an LSTM or GRU 6 tensors of
    [batch, hidden] per step and direction (gates, previous cell state or products, activations) and the
    previous hidden state for the recurrent weight's gradient; a tanh RNN its outputs and its initial state;
    the layer's input for the input weight's gradient. Two bidirectional layers after a Linear (their input
    needs a gradient), frozen in turn."""
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)
            self.rnn = getattr(torch.nn, kind)(8, 16, num_layers=2, bidirectional=True)
            self.head = torch.nn.Linear(32, 4)

        def forward(self, x):
            return self.head(self.rnn(self.lin(x))[0])

    m = Net()
    x = (torch.randn(5, 3, 8),)
    pt, onnx, pins = export(m, x, tmp_path, kind.lower())
    for frozen in ((), ("rnn",), ("lin",), ("lin", "rnn")):
        args = [a for s in frozen for a in ("--freeze", s)]
        got = training(pt, *pins, *args)
        assert got["saved_activation_bytes"] == oracle.saved_bytes(m, x, frozen), frozen
        assert got["backward_macs"] == oracle.step_figures(m, x, frozen)["backward_macs"], frozen
        assert not got["warnings"], frozen


def test_mlp_frozen_middle(tmp_path):
    """A frozen layer between trainable ones: its input gradient is computed (the first layer needs it), its
    weight gradient is not."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.GELU(),
                            torch.nn.Linear(64, 10))
    x = (torch.randn(4, 32),)
    pt, onnx, pins = export(m, x, tmp_path, "mlp")
    for frozen in ((), ("2",), ("0",), ("0", "2")):
        want = oracle.step_figures(m, x, frozen)
        args = [a for s in frozen for a in ("--freeze", s)]
        got = training(pt, *pins, *args)
        assert got["backward_macs"] == want["backward_macs"], frozen
        assert got["trainable_params"] == want["trainable_params"], frozen
        assert got["saved_activation_bytes"] == oracle.saved_bytes(m, x, frozen), frozen
        assert training(onnx, *args)["backward_macs"] == want["backward_macs"], frozen


@pytest.mark.parametrize("frozen", [(), FROZEN_BACKBONE, ("layer3",)], ids=["all", "frozen", "middle"])
def test_resnet18_mixed_precision(resnet18, frozen):
    """--precision bf16-mixed against torch.autocast (bfloat16, on this CPU: its lists agree with CUDA's on a
    CNN's ops): convolutions and the head run on bfloat16 copies, the first one of the float32 input, each
    trainable weight's copy made once (autocast's cache), a frozen one's per use; a convolution keeps both
    operands whichever gradient is asked (one formula), batch norm, ReLU and pooling work in bfloat16.
    Weights, gradients and optimizer state stay float32."""
    m, x, pt, onnx, pins = resnet18
    args = [a for s in frozen for a in ("--freeze", s)]
    with oracle.mixed("bf16-mixed"):
        want = oracle.saved_bytes(m, x, frozen)
    got = training(pt, *pins, "--precision", "bf16-mixed", *args)
    assert got["precision"] == "bf16-mixed"
    assert got["saved_activation_bytes"] == want
    assert training(pt, *pins, *args)["saved_activation_bytes"] == oracle.saved_bytes(m, x, frozen)
    assert got["gradient_bytes"] == 4 * oracle.step_figures(m, x, frozen)["trainable_params"]
    fp16 = training(pt, *pins, "--precision", "fp16-mixed", *args)
    assert fp16["saved_activation_bytes"] == want  # float16 and bfloat16 have the same width
    # torch.cuda.amp.GradScaler: unscale and inf check, 2 per gradient element, before AdamW's 14
    assert fp16["optimizer_flops"] == 16 * got["trainable_params"]


def test_dropout_in_train_mode(tmp_path):
    """A dropout traced in eval mode (the .pt records its probability) and exported in training mode (ONNX keeps
    its Dropout): active under --train, it keeps a bool mask (as CUDA's fused kernel does: the oracle runs
    that kernel) and its output is a tensor of its own that the next product keeps; its forward is 2 FLOPs per
    element (mask and multiply)."""
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.drop = torch.nn.Linear(16, 32), torch.nn.Dropout(0.3)
            self.b, self.c = torch.nn.Linear(32, 32), torch.nn.Linear(32, 4)

        def forward(self, x):
            return self.c(torch.relu(self.b(self.drop(torch.relu(self.a(x))))))

    m = Net()
    x = (torch.randn(8, 16),)
    pt, _, pins = export(m, x, tmp_path, "dropout")
    onnx = str(tmp_path / "dropout_train.onnx")
    torch.onnx.export(m, x, onnx, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    m.train()
    for precision in ("fp32", "bf16-mixed"):
        for frozen in ((), ("b",)):
            args = ["--precision", precision] + [a for s in frozen for a in ("--freeze", s)]
            with oracle.cuda_dropout(), oracle.mixed(precision):
                want = oracle.saved_bytes(m, x, frozen)
            for path, p in ((pt, pins), (onnx, [])):
                got = training(path, *p, *args)
                assert got["saved_activation_bytes"] == want, (path, args)
                assert got["forward_extra_flops"] == 2 * 8 * 32, (path, args)


def test_transformer_with_dropout(tmp_path):
    """A TransformerEncoder with dropout 0.1 traced in train mode (where nn.MultiheadAttention's dropout on the
    attention probabilities is recorded: an eval trace drops it): backward MACs and kept bytes as torch's step
    with CUDA's dropout kernel; the ONNX exported in training mode gives the same backward MACs."""
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(50, 32)
            layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)
            self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

        def forward(self, tokens):
            return self.encoder(self.embed(tokens))

    m = Net().train()
    x = (torch.randint(0, 50, (2, 7)),)
    pt, onnx = str(tmp_path / "enc.pt"), str(tmp_path / "enc.onnx")
    torch.jit.trace(m, x, check_trace=False).save(pt)
    torch.onnx.export(m, x, onnx, training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
    with oracle.cuda_dropout():
        want = oracle.step_figures(m, x)
    with oracle.cuda_dropout():
        kept = oracle.saved_bytes(m, x)
    got = training(pt, "--input", "2x7:int64")
    assert got["backward_macs"] == want["backward_macs"]
    assert got["saved_activation_bytes"] == kept
    assert not got["warnings"]
    assert training(onnx)["backward_macs"] == want["backward_macs"]


def test_unmatched_freeze_warns(resnet18):
    m, x, pt, onnx, pins = resnet18
    got = training(pt, *pins, "--freeze", "no_such_layer")
    assert any("no_such_layer" in w for w in got["warnings"])
    assert got["frozen_params"] == 0


def test_transformer_encoder_after_embedding(tmp_path):
    """Token embedding, then two encoder layers and a head: exactly 2 x forward with everything trainable (the
    embedding's output needs a gradient through its weight); the embedding frozen, the first in-projection's
    input gradient goes. Kept bytes: the attention's q, k, v are copies (a reshape of a split is not a view),
    layer norm keeps two statistics per row, softmax and ReLU their results."""
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(100, 32)
            # dropout 0: test_transformer_with_dropout has it
            layer = torch.nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0)
            self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = torch.nn.Linear(32, 100)

        def forward(self, tokens):
            return self.head(self.encoder(self.embed(tokens)))

    m = Net()
    x = (torch.randint(0, 100, (8, 2)),)
    pt, onnx, pins = export(m, x, tmp_path, "encoder")
    fwd = oracle.forward_macs(m.eval(), x)
    m.train()
    for frozen in ((), ("embed",)):
        want = oracle.step_figures(m, x, frozen)
        if not frozen:
            assert want["backward_macs"] == 2 * fwd
        args = [a for s in frozen for a in ("--freeze", s)]
        got = training(pt, *pins, *args)
        assert got["backward_macs"] == want["backward_macs"], frozen
        assert got["trainable_params"] == want["trainable_params"], frozen
        assert got["saved_activation_bytes"] == oracle.saved_bytes(m, x, frozen), frozen
        assert not got["warnings"]
        assert training(onnx, *args)["backward_macs"] == want["backward_macs"], frozen


def test_fit_is_the_largest_batch():
    """--fit 24GB on the bundled ResNet-18 (batch symbolic): the estimate at the batch found fits, one more does
    not (each read from a run with the batch bound)."""
    model = os.path.join(ROOT, "models", "resnet18.onnx")
    fit = training(model, "--fit", "24GB")["fit"]
    assert fit["dim"] == "batch" and fit["fits"] and fit["limit_bytes"] == 24 * 10**9
    at = lambda b: training(model, "--dim", "batch=%d" % b)["memory_estimate_bytes"]  # noqa: E731
    assert at(fit["max_value"]) == fit["estimate_bytes"] <= 24 * 10**9 < at(fit["max_value"] + 1)
    bound = training(model, "--dim", "batch=%d" % (fit["max_value"] + 1), "--fit", "24 GB")["fit"]
    assert bound["dim"] is None and not bound["fits"]
    p = subprocess.run([CLI, model, "--train", "--fit", "lots"], stderr=subprocess.PIPE)
    assert p.returncode == 2 and b"--fit" in p.stderr


def test_checkpointed_block(tmp_path):
    """--checkpoint SCOPE against torch.utils.checkpoint (non-reentrant) around the same block: the block's
    forward products run again in the backward (the dispatch mode sees them), and it keeps only what enters
    it (torch holds its inputs in the checkpoint's closure: added to the saved_tensors_hooks count here)."""
    from torch.utils.checkpoint import checkpoint
    torch.manual_seed(0)

    def conv_bn(cin, cout):
        return [torch.nn.Conv2d(cin, cout, 3, padding=1, bias=False), torch.nn.BatchNorm2d(cout), torch.nn.ReLU()]

    class Net(torch.nn.Module):
        def __init__(self, ckpt):
            super().__init__()
            self.ckpt = ckpt
            self.stem = torch.nn.Sequential(*conv_bn(3, 8))
            self.block = torch.nn.Sequential(*conv_bn(8, 16), *conv_bn(16, 16))
            self.head = torch.nn.Sequential(torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 4))

        def forward(self, x):
            x = self.stem(x)
            if self.ckpt:
                oracle.keep(x)
                x = checkpoint(self.block, x, use_reentrant=False)
            else:
                x = self.block(x)
            return self.head(x)

    plain, ckpt = Net(False), Net(True)
    ckpt.load_state_dict(plain.state_dict())
    x = (torch.randn(2, 3, 16, 16),)
    pt, onnx, pins = export(plain, x, tmp_path, "ckpt")
    want = oracle.step_figures(ckpt, x)
    assert want["backward_macs"] > oracle.step_figures(plain, x)["backward_macs"]  # the recomputation
    got = training(pt, *pins, "--checkpoint", "block")
    assert got["checkpoint"] == ["block"]
    assert got["backward_macs"] == want["backward_macs"]
    assert got["saved_activation_bytes"] == oracle.saved_bytes(ckpt, x)
    assert got["saved_activation_bytes"] < training(pt, *pins)["saved_activation_bytes"]
    assert training(onnx, "--checkpoint", "block")["backward_macs"] == want["backward_macs"]


def test_diff_of_training_steps():
    """flopwise diff A B --train: each side's step as `flopwise MODEL --train` counts it, and the deltas."""
    a, b = (os.path.join(ROOT, "models", m + ".onnx") for m in ("resnet18", "resnet34"))
    args = ["--dim", "batch=2", "--freeze", "layer1", "--freeze", "layer2", "--optimizer", "sgd"]
    p = subprocess.run([CLI, "diff", a, b, "--train", "--format", "json", *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    assert p.returncode == 0, p.stderr.decode()
    d = json.loads(p.stdout)
    for side, path in (("a", a), ("b", b)):
        t = training(path, *args)
        assert d[side]["train_backward_macs"] == t["backward_macs"]
        assert d[side]["trainable_params"] == t["trainable_params"]
        assert d[side]["saved_activation_bytes"] == t["saved_activation_bytes"]
        assert d[side]["memory_estimate_bytes"] == t["memory_estimate_bytes"]
    assert d["delta"]["train_backward_macs"] == d["b"]["train_backward_macs"] - d["a"]["train_backward_macs"]
    plain = json.loads(subprocess.run([CLI, "diff", a, b, "--format", "json", "--dim", "batch=2"],
                                      stdout=subprocess.PIPE).stdout)
    assert "train_backward_macs" not in plain["a"]


def test_budget_on_the_training_step(tmp_path):
    """flopwise check: [train] and limits on the step's figures ("the step fits 24 GB at batch 32"), judged on
    the figures `flopwise MODEL --train` gives with the same options."""
    model = os.path.join(ROOT, "models", "resnet18.onnx")
    t = training(model, "--dim", "batch=32", "--freeze", "conv1", "--freeze", "layer1", "--freeze", "layer2")
    budget = tmp_path / "b.toml"

    def check(limit_bwd):
        budget.write_text('[dims]\nbatch = 32\n[train]\nfreeze = ["conv1", "layer1", "layer2"]\n[limits]\n'
                          'memory_estimate_bytes = "24G"\ntrain_backward_flops = "%d"\n' % limit_bwd)
        return subprocess.run([CLI, "check", model, "--budget", str(budget)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)

    assert t["memory_estimate_bytes"] <= 24 * 10**9
    assert check(t["backward_flops"]).returncode == 0
    p = check(t["backward_flops"] - 1)
    assert p.returncode == 1 and str(t["backward_flops"]).encode() in p.stdout
    budget.write_text('[train]\noptimizer = "lion"\n')
    p = subprocess.run([CLI, "check", model, "--budget", str(budget)], stderr=subprocess.PIPE)
    assert p.returncode == 2 and b"optimizer" in p.stderr
    # [train] precision: the limit judged on --precision's figures
    mixed = training(model, "--dim", "batch=32", "--precision", "bf16-mixed")
    budget.write_text('[dims]\nbatch = 32\n[train]\nprecision = "bf16-mixed"\n[limits]\n'
                      'saved_activation_bytes = "%d"\n' % mixed["saved_activation_bytes"])
    assert subprocess.run([CLI, "check", model, "--budget", str(budget)], stdout=subprocess.PIPE).returncode == 0
    budget.write_text(budget.read_text().replace('"%d"' % mixed["saved_activation_bytes"],
                                                 '"%d"' % (mixed["saved_activation_bytes"] - 1)))
    assert subprocess.run([CLI, "check", model, "--budget", str(budget)], stdout=subprocess.PIPE).returncode == 1
    budget.write_text('[train]\nprecision = "fp8"\n')
    p = subprocess.run([CLI, "check", model, "--budget", str(budget)], stderr=subprocess.PIPE)
    assert p.returncode == 2 and b"precision" in p.stderr


def test_per_token_of_a_decoder():
    """The bundled GPT-2 (token ids [batch, seq]): fwd+bwd FLOPs per trained token, the attention products'
    share, beside 6 x params; at bound dims the per-token figure times the tokens is the step's fwd+bwd."""
    model = os.path.join(ROOT, "models", "gpt2.onnx")
    p = subprocess.run([CLI, model, "--train", "--format", "json", "--dim", "batch=2", "--dim", "seq=16"],
                       stdout=subprocess.PIPE, check=True)
    d = json.loads(p.stdout)
    t = d["training"]
    pt = t["per_token"]
    assert pt["tokens"] == 32
    assert t["forward_flops"] == d["totals"]["flops"]  # no dropout or batch norm in this export
    assert pt["flops"] * 32 == t["forward_flops"] + t["backward_flops"]
    assert pt["six_params"] == 6 * t["trainable_params"]
    assert 0 < pt["attention_flops"] < pt["flops"]
    sym = training(model)["per_token"]  # dims unbound: a formula in seq
    assert "seq" in sym["flops"] and "batch" not in sym["flops"]
    assert "per_token" not in training(os.path.join(ROOT, "models", "resnet18.onnx"))  # images: no tokens
