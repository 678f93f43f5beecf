#!/usr/bin/python3
"""Reference FLOP/MAC counts from four peer tools: the oracle for tests/test_conventions.cc.

    /usr/bin/python3 models/reference_counts.py --tools /tmp/tools --out models/reference_counts.json
    /usr/bin/python3 models/reference_counts.py --tools /tmp/tools --out /tmp/x.json --only bert --only gpt2
    /usr/bin/python3 models/reference_counts.py --tools /tmp/tools --zoo -j 3      # -> models/reference_counts_zoo.json
    /usr/bin/python3 models/reference_counts.py --tools /tmp/tools --zoo-only lstm --zoo-only mha --out /tmp/z.json

Every number this script writes is the peer tool's OWN output, produced by actually running the tool
(from its source checkout under --tools) on the same torch modules, weights and example inputs that
flopwise is tested on. Nothing here re-implements a tool's counting rule; the script only
  (a) builds the models exactly as models/generate.py does (make_model(name), the same seeds, perturb(),
      eval mode; misc_ops is generate.MiscOps on a zeros [1,3,16,16] input, as in its .trace.pt), with
      the shapes written into each .pt file's `flopwise_inputs.json`, plus torchvision resnet50
      (weights=None, 1x3x224x224), whose totals the thop and ptflops READMEs quote;
  (b) makes the tools importable with Debian's python3-torch 1.13 and no PyPI, by putting small
      STAND-IN modules in sys.modules for the third-party/DeepSpeed pieces they import but do not use
      for counting (listed in STAND-INS below);
  (c) calls each tool's public API and reads back the figures the tool itself keeps (totals, its
      per-module attributes/buffers, its per-operator tables). Where a tool keeps per-function figures
      only in a private list, the list is observed (never altered) while the tool runs.

Each (model, tool) pair runs in its own child process: DeepSpeed and ptflops monkey-patch torch
functions globally (and DeepSpeed 38327e07f's restore code leaves torch.Tensor.__matmul__ wrapped and
torch.bmm pointing at torch.matmul), so running them in one process could contaminate the next tool.

Output JSON (integers as the tools report them; thop's float64 totals are cast to int):
  {"torch": ..., "tools": {tool: {"commit", "source", "how"}},
   "models": {model: {"inputs": [{"name", "shape", "dtype"}],
                      tool: {"total_flops" and/or "total_macs", "params", "by_module", "by_op", ...}}}}
  by_module holds LEAF modules (no children) with a nonzero figure, keyed by dotted module name.
  A tool that fails on a model gets {"error": "..."} instead.

Zoo mode (--zoo, or --zoo-only NAME, repeatable; default --out models/reference_counts_zoo.json):
  the same five tool calls on the modules of models/torch_zoo.py's ZOO (torchvision families, language
  models, container outputs, every torch.nn layer with parameters), each built exactly as torch_zoo's
  _generate builds the module it traces into build/pt_zoo/NAME.{trace,script}.pt: seed = seed_of(name),
  torch.manual_seed(seed), e.build(), perturb(model, seed + 1), eval(), make_inputs(e.inputs, seed + 2),
  input names from input_names(model, n) (several inputs go to ptflops as keyword arguments under those
  names), with warnings silenced as _generate does. Zoo model names overlap the bundled ones (resnet18,
  bert, ...) but are different (narrowed) modules, hence the separate file. To keep it small, each tool's
  entry keeps its totals, params and per-operator tables (by_op, DeepSpeed's by_op_macs, fvcore's
  unsupported ops), and every table keyed by module name (by_module, by_module_macs, nonleaf_own,
  nonleaf_hooked, rnn_module_hooks, uncalled_modules) is replaced by the same figures summed per module
  CLASS, under the same key with the suffix "_by_type" (uncalled_modules: a count per class).
  --by-module keeps the per-module tables as well (for looking into one module: --zoo-only NAME).
  Zoo JSON: {"torch", "zoo": "models/torch_zoo.py", "tools", "models": {name: {"family", "inputs", tool: ...}}}.
  -j N runs N (model, tool) child processes at a time (any mode; results are the same).

Tools and the calls made (see TOOLS below for the exact strings recorded in the JSON):
  deepspeed        DeepSpeed flops profiler, deepspeed/profiling/flops_profiler/profiler.py (commit 38327e07f),
                   loaded by file path. FlopsProfiler(model).start_profile(); model(*inputs) under no_grad;
                   get_total_flops(), get_total_macs(), get_total_params(); per-module module.__flops__ /
                   module.__macs__ (its own attributes: each module's OWN count, functionals called directly
                   in its forward; totals are the recursive sums). by_op: the per-function entries the profiler
                   appends to its module_flop_count/module_mac_count stacks, observed while it runs, named via its
                   old_functions table. nonleaf_own: non-leaf modules' own __flops__ (e.g. attention matmuls
                   called in a parent module's forward).
  fvcore           fvcore.nn.FlopCountAnalysis(model, inputs) (commit 3378afe): total(), by_operator(),
                   by_module() (leaves), unsupported_ops(), uncalled_modules(). fvcore counts one fused
                   multiply-add as one "flop", i.e. its figure is MACs; reported as total_flops, fvcore's name.
  thop             thop.profile(model, inputs, verbose=False, ret_layer_info=True) (commit 43c064a): (macs, params)
                   and its per-module total_ops from the returned layer tree.
  ptflops_pytorch  ptflops.get_model_complexity_info(model, input_res, input_constructor=..., as_strings=False,
                   print_per_layer_stat=False, backend='pytorch') (commit d612c75). by_module: each hooked module's
                   __flops__, read just before ptflops deletes them (its remove_flops_counter_variables is wrapped to
                   look first). by_op: the functional/tensor-op figures its torch_function_wrapper appends to its
                   collector (observed; these are the figures added to the module total).
  ptflops_aten     same call with backend='aten' (TorchDispatchMode). by_op: its FlopCounterMode.flop_counts['Global']
                   (per aten overload packet); by_top_level_module: flop_counts[child] for the root's direct children,
                   the only per-module figures that backend keeps.

STAND-INS (only installed when the real module cannot be imported; Debian bookworm lacks them):
  deepspeed.accelerator.get_accelerator() -> CPU object whose synchronize() does nothing (timing only);
  deepspeed.utils.logger -> a logging.Logger; deepspeed.moe.layer.MoE -> an empty class (only isinstance checks);
  deepspeed.utils.timer.{FORWARD,BACKWARD,STEP}_GLOBAL_TIMER -> strings (only used with a DeepSpeed engine);
  deepspeed.utils.torch.required_torch_version(min_version, max_version) -> real comparison with torch.__version__
      (False for 2.0 on torch 1.13, so scaled_dot_product_attention is not patched: it does not exist in 1.13);
  einops -> module with an einsum function that raises (the profiler only wraps it; no model calls einops);
  iopath.common.file_io.{PathManager, HTTPURLHandler, g_pathmgr}, termcolor.colored, tabulate.tabulate, tqdm.tqdm
      -> minimal objects; fvcore imports them through fvcore.common.checkpoint / parameter_count / precise_bn,
      none of which takes part in FlopCountAnalysis' counting.
"""

