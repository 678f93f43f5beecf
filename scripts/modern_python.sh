#!/usr/bin/env bash
# scripts/modern_python.sh [BUILD] — flopwise's Python package as a torch 2.x user gets it: built in the modern
# root (scripts/modern_torch.sh) with that root's compiler and for its Python (3.14 beside torch 2.14), into
# BUILD (default build-modern/, the checkout's), then tests/python_modern run there with pytest: in-process
# flopwise.analyze on live torch 2.x modules (torch.export in the same process, no child, no LibTorch).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-modern}
bash scripts/modern_torch.sh sh -c "
  set -e
  cmake -S . -B '$BUILD' -DCMAKE_BUILD_TYPE=Release -DFLOPWISE_BUILD_TESTS=OFF -DFLOPWISE_BUILD_BENCH=OFF \
    -DFLOPWISE_WITH_TORCH=OFF -DFLOPWISE_UNITY=ON -DFLOPWISE_PYTHON_EXECUTABLE=/usr/bin/python3 >/dev/null
  cmake --build '$BUILD' -j\$(nproc) --target flopwise_python
  PYTHONPATH='$BUILD/python' FLOPWISE_CLI='$PWD/$BUILD/flopwise' python3 -m pytest -q -p no:cacheprovider tests/python_modern
"
