#!/bin/bash
# bench/gpu/pack_deps.sh — on a Debian bookworm machine with the project's packages installed
# (scripts/setup.sh), copies what a build on the GPU machine needs besides LibTorch into .gpu/ (ignored by
# git; carried to the device): the files of Debian's protobuf, ONNX, nlohmann-json, CLI11 and toml++
# packages under .gpu/deps/usr, and Debian torch 1.13's small bundled archives under .gpu/pt113 (from
# BUILD/pt_models), to check that a LibTorch 2.x loads them.
set -eu
BUILD=${1:-build}
cd "$(dirname "$0")/../.."
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >>.git/info/exclude
rm -rf .gpu/deps && mkdir -p .gpu/deps .gpu/pt113
for p in libprotobuf-dev protobuf-compiler libprotoc32 libprotobuf32 libprotobuf-lite32 libonnx-dev libonnx1 \
  nlohmann-json3-dev libcli11-dev libtomlplusplus-dev libtomlplusplus3; do
  dpkg -L $p | grep -v '/share/doc\|/share/man\|/share/lintian' | while read -r f; do
    if [ -f "$f" ] || [ -L "$f" ]; then cp -a --parents "$f" .gpu/deps/ 2>/dev/null || true; fi
  done
done
# ONNX's exported targets name libraries of other packages (onnxifi): CMake refuses a config whose files
# are missing.
grep -o '${_IMPORT_PREFIX}/[^"]*' .gpu/deps/usr/lib/x86_64-linux-gnu/cmake/ONNX/ONNXTargets-*.cmake |
  sed 's|${_IMPORT_PREFIX}|/usr|' | sort -u | while read -r f; do
  [ -e "$f" ] && cp -a --parents "$f" .gpu/deps/ && [ -L "$f" ] && cp -a --parents "$(readlink -f "$f")" .gpu/deps/
  true
done
rm -f .gpu/deps/usr/lib/x86_64-linux-gnu/libprotobuf.a  # the CLI links the lite runtime
for f in bert.trace bert.script gpt2.trace hf_bert.trace misc_ops.trace data_if.script raises.script custom_op; do
  cp "$BUILD/pt_models/$f.pt" .gpu/pt113/
done
du -sh .gpu/*
