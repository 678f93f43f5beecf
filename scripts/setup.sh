#!/usr/bin/env bash
# Installs what flopwise needs (Debian packages) and builds it into build/. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(cmake g++ make libonnx-dev libprotobuf-dev zlib1g-dev protobuf-compiler libeigen3-dev doctest-dev libcli11-dev
      nlohmann-json3-dev libtomlplusplus-dev libonnx-testdata libbenchmark-dev libtorch-dev python3-torch python3-torchvision
      libjemalloc2 libjemalloc-dev pybind11-dev python3-dev libsimdjson-dev)
source scripts/packages.sh
ensure_packages "${PKGS[@]}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
