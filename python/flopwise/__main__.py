"""python3 -m flopwise ARGS: the flopwise CLI with the same arguments."""
import os
import sys

from ._cli import cli_path

if __name__ == "__main__":
    exe = cli_path()
    os.execv(exe, [exe] + sys.argv[1:])
