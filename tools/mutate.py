#!/usr/bin/python3
"""Mutation campaign against the flopwise CLI (issues 16, 31): seeded raw and protobuf-aware mutations of
the bundled models, each file run under a time and memory limit, the outcomes tallied.

    /usr/bin/python3 tools/mutate.py --flopwise build/flopwise --count 10000 --seed 31 --out /tmp/mut -j 2

Raw mutations: bit flips, byte runs overwritten, truncation, a chunk duplicated. Protobuf-aware ones (the
`onnx` module, Debian python3-onnx) edit a parsed model and write it back: dims (negative, zero, huge,
symbolic), an initializer's dtype, dims or data, node edges (self-loops, cycles, dangling names, duplicate
outputs, a node's inputs dropped or doubled), attributes (huge, negative, wrong type, removed), Constant
values, op types swapped, nodes deleted or duplicated, subgraphs (If branches), functions calling each other,
metadata and opset imports.

Runs per mutant: the report run, `--format json` with the options drawn for it (none, --dim with a huge
value, --peak-memory, --depth -1); when the draw named another format (text, csv, markdown, html, netron),
that run too; and every --sweep-every'th mutant a `--sweep DIM=1,2 --format json` run (DIM: a symbolic dim
of the seed model's inputs). The draws take the same random numbers as before, so a seed gives the same
mutants as the campaign of issue 16 did.

Checks on a run that exits 0 or 3: a JSON document (the report, a netron attachment, a sweep) must be
strict UTF-8 (RFC 8259) and parse with Python's json.loads (strict: no raw control characters), or the
outcome is `bad_json`. Each mutant is also parsed with protobuf's own parser (onnx.ModelProto
.ParseFromString, the implementation printed in the summary); a mutant protobuf rejects whose JSON report
run exits 0 or 3 with no warning saying "malformed" is `lenient` (issue 31: reject such a file, or say in
one warning that it is malformed and what was skipped; never a clean report).

Outcomes: `ok` (exit 0, 3), `refused` (exit 2 with exactly one stderr line), `refused_multiline` (exit 2 and
more lines: a finding for the one-line rule), `internal` (70), `crash` (a signal), `hang` (past --timeout),
`other` (any other code), `bad_json`, `lenient` (above). A mutant is kept, in OUT/failures/ with a line per
failing run in OUT/failures.txt, when a run of it ends in any outcome but `ok` and `refused`; `--keep-all`
keeps every mutant. The summary (printed, and OUT/summary.json) counts mutants and runs, the outcomes of
the runs, protobuf's verdicts, the slowest run and the largest peak RSS; the exit status is 1 when any run
failed.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time

import onnx
from google.protobuf.internal import api_implementation
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def seeds():
    out = []
    for d in (os.path.join(ROOT, "models"), os.path.join(ROOT, "models", "shipped")):
        for f in sorted(os.listdir(d)):
            if f.endswith(".onnx"):
                out.append(os.path.join(d, f))
    return out


# ---- raw mutations ----------------------------------------------------------------------------------

def raw_mutation(rng, data):
    data = bytearray(data)
    kind = rng.choice(["flip", "overwrite", "truncate", "duplicate"])
    if not data:
        return bytes(data), kind
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif kind == "overwrite":
        i = rng.randrange(len(data))
        n = rng.randint(1, 16)
        data[i:i + n] = bytes(rng.randrange(256) for _ in range(n))
    elif kind == "truncate":
        data = data[: rng.randrange(len(data))]
    else:
        i = rng.randrange(len(data))
        n = rng.randint(1, 64)
        data[i:i] = data[i:i + n]
    return bytes(data), kind


# ---- protobuf-aware mutations ------------------------------------------------------------------------

HUGE = [2 ** 31, 2 ** 40, 2 ** 62, -1, -2 ** 63, 0, 3037000500, 4611686018427387904]


def pick(rng, seq):
    return rng.choice(seq) if len(seq) else None


def mutate_dims(rng, m):
    vis = list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info)
    vi = pick(rng, vis)
    if vi is None or not vi.type.HasField("tensor_type"):
        return False
    dims = vi.type.tensor_type.shape.dim
    if not len(dims):
        for _ in range(rng.randint(1, 70)):
            dims.add().dim_value = rng.randint(1, 4)
        return True
    d = rng.choice(dims)
    c = rng.randrange(3)
    if c == 0:
        d.dim_value = rng.choice(HUGE)
    elif c == 1:
        d.dim_param = rng.choice(["a + b", "2*seq", "x" * 300, "", "seq*seq*seq*seq", "((", "-1"])
    else:
        d.Clear()
    return True


def mutate_initializer(rng, m):
    t = pick(rng, m.graph.initializer)
    if t is None:
        return False
    c = rng.randrange(5)
    if c == 0:
        t.data_type = rng.randrange(0, 25)
    elif c == 1 and len(t.dims):
        t.dims[rng.randrange(len(t.dims))] = rng.choice(HUGE)
    elif c == 2:
        del t.dims[:]
        for _ in range(rng.randint(0, 40)):
            t.dims.append(rng.randint(0, 3))
    elif c == 3:
        t.raw_data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
    else:
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        e = t.external_data.add()
        e.key, e.value = "location", rng.choice(["../x", "/dev/zero", "/etc/passwd", "missing.bin", ""])
    return True


def mutate_edges(rng, m):
    nodes = m.graph.node
    if not len(nodes):
        return False
    n = rng.choice(nodes)
    c = rng.randrange(7)
    if c == 0 and len(n.input) and len(n.output):  # self-loop
        n.input[rng.randrange(len(n.input))] = n.output[0]
    elif c == 1 and len(n.output):  # a cycle: an earlier node reads a later output
        first = nodes[rng.randrange(len(nodes))]
        if len(first.input):
            first.input[0] = n.output[0]
    elif c == 2 and len(n.input):
        n.input[rng.randrange(len(n.input))] = "dangling_%d" % rng.randrange(100)
    elif c == 3 and len(n.output):  # duplicate output names
        other = rng.choice(nodes)
        if len(other.output):
            other.output[0] = n.output[0]
    elif c == 4:
        del n.input[rng.randrange(len(n.input) + 1):]
    elif c == 5 and len(n.input):
        n.input.extend(list(n.input) * rng.randint(1, 3))
    elif len(n.input) and len(n.output):
        n.output[0] = n.input[0]  # output named as its input
    else:
        return False
    return True


def mutate_attribute(rng, m):
    n = pick(rng, m.graph.node)
    if n is None:
        return False
    if not len(n.attribute) or rng.random() < 0.3:
        a = n.attribute.add()
        a.name = rng.choice(["axis", "perm", "kernel_shape", "pads", "strides", "group", "k", "to", "axes", "value"])
        a.type = onnx.AttributeProto.INTS
        a.ints.extend(rng.choice(HUGE) for _ in range(rng.randint(0, 6)))
        return True
    a = rng.choice(n.attribute)
    c = rng.randrange(4)
    if c == 0:
        a.i = rng.choice(HUGE)
    elif c == 1:
        del a.ints[:]
        a.ints.extend(rng.choice(HUGE + [1, 2, 3]) for _ in range(rng.randint(0, 80)))
    elif c == 2:
        a.type = rng.randrange(0, 15)
    else:
        n.attribute.remove(a)
    return True


def mutate_constant(rng, m):
    consts = [n for n in m.graph.node if n.op_type == "Constant"]
    n = pick(rng, consts)
    if n is None:
        return False
    del n.attribute[:]
    vals = rng.choice([[float("nan")], [float("inf")], [-1e300], [2 ** 70], [20000000], [-5, -1, 0],
                       [rng.randint(-10, 10) for _ in range(rng.randint(0, 9))]])
    if all(isinstance(v, int) for v in vals) and rng.random() < 0.6:
        n.attribute.append(helper.make_attribute("value", helper.make_tensor("v", TensorProto.INT64, [len(vals)],
                                                                            [max(min(v, 2 ** 63 - 1), -2 ** 63) for v in vals])))
    else:
        n.attribute.append(helper.make_attribute("value", helper.make_tensor("v", TensorProto.FLOAT, [len(vals)],
                                                                            [float(v) for v in vals])))
    return True


OPS = ["Add", "MatMul", "Reshape", "Gather", "Concat", "Slice", "Expand", "Range", "ConstantOfShape", "Tile",
       "Conv", "Transpose", "Squeeze", "Unsqueeze", "Shape", "Softmax", "If", "Loop", "Where", "Einsum", "Resize",
       "NonZero", "TopK", "Split", "Pad", "CumSum", "Identity", "Cast", "Div", "Mul"]


def mutate_op(rng, m):
    n = pick(rng, m.graph.node)
    if n is None:
        return False
    c = rng.randrange(4)
    if c == 0:
        n.op_type = rng.choice(OPS)
    elif c == 1:
        n.domain = rng.choice(["com.microsoft", "ai.onnx.ml", "custom", "ai.onnx"])
    elif c == 2:
        m.graph.node.remove(n)
    else:
        dup = m.graph.node.add()
        dup.CopyFrom(n)
    return True


def mutate_structure(rng, m):
    c = rng.randrange(5)
    if c == 0:  # functions calling each other twice per level
        depth = rng.randint(5, 40)
        for i in range(depth):
            body = [helper.make_node("f%d" % (i + 1), ["x"], ["t"], domain="local"),
                    helper.make_node("f%d" % (i + 1), ["t"], ["y"], domain="local")] if i + 1 < depth else \
                   [helper.make_node("Relu", ["x"], ["y"])]
            m.functions.append(helper.make_function("local", "f%d" % i, ["x"], ["y"], body,
                                                    [helper.make_opsetid("", 17)]))
        m.opset_import.append(helper.make_opsetid("local", 1))
        if len(m.graph.input):
            m.graph.node.append(helper.make_node("f0", [m.graph.input[0].name], ["fn_out"], domain="local"))
    elif c == 1:  # an If with a cyclic or empty branch
        g = helper.make_graph([helper.make_node("Identity", ["b"], ["b"])], "br", [], [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)])
        m.graph.node.append(helper.make_node("If", ["cond_missing"], ["if_out"], then_branch=g, else_branch=g))
    elif c == 2:
        del m.opset_import[:]
        m.opset_import.append(helper.make_opsetid("", rng.choice([0, 1, 7, 99, 2 ** 31 - 1])))
    elif c == 3:
        m.graph.name = "".join(chr(rng.randrange(0, 0x300)) for _ in range(rng.randint(0, 40)))
        n = pick(rng, m.graph.node)
        if n is not None:
            n.name = "\x1b[31m" + "/".join("s%d" % i for i in range(rng.randint(1, 3000)))
    else:  # a Reshape whose rank comes from a huge shape tensor
        t = TensorProto()  # declares a million elements and stores one: the file stays tiny
        t.name, t.data_type = "huge_shape", TensorProto.INT64
        t.dims.append(rng.choice([100000, 1000000, 20000000]))
        t.raw_data = b"\x01" + b"\x00" * 7
        m.graph.initializer.append(t)
        if len(m.graph.input):
            m.graph.node.append(helper.make_node("Reshape", [m.graph.input[0].name, "huge_shape"], ["reshaped"]))
    return True


PROTO_MUTATIONS = [mutate_dims, mutate_initializer, mutate_edges, mutate_attribute, mutate_constant, mutate_op,
                   mutate_structure]


def proto_mutation(rng, m):
    names = []
    for _ in range(rng.randint(1, 3)):
        f = rng.choice(PROTO_MUTATIONS)
        try:
            if f(rng, m):
                names.append(f.__name__[len("mutate_"):])
        except (ValueError, TypeError, IndexError):  # an edit the onnx module refuses: skip it
            pass
    return names


# ---- checks -----------------------------------------------------------------------------------------

def protobuf_verdict(data):
    """None when protobuf's own parser takes the bytes as a ModelProto, else its error's text."""
    try:
        onnx.ModelProto().ParseFromString(data)
    except Exception as e:  # google.protobuf.message.DecodeError
        return "%s: %s" % (type(e).__name__, e)
    return None


def json_problem(out):
    """(None, the document) when `out` is one JSON document (strict UTF-8, strict json.loads), else (what is
    wrong, with the bytes around the spot, None)."""
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        return "not UTF-8 at byte %d: %r" % (e.start, out[max(0, e.start - 40):e.start + 40]), None
    try:
        return None, json.loads(text)
    except ValueError as e:
        pos = getattr(e, "pos", 0) or 0
        return "%s: %r" % (e, text[max(0, pos - 40):pos + 40]), None


def says_malformed(doc, out, err):
    """Whether a run warns that the file is malformed: a JSON report's warnings, else any text it wrote."""
    if isinstance(doc, dict) and isinstance(doc.get("warnings"), list):
        return any("malformed" in str(w).lower() for w in doc["warnings"])
    return b"malformed" in out.lower() or "malformed" in err.lower()


