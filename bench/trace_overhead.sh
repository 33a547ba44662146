#!/usr/bin/env bash
# What a trace costs: for 64-rank workloads with every rank traced, the trace's size and how much it
# adds to `paratwin simulate`'s wall time. Runs with and without --trace alternate (so that a load on
# the machine weighs on both alike), REPEATS times each, and a third run writing it gzip-compressed
# (--trace FILE.json.gz); the medians and their ratios are printed.
# Usage: bench/trace_overhead.sh [PARATWIN] [REPEATS]   (defaults: build/cli/paratwin, 5)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pt=${1:-$root/build/cli/paratwin}
repeats=${2:-5}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# wall COMMAND...: seconds the command took (it must succeed).
wall() {
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null 2>&1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-28s %6s %10s %9s %9s %9s %9s %9s %9s\n' workload ranks "size (MiB)" ".gz (MiB)" "no trace" "trace" "trace.gz" overhead ".gz over"
for spec in "$root/tests/e2e/good/gpt-80b-frontier-64.json frontier" \
            "$root/workloads/examples/gpt-5b-perlmutter-64-axonn.json perlmutter"; do
  read -r workload machine <<< "$spec"
  args=(simulate -w "$workload" -m "$machine" --no-progress)
  plain=() traced=() zipped=()
  for ((i = 0; i < repeats; i++)); do
    plain+=("$(wall "$pt" "${args[@]}")")
    traced+=("$(wall "$pt" "${args[@]}" --trace "$tmp/t.json" --trace-ranks all)")
    zipped+=("$(wall "$pt" "${args[@]}" --trace "$tmp/t.json.gz" --trace-ranks all)")
  done
  p=$(printf '%s\n' "${plain[@]}" | median)
  t=$(printf '%s\n' "${traced[@]}" | median)
  z=$(printf '%s\n' "${zipped[@]}" | median)
  ranks=$(grep -c '"name":"process_name","args":{"name":"rank ' "$tmp/t.json")
  mib() { awk -v s="$(stat -c %s "$1")" 'BEGIN { print s / 1048576 }'; }
  over() { awk -v p="$p" -v t="$1" 'BEGIN { print (t / p - 1) * 100 }'; }
  printf '%-28s %6d %10.1f %9.1f %8.2fs %8.2fs %8.2fs %8.1f%% %8.1f%%\n' "$(basename "$workload" .json)" "$ranks" \
    "$(mib "$tmp/t.json")" "$(mib "$tmp/t.json.gz")" "$p" "$t" "$z" "$(over "$t")" "$(over "$z")"
done
echo "(medians of $repeats runs each, alternating; $(nproc) cores)"
