"""flopwise: the static cost (params, MACs, FLOPs, memory) of a model, by module scope, from Python.

    import flopwise
    r = flopwise.analyze("models/resnet18.onnx", dims={"batch": 1})
    r.totals.macs                      # 1814073344
    print(r.table(depth=2))            # the text report
    r.to_pandas("scope")               # one row per module scope
    r = flopwise.analyze(model, torch.randn(1, 3, 224, 224))   # a live torch.nn.Module

ONNX files (a path, bytes, an onnx.ModelProto) are analysed in-process by the C++ library. TorchScript files,
live modules and the commands (sweep, diff, check, run) run the `flopwise` executable in a child process
($FLOPWISE_CLI, else the build's, else PATH): LibTorch is never loaded into the Python process, so the user's
torch may be any version. Errors raise FlopwiseError subclasses (ValueError) with the CLI's one-line message.
"""

import contextlib
import io
import json
import os
import sys
import threading

from .errors import FlopwiseError, InputError, InternalError, RunError, ShapeError, StrictError, UsageError
from .formula import Formula
from .report import Report, Scope, Totals
from ._cli import cli_path, run_cli

__all__ = ["analyze", "sweep", "diff", "check", "run", "trace", "calibrate", "Report", "Scope", "Totals", "Formula", "Sweep",
           "CheckResult", "FlopwiseError", "InputError", "UsageError", "ShapeError", "StrictError", "RunError",
           "InternalError", "cli_path"]


def _native():
    from . import _flopwise
    return _flopwise


def _torch():
    return sys.modules.get("torch")  # a torch object exists only if the user imported torch


def _torch_at_least(torch, major, minor):
    """Whether the caller's torch is at least major.minor ("2.14.1+debian" -> (2, 14))."""
    try:
        have = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
    except ValueError:
        return False
    return have >= (major, minor)


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def _tensor_pins(inputs):
    """--input pins for example inputs: tensors give SHAPE:DTYPE, strings pass as they are."""
    if inputs is None:
        return []
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    pins = []
    for x in inputs:
        if isinstance(x, str):
            pins.append(x)
        elif hasattr(x, "shape") and hasattr(x, "dtype"):
            pins.append("x".join(str(int(d)) for d in x.shape) + ":" + _dtype_name(x))
        else:
            pins.append("x".join(str(int(d)) for d in x))  # a shape tuple
    return pins


class _Members:
    """The JSON report's top-level members from an analysis the compiled module keeps, each parsed when first
    read: `r.totals` parses the totals, the node table only `r.nodes` (or to_dict, to_pandas("node")). A
    read-only mapping in the report's key order; dict(m) is the whole report."""

    def __init__(self, analysis):
        self._analysis = analysis
        self._keys = analysis.keys()
        self._parsed = {}

    def __getitem__(self, key):
        try:
            return self._parsed[key]
        except KeyError:
            if key not in self._keys:
                raise
        value = self._parsed[key] = json.loads(self._analysis.json(key))
        return value

    def get(self, key, default=None):
        return self[key] if key in self._keys else default

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return list(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __len__(self):
        return len(self._keys)


def export_program(model, inputs, path, dynamic_shapes=None):
    """Writes `model` run on example `inputs` (a tensor or a tuple) as a torch.export archive at `path`, as
    analyze(model, inputs) does on torch >= 2.4: torch.export.export(..., strict=False) in this process (a module
    on the meta device or under FakeTensorMode exports too: no weights are read), then torch.export.save.
    Returns `path`."""
    import torch

    torch.export.save(_export(torch, model, inputs, dynamic_shapes), path)
    return path


def _export(torch, model, inputs, dynamic_shapes, stack_traces=True):
    args = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    kwargs = None
    if _returns_hf_cache(model):
        # transformers' models return their KV cache object by default, which torch.export refuses as an
        # output; the forward's arithmetic is the same without it (the cache is the generation's state).
        kwargs = {"use_cache": False}
        if isinstance(dynamic_shapes, (tuple, list)):
            dynamic_shapes = tuple(dynamic_shapes) + (None,)
        elif isinstance(dynamic_shapes, dict):
            dynamic_shapes = {**dynamic_shapes, "use_cache": None}
    with _stack_traces(stack_traces):
        return torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes, strict=False)


