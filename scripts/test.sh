#!/usr/bin/env bash
# Set-up (packages + build), then the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Test-only: Debian's chromium, in which the HTML report is opened headless (tests/test_html.cc); python3-onnx,
# with which models/silero_expect.py reads the public silero-vad files' arrays (tests/test_shipped.cc); pytest and
# pandas for the Python package's tests (tests/python).
source scripts/packages.sh
ensure_packages chromium python3-onnx python3-pytest python3-pandas
ctest --test-dir build --output-on-failure