import argparse
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))

# The commits the checkouts were taken at (the extracted checkouts carry no .git to read them from).
TOOLS = {
    "deepspeed": {"commit": "38327e07f", "source": "DeepSpeed/deepspeed/profiling/flops_profiler/profiler.py",
                  "how": "prof = FlopsProfiler(model); prof.start_profile(); with torch.no_grad(): model(*inputs); "
                         "prof.get_total_flops(); prof.get_total_macs(); prof.get_total_params(); "
                         "module.__flops__/__macs__ per module; prof.end_profile()"},
    "fvcore": {"commit": "3378afe", "source": "fvcore",
               "how": "a = fvcore.nn.FlopCountAnalysis(model, inputs); a.total(); a.by_operator(); a.by_module(); "
                      "a.unsupported_ops(); a.uncalled_modules(); fvcore.nn.parameter_count(model)['']  "
                      "(fvcore 'flops' = fused multiply-adds)"},
    "thop": {"commit": "43c064a", "source": "pytorch-OpCounter",
             "how": "macs, params, layers = thop.profile(model, inputs=inputs, verbose=False, ret_layer_info=True)"},
    "ptflops_pytorch": {"commit": "d612c75", "source": "flops-counter.pytorch",
                        "how": "ptflops.get_model_complexity_info(model, input_res, input_constructor=<the example "
                               "inputs>, as_strings=False, print_per_layer_stat=False, backend='pytorch')  (MACs)"},
    "ptflops_aten": {"commit": "d612c75", "source": "flops-counter.pytorch",
                     "how": "ptflops.get_model_complexity_info(model, input_res, input_constructor=<the example "
                            "inputs>, as_strings=False, print_per_layer_stat=False, backend='aten')  (MACs)"},
}

