#!/usr/bin/env bash
# bench/run_scale.sh — time and peak memory of flopwise from 1 k to 1 M nodes, per report format (issue 10).
#
# Usage: bench/run_scale.sh [BUILD_DIR] [RUNS] [SIZES]
#   BUILD_DIR  Release build (default build-bench; configured and built here when missing)
#   RUNS       runs per cell, median reported (default 5; sizes >= 1 M run once)
#   SIZES      node counts of the synthetic decoder (default "1000 10000 100000 1000000")
# Models: bench/gen_graph writes graph-only decoders (torch.onnx-style scopes /model/layers.N/self_attn/
# q_proj/MatMul, 42 nodes and 13 scopes per layer, dynamic batch and seq) of each size, plus the issue's
# MatMul+Add+Relu chain (one scope per block) at 40 k and 160 k nodes, and the bundled models.
# Prints, per model and format: median wall seconds, peak RSS (MiB, /usr/bin/time %M), and for the
# decoders the growth factor per 10x nodes (the goal is about 10x: linear). And one `flopwise diff` of two
# decoders of each size up to 100 k (B one layer longer), the goal being <= 3 s at 100 k.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${1:-$ROOT/build-bench}"
RUNS="${2:-5}"
SIZES="${3:-1000 10000 100000 1000000}"

if [[ ! -x "$BUILD/flopwise" || ! -x "$BUILD/bench/gen_graph" ]]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DFLOPWISE_BUILD_TESTS=OFF >/dev/null
  cmake --build "$BUILD" -j"$(nproc)" --target flopwise gen_graph >/dev/null
fi
FW="$BUILD/flopwise"
GEN="$BUILD/bench/gen_graph"
MD="$BUILD/scale-models"
mkdir -p "$MD"

model() {  # KIND NODES -> path (generated once)
  local f="$MD/$1_$2.onnx"
  [[ -f "$f" ]] || "$GEN" "$1" "$2" "$f" >/dev/null
  echo "$f"
}

# cell CMD...: median wall seconds and max peak RSS MiB over the runs ("WALL RSS")
cell() {
  local n=$RUNS walls=() rss=0 out
  [[ "$*" == *_1000000.onnx* ]] && n=1
  for ((i = 0; i < n; i++)); do
    /usr/bin/time -o "$MD/time.out" -f '%e %M' "$@" >/dev/null 2>&1 || true
    out=$(tail -1 "$MD/time.out")
    walls+=("${out% *}")
    ((${out#* } > rss)) && rss=${out#* }
  done
  local med
  med=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "$med $((rss / 1024))"
}

printf '%-28s %9s %7s' "model" "nodes" "scopes"
for fmt in text json csv markdown; do printf ' %14s' "$fmt s/MiB"; done
printf '\n'
row() {  # LABEL FILE
  local j nodes scopes
  j=$("$FW" "$2" --format csv | tail -n +2 | wc -l)
  nodes=$j
  scopes=$("$FW" "$2" --format json | grep -c '"label"' || true)
  printf '%-28s %9s %7s' "$1" "$nodes" "$scopes"
  for fmt in text json csv markdown; do
    read -r w r < <(cell "$FW" "$2" --format "$fmt")
    printf ' %8s/%-5s' "$w" "$r"
    echo "$1 $fmt $w" >>"$MD/last.txt"
  done
  printf '\n'
}
: >"$MD/last.txt"
for m in "$ROOT"/models/resnet18.onnx "$ROOT"/models/bert.onnx "$ROOT"/models/gpt2.onnx; do row "$(basename "$m")" "$m"; done
# torchvision's ResNet-50 and Swin-T, graph-only (the issue's 5 ms and 20 ms goals); needs python3-onnx.
for tv in resnet50 swin_t; do
  [[ -f "$MD/$tv.onnx" ]] || /usr/bin/python3 "$ROOT/bench/export_torchvision.py" "$tv" "$MD" >/dev/null 2>&1 || true
  if [[ -f "$MD/$tv.onnx" ]]; then row "$tv (torchvision)" "$MD/$tv.onnx"; fi
done
row "chain 40k (issue table)" "$(model chain 40000)"
row "chain 160k (issue table)" "$(model chain 160000)"
for n in $SIZES; do row "decoder $n" "$(model decoder "$n")"; done

echo
echo "growth per 10x nodes (decoder, text/json):"
awk '/^decoder/ {t[$2" "$3]=$4} END {
  split("1000 10000 100000 1000000", s, " ");
  for (i = 1; i < 4; i++) {
    a = s[i]; b = s[i + 1];
    if ((a" text") in t && (b" text") in t && t[a" text"] > 0)
      printf "  %s -> %s: text x%.1f, json x%.1f\n", a, b, t[b" text"] / t[a" text"], t[b" json"] / (t[a" json"] > 0 ? t[a" json"] : 1);
  }
}' "$MD/last.txt"

echo
echo "flopwise diff A B (B one layer longer):"
for n in $SIZES; do
  ((n > 100000)) && continue
  read -r w r < <(cell "$FW" diff "$(model decoder "$n")" "$(model decoder $((n + 42)))")
  echo "  decoder $n: ${w} s, ${r} MiB"
done
