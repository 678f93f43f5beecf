#!/usr/bin/env bash
# Set-up of the ONNX path only, then analyse a bundled model (ResNet-18, graph-only ONNX: weights are not
# needed). Installs just what the CLI needs to build (Debian packages: no LibTorch, test or benchmark ones) and
# builds only the flopwise target into build-cli/: -O2 without debug info (-O1 for the cold src/cli), a unity
# build (FLOPWISE_UNITY: each library's files compiled a batch at a time), with Ninja, which compiles a
# library's files while the libraries below it are still being built (bench/README.md, Fresh machine: where
# the minutes went). scripts/setup.sh builds everything into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(cmake g++ make libonnx-dev libprotobuf-dev zlib1g-dev protobuf-compiler nlohmann-json3-dev libcli11-dev libeigen3-dev
      libtomlplusplus-dev libjemalloc-dev ninja-build libsimdjson-dev)
source scripts/packages.sh
ensure_packages "${PKGS[@]}"
GEN=()  # a build-cli/ configured before keeps its generator
[[ -f build-cli/CMakeCache.txt ]] || GEN=(-G Ninja)
cmake -S . -B build-cli "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
      -DFLOPWISE_UNITY=ON -DFLOPWISE_CLI_COMPILE_OPTIONS=-O1 \
      -DFLOPWISE_BUILD_TESTS=OFF -DFLOPWISE_BUILD_BENCH=OFF -DFLOPWISE_WITH_TORCH=OFF >/dev/null
cmake --build build-cli --target flopwise -j"$(nproc)"
./build-cli/flopwise models/resnet18.onnx --dim batch=1 --depth 2 "$@"
