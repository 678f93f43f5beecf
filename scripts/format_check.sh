#!/usr/bin/env bash
# scripts/format_check.sh [--fix]: every C++ file of the tree (src, include, shape_inference, tests, bench,
# tools) as .clang-format (Google, 110 columns) writes it, with Debian's clang-format 14. Lists the files that
# differ and exits 1; --fix rewrites them. CI runs the check (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
CF=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z "$CF" ]]; then
  source scripts/packages.sh
  ensure_packages clang-format-14
  CF=clang-format-14
fi
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'include/*.h' 'shape_inference/*.cc' 'shape_inference/*.h' \
  'tests/*.cc' 'tests/*.h' 'bench/*.cc' 'bench/*.h' 'tools/*.cc')
if [[ "${1:-}" == "--fix" ]]; then
  "$CF" -i "${files[@]}"
  echo "format_check: formatted ${#files[@]} files"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$CF" "$f" | cmp -s - "$f" || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "format_check: ${#bad[@]} of ${#files[@]} files differ from .clang-format (scripts/format_check.sh --fix):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format_check: ${#files[@]} files as .clang-format writes them"
