#!/usr/bin/env python3
"""scripts/readme_lists.py FLOPWISE [--check]: the documentation's lists of conventions, devices and formats,
written from the tool's own tables (`flopwise --list conventions|devices|formats`, which reads conventions.def,
hardware.def and src/writers/formats.cc) between the markers <!--list:NAME--> and <!--/list-->, in README.md
and every page of docs/. Each list must appear at least once; a marker naming no list is an error. With
--check, exits 1 and names each file and list that differs instead of writing (a test runs it)."""
import pathlib
import re
import subprocess
import sys

MARKER = re.compile(r"<!--list:(\w+)-->(.*?)<!--/list-->")


def main():
    fw, check = sys.argv[1], "--check" in sys.argv[2:]
    root = pathlib.Path(__file__).resolve().parent.parent
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    lists = {}
    for name in ("conventions", "devices", "formats"):
        out = subprocess.run([fw, "--list", name], check=True, capture_output=True, text=True).stdout
        lists[name] = ", ".join(f"`{n}`" for n in out.split())
    found, stale, unknown, rewritten = set(), [], [], []
    for page in pages:
        text = page.read_text()
        rel = page.relative_to(root)
        page_stale = []

        def fill(m):
            name = m.group(1)
            if name not in lists:
                unknown.append(f"{rel}: {name}")
                return m.group(0)
            found.add(name)
            if m.group(2) != lists[name]:
                page_stale.append(name)
            return f"<!--list:{name}-->{lists[name]}<!--/list-->"

        new = MARKER.sub(fill, text)
        if "<!--list:" in MARKER.sub("", text):
            unknown.append(f"{rel}: a <!--list:...--> marker without its <!--/list-->")
        stale += [f"{rel} ({name})" for name in page_stale]
        if page_stale and not check:
            page.write_text(new)
            rewritten.append(str(rel))
    missing = sorted(set(lists) - found)
    if unknown:
        print(f"readme_lists: markers that name no list: {'; '.join(unknown)}")
        sys.exit(1)
    if missing:
        print(f"readme_lists: neither README.md nor docs/ has a list of {', '.join(missing)}")
        sys.exit(1)
    if check:
        if stale:
            print(f"readme_lists: lists that differ from the tables: {', '.join(stale)}: "
                  f"run scripts/readme_lists.py {fw}")
            sys.exit(1)
        print("readme_lists: the documentation's lists match the tables")
        return
    print(f"readme_lists: {len(stale)} list(s) rewritten" + (f" in {', '.join(rewritten)}" if rewritten else ""))


if __name__ == "__main__":
    main()