MODELS = ["resnet18", "mobilenet_v2", "bert", "gpt2", "misc_ops", "resnet50", "hf_bert", "torch_transformer"]


# --------------------------------------------------------------------------------------------------
# Stand-ins: installed in sys.modules only when the real package is not importable.


def _missing(name):
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):
        return True


def _module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    m.__flopwise_stand_in__ = True
    sys.modules[name] = m
    return m


def _unused(what):
    def f(*args, **kwargs):
        raise RuntimeError(f"stand-in {what} called: reference_counts.py assumed it was not used for counting")
    return f


def install_fvcore_stand_ins():
    """iopath/termcolor/tabulate/tqdm: imported at fvcore.nn import time, unused by FlopCountAnalysis."""
    used = []
    if _missing("iopath"):
        class PathManager:  # fvcore.common.checkpoint only names it in type positions / Checkpointer
            def __init__(self, *a, **k):
                pass

            def register_handler(self, *a, **k):
                pass

        class HTTPURLHandler:
            pass

        iopath = _module("iopath")
        common = _module("iopath.common")
        fio = _module("iopath.common.file_io", PathManager=PathManager, HTTPURLHandler=HTTPURLHandler,
                      g_pathmgr=PathManager())
        iopath.common, common.file_io = common, fio
        used.append("iopath.common.file_io{PathManager,HTTPURLHandler,g_pathmgr}")
    if _missing("termcolor"):
        _module("termcolor", colored=lambda text, *a, **k: text)
        used.append("termcolor.colored (identity)")
    if _missing("tabulate"):
        _module("tabulate", tabulate=_unused("tabulate.tabulate"), PRESERVE_WHITESPACE=False)
        used.append("tabulate.tabulate (raises if called)")
    if _missing("tqdm"):
        _module("tqdm", tqdm=_unused("tqdm.tqdm"))
        used.append("tqdm.tqdm (raises if called)")
    return used