@contextlib.contextmanager
def _stack_traces(wanted):
    """Without `wanted`, torch.export records no Python stack trace per node (torch.fx.config's
    do_not_emit_stack_traces, where torch has it): flopwise reads none (scopes come from nn_module_stack), and
    they are a third of the program's JSON. torch's flag is global: another thread's trace made meanwhile has
    none either."""
    try:
        import torch.fx.config as config
    except ImportError:
        config = None
    if wanted or not hasattr(config, "do_not_emit_stack_traces"):
        yield
        return
    with _STACK_TRACES_LOCK:  # the first export in sets it, the last out restores it
        if _STACK_TRACES_OFF[0] == 0:
            _STACK_TRACES_OFF[1] = config.do_not_emit_stack_traces
            config.do_not_emit_stack_traces = True
        _STACK_TRACES_OFF[0] += 1
    try:
        yield
    finally:
        with _STACK_TRACES_LOCK:
            _STACK_TRACES_OFF[0] -= 1
            if _STACK_TRACES_OFF[0] == 0:
                config.do_not_emit_stack_traces = _STACK_TRACES_OFF[1]


def _returns_hf_cache(model):
    """A transformers model whose forward takes use_cache and whose config turns it on."""
    if not type(model).__module__.startswith("transformers.") or not getattr(
            getattr(model, "config", None), "use_cache", False):
        return False
    import inspect

    try:
        return "use_cache" in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return False


_SERDE_LOCK = threading.Lock()
_STACK_TRACES_LOCK = threading.Lock()
_STACK_TRACES_OFF = [0, False]  # exports running without stack traces; torch's flag before the first


def _register_namedtuples(ep):
    """Registers for serialization each namedtuple class in the program's input and output trees that has no
    serialized name (torchvision's GoogLeNetOutputs in train mode: torch.export.save refuses it otherwise), named
    by its module and qualified name. It stays registered in this process, flattened as torch flattens it."""
    try:
        import collections

        from torch.utils import _pytree as pytree

        stack = [ep.call_spec.in_spec, ep.call_spec.out_spec]
        while stack:
            spec = stack.pop()
            if spec is None:
                continue
            t = spec.context if spec.type is collections.namedtuple else None  # the class is its context
            if isinstance(t, type) and t not in pytree.SUPPORTED_SERIALIZED_TYPES:
                pytree._register_namedtuple(t, serialized_type_name=f"{t.__module__}.{t.__qualname__}")
            stack.extend(spec.children() if callable(getattr(spec, "children", None)) else spec.children_specs)
    except (ImportError, AttributeError, TypeError, ValueError):
        pass  # torch's own error then says what it cannot write


def _program_json(ep):
    """The program's JSON exactly as torch.export.save writes it into the archive, without the archive: no
    weights, constants or example inputs pickled, and without the canonical-form check that torch's serializer
    runs and discards (two thirds of save's time on Llama-3-70B's 5.8 k nodes: bench/README.md), and with its
    dataclass-to-dict step sped up (_dataclass_to_dict). None where torch's serializer is not the one this knows
    (the caller then uses torch.export.save)."""
    try:
        import inspect

        from torch._export.serde import serialize as serde

        if not {"serialize_state_dict", "serialize_constants"} <= set(inspect.signature(serde.serialize).parameters):
            return None
        with _SERDE_LOCK:
            check, to_dict = serde.canonicalize, getattr(serde, "_dataclass_to_dict", None)
            serde.canonicalize = lambda program, constants=None: program  # its result is not used by serialize
            if to_dict is not None and hasattr(serde, "_Union"):
                serde._dataclass_to_dict = _dataclass_to_dict(serde._Union)
            try:
                art = serde.serialize(ep, serialize_state_dict=False, serialize_constants=False,
                                      serialize_example_inputs=False)
            finally:
                serde.canonicalize = check
                if to_dict is not None:
                    serde._dataclass_to_dict = to_dict
        return art.exported_program if isinstance(art.exported_program, bytes) else None
    except (ImportError, AttributeError, TypeError, ValueError):
        return None


