#!/usr/bin/env bash
# The platform benchmark of the README: build/bench/bench_platform on a 1,024-node slice of Frontier and
# on the whole machine (SimGrid links, build time, peak RSS), printed as the README's table.
# Usage: bench/platform_table.sh [--markdown FILE]   (FILE: bench/results/platform.md, which
# scripts/readme_tables.sh copies into the README)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bench=${PARATWIN_BENCH_PLATFORM:-$root/build/bench/bench_platform}
[ -x "$bench" ] || { echo "build first: scripts/build.sh release" >&2; exit 1; }
# shellcheck source=markdown_table.sh
source "$root/bench/markdown_table.sh"
markdown_option "$@"
shift "$markdown_args"
rows=$(mktemp); trap 'rm -f "$rows"' EXIT
for run in "Frontier slice:1024" "Frontier, whole:"; do
  label=${run%%:*} nodes=${run#*:}
  # e.g. "frontier       1024 nodes     8192 devices    152360 links  build    0.40 s  peak RSS     128 MiB  ..."
  line=$("$bench" frontier $nodes 2> /dev/null)
  echo "$line"
  awk -v label="$label" '
    function commas(n,  s) { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); return s }
    { printf "| %s | %s | %s | %s | %.2f s | %.0f MiB |\n", label, commas($2), commas($4), commas($6), $9, $13 }' <<<"$line" >> "$rows"
done
write_markdown_table \
  "| machine | nodes | devices | links (SimGrid) | build | peak RSS |" \
  "|---|---|---|---|---|---|" \
  "$rows"