def install_deepspeed_stand_ins():
    """The DeepSpeed pieces profiler.py imports at module level (see the module docstring)."""
    import torch
    used = []

    class _CPUAccelerator:
        def synchronize(self):  # the profiler calls it around each module for its latency figures only
            pass

        def device_name(self, *a):
            return "cpu"

    def required_torch_version(min_version=None, max_version=None):
        def key(v):
            return tuple(int(x) for x in v.split("+")[0].split("a")[0].split(".")[:2])
        cur = key(torch.__version__)
        if min_version is not None and cur < key(str(min_version)):
            return False
        if max_version is not None and cur > key(str(max_version)):
            return False
        return True

    class MoE:  # only isinstance() checks in the profiler
        pass

    ds = _module("deepspeed")
    ds.__path__ = []  # a package, so that the submodule imports resolve to the entries below
    acc = _module("deepspeed.accelerator", get_accelerator=lambda: _CPUAccelerator())
    utils = _module("deepspeed.utils", logger=logging.getLogger("deepspeed-stand-in"))
    utils.__path__ = []
    timer = _module("deepspeed.utils.timer", FORWARD_GLOBAL_TIMER="fwd", BACKWARD_GLOBAL_TIMER="bwd",
                    STEP_GLOBAL_TIMER="step")
    dstorch = _module("deepspeed.utils.torch", required_torch_version=required_torch_version)
    moe = _module("deepspeed.moe")
    moe.__path__ = []
    layer = _module("deepspeed.moe.layer", MoE=MoE)
    ds.accelerator, ds.utils, ds.moe = acc, utils, moe
    utils.timer, utils.torch, moe.layer = timer, dstorch, layer
    used += ["deepspeed.accelerator.get_accelerator (CPU, no-op synchronize)", "deepspeed.utils.logger",
             "deepspeed.moe.layer.MoE (empty class)", "deepspeed.utils.timer.*_GLOBAL_TIMER (names)",
             "deepspeed.utils.torch.required_torch_version (real version comparison)"]
    if _missing("einops"):
        _module("einops", einsum=_unused("einops.einsum"))
        used.append("einops.einsum (raises if called; no model calls einops)")
    return used


# --------------------------------------------------------------------------------------------------
# Models, exactly as models/generate.py builds them


def build(name):
    """Returns (model in eval mode, example inputs tuple, input names)."""
    import torch
    sys.path.insert(0, HERE)
    import generate as gen
    if name == "misc_ops":
        # generate.export_torchscript: MiscOps().eval() traced on torch.zeros(1, 3, 16, 16). It sets no seed
        # (the weights do not affect any count); we seed for repeatability.
        torch.manual_seed(0)
        return gen.MiscOps().eval(), (torch.zeros(1, 3, 16, 16),), ["x"]
    torch.manual_seed(sum(map(ord, name)))
    model, inputs, in_names, _, _, _ = gen.make_model(name)
    gen.perturb(model, seed=sum(map(ord, name)) + 1)
    model.eval()
    return model, tuple(inputs), list(in_names)


def build_zoo(name):
    """A models/torch_zoo.py ZOO entry, built as torch_zoo._generate builds it; returns (model, inputs, names)."""
    import warnings
    sys.path.insert(0, HERE)
    import torch_zoo as zoo
    entry = {e.name: e for e in zoo.ZOO}[name]
    with warnings.catch_warnings():  # as torch_zoo.generate
        warnings.simplefilter("ignore")
        model, inputs, names = zoo.instantiate(entry)
    return model, tuple(inputs), names


def zoo_entries():
    sys.path.insert(0, HERE)
    import torch_zoo as zoo
    return {e.name: e for e in zoo.ZOO}


# Tables keyed by module name; in zoo mode they are summed per module class (see the docstring).
MODULE_TABLES = ("by_module", "by_module_macs", "nonleaf_own", "nonleaf_hooked", "rnn_module_hooks")


def by_module_class(result, model):
    """result with each table of MODULE_TABLES replaced by "<table>_by_type": the tool's figures summed per
    module class (dict values, e.g. nonleaf_own's {"flops", "macs"}, summed field by field);
    uncalled_modules (a list of names) becomes uncalled_modules_by_type, a count per class."""
    cls = {n: type(m).__name__ for n, m in model.named_modules()}
    cls["(root)"] = cls[""]
    out = {}
    for key, value in result.items():
        if key in MODULE_TABLES:
            agg = {}
            for name, v in value.items():
                c = cls.get(name, "?")
                if isinstance(v, dict):
                    agg[c] = {f: agg.get(c, {}).get(f, 0) + int(x) for f, x in v.items()}
                else:
                    agg[c] = agg.get(c, 0) + int(v)
            out[key + "_by_type"] = agg
        elif key == "uncalled_modules":
            agg = {}
            for name in value:
                agg[cls.get(name, "?")] = agg.get(cls.get(name, "?"), 0) + 1
            out["uncalled_modules_by_type"] = agg
        else:
            out[key] = value
    return out


