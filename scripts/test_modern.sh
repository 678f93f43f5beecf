#!/usr/bin/env bash
# scripts/test_modern.sh [BUILD]: the tests that need torch 2.x, through the modern root (scripts/modern_torch.sh,
# made once): torch 2.14 exports every fixture of models/pt2/generate.py afresh, with its oracles (torch's
# parameter count, dispatched contraction MACs, FlopCounterMode), into BUILD/pt2_fresh, and the built tests
# analyse those programs, not the committed ones, against them; and a ResNet-18 exported by the Python
# package's own path (flopwise.export_program), against torchvision's figures. BUILD defaults to build/.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
rm -rf "$BUILD/pt2_fresh"
bash scripts/modern_torch.sh python3 models/pt2/generate.py --out "$BUILD/pt2_fresh"
bash scripts/modern_torch.sh python3 models/pt2/py_export.py "$BUILD/pt2_fresh"  # the Python package's export
FLOPWISE_PT2_DIR="$PWD/$BUILD/pt2_fresh" "$BUILD/tests/flopwise_tests" --test-case='pt2:*'
# The Python package built in the root for its Python and run on live torch 2.x modules (tests/python_modern).
bash scripts/modern_python.sh
