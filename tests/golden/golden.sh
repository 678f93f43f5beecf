#!/usr/bin/env bash
# tests/golden/golden.sh FLOPWISE [--update]: the reports of every bundled model (models/*.onnx), in every
# format and under a few option sets, must stay byte-identical across refactors (issue 10). Their SHA-256
# sums are in reports.sha256 next to this script; a changed output is listed by model, format and options.
# A deliberate change of output: rerun with --update and commit the new sums with the change that made
# them, saying why. These are regression snapshots of the tool's own output, not independent figures:
# the numbers themselves are pinned by the unit tests against hand formulas and peer tools.
#
# Every JSON document names the version that wrote it ("flopwise_version", after "schema"). A release changes
# that member and nothing else, so the sums are of the reports with the member taken out (the bytes the
# reports had before it existed), and the member is checked apart: each JSON report here must carry this
# build's version (`flopwise --version`).
set -uo pipefail
FW="$1"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SUMS="$HERE/reports.sha256"
cd "$ROOT"
VERSION=$("$FW" --version | cut -d' ' -f2)
OUT=$(mktemp)
UNVERSIONED=$(mktemp)
trap 'rm -f "$OUT" "$UNVERSIONED"' EXIT
without_version() { perl -0pe 's/"flopwise_version": ?"[^"]*",\s*//g'; }
# report_sum LABEL COMMAND...: "SUM  LABEL" of the command's output (stdout and stderr) without its version;
# a JSON report (-f json) that lacks this build's version is added to $UNVERSIONED.
report_sum() {
  local label="$1"
  shift
  "$@" >"$OUT" 2>&1
  if [[ " $label " == *" -f json "* ]] && ! grep -q "\"flopwise_version\": \"$VERSION\"" "$OUT"; then
    echo "$label" >>"$UNVERSIONED"
  fi
  echo "$(without_version <"$OUT" | sha256sum | cut -d' ' -f1)  $label"
}
actual=$(
  for m in models/*.onnx; do
    for f in text json csv markdown; do
      for opts in "" "-d batch=2 -d seq=7" "--convention deepspeed"; do
        # shellcheck disable=SC2086
        report_sum "$m -f $f${opts:+ $opts}" "$FW" "$m" -f "$f" $opts
      done
    done
  done
  # The other formats, analyses and commands, on models that exercise them: a layout change must not move a
  # byte of any of them either.
  while IFS= read -r opts; do
    # shellcheck disable=SC2086
    report_sum "$opts" "$FW" $opts
  done <"$HERE/extra.args"
)
if [[ -s "$UNVERSIONED" ]]; then
  echo "golden: these JSON reports lack \"flopwise_version\": \"$VERSION\":"
  cat "$UNVERSIONED"
  exit 1
fi
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
# The heap's helper thread and huge pages (src/cli/heap.cc) must not change a byte: each JSON report again
# without them.
for m in models/*.onnx; do
  with=$("$FW" "$m" -f json 2>&1 | sha256sum)
  without=$(FLOPWISE_PREFAULT=0 MALLOC_CONF=thp:default "$FW" "$m" -f json 2>&1 | sha256sum)
  if [[ "$with" != "$without" ]]; then
    echo "golden: $m -f json differs with FLOPWISE_PREFAULT=0 MALLOC_CONF=thp:default"
    exit 1
  fi
done
echo "golden: $(echo "$actual" | wc -l) reports byte-identical"