def leaf_names(model):
    return {n for n, m in model.named_modules() if not list(m.children())}


def public_names():
    """id(function) -> its public name, taken BEFORE a tool patches anything, to label the per-function
    entries the tools record (torch.nn.functional first: F.conv2d rather than its alias torch.conv2d)."""
    import torch
    names = {}
    for prefix, ns in (("F.", torch.nn.functional), ("torch.Tensor.", torch.Tensor), ("torch.", torch)):
        for attr, obj in list(vars(ns).items()):
            names.setdefault(id(obj), prefix + attr)
    return names


def ints(d):
    return {str(k): int(v) for k, v in d.items() if int(v) != 0}


# --------------------------------------------------------------------------------------------------
# One tool on one model (runs in a child process)


def run_deepspeed(tools_dir, model, inputs, names):
    import torch
    stand_ins = install_deepspeed_stand_ins()
    path = os.path.join(tools_dir, TOOLS["deepspeed"]["source"])
    spec = importlib.util.spec_from_file_location("deepspeed_flops_profiler", path)
    prof_mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prof_mod)

    # Observe (not alter) the per-function entries the profiler records: its wrapped functions append
    # (name, count) to module_flop_count[-1]/module_mac_count[-1]; its module hooks push [] before a
    # module runs and pop after summing. We swap in list subclasses that also copy each entry to a ledger.
    ledger = {"flops": [], "macs": []}

    class _Frame(list):
        def __init__(self, key):
            super().__init__()
            self.key = key

        def append(self, item):
            ledger[self.key].append(item)
            super().append(item)

    class _Stack(list):
        def __init__(self, key):
            super().__init__()
            self.key = key

        def append(self, frame):
            super().append(_Frame(self.key) if type(frame) is list else frame)

    prof_mod.module_flop_count = _Stack("flops")
    prof_mod.module_mac_count = _Stack("macs")

    public = public_names()  # taken before the profiler patches anything
    prof = prof_mod.FlopsProfiler(model)
    prof.start_profile()
    with torch.no_grad():
        model(*inputs)
    total_flops = prof.get_total_flops()
    total_macs = prof.get_total_macs()
    params = prof.get_total_params()
    leaves = leaf_names(model)
    by_module, by_module_macs, nonleaf = {}, {}, {}
    for n, m in model.named_modules():
        if n in leaves:
            if m.__flops__:
                by_module[n] = int(m.__flops__)
            if m.__macs__:
                by_module_macs[n] = int(m.__macs__)
        elif m.__flops__ or m.__macs__:
            nonleaf[n or "(root)"] = {"flops": int(m.__flops__), "macs": int(m.__macs__)}

    def fname(key):
        f = prof_mod.old_functions.get(key)
        return public.get(id(f), str(f)) if f is not None else str(key)

    by_op, by_op_macs = {}, {}
    for key, v in ledger["flops"]:
        by_op[fname(key)] = by_op.get(fname(key), 0) + int(v)
    for key, v in ledger["macs"]:
        by_op_macs[fname(key)] = by_op_macs.get(fname(key), 0) + int(v)
    # RNN modules are counted by a module hook (MODULE_HOOK_MAPPING), not through a function wrapper.
    rnn = {n: int(m.__flops__) for n, m in model.named_modules()
           if type(m) in prof_mod.MODULE_HOOK_MAPPING and m.__flops__}
    prof.end_profile()
    return {"total_flops": int(total_flops), "total_macs": int(total_macs), "params": int(params),
            "by_module": by_module, "by_module_macs": by_module_macs, "nonleaf_own": nonleaf,
            "by_op": ints(by_op), "by_op_macs": ints(by_op_macs),
            "rnn_module_hooks": rnn, "stand_ins": stand_ins}


