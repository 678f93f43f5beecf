# models/pt2/generate.py — writes the torch 2.x fixtures of models/pt2/: NAME.pt2 (torch.export.save, weights and
# constants stripped) and NAME.oracle.json (figures from torch itself: params, buffers, FlopCounterMode totals and
# per-op counts, contraction MACs, dynamic dims). Run in the modern root:
#   bash scripts/modern_torch.sh python3 models/pt2/generate.py [NAME...]      # all fixtures, or the named ones
#   bash scripts/modern_torch.sh python3 models/pt2/generate.py --llama70b build/llama3_70b.pt2  # benchmark, not committed
import argparse
import contextlib
import inspect
import io
import json
import os
import re
import sys
import tempfile
import time
import traceback
import zipfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.export import Dim
from torch.utils.flop_counter import FlopCounterMode

HERE = os.path.dirname(os.path.abspath(__file__))
aten = torch.ops.aten
torch.manual_seed(0)
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# Contraction MACs, counted per dispatched aten call of an eager run: oracle_counts.py.
from oracle_counts import CONTRACTION_FORMULAS, ContractionCounter, HopUnroller  # noqa: E402,F401


# ---------------------------------------------------------------------------------------------------------------
# The archive: torch.export.save's zip, rewritten without the tensor payloads.
def is_payload(entry):
    """Weights, constants and sample inputs: the binary blobs; every JSON and metadata entry stays."""
    parts = entry.split("/")
    if "data" in parts:
        i = parts.index("data")
        sub = parts[i + 1] if i + 1 < len(parts) else ""
        if sub in ("weights", "constants", "sample_inputs") and not entry.endswith(".json"):
            return True
    return False


KEEP_STACK_TRACES = False


def drop_stack_traces(obj):
    """Removes each node's `stack_trace` metadata (a third of a program's JSON), in subgraphs too."""
    if isinstance(obj, dict):
        if "target" in obj and isinstance(obj.get("metadata"), dict):
            obj["metadata"].pop("stack_trace", None)
        for v in obj.values():
            drop_stack_traces(v)
    elif isinstance(obj, list):
        for v in obj:
            drop_stack_traces(v)


def program_json(data):
    """A program's JSON without its nodes' stack traces, written as torch writes it (json.dumps' defaults)."""
    if KEEP_STACK_TRACES:
        return data
    program = json.loads(data)
    assert json.dumps(program).encode() == data, "torch's JSON no longer round-trips through json.dumps"
    drop_stack_traces(program)
    return json.dumps(program).encode()


def strip_archive(raw):
    """The zip's entries, in order, without the payload ones; stored (uncompressed) as torch writes them; the
    programs (`models/*.json`) without stack traces."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    dropped = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            if is_payload(info.filename):
                dropped.append(info.filename)
                continue
            zi = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_STORED
            data = src.read(info.filename)
            if "/models/" in info.filename and info.filename.endswith(".json"):
                data = program_json(data)
            dst.writestr(zi, data)
    return out.getvalue(), dropped


# ---------------------------------------------------------------------------------------------------------------
# Fixtures. Each returns a dict: model, make(**sizes) -> (args, kwargs), dims: the dynamic_shapes spec with
# size names in place of Dims, sizes: [export sizes, other sizes...], bounds: {size: (min, max)}.
FIXTURES = {}


def fixture(name):
    def register(fn):
        FIXTURES[name] = fn
        return fn
    return register


def spec(model, make, dims=None, sizes=({},), bounds=None, **extra):
    return dict(model=model, make=make, dims=dims, sizes=list(sizes), bounds=bounds or {}, **extra)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(16, 32), nn.Linear(32, 32), nn.Linear(32, 4)

    def forward(self, x):
        return self.fc3(F.gelu(self.fc2(F.relu(self.fc1(x)))))


class SmallCNN(nn.Module):
    """Grouped, depthwise and transposed convolution, BatchNorm, MaxPool, AdaptiveAvgPool, Linear."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.grouped = nn.Conv2d(16, 32, 3, padding=1, groups=4)
        self.depthwise = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.up = nn.ConvTranspose2d(32, 8, 2, stride=2, groups=2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.stem(x))))
        x = F.relu(self.depthwise(self.grouped(x)))
        x = self.up(x)
        return self.fc(torch.flatten(self.gap(x), 1))


