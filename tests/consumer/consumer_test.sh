#!/usr/bin/env bash
# tests/consumer/consumer_test.sh BUILD_DIR SOURCE_DIR — installs BUILD_DIR into a temporary prefix
# (cmake --install), builds tests/consumer against it with find_package(flopwise), and checks that both the
# consumer (flopwise::analyse) and the installed CLI give ResNet-18's MACs at batch 1 as
# models/resnet18.expect.json records them (torch forward hooks on every Conv2d/Linear, not flopwise), and
# that the installed CLI finds its TorchScript plugin in lib/flopwise/ when the build has one.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

expected=$(sed -n 's/^ *"macs": *\([0-9][0-9]*\),*$/\1/p' "$src/models/resnet18.expect.json")
[ -n "$expected" ] || { echo "no \"macs\" in models/resnet18.expect.json"; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
cmake -S "$src/tests/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/consumer" -j2 >/dev/null

got=$("$tmp/consumer/consumer" "$src/models/resnet18.onnx" batch=1)
echo "consumer: $got (expected macs $expected)"
[ "$got" = "macs $expected" ] || { echo "FAIL: consumer's MACs differ"; exit 1; }

cli=$("$prefix/bin/flopwise" "$src/models/resnet18.onnx" --dim batch=1 --format json | tr -d ' \n' |
      sed -n 's/.*"totals":{[^}]*"macs":\([0-9]*\).*/\1/p')
echo "installed CLI: macs $cli"
[ "$cli" = "$expected" ] || { echo "FAIL: the installed CLI's MACs differ"; exit 1; }

# The plugin, when built, is installed where the CLI looks (../lib/flopwise/ from bin/): a zip that is no
# TorchScript archive then fails in LibTorch, not with "plugin not found".
if [ -e "$build/libflopwise_torch.so" ]; then
  [ -f "$prefix/lib/flopwise/libflopwise_torch.so" ] || { echo "FAIL: plugin not installed"; exit 1; }
  [ -x "$prefix/lib/flopwise/flopwise-runtime" ] || { echo "FAIL: flopwise-runtime not installed"; exit 1; }
  printf 'PK\003\004not a torchscript archive' >"$tmp/bad.pt"
  msg=$("$prefix/bin/flopwise" "$tmp/bad.pt" 2>&1 || true)
  echo "installed CLI on a bad .pt: $msg"
  case $msg in *"not found"*|*"not built"*) echo "FAIL: the installed CLI does not find its plugin"; exit 1 ;; esac
fi
# The Python package, when built, is installed too and runs the installed CLI for what it does not do
# in-process; its analysis of the same file gives the same MACs.
py=$(sed -n 's/^FLOPWISE_PYTHON_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
pkg=$prefix/lib/python3/dist-packages
if [ -n "$py" ] && [ -d "$pkg/flopwise" ]; then
  pyout=$(cd "$tmp" && PYTHONPATH="$pkg" "$py" -c "
import flopwise, flopwise._cli as c
r = flopwise.analyze('$src/models/resnet18.onnx', dims={'batch': 1})
print(r.totals.macs, c.cli_path())")
  echo "installed Python package: $pyout"
  [ "$pyout" = "$expected $prefix/bin/flopwise" ] || { echo "FAIL: the installed Python package"; exit 1; }
fi
echo "ok"
