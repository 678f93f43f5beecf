#!/usr/bin/env bash
# bench/run_bench.sh — time flopwise on resnet50, graph-only (external data) vs inline weights, against
# reading the file's bytes once (cat) and ONNX's own load + shape inference (bench/onnx_infer_bench).
#
# Usage: bench/run_bench.sh [BUILD_DIR] [RUNS]      (defaults: build-bench, 21 runs; warm page cache)
# Builds flopwise and onnx_infer_bench in BUILD_DIR if needed, generates resnet50 with
# models/generate.py into BUILD_DIR/bench-models/{external,inline}/ (needs /usr/bin/python3 with torch),
# then prints each command's median wall time over RUNS runs (whole process, start to exit) and ratios.
# Targets: graph-only < 30 ms; inline <= cat of the inline file (flopwise skips the weight bytes).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build-bench}"
RUNS="${2:-21}"
PY=/usr/bin/python3

if [[ ! -x "$BUILD/flopwise" || ! -x "$BUILD/bench/onnx_infer_bench" ]]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DFLOPWISE_BUILD_BENCH=ON >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target flopwise onnx_infer_bench >/dev/null
fi
FW="$BUILD/flopwise"
OI="$BUILD/bench/onnx_infer_bench"

MD="$BUILD/bench-models"
EXT="$MD/external/resnet50.onnx"
INL="$MD/inline/resnet50.onnx"
[[ -f "$EXT" && -f "$EXT.data" ]] || "$PY" "$ROOT/models/generate.py" --only resnet50 --out "$MD/external" 2>/dev/null
[[ -f "$INL" ]] || "$PY" "$ROOT/models/generate.py" --only resnet50 --inline --out "$MD/inline" 2>/dev/null

# median_ms CMD...: runs CMD (stdout discarded) RUNS times after one warm-up and prints
# "WALL CPU": the median wall ms and the median user+sys ms (bash's `time`, children included).
# CPU is the steadier figure on a busy machine; wall is what the targets are about.
median_ms() {
  "$@" >/dev/null
  local wall=() cpu=() r u s line
  local TIMEFORMAT='%3R %3U %3S'
  for ((i = 0; i < RUNS; i++)); do
    line=$({ time "$@" >/dev/null 2>&1; } 2>&1)
    read -r r u s <<<"$line"
    wall+=("$r")
    cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')")
  done
  local mw mc
  mw=$(printf '%s\n' "${wall[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.1f", 1000 * a[int((NR+1)/2)]}')
  mc=$(printf '%s\n' "${cpu[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.1f", 1000 * a[int((NR+1)/2)]}')
  echo "$mw $mc"
}

size() { stat -c %s "$1"; }
echo "resnet50 graph-only: $(size "$EXT") bytes (+ $(size "$EXT.data") bytes of external data, not read)"
echo "resnet50 inline:     $(size "$INL") bytes"
echo "median ms over $RUNS runs (whole process, warm page cache; cpu = user + sys):"

read -r fw_ext fw_ext_c < <(median_ms "$FW" "$EXT" -d batch=1)
read -r fw_inl fw_inl_c < <(median_ms "$FW" "$INL" -d batch=1)
read -r cat_ext cat_ext_c < <(median_ms cat "$EXT")
read -r cat_inl cat_inl_c < <(median_ms cat "$INL")
read -r oi_ext oi_ext_c < <(median_ms "$OI" "$EXT")
read -r oi_inl oi_inl_c < <(median_ms "$OI" "$INL")
read -r true_w true_c < <(median_ms /bin/true)

row() { printf '%-44s %9s %9s %9s %9s\n' "$@"; }
row "command" "ext wall" "ext cpu" "inl wall" "inl cpu"
row "flopwise MODEL -d batch=1 (text report)" "$fw_ext" "$fw_ext_c" "$fw_inl" "$fw_inl_c"
row "cat MODEL > /dev/null (read bytes once)" "$cat_ext" "$cat_ext_c" "$cat_inl" "$cat_inl_c"
row "onnx_infer_bench (ONNX load + InferShapes)" "$oi_ext" "$oi_ext_c" "$oi_inl" "$oi_inl_c"
row "true (process start-up floor)" "$true_w" "$true_c" "" ""
awk -v a="$fw_ext" -v b="$fw_inl" -v c="$cat_inl" -v d="$oi_ext" -v e="$oi_inl" -v bc="$fw_inl_c" -v cc="$cat_inl_c" 'BEGIN {
  printf "ratios (wall): flopwise inline / cat inline = %.2f; flopwise / onnx_infer_bench = %.2f (external), %.3f (inline)\n", b / c, a / d, b / e
  printf "ratio (cpu): flopwise inline / cat inline = %.2f\n", bc / cc
  printf "targets: graph-only < 30 ms wall: %s (%.1f ms); inline <= cat inline (wall): %s\n", (a < 30 ? "met" : "MISSED"), a, (b <= c ? "met" : "MISSED")
}'
echo "in-process phases of the yardstick:"
"$OI" "$EXT" | sed 's/^/  external: /'
"$OI" "$INL" | sed 's/^/  inline:   /'
if [[ -x /usr/bin/time ]]; then
  echo "peak RSS (one run, /usr/bin/time -f %M):"
  for f in "$EXT" "$INL"; do
    printf '  flopwise %-10s %s KiB\n' "$(basename "$(dirname "$f")")" "$(/usr/bin/time -f %M "$FW" "$f" -d batch=1 2>&1 >/dev/null | tail -1)"
    printf '  onnx     %-10s %s KiB\n' "$(basename "$(dirname "$f")")" "$(/usr/bin/time -f %M "$OI" "$f" 2>&1 >/dev/null | tail -1)"
  done
fi