def image(batch, c=3, h=32, w=32):
    return (torch.randn(batch, c, h, w),), {}


@fixture("mlp")
def _():
    return spec(MLP(), lambda batch: ((torch.randn(batch, 16),), {}), ({0: "batch"},),
                [{"batch": 2}, {"batch": 3}])


@fixture("cnn")
def _():
    return spec(SmallCNN(), image, ({0: "batch"},), [{"batch": 2}, {"batch": 3}])


@fixture("cnn_core_aten")
def _():
    torch.manual_seed(1)
    return spec(SmallCNN(), image, ({0: "batch"},), [{"batch": 2}, {"batch": 3}], decompose=True)


@fixture("cnn_train")
def _():
    return spec(SmallCNN(), image, ({0: "batch"},), [{"batch": 2}, {"batch": 3}], train=True)


class WithLoss(nn.Module):
    """A model and its loss: what a training step exports (torch.export.experimental._export_forward_backward)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, y):
        return (F.cross_entropy(self.model(x), y),)


def labelled(batch):
    return (torch.randn(batch, 3, 32, 32), torch.randint(0, 10, (batch,))), {}


@fixture("cnn_joint")
def _():  # the forward and backward in one core-ATen program: its loss and every parameter's gradient
    torch.manual_seed(1)
    return spec(WithLoss(SmallCNN()), labelled, ({0: "batch"}, {0: "batch"}), [{"batch": 2}, {"batch": 3}],
                train=True, joint=True)


def vision(ctor, **kw):
    import torchvision.models as tvm
    return getattr(tvm, ctor)(weights=None, **kw)


@fixture("resnet18")
def _():
    return spec(vision("resnet18"), lambda batch: image(batch, 3, 224, 224), ({0: "batch"},),
                [{"batch": 2}, {"batch": 3}])


@fixture("mobilenet_v3_small")
def _():
    return spec(vision("mobilenet_v3_small"), lambda batch: image(batch, 3, 224, 224), ({0: "batch"},),
                [{"batch": 2}, {"batch": 3}])


@fixture("lraspp_mobilenet_v3_large")
def _():
    import torchvision.models.segmentation as seg
    m = seg.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None, num_classes=5)
    return spec(m, lambda batch: image(batch, 3, 128, 128), ({0: "batch"},), [{"batch": 2}, {"batch": 3}])


@fixture("r3d_18")
def _():
    import torchvision.models.video as video
    return spec(video.r3d_18(weights=None, num_classes=10), lambda batch: ((torch.randn(batch, 3, 8, 56, 56),), {}),
                ({0: "batch"},), [{"batch": 2}, {"batch": 3}])


# transformers, from small configs (random weights).
def ids(batch, seq, vocab=1000, name="input_ids"):
    return {name: torch.randint(0, vocab, (batch, seq))}


TEXT_SIZES = [{"batch": 2, "seq": 8}, {"batch": 3, "seq": 17}]
TEXT_DIMS = {"input_ids": {0: "batch", 1: "seq"}}


def hf(cls_name, config_name, **cfg):
    import transformers
    config = getattr(transformers, config_name)(**cfg)
    return getattr(transformers, cls_name)(config)


@fixture("gpt2")
def _():
    m = hf("GPT2LMHeadModel", "GPT2Config", vocab_size=1000, n_positions=64, n_embd=64, n_layer=2, n_head=4,
           tie_word_embeddings=True, use_cache=False)
    assert m.lm_head.weight is m.transformer.wte.weight
    return spec(m, lambda batch, seq: ((), ids(batch, seq)), TEXT_DIMS, TEXT_SIZES,
                {"seq": (2, 64)})


@fixture("bert")
def _():
    m = hf("BertModel", "BertConfig", vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
           intermediate_size=128, max_position_embeddings=64)
    return spec(m, lambda batch, seq: ((), ids(batch, seq)), TEXT_DIMS, TEXT_SIZES, {"seq": (2, 64)})


@fixture("llama")
def _():
    m = hf("LlamaForCausalLM", "LlamaConfig", vocab_size=1000, hidden_size=64, intermediate_size=128,
           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
           attn_implementation="sdpa", use_cache=False)
    return spec(m, lambda batch, seq: ((), ids(batch, seq)), TEXT_DIMS, TEXT_SIZES, {"seq": (2, 128)})


@fixture("llama_static_cache")
def _():  # one decode step as ExecuTorch exports it: transformers' StaticCache as mutated buffers (index_copy_)
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache
    m = hf("LlamaForCausalLM", "LlamaConfig", vocab_size=1000, hidden_size=64, intermediate_size=128,
           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
           attn_implementation="sdpa").eval()
    import transformers
    m.generation_config = transformers.GenerationConfig(use_cache=True, cache_implementation="static", max_length=64)
    w = TorchExportableModuleWithStaticCache(m, batch_size=1, max_cache_len=64)
    return spec(w, lambda: ((), {"input_ids": torch.tensor([[7]]), "cache_position": torch.tensor([3])}))


class LMLoss(nn.Module):
    """A causal LM and its loss on labels (transformers' shifted cross entropy): a decoder's training step."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, labels):
        return (self.model(input_ids=input_ids, labels=labels).loss,)


@fixture("llama_joint")
def _():  # a decoder's training step in one program: its loss and every parameter's gradient
    torch.manual_seed(1)
    m = hf("LlamaForCausalLM", "LlamaConfig", vocab_size=1000, hidden_size=64, intermediate_size=128,
           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
           attn_implementation="sdpa", use_cache=False)
    return spec(LMLoss(m), lambda batch, seq: ((ids(batch, seq)["input_ids"], ids(batch, seq)["input_ids"]), {}),
                ({0: "batch", 1: "seq"}, {0: "batch", 1: "seq"}), TEXT_SIZES, {"seq": (2, 128)}, train=True,
                joint=True)


@fixture("falcon")
def _():  # each Linear multiplies by `weight.T` (aten.numpy_T); the causal mask is built under torch.vmap (pre-dispatch)
    m = hf("FalconForCausalLM", "FalconConfig", vocab_size=1000, hidden_size=64, num_hidden_layers=2,
           num_attention_heads=4, use_cache=False)
    return spec(m, lambda batch, seq: ((), ids(batch, seq)), TEXT_DIMS, TEXT_SIZES, {"seq": (2, 64)})


@fixture("mixtral")
def _():
    m = hf("MixtralForCausalLM", "MixtralConfig", vocab_size=1000, hidden_size=64, intermediate_size=96,
           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
           num_experts_per_tok=2, max_position_embeddings=128, attn_implementation="sdpa", use_cache=False)
    return spec(m, lambda batch, seq: ((), ids(batch, seq)), TEXT_DIMS, TEXT_SIZES, {"seq": (2, 128)})


@fixture("mixtral_batched_mm")
def _():  # the experts as aten bmm over gathered weights, not transformers' grouped_mm custom op
    m = hf("MixtralForCausalLM", "MixtralConfig", vocab_size=1000, hidden_size=64, intermediate_size=96,
           num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, num_local_experts=4,
           num_experts_per_tok=2, max_position_embeddings=128, attn_implementation="sdpa",
           experts_implementation="batched_mm", use_cache=False)
    return spec(m, lambda batch, seq: ((), ids(batch, seq)), TEXT_DIMS, TEXT_SIZES, {"seq": (2, 128)})


@fixture("t5")
def _():
    m = hf("T5ForConditionalGeneration", "T5Config", vocab_size=1000, d_model=64, d_kv=16, d_ff=128, num_layers=2,
           num_decoder_layers=2, num_heads=4, use_cache=False)

    def make(batch, seq, dec):
        kw = ids(batch, seq)
        kw.update(ids(batch, dec, name="decoder_input_ids"))
        return (), kw
    return spec(m, make, {"input_ids": {0: "batch", 1: "seq"}, "decoder_input_ids": {0: "batch", 1: "dec"}},
                [{"batch": 2, "seq": 8, "dec": 4}, {"batch": 3, "seq": 17, "dec": 5}], {"seq": (2, 64), "dec": (2, 64)})


@fixture("vit")
def _():
    m = hf("ViTModel", "ViTConfig", image_size=32, patch_size=8, num_channels=3, hidden_size=64, num_hidden_layers=2,
           num_attention_heads=4, intermediate_size=128, add_pooling_layer=True)
    return spec(m, lambda batch: ((), {"pixel_values": torch.randn(batch, 3, 32, 32)}),
                {"pixel_values": {0: "batch"}}, [{"batch": 2}, {"batch": 3}])


@fixture("whisper")
def _():
    m = hf("WhisperForConditionalGeneration", "WhisperConfig", vocab_size=1000, num_mel_bins=16, d_model=64,
           encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
           encoder_ffn_dim=128, decoder_ffn_dim=128, max_source_positions=50, max_target_positions=64,
           pad_token_id=1, bos_token_id=2, eos_token_id=2, decoder_start_token_id=3, use_cache=False)

    def make(batch, dec):  # the encoder wants exactly 2 * max_source_positions frames
        return (), {"input_features": torch.randn(batch, 16, 100), **ids(batch, dec, name="decoder_input_ids")}
    return spec(m, make, {"input_features": {0: "batch"}, "decoder_input_ids": {0: "batch", 1: "dec"}},
                [{"batch": 2, "dec": 8}, {"batch": 3, "dec": 17}], {"dec": (2, 64)})


# Higher-order ops, each in its own small program.
class Cond(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda x: self.a(x).relu(), lambda x: self.b(x).sigmoid(), (x,))


class WhileLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        from torch._higher_order_ops.while_loop import while_loop
        i0 = torch.zeros((), dtype=torch.int64)
        _, y = while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, self.lin(x).tanh()), (i0, x))
        return y