# ---- running ----------------------------------------------------------------------------------------

def run_one(flopwise, path, timeout, mem_mb, extra, json_out=False, pb_error=None):
    """One run: (outcome, exit code, wall s, peak RSS KB, message). `json_out`: its stdout must be JSON;
    `pb_error`: protobuf rejected the file, so a JSON report without a "malformed" warning is `lenient`."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))

    t0 = time.monotonic()
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", flopwise, path] + extra, capture_output=True,
                           timeout=timeout, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return "hang", None, timeout, 0, ""
    wall = time.monotonic() - t0
    err = p.stderr.decode("utf-8", "replace").splitlines()
    rss = 0
    if err and err[-1].strip().isdigit():
        rss = int(err[-1].strip())
        err = err[:-1]
    if err and err[-1].startswith("Command terminated by signal"):
        return "crash", None, wall, rss, err[-1]
    if err and err[-1].startswith("Command exited with non-zero status"):
        err = err[:-1]
    code = p.returncode
    msg = "\n".join(err[-3:])
    if code in (0, 3):
        outcome, doc = "ok", None
        if json_out:
            problem, doc = json_problem(p.stdout)
            if problem:
                return "bad_json", code, wall, rss, problem
        report = extra[-2:] == ["--format", "json"] and "--sweep" not in extra  # the report run (runs_of)
        if pb_error and report and not says_malformed(doc, p.stdout, "\n".join(err)):
            return "lenient", code, wall, rss, msg
    elif code == 2:
        outcome = "refused" if len(err) == 1 else "refused_multiline"
    elif code == 70:
        outcome = "internal"
    elif code < 0 or code > 128:
        outcome = "crash"
    else:
        outcome = "other"
    return outcome, code, wall, rss, msg


JSON_FORMATS = ("json", "netron")
FAILED = ("crash", "hang", "internal", "other", "refused_multiline", "bad_json", "lenient")


def runs_of(i, extra, sweep_dim, sweep_every):
    """The runs of mutant i, each (options, whether its stdout is JSON): the report run (the drawn options,
    their format replaced by --format json) first, then the drawn run when it names another format, then
    every sweep_every'th mutant a sweep."""
    fmt = extra[extra.index("--format") + 1] if "--format" in extra else None
    rest = [a for k, a in enumerate(extra) if a != "--format" and (k == 0 or extra[k - 1] != "--format")]
    runs = [(rest + ["--format", "json"], True)]
    if fmt not in (None, "json"):
        runs.append((extra, fmt in JSON_FORMATS))
    if sweep_every and i % sweep_every == 0:
        runs.append((["--sweep", sweep_dim + "=1,2", "--format", "json"], True))
    return runs


