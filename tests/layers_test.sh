#!/usr/bin/env bash
# tests/layers_test.sh — the layer rule of cmake/layers.cmake holds on this tree, and the check catches a
# violation: a copy of the sources with one lower-layer file including a higher layer's header (cost ->
# writers, shape inference -> analyses, a static analysis -> measured time) must be refused, naming the file
# and both layers.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cmake -DROOT="$ROOT" -P "$ROOT/cmake/layers.cmake"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$ROOT/src" "$ROOT/include" "$ROOT/shape_inference" "$tmp/"
expect_refused() {  # FILE HEADER LAYER
  local copy="$tmp/case"
  rm -rf "$copy" && mkdir "$copy" && cp -r "$tmp/src" "$tmp/include" "$tmp/shape_inference" "$copy/"
  sed -i "0,/^#include/s|^#include|#include \"flopwise/$2\"\n#include|" "$copy/$1"
  if out=$(cmake -DROOT="$copy" -P "$ROOT/cmake/layers.cmake" 2>&1); then
    echo "layers_test: $1 including flopwise/$2 was not refused"
    exit 1
  fi
  out=$(tr -s " \n" " " <<<"$out")  # CMake wraps its messages
  grep -q "$1" <<<"$out" && grep -q "higher layer $3" <<<"$out" ||
    { echo "layers_test: unexpected message for $1: $out"; exit 1; }
}
expect_refused src/cost/cost.cc writers.h writers
expect_refused shape_inference/helpers.cc llm.h analyses
expect_refused src/ir/ir.cc ops.h shape
expect_refused src/analysis/llm.cc writers.h writers
expect_refused src/analysis/roofline.cc torch_trace.h measured
echo "layers_test: the rule holds and five violations are refused"