class Scan(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, xs):  # xs: (T, B, 8), scanned over T
        from torch._higher_order_ops.scan import scan

        def step(h, x):
            h = torch.tanh(self.lin(h) + x)
            return h, h.clone()
        h0 = torch.zeros(xs.shape[1], 8)
        h, ys = scan(step, h0, xs)
        return h, ys


class Map(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, xs):  # xs: (N, B, 8), mapped over N
        from torch._higher_order_ops.map import map as hop_map
        return hop_map(lambda x: self.lin(x).relu(), xs)


class NoGrad(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x):
        with torch.no_grad():
            y = self.a(x)
        return self.b(y)


class Autocast(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 8), nn.Linear(8, 8)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.a(x)
        return self.b(y.float())


@torch.library.custom_op("mylib::scale", mutates_args=())
def mylib_scale(x: torch.Tensor, s: float) -> torch.Tensor:
    return x * s


@mylib_scale.register_fake
def _(x, s):
    return torch.empty_like(x)


@torch.library.custom_op("mylib::add_", mutates_args=("x",))
def mylib_add_(x: torch.Tensor, y: torch.Tensor) -> None:
    x.add_(y)


@mylib_add_.register_fake
def _(x, y):
    return None


class CustomOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = torch.ops.mylib.scale(self.lin(x), 2.0)
        z = y.clone()
        torch.ops.mylib.add_(z, x)
        return z


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    @torch.compiler.nested_compile_region
    def forward(self, x):
        return self.lin(x).relu()


