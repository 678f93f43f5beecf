#!/usr/bin/env python3
"""scripts/readme_lists.py FLOPWISE [--check]: the README's lists of conventions, devices and formats, written
from the tool's own tables (`flopwise --list conventions|devices|formats`, which reads conventions.def,
hardware.def and src/writers/formats.cc) between the markers <!--list:NAME--> and <!--/list-->. With --check,
exits 1 and names each list that differs instead of writing (a test runs it)."""
import pathlib
import re
import subprocess
import sys


def main():
    fw, check = sys.argv[1], "--check" in sys.argv[2:]
    readme = pathlib.Path(__file__).resolve().parent.parent / "README.md"
    text = readme.read_text()
    lists = {}
    for name in ("conventions", "devices", "formats"):
        out = subprocess.run([fw, "--list", name], check=True, capture_output=True, text=True).stdout
        lists[name] = ", ".join(f"`{n}`" for n in out.split())
    stale = []

    def fill(m):
        want = lists[m.group(1)]
        if m.group(2) != want:
            stale.append(m.group(1))
        return f"<!--list:{m.group(1)}-->{want}<!--/list-->"

    new = re.sub(r"<!--list:(\w+)-->(.*?)<!--/list-->", fill, text)
    found = set(re.findall(r"<!--list:(\w+)-->", text))
    missing = sorted(set(lists) - found)
    if missing:
        print(f"readme_lists: README.md has no list for {', '.join(missing)}")
        sys.exit(1)
    if check:
        if stale:
            print(f"readme_lists: README.md's lists of {', '.join(stale)} differ from the tables: "
                  f"run scripts/readme_lists.py {fw}")
            sys.exit(1)
        print("readme_lists: the README's lists match the tables")
        return
    readme.write_text(new)
    print(f"readme_lists: {len(stale)} list(s) rewritten")


if __name__ == "__main__":
    main()
