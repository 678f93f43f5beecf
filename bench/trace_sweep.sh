#!/usr/bin/env bash
# bench/trace_sweep.sh BASE NEW [TRACE...] — `flopwise trace` of every trace under models/ (or the ones given)
# and of the two rank directories, in every format (and the text with every row), by two binaries: lists the
# reports that differ; exit 1 if any. For changes that must leave every trace report byte-identical.
set -u
base=$1 new=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 0 ]; then
  mapfile -t inputs < <(find "$root/models" -name '*.json.gz' -path '*trace*' | sort)
  inputs+=("$root/models/traces/hta/backward_thread.json" "$root/models/traces/dlrm" "$root/models/traces/hta")
else
  inputs=("$@")
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
differ=0 reports=0
for t in "${inputs[@]}"; do
  for args in "-f text" "-f json" "-f csv" "-f html" "-f text --depth -1 --top -1"; do
    # shellcheck disable=SC2086
    "$base" trace "$t" $args >"$out/a" 2>&1
    ra=$?
    # shellcheck disable=SC2086
    "$new" trace "$t" $args >"$out/b" 2>&1
    rb=$?
    reports=$((reports + 1))
    if [ $ra -ne $rb ] || ! cmp -s "$out/a" "$out/b"; then
      echo "differs: $t $args (exit $ra / $rb)"
      differ=$((differ + 1))
    fi
  done
done
echo "$reports reports, $differ differ"
[ $differ -eq 0 ]