def _dataclass_to_dict(union):
    """torch's serde._dataclass_to_dict (the schema's dataclasses to plain dicts, before json.dumps), the same
    dicts in the same order, with each dataclass's field names looked up once per class, not once per object:
    dataclasses.fields() was half of the serializer's time. `union` is serde's _Union (one member set)."""
    import dataclasses
    import math

    names = {}

    def fields(t):
        n = names.get(t)
        if n is None:
            n = names[t] = tuple(f.name for f in dataclasses.fields(t))
        return n

    def convert(obj):
        if isinstance(obj, union):
            return {obj.type: convert(obj.value)}
        if dataclasses.is_dataclass(obj):
            return {name: convert(getattr(obj, name)) for name in fields(obj if isinstance(obj, type) else type(obj))}
        if isinstance(obj, list):
            return [convert(x) for x in obj]
        if isinstance(obj, tuple):
            return tuple(convert(x) for x in obj)
        if isinstance(obj, dict):
            return {k: convert(v) for k, v in obj.items()}
        if isinstance(obj, float):
            if obj == math.inf:
                return "Infinity"
            if obj == -math.inf:
                return "-Infinity"
            return "NaN" if math.isnan(obj) else obj
        return obj

    return convert


class _Source:
    """A model materialised as a file (temporary for bytes, protos and modules), kept while a Report needs it.
    A torch.export program is kept in memory (`program`, its .pt2 bytes, named `label`) and written to a file
    only when the CLI needs one (`path`)."""

    def __init__(self, model, inputs, export, dynamic_shapes=None):
        self._tmp = None
        self._path = None
        self.program = None
        self.label = None
        self.pins = []
        torch = _torch()
        if isinstance(model, (str, os.PathLike)):
            self._path = os.fspath(model)
            self.pins = _tensor_pins(inputs)
        elif isinstance(model, (bytes, bytearray, memoryview)):
            self._path = self._file("model.onnx", bytes(model))
        elif type(model).__name__ == "ModelProto" and hasattr(model, "SerializeToString"):
            self._path = self._file("model.onnx", model.SerializeToString())
        elif torch is not None and type(model).__name__ == "ExportedProgram":
            self._keep_program(torch, model, "ExportedProgram")
        elif torch is not None and isinstance(model, torch.jit.ScriptModule):
            self._path = self._file("model.pt")
            model.save(self._path)
            self.pins = _tensor_pins(inputs)
        elif torch is not None and isinstance(model, torch.nn.Module):
            if inputs is None:
                raise UsageError("a torch.nn.Module needs example inputs: analyze(model, torch.randn(...))")
            args = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
            if export == "auto":
                export = "export" if _torch_at_least(torch, 2, 4) else "torchscript"
            if export == "export":
                # torch.export (non-strict) in this process: a module on the meta device or under FakeTensorMode
                # exports too (no weights are read); the program is saved in memory without running the model.
                ep = _export(torch, model, args, dynamic_shapes, stack_traces=False)
                self._keep_program(torch, ep, type(model).__name__)
            elif export == "onnx":
                self._path = self._file("model.onnx")
                with torch.no_grad():
                    torch.onnx.export(model, args, self._path, do_constant_folding=False)
            elif export == "torchscript":
                self._path = self._file("model.pt")
                with torch.no_grad():
                    traced = torch.jit.trace(model, args, check_trace=False)
                traced.save(self._path)
                self.pins = _tensor_pins(args)
            else:
                raise UsageError(f"export={export!r}: auto, export, torchscript or onnx")
        else:
            raise UsageError(f"cannot analyse a {type(model).__name__}: a path, bytes, an onnx.ModelProto, a "
                             "torch.jit.ScriptModule or a torch.nn.Module")

    def _keep_program(self, torch, ep, what):
        _register_namedtuples(ep)
        self.program = _program_json(ep)
        if self.program is None:
            buf = io.BytesIO()
            torch.export.save(ep, buf)
            self.program = buf.getvalue()
        self.label = f"{what} (torch.export, in memory)"

    @property
    def path(self):
        """The model's file: a program kept in memory is written to a temporary .pt2 the first time."""
        if self._path is None and self.program is not None:
            self._path = self._file("model.pt2", self.program)
        return self._path

    def _file(self, name, data=None):
        if self._tmp is None:
            import tempfile

            self._tmp = tempfile.TemporaryDirectory(prefix="flopwise-")
        path = os.path.join(self._tmp.name, name)
        if data is not None:
            with open(path, "wb") as f:
                f.write(data)
        return path

    def in_process(self):
        """ONNX files and torch.export archives are analysed in-process; a .pt by the CLI."""
        try:
            return self.program is not None or _native().detect_format(self.path) in ("onnx", "export_archive")
        except ImportError:
            return False


