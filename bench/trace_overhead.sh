#!/usr/bin/env bash
# What a trace costs: for 64-rank workloads with every rank traced, the trace's size and how much it
# adds to `paratwin simulate`'s wall time. Runs with and without --trace alternate (so that a load on
# the machine weighs on both alike), REPEATS times each, and a third run writing it gzip-compressed
# (--trace FILE.json.gz); the medians and their ratios are printed.
# Usage: bench/trace_overhead.sh [--markdown FILE] [PARATWIN] [REPEATS]   (defaults: build/cli/paratwin, 5;
# FILE: bench/results/trace_overhead.md, which scripts/readme_tables.sh copies into the README)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=markdown_table.sh
source "$root/bench/markdown_table.sh"
markdown_option "$@"
shift "$markdown_args"
pt=${1:-$root/build/cli/paratwin}
repeats=${2:-5}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
rows=$tmp/rows.md
: > "$rows"

# wall COMMAND...: seconds the command took (it must succeed).
wall() {
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null 2>&1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

commas() { awk -v n="$1" 'BEGIN { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); print s }'; }
printf '%-28s %6s %8s %10s %9s %9s %9s %9s %9s %9s\n' workload ranks slices "size (MiB)" ".gz (MiB)" "no trace" "trace" \
  "trace.gz" overhead ".gz over"
# Each row: the workload, its machine, and how the README's table names it.
for spec in "$root/workloads/examples/gpt-5b-perlmutter-64-axonn.json|perlmutter|GPT-5B, AxoNN 4-D, 64 Perlmutter GPUs (\`gpt-5b-perlmutter-64-axonn\`)" \
            "$root/tests/e2e/good/gpt-80b-frontier-64.json|frontier|GPT-80B, AxoNN 4-D, 64 Frontier GCDs (\`tests/e2e/good/gpt-80b-frontier-64.json\`)"; do
  IFS='|' read -r workload machine label <<< "$spec"
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
  # Slices: every complete event, the ops' on their streams' threads and the idle thread's waits.
  slices=$(grep -c '"ph":"X"' "$tmp/t.json")
  mib() { awk -v s="$(stat -c %s "$1")" 'BEGIN { print s / 1048576 }'; }
  over() { awk -v p="$p" -v t="$1" 'BEGIN { print (t / p - 1) * 100 }'; }
  printf '%-28s %6d %8d %10.1f %9.1f %8.2fs %8.2fs %8.2fs %8.1f%% %8.1f%%\n' "$(basename "$workload" .json)" "$ranks" \
    "$slices" "$(mib "$tmp/t.json")" "$(mib "$tmp/t.json.gz")" "$p" "$t" "$z" "$(over "$t")" "$(over "$z")"
  printf '| %s | %s | %.1f MiB | %.1f MiB | %.2f s | %+.1f %% | %+.1f %% |\n' "$label" "$(commas "$slices")" \
    "$(mib "$tmp/t.json")" "$(mib "$tmp/t.json.gz")" "$p" "$(over "$t")" "$(over "$z")" >> "$rows"
done
echo "(medians of $repeats runs each, alternating; $(nproc) cores)"
write_markdown_table \
  "| workload | slices (ops and waits) | trace | \`.gz\` | wall, no trace | with trace | with \`.gz\` |" \
  "|---|---:|---:|---:|---:|---:|---:|" \
  "$rows"