def run_fvcore(tools_dir, model, inputs, names):
    stand_ins = install_fvcore_stand_ins()
    sys.path.insert(0, os.path.join(tools_dir, TOOLS["fvcore"]["source"]))
    from fvcore.nn import FlopCountAnalysis
    a = FlopCountAnalysis(model, inputs)
    a.unsupported_ops_warnings(False).uncalled_modules_warnings(False)
    total = a.total()
    leaves = leaf_names(model)
    params = sum(p.numel() for p in model.parameters())  # fvcore's FlopCountAnalysis has no param figure
    out = {"total_flops": int(total),
           "by_module": {k: int(v) for k, v in a.by_module().items() if k in leaves and int(v)},
           "by_op": ints(a.by_operator()),
           "unsupported": {k: int(v) for k, v in a.unsupported_ops().items()},
           "uncalled_modules": sorted(a.uncalled_modules()),
           "stand_ins": stand_ins}
    from fvcore.nn import parameter_count
    out["params"] = int(parameter_count(model)[""])  # fvcore.nn.parameter_count (its own figure)
    assert out["params"] == params
    return out


def run_thop(tools_dir, model, inputs, names):
    sys.path.insert(0, os.path.join(tools_dir, TOOLS["thop"]["source"]))
    import thop
    macs, params, layers = thop.profile(model, inputs=inputs, verbose=False, ret_layer_info=True)
    by_module = {}

    def walk(tree, prefix):
        for n, (ops, _p, sub) in tree.items():
            full = prefix + n
            if sub:
                walk(sub, full + ".")
            elif ops:
                by_module[full] = int(ops)

    walk(layers, "")
    leaves = leaf_names(model)
    by_module = {k: v for k, v in by_module.items() if k in leaves}
    return {"total_macs": int(macs), "params": int(params), "by_module": by_module,
            "note": "thop returns float64 totals; cast to int here"}


def complexity(ptflops, model, inputs, constructor, backend):
    """ptflops.get_model_complexity_info; on failure it prints the exception and returns None: that printed
    line becomes the error recorded (its output is passed on to stdout unchanged)."""
    import contextlib
    import io
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        macs, params = ptflops.get_model_complexity_info(
            model, tuple(inputs[0].shape[1:]), input_constructor=constructor, as_strings=False,
            print_per_layer_stat=False, backend=backend)
    sys.stdout.write(printed.getvalue())
    if macs is None:
        lines = printed.getvalue().splitlines()
        after = [ln for i, ln in enumerate(lines) if i and "following exception" in lines[i - 1]]
        raise RuntimeError("ptflops returned None: " + (after[0].strip() if after else "(no message)"))
    return macs, params