def _pin_args(pins, dims, values):
    args = []
    for p in pins:
        args += ["--input", p]
    for k, v in (dims or {}).items():
        args += ["--dim", f"{k}={v}"]
    for k, v in (values or {}).items():
        args += ["--value", f"{k}=" + ",".join(str(int(x)) for x in v)]
    return args


def _option_args(opts):
    """Keyword options as CLI options: top=5 -> --top 5, peak_memory=True -> --peak-memory, a list repeats."""
    args = []
    for k, v in opts.items():
        flag = "--" + k.replace("_", "-")
        if v is None or v is False:
            continue
        if v is True:
            args.append(flag)
        elif isinstance(v, (list, tuple)):
            for x in v:
                args += [flag, str(x)]
        else:
            args += [flag, str(v)]
    return args


def _spec_value(v):
    """A --parallel value: booleans as on/off."""
    return ("on" if v else "off") if isinstance(v, bool) else str(v)


def analyze(model, inputs=None, *, dims=None, values=None, convention="default", causal=False, peak_memory=False,
            hardware=None, export="auto", train=False, freeze=None, optimizer="adamw", checkpoint=None,
            precision="fp32", device="cuda", predict=None, dynamic_shapes=None, program=None, parallel=None,
            parallel_plan=None):
    """The static cost report of `model`, a Report.

    model: a path (.onnx, .pt, .pt2), ONNX bytes, an onnx.ModelProto, a torch.export.ExportedProgram, a
      torch.jit.ScriptModule, or a torch.nn.Module with example `inputs` (a tensor or a tuple, as thop and fvcore
      take them).
    inputs: for a module or a .pt: example tensors (their shapes and dtypes pin the inputs); for any file also
      pins as the CLI writes them ("input:1x3x224x224:float32") or shape tuples.
    dims: {"batch": 8}: binds symbolic dims (--dim). values: {"shape": [4, 2]}: contents of shape inputs.
    convention: the FLOPs convention (docs/conventions.md). causal: --causal. peak_memory: --peak-memory.
    hardware: a roofline device name (--hardware).
    train: one training step (--train): the report's `training` section (backward MACs and FLOPs, trainable
      params, gradient and optimizer state bytes, per scope). freeze: scope globs whose parameters are frozen
      (--freeze, each). optimizer: "sgd", "momentum", "adam" or "adamw" (--optimizer). checkpoint: scope globs
      run under activation checkpointing (--checkpoint, each). precision: "fp32", "bf16-mixed" or "fp16-mixed"
      (--precision). device: "cuda" or "cpu", whose kernels decide what the backward keeps (--device).
    predict: a calibration file (flopwise calibrate): the report's `prediction` (predicted latency per scope and
      in total, --predict).
    parallel: the cost per GPU at scale (--parallel, implies train): {"dp": 8, "tp": 2, "zero": 1, ...} or the spec
      "dp=8,tp=2,zero=1"; the report's `parallel` (ranks, comm, plan, time). parallel_plan: a tensor-parallel plan
      file (--parallel-plan). docs/parallel.md.
    dynamic_shapes: with export="export", torch.export's dynamic_shapes (torch.export.Dim per input dim): those
      dims stay symbolic in the report, named "<input>.<dim>" (bind them with dims=). program: the program of a
      .pt2 that holds several.
    export: how a live nn.Module becomes a file. "auto" (default): "export" on torch >= 2.4, else "torchscript".
      "export": torch.export.export(..., strict=False) in this process, the program saved in memory and analysed
      in-process (no LibTorch, no child process, no weights read: a module on the meta device works). "torchscript":
      torch.jit.trace with the caller's
      torch, saved to a temporary .pt that the CLI analyses in a child process (module tree and parameter counts
      exact); the CLI's LibTorch must read it: an archive saved by a newer PyTorch raises InputError, then use
      "onnx": torch.onnx.export with the caller's torch (any version), analysed in-process (scopes as the
      exporter names them).
    ONNX is analysed in-process (GIL released), everything else by the `flopwise` executable in a child process.
    """
    src = _Source(model, inputs, export, dynamic_shapes)
    if isinstance(parallel, dict):
        parallel = ",".join(f"{k}={_spec_value(v)}" for k, v in parallel.items())
    train = train or bool(parallel)
    if (freeze or checkpoint or optimizer != "adamw" or precision != "fp32" or device != "cuda") and not train:
        raise UsageError("freeze, checkpoint, optimizer, precision and device describe a training step: add "
                         "train=True")
    if src.in_process() and not peak_memory and not hardware and not train and not predict:
        d = [f"{k}={v}" for k, v in (dims or {}).items()]
        vals = [f"{k}=" + ",".join(str(int(x)) for x in v) for k, v in (values or {}).items()]
        if src.program is not None:
            analysis = _native().analyse_program(src.program, src.label, src.pins, d, vals, convention, causal,
                                                 program or "")
        else:
            analysis = _native().analyse(src.path, src.pins, d, vals, convention, causal, program or "")
        return Report(_Members(analysis), analysis.write, keep=src)
    args = [src.path] + _pin_args(src.pins, dims, values) + ["--convention", convention]
    if program:
        args += ["--program", program]
    if causal:
        args.append("--causal")
    if peak_memory:
        args.append("--peak-memory")
    if hardware:
        args += ["--hardware", hardware]
    if predict:
        args += ["--predict", os.fspath(predict)]
    if parallel:
        args += ["--parallel", parallel]
        if parallel_plan:
            args += ["--parallel-plan", os.fspath(parallel_plan)]
    if train:
        args += ["--train", "--optimizer", optimizer, "--precision", precision, "--device", device]
        for f in [freeze] if isinstance(freeze, str) else (freeze or []):
            args += ["--freeze", f]
        for c in [checkpoint] if isinstance(checkpoint, str) else (checkpoint or []):
            args += ["--checkpoint", c]

    def write_cli(fmt, depth=-1):
        return run_cli(args + ["--format", fmt, "--depth", str(depth)])[1]

    return Report(json.loads(write_cli("json")), write_cli, keep=src)