class InvokeSubgraph(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        return self.block(self.block(x))


class Effects(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        torch.ops.aten._print("flopwise: an ordered side effect")
        return y


def small(module, dims=({0: "batch"},), make=None):
    make = make or (lambda batch: ((torch.randn(batch, 8),), {}))
    return spec(module, make, dims, [{"batch": 2}, {"batch": 3}])


def seq_first(module):
    return spec(module, lambda batch: ((torch.randn(4, batch, 8),), {}), ({1: "batch"},),
                [{"batch": 2}, {"batch": 3}])


FIXTURES.update({
    "hop_cond": lambda: small(Cond()),
    "hop_while_loop": lambda: small(WhileLoop()),
    "hop_scan": lambda: seq_first(Scan()),
    "hop_map": lambda: seq_first(Map()),
    "hop_no_grad": lambda: small(NoGrad()),
    "hop_autocast": lambda: small(Autocast()),
    "hop_custom_ops": lambda: small(CustomOps()),  # training IR: mylib.add_ mutates in place
    "hop_auto_functionalized": lambda: dict(small(CustomOps()), decompose=True),  # core aten: auto_functionalized_v2
    # Each region call is traced alone, so Dynamo would inline it as single-use: keep them as invoke_subgraph.
    "hop_invoke_subgraph": lambda: dict(small(InvokeSubgraph()), context=lambda: torch._dynamo.config.patch(
        inline_single_use_invoke_subgraph=False)),
    "hop_effect_print": lambda: small(Effects()),  # training IR: aten._print as a plain call
    "hop_with_effects": lambda: dict(small(Effects()), decompose=True),  # core aten: with_effects and a token input
})


# ---------------------------------------------------------------------------------------------------------------
def resolve_dims(dims, active, bounds):
    """The dynamic_shapes spec with the active size names as Dims; the others left static."""
    made = {}

    def dim(name):
        if name not in made:
            lo, hi = bounds.get(name, (1, 64))
            made[name] = Dim(name, min=lo, max=hi)
        return made[name]

    def one(d):
        if d is None:
            return None
        kept = {i: dim(n) for i, n in d.items() if n in active}
        return kept or None
    if dims is None:
        return None
    if isinstance(dims, dict):
        return {k: one(v) for k, v in dims.items()}
    return tuple(one(d) for d in dims)


def size_names(dims):
    names = []
    for d in (dims.values() if isinstance(dims, dict) else dims or ()):
        for n in (d or {}).values():
            if n not in names:
                names.append(n)
    return names


def export(f):
    """Export with every size dynamic; on refusal with batch only, then static. Returns (ep, active, refusals)."""
    names = size_names(f["dims"])
    ladders = [names] + ([["batch"]] if "batch" in names and len(names) > 1 else []) + ([[]] if names else [])
    args, kwargs = f["make"](**f["sizes"][0])
    refusals = []
    for active in ladders:
        try:
            with f.get("context", contextlib.nullcontext)():
                ep = torch.export.export(f["model"], args, kwargs, dynamic_shapes=resolve_dims(f["dims"], active,
                                                                                       f["bounds"]), strict=False)
            return ep, active, refusals
        except Exception as e:  # noqa: BLE001 — the refusal is recorded and the next rung tried
            refusals.append({"dynamic": active, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"})
    raise RuntimeError(f"export refused: {refusals}")


def dynamic_dims(ep, f, active):
    """Each dynamic input dim: the input, its index, our size name, torch's symbol and its range."""
    user_inputs = set(ep.graph_signature.user_inputs)
    ranges = {str(k): v for k, v in ep.range_constraints.items()}
    by_input = {}
    dims = f["dims"]
    if isinstance(dims, dict):
        by_input = dims
    else:
        placeholders = [n.name for n in ep.graph.nodes if n.op == "placeholder" and n.name in user_inputs]
        by_input = dict(zip(placeholders, dims or ()))
    out = []
    for node in ep.graph.nodes:
        if node.op != "placeholder" or node.name not in user_inputs:
            continue
        val = node.meta.get("val")
        for i, size in enumerate(getattr(val, "shape", ())):
            if isinstance(size, torch.SymInt):
                sym = str(size)
                r = ranges.get(sym)
                name = (by_input.get(node.name) or {}).get(i)
                out.append({"input": node.name, "dim": i, "size_name": name, "symbol": sym,
                            "min": None if r is None else int(r.lower),
                            "max": None if r is None or not r.upper.is_finite else int(r.upper)})
    return out


def shapes_of(model, args, kwargs):
    """Each tensor input's shape by the forward's parameter name."""
    bound = inspect.signature(model.forward).bind(*args, **kwargs).arguments
    return {k: list(v.shape) for k, v in bound.items() if isinstance(v, torch.Tensor)}


def dump(obj, path):
    """Indented JSON with lists of numbers on one line."""
    text = json.dumps(obj, indent=1)
    text = re.sub(r"\[\s*([-0-9,\s]*?)\s*\]", lambda m: "[" + ", ".join(m.group(1).split()).replace(",,", ",") + "]", text)
    with open(path, "w") as out:
        out.write(text + "\n")


def count(model, sizes, make, joint=False):
    """The eager run's counts: the forward under no_grad, or with `joint` the forward and the loss's backward."""
    args, kwargs = make(**sizes)

    def step():
        if not joint:
            with torch.no_grad():
                return model(*args, **kwargs)
        model.zero_grad(set_to_none=True)
        model(*args, **kwargs)[0].backward()

    flop = FlopCounterMode(display=False)
    with flop, HopUnroller():
        step()
    macs = ContractionCounter()
    with macs, HopUnroller():
        step()
    per_op = {str(op): int(n) for op, n in sorted(flop.get_flop_counts().get("Global", {}).items(), key=str)}
    known = [v for v in macs.by_kind.values() if v is not None]
    out = {"sizes": sizes, "input_shapes": shapes_of(model, args, kwargs), "flop_counter_total": int(flop.get_total_flops()),
           "flop_counter_by_op": per_op, "contraction_macs": sum(known) if len(known) == len(macs.by_kind) else None,
           "contraction_macs_by_kind": macs.by_kind}
    if joint:
        out.update(count_phases(model, args, kwargs))
    return out


def count_phases(model, args, kwargs):
    """A training step's forward and backward apart (FlopCounterMode, the contraction counter), and the bytes
    autograd keeps for the backward (saved_tensors_hooks: each storage once; parameters, buffers and the
    inputs apart, as they are kept anyway)."""
    apart = {t.untyped_storage().data_ptr() for t in [*model.parameters(), *model.buffers(), *args,
                                                         *kwargs.values()] if isinstance(t, torch.Tensor)}
    phases = {}
    for phase in ("forward", "backward"):
        flop, macs = FlopCounterMode(display=False), ContractionCounter()
        for mode in (flop, macs):
            model.zero_grad(set_to_none=True)
            if phase == "forward":
                with mode:
                    model(*args, **kwargs)[0]
            else:
                loss = model(*args, **kwargs)[0]
                with mode:
                    loss.backward()
        known = [v for v in macs.by_kind.values() if v is not None]
        phases[phase] = {"flop_counter_total": int(flop.get_total_flops()),
                         "contraction_macs": sum(known) if len(known) == len(macs.by_kind) else None}
    kept = {}

    def pack(t):
        storage = t.untyped_storage()
        if storage.data_ptr() not in apart:
            kept[storage.data_ptr()] = storage.nbytes()
        return t

    model.zero_grad(set_to_none=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(*args, **kwargs)[0]
    phases["saved_bytes"] = sum(kept.values())
    return phases


def graph_stats(ep):
    nodes, hops = 0, set()
    gms = [ep.graph_module] + [m for _, m in ep.graph_module.named_modules() if isinstance(m, torch.fx.GraphModule)]
    for gm in {id(g): g for g in gms}.values():
        for n in gm.graph.nodes:
            nodes += 1
            if n.op == "call_function" and isinstance(n.target, torch._ops.HigherOrderOperator):
                hops.add(n.target.name())
    return nodes, sorted(hops)


def write_fixture(name, f):
    model = f["model"]
    model.train(f.get("train", False))
    t0 = time.time()
    ep, active, refusals = export(f)
    ir = "training"
    if f.get("decompose"):
        ep = ep.run_decompositions()
        ir = "core_aten"
    if f.get("joint"):
        from torch.export.experimental import _export_forward_backward
        ep = _export_forward_backward(ep)
        ir = "joint (core ATen forward and backward: torch.export.experimental._export_forward_backward)"
    export_s = time.time() - t0
    with tempfile.TemporaryDirectory() as tmp:  # saved to a path, as users do: the archive's folder is NAME/
        torch.export.save(ep, os.path.join(tmp, f"{name}.pt2"))
        with open(os.path.join(tmp, f"{name}.pt2"), "rb") as saved:
            full = saved.read()
    stripped, dropped = strip_archive(full)
    with open(os.path.join(HERE, f"{name}.pt2"), "wb") as out:
        out.write(stripped)
    nodes, hops = graph_stats(ep)
    oracle = {
        "model": type(model).__name__,
        "torch": torch.__version__,
        "export": {"strict": False, "ir": ir, "train_mode": bool(f.get("train")), "dynamic": active,
                   "refused": refusals, "graph_nodes": nodes, "higher_order_ops": hops,
                   "archive_bytes_full": len(full), "archive_bytes_stripped": len(stripped),
                   "dropped_entries": dropped},
        "params": sum(p.numel() for p in model.parameters()),
        "buffers": sum(b.numel() for b in model.buffers()),
        "lifted_constants": {k: list(v.shape) for k, v in ep.constants.items() if isinstance(v, torch.Tensor)},
        "dynamic": dynamic_dims(ep, f, active),
        "counted_on": "the eager model (FlopCounterMode and the contraction counter, under torch.no_grad)" if not
                      f.get("joint") else "the eager model's forward and loss.backward() (FlopCounterMode and the"
                                          " contraction counter)",
        "hop_counting": "cond: per op the larger branch (FlopCounterMode's rule); while_loop, scan, map: every"
                        " iteration (their dense kernels run under the counters)",
        "contraction_formulas": CONTRACTION_FORMULAS,
        "shape_sets": [],
    }
    sizes = f["sizes"] if active else f["sizes"][:1]
    for s in sizes:
        try:
            oracle["shape_sets"].append(count(model, s, f["make"], f.get("joint", False)))
        except Exception as e:  # noqa: BLE001
            oracle["shape_sets"].append({"sizes": s, "error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"})
    dump(oracle, os.path.join(HERE, f"{name}.oracle.json"))
    print(f"{name}: {len(stripped)} bytes (full {len(full)}), {nodes} nodes, dynamic {active},"
          f" export {export_s:.1f} s{', refused ' + str(refusals) if refusals else ''}", file=sys.stderr)


def write_multi(name):
    """Two programs in one archive (torch.export.pt2_archive's package_pt2)."""
    from torch.export.pt2_archive._package import package_pt2
    mlp, cnn = MLP().eval(), SmallCNN().eval()
    eps = {"mlp": torch.export.export(mlp, (torch.randn(2, 16),), strict=False),
           "cnn": torch.export.export(cnn, (torch.randn(2, 3, 32, 32),), strict=False)}
    buf = io.BytesIO()  # saved to a buffer: the archive's folder is archive/
    package_pt2(buf, exported_programs=eps)
    stripped, dropped = strip_archive(buf.getvalue())
    with open(os.path.join(HERE, f"{name}.pt2"), "wb") as out:
        out.write(stripped)
    oracle = {"programs": {}, "torch": torch.__version__, "dropped_entries": dropped}
    for key, m, x in (("mlp", mlp, torch.randn(2, 16)), ("cnn", cnn, torch.randn(2, 3, 32, 32))):
        c = count(m, {}, lambda: ((x,), {}))
        oracle["programs"][key] = {"model": type(m).__name__, "params": sum(p.numel() for p in m.parameters()),
                                   "buffers": sum(b.numel() for b in m.buffers()), "dynamic": [], "shape_sets": [c]}
    dump(oracle, os.path.join(HERE, f"{name}.oracle.json"))
    print(f"{name}: {len(stripped)} bytes, programs {list(eps)}", file=sys.stderr)


def llama70b(path):
    """Llama-3-70B's config on the meta device, exported with dynamic batch and sequence: a benchmark program."""
    import transformers
    cfg = transformers.LlamaConfig(vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                                   num_attention_heads=64, num_key_value_heads=8, max_position_embeddings=8192,
                                   rope_theta=500000.0, attn_implementation="sdpa", use_cache=False)
    with torch.device("meta"):
        m = transformers.LlamaForCausalLM(cfg).eval()
        x = torch.zeros(2, 16, dtype=torch.long)
    t0 = time.time()
    ep = torch.export.export(m, (), {"input_ids": x}, strict=False,
                             dynamic_shapes={"input_ids": {0: Dim("batch", min=1, max=64), 1: Dim("seq", min=2, max=8192)}})
    t1 = time.time()
    torch.export.save(ep, path)
    t2 = time.time()
    nodes = sum(1 for _ in ep.graph.nodes)
    print(f"{path}: export {t1 - t0:.1f} s, save {t2 - t1:.1f} s, {os.path.getsize(path)} bytes, {nodes} nodes,"
          f" params {sum(p.numel() for p in m.parameters())}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--llama70b", metavar="OUT")
    ap.add_argument("--keep-stack-traces", action="store_true", help="keep the nodes' stack_trace metadata")
    ap.add_argument("--out", help="write the fixtures and oracles there (in the checkout) instead of models/pt2")
    a = ap.parse_args()
    global HERE
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        HERE = os.path.abspath(a.out)
    global KEEP_STACK_TRACES
    KEEP_STACK_TRACES = a.keep_stack_traces
    if a.llama70b:
        return llama70b(a.llama70b)
    names = a.names or list(FIXTURES) + ["multi_program"]
    failed = []
    for name in names:
        try:
            if name == "multi_program":
                write_multi(name)
            else:
                torch.manual_seed(0)
                write_fixture(name, FIXTURES[name]())
        except Exception:  # noqa: BLE001 — one fixture's failure is reported, the others still written
            failed.append(name)
            traceback.print_exc()
    if failed:
        print(f"failed: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
