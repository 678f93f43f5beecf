"""flopwise diff of traces by count and time, and flopwise trace DIR of rank files, against Holistic Trace
Analysis' own figures: models/traces/hta_oracle.json, written by HTA itself run from its source
(models/traces/hta_oracle.py: TraceDiff.compare_traces / ops_diff, TraceAnalysis.get_temporal_breakdown /
get_comm_comp_overlap) on the same files: HTA's trace_diff pair (models/traces/hta) and eight DLRM rank files
(models/traces/dlrm, facebookresearch/param)."""
import json
import os
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HTA = os.path.join(ROOT, "models", "traces", "hta")
DLRM = os.path.join(ROOT, "models", "traces", "dlrm")
CLI = os.environ.get("FLOPWISE_CLI") or os.path.join(ROOT, "build", "flopwise")
ORACLE = json.load(open(os.path.join(ROOT, "models", "traces", "hta_oracle.json")))
CONTROL = os.path.join(HTA, "trace_diff_control.json.gz")
TEST = os.path.join(HTA, "trace_diff_test.json.gz")


def run(*args, ok=(0,)):
    p = subprocess.run([CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.returncode in ok, (p.returncode, p.stderr.decode())
    return p


def diff_json(*args):
    return json.loads(run("diff", *args, "--format", "json").stdout)


def check_rows(rows, hta):
    """Every name HTA counts, with HTA's counts exactly and its total time (HTA sums integer microseconds)."""
    got = {r["name"]: r for r in rows}
    assert sorted(got) == sorted(hta)
    for name, (ca, ta, cb, tb) in hta.items():
        r = got[name]
        assert (r["count_a"], r["count_b"]) == (ca, cb), name
        assert r["time_a_us"] == pytest.approx(ta, abs=1e-6) and r["time_b_us"] == pytest.approx(tb, abs=1e-6), name


def test_diff_first_step_matches_hta_compare_traces():
    # HTA's defaults: the first rank and the first iteration of each side.
    d = diff_json(CONTROL, TEST, "--ranks", "first", "--steps", "first")
    o = ORACLE["trace_diff_default"]
    assert d["count_a"]["steps"] == [o["iteration"][0]] and d["count_b"]["steps"] == [o["iteration"][1]]
    check_rows(d["ops"], o["CPU"])
    check_rows(d["kernels"], o["GPU"])
    # ops_diff over CPU and GPU events together (HTA: 32 / 138 / 35 / 65 / 162).
    both = {k: d["categories"]["ops"][k] + d["categories"]["kernels"][k] for k in o["ops_diff"]}
    assert both == o["ops_diff"]
    assert d["rows"], "the priced diff of two single traces is in the same document"


def test_diff_every_step_matches_hta():
    d = diff_json(CONTROL, TEST, "--steps", "1009,1010,1011,1012,1013,1014")
    o = ORACLE["trace_diff_all_steps"]
    check_rows(d["ops"], o["CPU"])
    check_rows(d["kernels"], o["GPU"])


def test_diff_of_sets_as_directories():
    # HTA's unit-test pair (trace_compare base/test, rank 1, iteration 1010, CPU ops): its ops_diff categories.
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        os.symlink(os.path.join(HTA, "trace_compare_base.json.gz"), os.path.join(a, "rank1.json.gz"))
        os.symlink(os.path.join(HTA, "trace_compare_test.json.gz"), os.path.join(b, "rank1.json.gz"))
        d = diff_json("--a", a, "--b", b, "--ranks", "1", "--steps", "1010")
    assert d["categories"]["ops"] == ORACLE["trace_compare"]


def test_diff_formats():
    for fmt, probe in (("csv", "level,name,count_a"), ("markdown", "| name |"), ("html", "<svg"),
                       ("text", "GPU kernels, memcpy and memset")):
        out = run("diff", CONTROL, TEST, "--steps", "first", "--format", fmt).stdout.decode()
        assert probe in out, fmt
    html = run("diff", CONTROL, TEST, "--format", "html").stdout.decode()
    assert "Scope tree" in html and "Largest count changes of kernels" in html


def test_diff_bad_selection():
    p = run("diff", CONTROL, TEST, "--steps", "77", ok=(2,))
    assert b"step 77 is not among" in p.stderr
    p = run("diff", "--a", DLRM, ok=(2,))
    assert b"--a and --b go together" in p.stderr


def test_ranks_match_hta_temporal_breakdown_and_overlap():
    r = json.loads(run("trace", DLRM, "--format", "json").stdout)
    hta = {x["rank"]: x for x in ORACLE["dlrm"]["ranks"]}
    assert [x["rank"] for x in r["ranks"]] == sorted(hta)
    for x in r["ranks"]:
        h = hta[x["rank"]]
        tol = 0.01 * h["kernel_time_us"]  # the bar: within 1 % of kernel time
        for k in ("idle_time_us", "compute_time_us", "non_compute_time_us", "kernel_time_us"):
            assert x[k] == pytest.approx(h[k], abs=tol), (x["rank"], k)
        assert x["comm_comp_overlap_pct"] == pytest.approx(h["comm_comp_overlap_pct"], abs=1.0)
    # rank 1 has the longest ProfilerStep#10 of the eight files (read with Python's json module)
    assert r["slowest_rank"] == slowest_by_hand()


def slowest_by_hand():
    import glob
    import gzip
    best = (-1, None)
    for f in glob.glob(os.path.join(DLRM, "*.json.gz")):
        d = json.load(gzip.open(f, "rt"))
        step = [e["dur"] for e in d["traceEvents"] if str(e.get("name", "")).startswith("ProfilerStep#")]
        best = max(best, (sum(step) / len(step), d["distributedInfo"]["rank"]))
    return best[1]


def test_collectives_from_kernel_args():
    # torch 2.x NCCL kernels carry "Collective name", "In msg nelems", "Group size" and "dtype" (HTA's
    # nccl_parser_config trace). Counted as HTA keeps kernels: launched before the last ProfilerStep starts.
    # Expected by hand from the kernels' own args: count and bytes (nelems x 4 for Float, 8 for Long) per
    # (collective, bytes); busbw = algbw x 2(n-1)/n for allreduce, x 1 for broadcast (nccl-tests).
    src = os.path.join(HTA, "nccl_rank0.json.gz")
    import collections
    import gzip
    ev = json.load(gzip.open(src, "rt"))["traceEvents"]
    last_step = max(e["ts"] for e in ev if str(e.get("name", "")).startswith("ProfilerStep#"))
    launched = {e["args"]["correlation"] for e in ev if e.get("cat") == "cuda_runtime" and e["ts"] < last_step}
    want = collections.Counter()
    size = {"Float": 4, "Long": 8}
    for e in ev:
        a = e.get("args", {})
        if e.get("cat") == "kernel" and "Collective name" in a and a["correlation"] in launched:
            want[(a["Collective name"], a["In msg nelems"] * size[a["dtype"]])] += 1
    with tempfile.TemporaryDirectory() as d:
        os.symlink(src, os.path.join(d, "rank0.json.gz"))
        r = json.loads(run("trace", d, "--format", "json").stdout)
    got = {(c["collective"], c["message_bytes"]): c["count"] for c in r["collectives"]}
    assert got == dict(want)
    for c in r["collectives"]:
        assert c["algbw_gbs"] == pytest.approx(c["message_bytes"] / (c["time_us"] / c["count"]) / 1e3)
        assert c["busbw_gbs"] == pytest.approx(c["algbw_gbs"] * (2 * (2 - 1) / 2 if c["collective"] == "allreduce" else 1))
    hta = ORACLE["nccl"]
    x = r["ranks"][0]
    for k in ("idle_time_us", "compute_time_us", "non_compute_time_us", "kernel_time_us"):
        assert x[k] == pytest.approx(hta[k], abs=0.01 * hta["kernel_time_us"]), k
    assert x["comm_comp_overlap_pct"] == pytest.approx(hta["comm_comp_overlap_pct"], abs=1.0)


def test_old_kineto_operator_events_are_read():
    # torch 1.9's Kineto wrote cat "Operator" (models/traces/old). Counted by hand with Python's json module:
    # the aten::relu_ and aten::conv2d events, and relu_'s FLOPs (one per element of its input).
    import gzip
    path = os.path.join(ROOT, "models", "traces", "old", "resnet50_torch19.pt.trace.json.gz")
    ev = json.load(gzip.open(path, "rt"))["traceEvents"]
    ops = [e for e in ev if e.get("cat") == "Operator"]
    relu = [e for e in ops if e["name"] == "aten::relu_"]
    conv = [e for e in ops if e["name"] == "aten::conv2d"]
    numel = 0
    for e in relu:
        n = 1
        for d in e["args"]["Input Dims"][0]:
            n *= d
        numel += n
    r = json.loads(run("trace", path, "--format", "json").stdout)
    rows = {o["name"]: o for o in r["ops"]}
    assert rows["aten::relu_"]["calls"] == len(relu) and rows["aten::relu_"]["flops"] == numel
    # conv2d's stride was passed but not recorded (no Concrete Inputs): listed, not priced at stride 1.
    assert rows["aten::conv2d"]["calls"] == len(conv) and rows["aten::conv2d"]["uncosted_calls"] == len(conv)
    why = {u["name"]: u["why"] for u in r["uncosted"]}
    assert why["aten::conv2d"] == "argument stride not recorded"


CPU = os.path.join(ROOT, "models", "traces", "cpu")


@pytest.mark.parametrize("model", ["resnet18", "mobilenet_v2", "bert_tiny"])
def test_cpu_trace_flops_match_torch_with_flops(model):
    # CPU-only traces of stock models recorded by torch 2.14's profiler (models/cpu_traces.py, with_flops=True):
    # torch's own FLOPs per op are the oracle. conv2d and add: equal. torch counts a Linear as its aten::addmm
    # (2 per MAC, no bias); flopwise prices aten::linear with its bias add: + one FLOP per output element, the
    # output's size by hand from each linear event's Input Dims (input[:-1] x weight rows).
    import gzip
    oracle = {r["name"]: r for r in json.load(open(os.path.join(CPU, model + ".oracle.json")))["by_name"]}
    path = os.path.join(CPU, model + ".pt.trace.json.gz")
    r = json.loads(run("trace", path, "--format", "json").stdout)
    ops = {o["name"]: o for o in r["ops"]}
    for name in ("aten::conv2d", "aten::add"):
        if name in oracle and oracle[name]["flops"]:
            assert ops[name]["flops"] == oracle[name]["flops"], name
            assert ops[name]["calls"] == oracle[name]["count"], name
    ev = json.load(gzip.open(path, "rt"))["traceEvents"]
    bias = 0
    for e in ev:
        if e.get("cat") == "cpu_op" and e["name"] == "aten::linear" and e["args"]["Input Dims"][2]:
            dims = e["args"]["Input Dims"]
            n = dims[1][0]
            for d in dims[0][:-1]:
                n *= d
            bias += n
    assert ops["aten::linear"]["flops"] == oracle["aten::addmm"]["flops"] + bias
    # the CPU view: GFLOP/s over each op's CPU time, and the text says so
    lin = ops["aten::linear"]
    assert lin["achieved_cpu_gflops"] == pytest.approx(lin["flops"] / lin["cpu_us"] / 1e3)
    text = run("trace", path).stdout.decode()
    assert "CPU only" in text and "GFLOP/s over the ops' CPU time" in text


def test_cpu_trace_module_scopes():
    # with_modules=True: the nn.Module events give the eager scopes; ResNet-18's 20 convolutions (torch's
    # count over two steps, 40) all lie under ResNet_0, and its first conv under Conv2d_0.
    r = json.loads(run("trace", os.path.join(CPU, "resnet18.pt.trace.json.gz"), "--format", "json").stdout)
    scopes = {s["path"]: s for s in r["scopes"]}
    conv = next(o for o in r["ops"] if o["name"] == "aten::conv2d")
    assert scopes["ResNet_0"]["flops"] == r["totals"]["flops"]
    # conv1: 64 x 3 x 7 x 7 over a 32 x 32 output, 2 FLOPs per MAC, two steps
    assert scopes["ResNet_0.Conv2d_0"]["flops"] == 2 * 64 * 3 * 7 * 7 * 32 * 32 * 2
    assert conv["calls"] == 40


def test_rank_files_bad_input():
    # one line and exit 2 (docs/errors.md): two files of one rank, a file that is not JSON, an empty directory;
    # a rank without GPU events is reported with a warning, its times 0.
    import shutil
    dlrm0 = sorted(f for f in os.listdir(DLRM) if f.startswith("worker0"))[0]
    with tempfile.TemporaryDirectory() as d:
        shutil.copy(os.path.join(DLRM, dlrm0), os.path.join(d, "a.json.gz"))
        shutil.copy(os.path.join(DLRM, dlrm0), os.path.join(d, "b.json.gz"))
        p = run("trace", d, ok=(2,))
        assert b"are both rank 0" in p.stderr and p.stderr.count(b"\n") == 1
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "x.json"), "w") as f:
            f.write("{")
        p = run("trace", d, ok=(2,))
        assert b"not valid JSON" in p.stderr
        os.remove(os.path.join(d, "x.json"))
        p = run("trace", d, ok=(2,))
        assert b"no *.json or *.json.gz trace files" in p.stderr
    with tempfile.TemporaryDirectory() as d:
        os.symlink(os.path.join(HTA, "cpu_only.pt.trace.json.gz"), os.path.join(d, "r.json.gz"))
        r = json.loads(run("trace", d, "--format", "json").stdout)
        assert r["ranks"][0]["kernel_time_us"] == 0 and r["ranks"][0]["comm_comp_overlap_pct"] is None
        assert any("no GPU events" in w for w in r["warnings"])