class Sweep:
    """A sweep's result: `rows` (one per point: its "point" (the swept dims), params, macs, flops, memory_bytes),
    and `data` (the JSON as parsed)."""

    def __init__(self, data):
        self.data = data
        self.rows = data.get("rows") or []

    def to_dict(self):
        return self.data

    def to_pandas(self):
        import pandas as pd
        return pd.json_normalize(self.rows)

    def __repr__(self):
        return f"<flopwise.Sweep {len(self.rows)} points>"


def sweep(model, inputs=None, *, dims=None, values=None, convention="default", export="torchscript", **axes):
    """Evaluates the cost formulas over a grid (flopwise --sweep): sweep(m, seq=[128, 256], batch="1..32")."""
    if not axes:
        raise UsageError("sweep needs an axis: sweep(model, seq=[128, 256])")
    src = _Source(model, inputs, export)
    args = [src.path] + _pin_args(src.pins, dims, values) + ["--convention", convention, "--format", "json"]
    for k, v in axes.items():
        v = ",".join(str(x) for x in v) if isinstance(v, (list, tuple, range)) else str(v)
        args += ["--sweep", f"{k}={v}"]
    return Sweep(json.loads(run_cli(args)[1]))


def diff(a, b, inputs=None, *, dims=None, values=None, export="torchscript", **opts):
    """Compares two models or saved reports (flopwise diff A B --format json); returns the diff JSON as a dict.
    Options as keywords: sort="macs", top=10, convention="fvcore"."""
    sa, sb = _Source(a, inputs, export), _Source(b, inputs, export)
    pins = sa.pins or sb.pins
    args = ["diff", sa.path, sb.path] + _pin_args(pins, dims, values) + _option_args(opts) + ["--format", "json"]
    return json.loads(run_cli(args)[1])


