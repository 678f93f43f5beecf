"""examples/notebook.py runs to the end (profile, table, diff, sweep, plot when matplotlib is there)."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT

pytest.importorskip("torch")


def test_notebook_example(tmp_path):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "notebook.py"), str(tmp_path)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode()
    assert p.returncode == 0, out
    assert "flopwise static profile" in out and "MACs as a formula:" in out
