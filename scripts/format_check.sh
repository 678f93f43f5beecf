#!/usr/bin/env bash
# scripts/format_check.sh [--fix]: every C++ file of the tree (src, include, shape_inference, tests, bench,
# python, tools) as .clang-format (Google, 110 columns) writes it, with Debian's clang-format 14; each opening
# on its path line (`// src/cost/cost.cc — what this file is`, the path from the repository root); none over
# 900 lines (split it by what its parts own). Lists the files that fail a check and exits 1; --fix rewrites
# the ones clang-format would change (path lines and splits are done by hand). CI runs the check (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
CF=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z "$CF" ]]; then
  source scripts/packages.sh
  ensure_packages clang-format-14
  CF=clang-format-14
fi
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'include/*.h' 'shape_inference/*.cc' 'shape_inference/*.h' \
  'tests/*.cc' 'tests/*.h' 'bench/*.cc' 'bench/*.h' 'python/*.cc' 'python/*.h' 'tools/*.cc')
max_lines=900
if [[ "${1:-}" == "--fix" ]]; then
  "$CF" -i "${files[@]}"
  echo "format_check: formatted ${#files[@]} files"
  exit 0
fi
bad=() no_path=() long=()
for f in "${files[@]}"; do
  "$CF" "$f" | cmp -s - "$f" || bad+=("$f")
  IFS= read -r first <"$f" || true
  [[ "$first" == "// $f" || "$first" == "// $f — "* ]] || no_path+=("$f")
  n=$(wc -l <"$f")
  ((n <= max_lines)) || long+=("$f ($n lines)")
done
if ((${#bad[@]})); then
  echo "format_check: ${#bad[@]} of ${#files[@]} files differ from .clang-format (scripts/format_check.sh --fix):"
  printf '  %s\n' "${bad[@]}"
fi
if ((${#no_path[@]})); then
  echo "format_check: ${#no_path[@]} files do not open on their path line (first line \`// <path from the" \
    "repository root> — what the file is\`):"
  printf '  %s\n' "${no_path[@]}"
fi
if ((${#long[@]})); then
  echo "format_check: ${#long[@]} files are over $max_lines lines:"
  printf '  %s\n' "${long[@]}"
fi
((${#bad[@]} + ${#no_path[@]} + ${#long[@]} == 0)) || exit 1
echo "format_check: ${#files[@]} files as .clang-format writes them, each on its path line, none over $max_lines lines"
