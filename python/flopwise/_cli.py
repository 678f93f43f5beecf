"""The flopwise executable, run in a child process: for TorchScript (.pt) files and live modules (LibTorch is
never loaded into the Python process), sweeps, diffs, checks and runs."""

import os

from . import errors


def cli_path():
    """$FLOPWISE_CLI, else the CLI of the build this package was assembled in, else `flopwise` on PATH."""
    import shutil

    env = os.environ.get("FLOPWISE_CLI")
    if env:
        return env
    try:
        from ._paths import CLI
        if os.path.exists(CLI):
            return CLI
    except ImportError:
        pass
    found = shutil.which("flopwise")
    if not found:
        raise errors.UsageError("the flopwise executable is not found: set FLOPWISE_CLI, or put it on PATH")
    return found


# The classes the CLI names on its JSON error line (docs/errors.md: Exit codes), as the package's exceptions.
_CLASSES = {"InputError": errors.InputError, "UsageError": errors.UsageError, "ShapeError": errors.ShapeError,
            "Error": errors.FlopwiseError, "StrictError": errors.StrictError, "RunError": errors.RunError,
            "InternalError": errors.InternalError}


def _typed_error(stderr):
    """The (class, message) of the CLI's JSON error line ({"error": ..., "message": ...}, written under
    FLOPWISE_ERROR_FORMAT=json), or None when there is none (a CLI older than that line)."""
    import json

    for line in reversed(stderr.splitlines()):
        if line.startswith('{"error":'):
            try:
                d = json.loads(line)
            except ValueError:
                return None
            cls = _CLASSES.get(d.get("error"))
            return (cls, d.get("message", "")) if cls else None
    return None


def _message(stderr):
    """The CLI's one-line message without its "flopwise: error: " prefix."""
    import re

    lines = [l for l in stderr.strip().splitlines() if l.strip()]
    for l in lines:
        m = re.match(r"flopwise(?: [a-z]+)?: (?:error: )?(.*)", l)
        if m and "error" in l:
            return m.group(1)
    return lines[-1] if lines else ""


def _error_class(code, msg):
    """The error class guessed from the exit code and the message: for a CLI that writes no JSON error line."""
    import re

    if code == 2:
        if re.search(r"shape|contradict", msg) and not re.search(r"cannot open|not a|malformed|truncated", msg):
            return errors.ShapeError
        if re.search(r"--|option|usage|unknown (dim|input|convention)|no input named", msg):
            return errors.UsageError
        return errors.InputError
    if code == 3:
        return errors.StrictError
    if code in (4, 5, 6):
        return errors.RunError
    return errors.InternalError


def run_cli(args, ok=(0,)):
    """Runs `flopwise ARGS`; returns (exit code, stdout). Exit codes outside `ok` raise the error class the CLI
    names (its JSON error line) with the CLI's message."""
    import subprocess

    env = dict(os.environ, FLOPWISE_ERROR_FORMAT="json")
    p = subprocess.run([cli_path()] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=env)
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    if p.returncode in ok:
        return p.returncode, out
    typed = _typed_error(err)
    cls, msg = typed if typed else (None, _message(err))
    if "saved by a newer PyTorch" in err or "PyTorch installation may be too old" in err:
        raise errors.InputError(msg + " (export it with the CLI's PyTorch, or use analyze(..., export=\"onnx\"))")
    if p.returncode < 0:
        raise errors.InternalError(f"flopwise died of signal {-p.returncode}: {err.strip()}")
    raise (cls or _error_class(p.returncode, msg))(msg)
