#!/usr/bin/python3
"""Reference FLOP/MAC counts from four peer tools: the oracle for tests/test_conventions.cc.

    /usr/bin/python3 models/reference_counts.py --tools /tmp/tools --out models/reference_counts.json
    /usr/bin/python3 models/reference_counts.py --tools /tmp/tools --out /tmp/x.json --only bert --only gpt2

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

MODELS = ["resnet18", "mobilenet_v2", "bert", "gpt2", "misc_ops", "resnet50"]


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
        macs, params = ptflops.get_model_complexity_info(
            model, tuple(inputs[0].shape[1:]), input_constructor=constructor, as_strings=False,
            print_per_layer_stat=False, backend="pytorch")
        if macs is None:
            raise RuntimeError("ptflops returned None (it printed the exception above)")
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
        macs, params = ptflops.get_model_complexity_info(
            model, tuple(inputs[0].shape[1:]), input_constructor=constructor, as_strings=False,
            print_per_layer_stat=False, backend="aten")
        if macs is None:
            raise RuntimeError("ptflops returned None (it printed the exception above)")
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


def worker(tools_dir, tool, model_name, out_path):
    model, inputs, names = build(model_name)
    try:
        result = RUNNERS[tool](tools_dir, model, inputs, names)
    except Exception as e:  # noqa: BLE001 - recorded in the JSON, the other tools go on
        traceback.print_exc()
        result = {"error": f"{type(e).__name__}: {e}".strip().splitlines()[0]}
    with open(out_path, "w") as f:
        json.dump(result, f)


# --------------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tools", default="/tmp/tools", help="directory holding the four tool checkouts")
    ap.add_argument("--out", default=os.path.join(HERE, "reference_counts.json"))
    ap.add_argument("--only", action="append", help="model name (repeatable); default: " + " ".join(MODELS))
    ap.add_argument("--tool", action="append", help="tool name (repeatable); default: all")
    ap.add_argument("--worker", nargs=3, metavar=("TOOL", "MODEL", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("-v", "--verbose", action="store_true", help="show the tools' own output")
    args = ap.parse_args()
    if args.worker:
        worker(args.tools, *args.worker)
        return

    import torch
    tools = args.tool or list(TOOLS)
    result = {"torch": torch.__version__, "tools": {t: TOOLS[t] for t in tools}, "models": {}}
    if os.path.exists(args.out) and (args.only or args.tool):
        with open(args.out) as f:  # partial run: update the existing file in place
            old = json.load(f)
        result["models"] = old.get("models", {})
        result["tools"] = {**old.get("tools", {}), **result["tools"]}
    for name in args.only or MODELS:
        _, inputs, names = build(name)
        entry = result["models"].get(name, {})
        entry["inputs"] = [{"name": n, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
                           for n, t in zip(names, inputs)]
        for tool in tools:
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
                path = tmp.name
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--tools", args.tools,
                                   "--worker", tool, name, path], capture_output=True, text=True)
            if args.verbose or proc.returncode:
                sys.stderr.write(proc.stdout + proc.stderr)
            try:
                with open(path) as f:
                    entry[tool] = json.load(f)
            except (OSError, ValueError):
                entry[tool] = {"error": f"worker exited {proc.returncode}: "
                                        + (proc.stderr.strip().splitlines() or ["no output"])[-1]}
            finally:
                if os.path.exists(path):
                    os.remove(path)
            r = entry[tool]
            if "stand_ins" in r:  # the same for every model: kept once, under "tools"
                result["tools"][tool]["stand_ins"] = r.pop("stand_ins")
            total = r.get("total_flops", r.get("total_macs", r.get("error")))
            print(f"{name:13s} {tool:16s} {total}", file=sys.stderr)
        result["models"][name] = entry
    with open(args.out, "w") as f:
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