class CheckResult:
    """flopwise check's outcome: passed (exit 0) or not (exit 1, a limit fails), and its table (text)."""

    def __init__(self, code, text):
        self.passed = code == 0
        self.exit_code = code
        self.text = text

    def __bool__(self):
        return self.passed

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"<flopwise.CheckResult passed={self.passed}>"


def check(model, budget, inputs=None, *, dims=None, values=None, export="torchscript", **opts):
    """Checks `model` against a budget file (flopwise check MODEL --budget FILE); a failing limit is a result
    (passed False), not an exception. `budget` is a path or the TOML text."""
    src = _Source(model, inputs, export)
    if isinstance(budget, str) and "\n" in budget:
        budget_path = src._file("budget.toml", budget.encode())
    else:
        budget_path = os.fspath(budget)
    args = ["check", src.path, "--budget", budget_path] + _pin_args(src.pins, dims, values) + _option_args(opts)
    code, out = run_cli(args, ok=(0, 1))
    return CheckResult(code, out)


def run(model, inputs=None, *, dims=None, values=None, export="torchscript", **opts):
    """Measures latency by module scope (flopwise run MODEL --format json); returns the run report as a dict.
    Options as keywords: iters=20, warmup=3, device="cpu", profile="ort_profile.json" (ONNX)."""
    src = _Source(model, inputs, export)
    args = ["run", src.path] + _pin_args(src.pins, dims, values) + _option_args(opts) + ["--format", "json"]
    return json.loads(run_cli(args)[1])


def trace(path, **opts):
    """A PyTorch profiler trace (torch.profiler's export_chrome_trace or tensorboard_trace_handler file, .json or
    .json.gz) with each op's static cost (flopwise trace PATH --format json): the `flopwise.trace/1` dict
    (docs/trace.md). Options as keywords: hardware="a100-80gb". `flopwise.diff(trace_a, trace_b)`
    compares two traces."""
    args = ["trace", os.fspath(path)] + _option_args(opts) + ["--format", "json"]
    return json.loads(run_cli(args)[1])


def calibrate(runs, output=None, **opts):
    """Fits the latency of each kind of op on one device from run reports (flopwise calibrate RUNS... -o OUTPUT:
    `run(...)`'s reports saved as JSON, LibTorch or ONNX Runtime profiles) and returns the calibration as a dict;
    written to `output` when given, for `analyze(..., predict=output)`. Options as keywords: min_samples=10,
    weighting="sqrt", statistic="fastest", local_bandwidth=0.1. `flopwise.suite.calibrate_device` measures a
    device that has no reports yet."""
    import tempfile

    runs = [os.fspath(runs)] if isinstance(runs, (str, os.PathLike)) else [os.fspath(r) for r in runs]
    with tempfile.TemporaryDirectory(prefix="flopwise-") as tmp:
        path = os.fspath(output) if output is not None else os.path.join(tmp, "calibration.json")
        run_cli(["calibrate", *runs, "-o", path] + _option_args(opts))
        with open(path) as f:
            return json.load(f)
