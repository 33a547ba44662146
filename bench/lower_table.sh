#!/usr/bin/env bash
# The lowering benchmark of the README: build/bench/bench_lower on four large workloads, each in its own
# process (its peak RSS is the workload's own), printed as the README's table.
# Usage: bench/lower_table.sh [--markdown FILE]   (FILE: bench/results/lower.md, which
# scripts/readme_tables.sh copies into the README). Run from anywhere; the workloads are the repository's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench=${PARATWIN_BENCH_LOWER:-$root/build/bench/bench_lower}
[ -x "$bench" ] || { echo "build first: scripts/build.sh release" >&2; exit 1; }
# shellcheck source=markdown_table.sh
source "$root/bench/markdown_table.sh"
markdown_option "$@"
shift "$markdown_args"
rows=$(mktemp); trap 'rm -f "$rows"' EXIT
runs=(
  "GPT-320B, AxoNN 4-D, Frontier:gpt-320b-frontier-32768.json"
  "GPT-80B, AxoNN 4-D:gpt-80b-frontier-8192.json"
  "GPT-3 175B, PTD-P t=8 p=16:gpt3-175b-selene-1024.json"
  "GPT-1T, PTD-P t=8 p=64, 512 micro-batches:gpt-1t-selene-3072.json"
)
for run in "${runs[@]}"; do
  label=${run%%:*} file=${run#*:}
  # "workloads/examples/FILE   RANKS ROLES OPS SECONDS RSS"
  line=$(cd "$root" && "$bench" "workloads/examples/$file" | tail -n 1)
  echo "$line"
  awk -v label="$label" -v file="$file" '
    function commas(n,  s) { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); return s }
    function secs(v) { return v < 0.1 ? sprintf("%.3f s", v) : sprintf("%.2f s", v) }
    function mib(v) { return v < 100 ? sprintf("%.1f MiB", v) : sprintf("%.0f MiB", v) }
    { printf "| %s (`%s`) | %s | %s | %s | %s | %s |\n", label, file, commas($2), commas($3), commas($4), secs($5), mib($6) }' \
    <<<"$line" >> "$rows"
done
write_markdown_table \
  "| workload | ranks | stages | ops per stage | lower + validate | peak RSS |" \
  "|---|---|---|---|---|---|" \
  "$rows"