def run_ptflops(tools_dir, model, inputs, names, backend):
    sys.path.insert(0, os.path.join(tools_dir, TOOLS["ptflops_" + backend]["source"]))
    import ptflops
    import ptflops.aten_engine as aten_engine
    import ptflops.pytorch_engine as pt_engine

    if len(inputs) == 1:
        def constructor(_res):
            return inputs[0]
    else:
        def constructor(_res):
            return dict(zip(names, inputs))

    out = {}
    if backend == "pytorch":
        # Read each hooked module's __flops__ just before ptflops deletes it (stop_flops_count calls this
        # module-level function through self.apply), and note what each functional wrapper appends.
        per_module = {}
        orig_remove = pt_engine.remove_flops_counter_variables

        def remove_and_note(module):
            if pt_engine.is_supported_instance(module) and hasattr(module, "__flops__"):
                per_module[id(module)] = int(module.__flops__)
            return orig_remove(module)

        pt_engine.remove_flops_counter_variables = remove_and_note
        public = public_names()
        ops = []
        orig_call = pt_engine.torch_function_wrapper.__call__

        def call_and_note(self, *args, **kwds):
            before = len(self.collector)
            result = orig_call(self, *args, **kwds)
            ops.append((public.get(id(self.op), str(self.op)), int(self.collector[before])))
            return result

        pt_engine.torch_function_wrapper.__call__ = call_and_note
        macs, params = complexity(ptflops, model, inputs, constructor, "pytorch")
        leaves = leaf_names(model)
        out["by_module"] = {n: per_module[id(m)] for n, m in model.named_modules()
                            if id(m) in per_module and per_module[id(m)] and n in leaves}
        nonleaf = {n: per_module[id(m)] for n, m in model.named_modules()
                   if id(m) in per_module and per_module[id(m)] and n not in leaves}
        if nonleaf:
            out["nonleaf_hooked"] = nonleaf
        by_op = {}
        for k, v in ops:
            by_op[k] = by_op.get(k, 0) + v
        out["by_op"] = ints(by_op)
    else:
        modes = []

        class Recording(aten_engine.FlopCounterMode):  # the tool's own class; we only keep the instance
            def __init__(self, *a, **k):
                super().__init__(*a, **k)
                modes.append(self)

        aten_engine.FlopCounterMode = Recording
        macs, params = complexity(ptflops, model, inputs, constructor, "aten")
        counts = modes[-1].flop_counts
        out["by_op"] = ints({str(k): v for k, v in counts["Global"].items()})
        out["by_top_level_module"] = {m: int(sum(c.values())) for m, c in counts.items()
                                      if m != "Global" and sum(c.values())}
    out = {"total_macs": int(macs), "params": int(params), **out}
    return out


RUNNERS = {
    "deepspeed": run_deepspeed,
    "fvcore": run_fvcore,
    "thop": run_thop,
    "ptflops_pytorch": lambda t, m, i, n: run_ptflops(t, m, i, n, "pytorch"),
    "ptflops_aten": lambda t, m, i, n: run_ptflops(t, m, i, n, "aten"),
}


def worker(tools_dir, tool, model_name, out_path, zoo=False, keep_modules=False):
    model, inputs, names = build_zoo(model_name) if zoo else build(model_name)
    try:
        result = RUNNERS[tool](tools_dir, model, inputs, names)
        if zoo and not keep_modules:
            result = by_module_class(result, model)
    except Exception as e:  # noqa: BLE001 - recorded in the JSON, the other tools go on
        traceback.print_exc()
        result = {"error": f"{type(e).__name__}: {e}".strip().splitlines()[0]}
    with open(out_path, "w") as f:
        json.dump(result, f)


# --------------------------------------------------------------------------------------------------