def test_single_trace_text_names_its_communication():
    # A single trace with NCCL kernels: the text ends on their time, overlap and collectives (DLRM rank 0's
    # overlap, HTA's 4.50 %); a trace without communication gets no such section.
    dlrm0 = os.path.join(DLRM, sorted(f for f in os.listdir(DLRM) if f.startswith("worker0"))[0])
    text = run("trace", dlrm0).stdout.decode()
    assert "communication (NCCL/RCCL kernels" in text and " 4.50 " in text.split("communication (NCCL")[1]
    text = run("trace", os.path.join(CPU, "resnet18.pt.trace.json.gz")).stdout.decode()
    assert "communication (NCCL" not in text


def test_foreach_optimizer_ops_priced_from_their_lists():
    # Adam and SGD with foreach=True on a small MLP (models/cpu_traces.py, torch 2.14 records each tensor list's
    # shapes). By hand from each event's Input Dims and Concrete Inputs: the elements of the first list times the
    # FLOPs per element: add/sub 1, + 1 when alpha is not 1 (the Mul of the scaled operand); mul, div, sqrt 1;
    # addcmul, addcdiv 2, + 1 when the value is not the constant 1 (a Scalar[] always scales); lerp 3.
    import gzip
    path = os.path.join(CPU, "mlp_train.pt.trace.json.gz")
    ev = json.load(gzip.open(path, "rt"))["traceEvents"]
    want = {}
    for e in ev:
        name = e.get("name", "")
        if e.get("cat") != "cpu_op" or not name.startswith("aten::_foreach_"):
            continue
        a = e["args"]
        numel = 0
        for shape in a["Input Dims"][0]:
            n = 1
            for d in shape:
                n *= d
            numel += n
        op = name[len("aten::_foreach_"):].rstrip("_")
        conc, types = a["Concrete Inputs"], a["Input type"]
        if op in ("add", "sub"):
            per = 1 + (1 if len(types) > 2 and float(conc[2]) != 1.0 else 0)
        elif op in ("addcmul", "addcdiv"):
            per = 2 + (1 if types[3] == "ScalarList" or float(conc[3]) != 1.0 else 0)
        elif op == "lerp":
            per = 3
        else:
            per = 1
        want[name] = want.get(name, 0) + numel * per
    r = json.loads(run("trace", path, "--format", "json").stdout)
    got = {o["name"]: o["flops"] for o in r["ops"] if o["name"].startswith("aten::_foreach_")}
    assert got == want and len(want) == 7


def test_fp8_gemm_priced_as_flop_counter_counts_it():
    # torch._scaled_mm on float8_e4m3fn (models/cpu_traces.py): torch's FlopCounterMode counts 2*M*N*K per call
    # (32 x 48 x 64: 196,608), the scales not counted; the dtype of its MACs is the float8 one.
    o = json.load(open(os.path.join(CPU, "fp8_gemm.oracle.json")))
    r = json.loads(run("trace", os.path.join(CPU, "fp8_gemm.pt.trace.json.gz"), "--format", "json").stdout)
    mm = next(x for x in r["ops"] if x["name"] == "aten::_scaled_mm")
    assert mm["calls"] == o["calls"] and mm["flops"] == o["calls"] * o["flop_counter_per_call"]
    assert o["flop_counter_per_call"] == 2 * 32 * 48 * 64
    assert mm["dtype"] == "float8_e4m3fn"
