#!/usr/bin/env bash
# Every C++ file of ours is as clang-format (the repository's .clang-format) writes it. Usage:
# check_format.sh ROOT [FILE...]: the files given, or every tracked .cpp/.hpp under ROOT outside
# tests/viewer (the trace viewer's npm packages) and tests/lint/fixture*. Names each unformatted file and
# the first lines clang-format would change.
set -u
root=$(realpath "$1"); shift
cd "$root" || exit 2
command -v clang-format > /dev/null || { echo "check_format: clang-format is not installed"; exit 2; }
if (($#)); then
  files=("$@")
elif git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' | grep -v -E '^tests/(viewer|lint/fixture)')
else
  mapfile -t files < <(find . -name '*.cpp' -o -name '*.hpp' | grep -v -E '^\./(build|tests/viewer|tests/lint/fixture)' | sed 's|^\./||')
fi
present=()
for f in "${files[@]}"; do [[ -f $f ]] && present+=("$f"); done
# One clang-format for every file (it names each violation "FILE:LINE:COL: error: ..."), then a diff of
# the first lines of each file it named.
report=$(clang-format --dry-run --Werror "${present[@]}" 2>&1)
status=$?
mapfile -t named < <(grep -o -E '^[^:]+:[0-9]+:[0-9]+: error' <<<"$report" | cut -d: -f1 | sort -u)
bad=${#named[@]}
for f in "${named[@]}"; do
  echo "$f: not formatted (clang-format -i $f):"
  diff <(cat "$f") <(clang-format "$f") | head -n 6 | sed 's/^/  /'
done
if ((status != 0 && bad == 0)); then
  echo "check_format: clang-format failed: $report" | head -n 5
  exit 1
fi
if ((bad)); then
  echo "check_format: $bad of ${#present[@]} files not formatted"
  exit 1
fi
echo "check_format: ${#present[@]} files formatted"
