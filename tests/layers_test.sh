#!/usr/bin/env bash
# tests/layers_test.sh — the layer rule of cmake/layers.cmake holds on this tree, and the check catches a
# violation: a copy of the sources with one lower-layer file including a higher layer's header (cost ->
# writers, shape inference -> analyses, a static analysis -> measured time), or forward-declaring a higher
# layer's type, must be refused, naming the file and both layers.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cmake -DROOT="$ROOT" -P "$ROOT/cmake/layers.cmake"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$ROOT/src" "$ROOT/include" "$ROOT/shape_inference" "$tmp/"
# FILE SED-EDIT WHAT EXPECTED: a copy of the tree with FILE edited must be refused, the message naming FILE and
# EXPECTED.
refused_after() {
  local copy="$tmp/case"
  rm -rf "$copy" && mkdir "$copy" && cp -r "$tmp/src" "$tmp/include" "$tmp/shape_inference" "$copy/"
  sed -i "$2" "$copy/$1"
  if out=$(cmake -DROOT="$copy" -P "$ROOT/cmake/layers.cmake" 2>&1); then
    echo "layers_test: $1 $3 was not refused"
    exit 1
  fi
  out=$(tr -s " \n" " " <<<"$out")  # CMake wraps its messages
  grep -q "$1" <<<"$out" && grep -q "$4" <<<"$out" ||
    { echo "layers_test: unexpected message for $1: $out"; exit 1; }
}
expect_refused() {  # FILE HEADER LAYER
  refused_after "$1" "0,/^#include/s|^#include|#include \"flopwise/$2\"\n#include|" "including flopwise/$2" \
    "higher layer $3"
}
expect_refused src/cost/cost.cc writers.h writers
expect_refused shape_inference/helpers.cc llm.h analyses
expect_refused src/ir/ir.cc ops.h shape
expect_refused src/analysis/llm.cc writers.h writers
expect_refused src/analysis/roofline.cc torch_trace.h measured
# A forward declaration names the type without its header: the same dependency, refused the same way (cost.h
# declared seven analyses-layer types before its Report lost them, issue 57).
expect_declared_refused() {  # FILE TYPE LAYER
  refused_after "$1" "0,/^namespace flopwise {/s|^namespace flopwise {|namespace flopwise {\nstruct $2;|" \
    "declaring $2" "declares $2 of the higher layer $3"
}
expect_declared_refused include/flopwise/cost.h TrainingReport analyses
expect_declared_refused src/cost/cost.cc RooflineReport analyses
expect_declared_refused src/analysis/check.cc RunReport measured
echo "layers_test: the rule holds and eight violations are refused"
