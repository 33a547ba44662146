#!/usr/bin/env bash
# The README's tables of measured figures are copies of the tables the benchmark scripts and `paratwin
# validate` write: each such table follows a marker line `<!-- table: PATH#N -->`, the N-th table (run of
# lines starting with "|") of the file PATH (relative to the repository root). Usage:
#   scripts/readme_tables.sh [--check] [README]   (default README.md of the repository)
# rewrites every marked table from its source, or with --check changes nothing and fails (exit 1) naming
# each table that differs from its source, or whose source is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=0
[[ ${1:-} == --check ]] && { check=1; shift; }
readme=${1:-$root/README.md}
[[ -f $readme ]] || { echo "readme_tables: no file $readme" >&2; exit 2; }
base=$(cd "$(dirname "$readme")" && pwd)

# nth_table FILE N: the N-th run of lines starting with "|" in FILE.
nth_table() { awk -v n="$2" '/^\|/ { if (!in_table) { ++k; in_table = 1 } if (k == n) print; next } { in_table = 0 }' "$1"; }

tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp".*' EXIT
differs=0
count=0
# Rebuild the README: every marked table replaced by its source's table.
: > "$tmp"
skipping=0
while IFS= read -r line || [[ -n $line ]]; do
  if ((skipping)); then
    [[ $line == \|* ]] && continue
    skipping=0
  fi
  printf '%s\n' "$line" >> "$tmp"
  if [[ $line =~ ^\<\!--\ table:\ ([^#]+)#([0-9]+)\ --\>$ ]]; then
    src=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
    count=$((count + 1))
    if [[ ! -f $base/$src ]]; then
      echo "readme_tables: $readme: the table marked \"$src#$n\" has no source file $src"
      differs=$((differs + 1))
      skipping=0
      continue
    fi
    nth_table "$base/$src" "$n" > "$tmp.table"
    if [[ ! -s $tmp.table ]]; then
      echo "readme_tables: $readme: $src has no table $n"
      differs=$((differs + 1))
      continue
    fi
    cat "$tmp.table" >> "$tmp"
    skipping=1
  fi
done < "$readme"
if ((check)); then
  if ! diff -q "$readme" "$tmp" > /dev/null; then
    echo "readme_tables: $readme differs from the tables' sources (scripts/readme_tables.sh rewrites it):"
    diff "$readme" "$tmp" | head -n 20
    differs=$((differs + 1))
  fi
  ((differs == 0)) || exit 1
  echo "readme_tables: $count tables of $readme agree with their sources"
else
  ((differs == 0)) || exit 1
  cp "$tmp" "$readme"
  echo "readme_tables: rewrote $count tables of $readme from their sources"
fi
