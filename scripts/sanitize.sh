#!/usr/bin/env bash
# Hostile input under the sanitizers (issue 16), as CI runs it after the test suite: the ONNX path built with
# clang, AddressSanitizer and UndefinedBehaviorSanitizer (no LibTorch: that path runs contained, see README);
# the doctest suite's ONNX cases under it; the regression corpus replayed through the libFuzzer target; then
# FUZZ_SECONDS (default 180) of fuzzing from the bundled models. Any sanitizer report fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS="${FUZZ_SECONDS:-180}"
source scripts/packages.sh
ensure_packages clang libclang-rt-14-dev python3-pytest
B=build-asan
# A unity build (FLOPWISE_UNITY, as scripts/example.sh builds the CLI): faster here too, and the one CI build
# that proves no two files of a library clash in their anonymous namespaces.
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DFLOPWISE_SANITIZE=ON \
      -DFLOPWISE_UNITY=ON -DFLOPWISE_FUZZ=ON -DFLOPWISE_WITH_TORCH=OFF -DFLOPWISE_BUILD_BENCH=OFF -DFLOPWISE_PYTHON=OFF >/dev/null
cmake --build "$B" -j"$(nproc)" --target flopwise flopwise_tests flopwise_fuzz flopwise_pt2_tests flopwise_fuzz_pt2
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The suite's cases on the ONNX path (the TorchScript ones skip themselves without the plugin); the slow
# scale and zoo cases are left to the plain build.
(cd "$B" && ./tests/flopwise_tests -tce="*torchscript*,*zoo*,*bundled .pt*" )
# PyTorch traces: the bad ones (tests/trace/test_bad_traces.py) and every real one read, attributed and priced
# (through the aten table, src/aten) under the sanitizers.
FLOPWISE_CLI="$B"/flopwise /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/trace/test_bad_traces.py
for t in models/gpu/traces/*.gz models/traces/hta/*.json*; do "$B"/flopwise trace "$t" >/dev/null; done
# The training step (--train, with --freeze, --checkpoint, --fit, and diff / check on it) on the bundled ONNX
# models and the shipped ones (symbolic dims, and bound).
for m in models/*.onnx models/shipped/*.onnx; do
  "$B"/flopwise "$m" --train --freeze 'layer1*' --checkpoint 'h.0*' --fit 24GB -f json >/dev/null
done
"$B"/flopwise models/gpt2.onnx --train --dim batch=2 --dim seq=16 -f markdown >/dev/null
"$B"/flopwise diff models/resnet18.onnx models/resnet34.onnx --train --dim batch=2 >/dev/null
# The .pt2 path (src/pt2: the reader and the lowering): its tests, its seeds and torch 2.14's archives
# (models/pt2) replayed through the whole path, then a minute of fuzzing from them (the torch 2.14 programs'
# figures are checked by flopwise_tests above, its pt2 cases).
"$B"/tests/flopwise_pt2_tests
"$B"/flopwise_fuzz_pt2 -runs=0 -artifact_prefix="$B"/replay-pt2- tests/fuzz/pt2 models/pt2 >/dev/null
pt2_corpus=$(mktemp -d)
cp tests/fuzz/pt2/* models/pt2/mlp.pt2 models/pt2/hop_*.pt2 "$pt2_corpus"/
"$B"/flopwise_fuzz_pt2 -max_total_time=60 -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$B"/fuzz-pt2- "$pt2_corpus" 2>&1 | tail -5
# Every input that ever failed stays in tests/fuzz/regressions: replayed once each.
"$B"/flopwise_fuzz -runs=0 -artifact_prefix="$B"/replay- tests/fuzz/regressions >/dev/null
# Fuzzing from the bundled models (a copy: libFuzzer adds what it finds to its first corpus directory). The
# 10 s bound of a normal build is 60 s here: the sanitizers slow the tool down 3-6x.
corpus=$(mktemp -d)
cp models/*.onnx models/shipped/*.onnx "$corpus"/
"$B"/flopwise_fuzz -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -timeout=60 -max_len=200000 \
  -artifact_prefix="$B"/fuzz- "$corpus" 2>&1 | tail -40
echo "sanitize: suite, regression corpus and ${FUZZ_SECONDS} s of fuzzing clean"