def run_child(tools_dir, tool, name, zoo, keep_modules, verbose):
    """One (model, tool) pair in its own process; returns (the tool's entry, the child's output)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        path = tmp.name
    cmd = [sys.executable, os.path.abspath(__file__), "--tools", tools_dir, "--worker", tool, name, path]
    cmd += ["--zoo"] * zoo + ["--by-module"] * keep_modules
    proc = subprocess.run(cmd, capture_output=True, text=True)
    log = proc.stdout + proc.stderr if verbose or proc.returncode else ""
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError):
        r = {"error": f"worker exited {proc.returncode}: "
                      + (proc.stderr.strip().splitlines() or ["no output"])[-1]}
    finally:
        if os.path.exists(path):
            os.remove(path)
    return r, log


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tools", default="/tmp/tools", help="directory holding the four tool checkouts")
    ap.add_argument("--out", help="output JSON (default: models/reference_counts.json, with --zoo/--zoo-only "
                                  "models/reference_counts_zoo.json)")
    ap.add_argument("--only", action="append", help="model name (repeatable); default: " + " ".join(MODELS))
    ap.add_argument("--zoo", action="store_true", help="every module of models/torch_zoo.py's ZOO instead")
    ap.add_argument("--zoo-only", action="append", metavar="NAME", help="a torch_zoo ZOO entry (repeatable)")
    ap.add_argument("--by-module", action="store_true",
                    help="zoo mode: keep the per-module tables too (default: summed per module class)")
    ap.add_argument("--tool", action="append", help="tool name (repeatable); default: all")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="(model, tool) child processes at a time")
    ap.add_argument("--worker", nargs=3, metavar=("TOOL", "MODEL", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("-v", "--verbose", action="store_true", help="show the tools' own output")
    args = ap.parse_args()
    zoo = bool(args.zoo or args.zoo_only)
    if args.worker:
        worker(args.tools, *args.worker, zoo=zoo, keep_modules=args.by_module)
        return
    if zoo and args.only:
        ap.error("--only names bundled models; use --zoo-only NAME for torch_zoo entries")
    out_path = args.out or os.path.join(HERE, "reference_counts_zoo.json" if zoo else "reference_counts.json")

    import torch
    tools = args.tool or list(TOOLS)
    for t in tools:
        if t not in TOOLS:
            ap.error(f"unknown tool {t}; known: {' '.join(TOOLS)}")
    if zoo:
        entries = zoo_entries()
        unknown = sorted(set(args.zoo_only or []) - set(entries))
        if unknown:
            ap.error("unknown zoo entries: " + ", ".join(unknown))
        names = list(entries) if args.zoo else [n for n in entries if n in args.zoo_only]
    else:
        names = args.only or MODELS
    result = {"torch": torch.__version__, **({"zoo": "models/torch_zoo.py"} if zoo else {}),
              "tools": {t: dict(TOOLS[t]) for t in tools}, "models": {}}
    if os.path.exists(out_path) and (args.only or args.zoo_only or args.tool):
        with open(out_path) as f:  # partial run: update the existing file in place
            old = json.load(f)
        result["models"] = old.get("models", {})
        result["tools"] = {**old.get("tools", {}), **result["tools"]}
    for name in names:
        _, inputs, in_names = build_zoo(name) if zoo else build(name)
        entry = result["models"].setdefault(name, {})
        if zoo:
            entry["family"] = entries[name].family
        entry["inputs"] = [{"name": n, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                           for n, t in zip(in_names, inputs)]

    def record(name, tool, r, log):
        if log:
            sys.stderr.write(log)
        if "stand_ins" in r:  # the same for every model: kept once, under "tools"
            result["tools"][tool]["stand_ins"] = r.pop("stand_ins")
        result["models"][name][tool] = r
        total = r.get("total_flops", r.get("total_macs", r.get("error")))
        print(f"{name:28s} {tool:16s} {total}", file=sys.stderr, flush=True)

    pairs = [(name, tool) for name in names for tool in tools]
    if args.jobs <= 1:
        for name, tool in pairs:
            record(name, tool, *run_child(args.tools, tool, name, zoo, args.by_module, args.verbose))
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(args.jobs) as pool:  # threads only wait on the child processes
            futures = [(name, tool, pool.submit(run_child, args.tools, tool, name, zoo, args.by_module,
                                                args.verbose)) for name, tool in pairs]
            for name, tool, fut in futures:
                record(name, tool, *fut.result())
    with open(out_path, "w") as f:
        f.write(dump(result) + "\n")


def dump(obj, depth=0):
    """JSON: sorted keys below the top level; each of a tool's figures and tables (by_module, by_op...) on one line."""
    if not isinstance(obj, dict) or depth >= 4 or not obj:
        return json.dumps(obj, sort_keys=True)
    pad = " " * (depth + 1)
    keys = list(obj) if depth == 0 else sorted(obj)  # top level: torch, tools, models
    items = [f"{pad}{json.dumps(k)}: {dump(obj[k], depth + 1)}" for k in keys]
    return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"


if __name__ == "__main__":
    main()