def run_mutant(args, i, path, extra, sweep_dim):
    """Protobuf's verdict on one mutant's bytes and the results of its runs, each (options,) + run_one's."""
    with open(path, "rb") as f:
        pb_error = protobuf_verdict(f.read())
    results = []
    for opts, json_out in runs_of(i, extra, sweep_dim, args.sweep_every):
        results.append((opts,) + run_one(args.flopwise, path, args.timeout, args.mem_mb, opts, json_out, pb_error))
    return pb_error, results


def sweep_dim_of(m):
    """A symbolic dim of the model's inputs that --sweep can name (a plain identifier), or `batch`."""
    for vi in m.graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if d.dim_param and d.dim_param.replace("_", "").isalnum():
                return d.dim_param
    return "batch"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flopwise", default=os.path.join(ROOT, "build", "flopwise"))
    ap.add_argument("--count", type=int, default=10000, help="mutants (each is run once or more: runs_of)")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--out", default="/tmp/flopwise_mutants")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per run (the issue's bound)")
    ap.add_argument("--mem-mb", type=int, default=1024, help="address-space limit per run (the issue's bound)")
    ap.add_argument("--sweep-every", type=int, default=10, help="a --sweep run every N mutants (0: none)")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="mutants run at once (the mutants stay the same)")
    ap.add_argument("--keep-all", action="store_true")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(os.path.join(args.out, "failures"))
    base = {p: open(p, "rb").read() for p in seeds()}
    parsed = {p: onnx.load_from_string(b) for p, b in base.items()}
    sweep_dims = {p: sweep_dim_of(m) for p, m in parsed.items()}
    tally = collections.Counter()
    by_kind = collections.defaultdict(collections.Counter)
    pb_tally = collections.Counter()
    slowest = (0.0, "")
    biggest = (0, "")
    n_runs = 0
    failures = open(os.path.join(args.out, "failures.txt"), "w")
    work = os.path.join(args.out, "work")
    os.makedirs(work)
    t_start = time.monotonic()

    def mutants():
        for i in range(args.count):
            src = rng.choice(sorted(base))
            # External data stays where the seed's is: the mutant sits next to it by name, never read anyway.
            if rng.random() < 0.35:
                data, kind = raw_mutation(rng, base[src])
                kinds = ["raw_" + kind]
            else:
                m = onnx.ModelProto()
                m.CopyFrom(parsed[src])
                kinds = ["pb_" + k for k in proto_mutation(rng, m)] or ["pb_none"]
                try:
                    data = m.SerializeToString()
                except Exception:  # the onnx module refuses some edits; keep the raw bytes
                    data, kinds = base[src], ["pb_unserialisable"]
            path = os.path.join(work, "m%05d.onnx" % i)
            with open(path, "wb") as f:
                f.write(data)
            # As many choices as issue 16's draw, so the same random numbers follow and a seed gives the same
            # mutants; the report run puts --format json in place of the drawn format (runs_of).
            extra = rng.choice([[], ["--format", "text"], ["--format", "netron"], ["--format", "csv"],
                                ["--format", "markdown"], ["--format", "html"],
                                ["--dim", "batch=4611686018427387904"], ["--peak-memory"], ["--depth", "-1"]])
            yield i, src, kinds, path, extra

    def record(i, src, kinds, path, extra, pb_error, results):
        nonlocal slowest, biggest, n_runs
        pb_tally["rejects" if pb_error else "parses"] += 1
        keep = args.keep_all
        for opts, outcome, code, wall, rss, msg in results:
            n_runs += 1
            tally[outcome] += 1
            for k in kinds:
                by_kind[k][outcome] += 1
            if wall > slowest[0]:
                slowest = (wall, "m%05d.onnx %s" % (i, " ".join(opts)))
            if rss > biggest[0]:
                biggest = (rss, "m%05d.onnx %s" % (i, " ".join(opts)))
            if outcome in FAILED:
                keep = True
                failures.write(json.dumps({"file": "m%05d.onnx" % i, "seed_model": os.path.basename(src),
                                           "mutations": kinds, "args": opts, "outcome": outcome, "code": code,
                                           "stderr": msg, "protobuf": pb_error}) + "\n")
                failures.flush()
        if keep:
            shutil.copy(path, os.path.join(args.out, "failures", "m%05d.onnx" % i))
        os.remove(path)

    # Mutants are made in order on this thread (the random numbers do not depend on -j); their runs go to a
    # pool, at most 2 x jobs ahead, and are recorded in order.
    jobs = max(1, args.jobs)
    pending = collections.deque()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for mut in mutants():
            pending.append((mut, pool.submit(run_mutant, args, mut[0], mut[3], mut[4], sweep_dims[mut[1]])))
            while len(pending) > 2 * jobs:
                mut, fut = pending.popleft()
                record(*mut, *fut.result())
        while pending:
            mut, fut = pending.popleft()
            record(*mut, *fut.result())
    summary = {"mutants": args.count, "runs": n_runs, "seed": args.seed, "outcomes": dict(tally),
               "protobuf": dict(pb_tally), "protobuf_implementation": api_implementation.Type(),
               "slowest_s": round(slowest[0], 3), "slowest": slowest[1],
               "peak_rss_mb": round(biggest[0] / 1024, 1), "peak_rss": biggest[1],
               "campaign_s": round(time.monotonic() - t_start, 1), "jobs": jobs,
               "by_mutation": {k: dict(v) for k, v in sorted(by_kind.items())}}
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps({k: v for k, v in summary.items() if k != "by_mutation"}, indent=1))
    sys.exit(1 if sum(tally[k] for k in FAILED) else 0)


if __name__ == "__main__":
    main()
