"""python3 -m flopwise ARGS (and the `flopwise` command pip installs): the flopwise CLI with the same
arguments."""
import os
import sys

from ._cli import cli_path


def main():
    exe = cli_path()
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    main()
