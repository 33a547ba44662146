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
bad=0
for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  if ! clang-format --dry-run --Werror "$f" > /dev/null 2>&1; then
    echo "$f: not formatted (clang-format -i $f):"
    diff <(cat "$f") <(clang-format "$f") | head -n 6 | sed 's/^/  /'
    bad=$((bad + 1))
  fi
done
if ((bad)); then
  echo "check_format: $bad of ${#files[@]} files not formatted"
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
