"""Typed errors through the CLI (a child process): the class its JSON error line names, the CLI's message."""
import json
import os
import stat
import subprocess
import sys

import pytest

import flopwise
from conftest import MODELS


def cli_message(cli, *args):
    """The CLI's exit code and the message of its usual error line, run without FLOPWISE_ERROR_FORMAT."""
    env = {k: v for k, v in os.environ.items() if k != "FLOPWISE_ERROR_FORMAT"}
    p = subprocess.run([cli, *args], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
    lines = p.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("flopwise: error: "), lines
    return p.returncode, lines[0][len("flopwise: error: "):]


def test_truncated_file_is_an_input_error(cli, tmp_path):
    with open(os.path.join(MODELS, "resnet18.onnx"), "rb") as f:
        head = f.read(5000)  # the first 5,000 of its 15,610 bytes: cut inside the graph
    path = tmp_path / "truncated.onnx"
    path.write_bytes(head)
    with pytest.raises(flopwise.InputError) as e:
        flopwise.sweep(str(path), batch=[1, 2])  # a sweep runs the CLI
    code, msg = cli_message(cli, str(path), "--sweep", "batch=1,2", "--format", "json")
    assert code == 2 and str(e.value) == msg
    assert msg.startswith(str(path) + ": not a valid ONNX model")


def test_bad_dim_is_a_usage_error(cli):
    path = os.path.join(MODELS, "bert.onnx")
    with pytest.raises(flopwise.UsageError) as e:
        flopwise.sweep(path, dims={"batch": "x"}, seq=[16])
    code, msg = cli_message(cli, path, "--dim", "batch=x", "--convention", "default", "--format", "json",
                            "--sweep", "seq=16")
    assert code == 2 and str(e.value) == msg == "--dim batch: 'x' is not an integer"


def test_run_of_an_onnx_file_is_a_usage_error(cli):
    path = os.path.join(MODELS, "resnet18.onnx")
    with pytest.raises(flopwise.UsageError) as e:
        flopwise.run(path)
    assert (2, str(e.value)) == cli_message(cli, "run", path, "--format", "json")


def test_cli_writes_the_class_on_a_json_line(cli, tmp_path):
    missing = str(tmp_path / "missing.onnx")
    env = dict(os.environ, FLOPWISE_ERROR_FORMAT="json")
    for args, cls in (([missing], "InputError"), (["--bogus"], "UsageError"),
                      ([os.path.join(MODELS, "bert.onnx"), "--dim", "batch=-1"], "UsageError")):
        p = subprocess.run([cli, *args], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env)
        human, line = p.stderr.decode().splitlines()
        d = json.loads(line)
        assert p.returncode == 2 and set(d) == {"error", "message"}
        assert human == "flopwise: error: " + d["message"]
        assert d["error"] == cls


def stand_in_cli(tmp_path, stderr_lines, code):
    """An executable that prints `stderr_lines` on stderr and exits `code`: a CLI, old or new, at will."""
    script = tmp_path / "flopwise-stand-in"
    text = "".join(line + "\n" for line in stderr_lines)
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.stderr.write({text!r})\nsys.exit({code})\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_the_json_line_decides_the_class_not_the_message(tmp_path, monkeypatch):
    # A message the regex fallback would call an InputError ("truncated"); the line says ShapeError.
    msg = "MatMul node 'mm': inner dims 3 and 4 differ (the file is truncated?)"
    cli = stand_in_cli(tmp_path, ["flopwise: error: " + msg, '{"error":"ShapeError","message":"' + msg + '"}'], 2)
    monkeypatch.setenv("FLOPWISE_CLI", cli)
    from flopwise._cli import run_cli
    with pytest.raises(flopwise.ShapeError) as e:
        run_cli(["model.pt"])
    assert str(e.value) == msg
    # An older CLI, without the line: the class is guessed from the message.
    monkeypatch.setenv("FLOPWISE_CLI", stand_in_cli(tmp_path, ["flopwise: error: " + msg], 2))
    with pytest.raises(flopwise.InputError) as e:
        run_cli(["model.pt"])
    assert str(e.value) == msg
