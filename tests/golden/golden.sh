#!/usr/bin/env bash
# tests/golden/golden.sh FLOPWISE [--update]: the reports of every bundled model (models/*.onnx), in every
# format and under a few option sets, must stay byte-identical across refactors (issue 10). Their SHA-256
# sums are in reports.sha256 next to this script; a changed output is listed by model, format and options.
# A deliberate change of output: rerun with --update and commit the new sums with the change that made
# them, saying why. These are regression snapshots of the tool's own output, not independent figures:
# the numbers themselves are pinned by the unit tests against hand formulas and peer tools.
set -uo pipefail
FW="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SUMS="$HERE/reports.sha256"
cd "$ROOT"
actual=$(
  for m in models/*.onnx; do
    for f in text json csv markdown; do
      for opts in "" "-d batch=2 -d seq=7" "--convention deepspeed"; do
        # shellcheck disable=SC2086
        sum=$("$FW" "$m" -f "$f" $opts 2>&1 | sha256sum | cut -d' ' -f1)
        echo "$sum  $m -f $f${opts:+ $opts}"
      done
    done
  done
  # The other formats, analyses and commands, on models that exercise them: a layout change must not move a
  # byte of any of them either.
  while IFS= read -r opts; do
    # shellcheck disable=SC2086
    sum=$("$FW" $opts 2>&1 | sha256sum | cut -d' ' -f1)
    echo "$sum  $opts"
  done <"$HERE/extra.args"
)
if [[ "${2:-}" == "--update" ]]; then
  echo "$actual" > "$SUMS"
  echo "golden: wrote $(wc -l < "$SUMS") sums to $SUMS"
  exit 0
fi
changed=$(diff <(echo "$actual") "$SUMS" | grep '^<' | cut -c69-)
if [[ -n "$changed" ]]; then
  echo "golden: these reports changed (run the previous build on them to see how):"
  echo "$changed"
  exit 1
fi
# The heap prefault thread (src/cli/prefault.cc) must not change a byte: each JSON report again without it.
for m in models/*.onnx; do
  with=$("$FW" "$m" -f json 2>&1 | sha256sum)
  without=$(FLOPWISE_PREFAULT=0 "$FW" "$m" -f json 2>&1 | sha256sum)
  if [[ "$with" != "$without" ]]; then
    echo "golden: $m -f json differs with FLOPWISE_PREFAULT=0"
    exit 1
  fi
done
echo "golden: $(echo "$actual" | wc -l) reports byte-identical"
