#!/usr/bin/env bash
# Usage: check_code_size.sh ROOT CLI_LIMIT FOLDER...
# Fails (exit 1) listing every function of the FOLDERs (under ROOT) longer than 100 lines, and when the
# command-line driver (ROOT/cli/*.cpp) holds more than CLI_LIMIT lines in all. Long functions are split
# into named steps, and the CLI only declares options, calls the libraries and prints (README.md,
# "Tests"). Function extents are universal-ctags' (the end field of each function definition).
set -euo pipefail
root=$1
cli_limit=$2
shift 2
readonly max_lines=100

if ! ctags --version 2> /dev/null | grep -q 'Universal Ctags'; then
  echo "check_code_size: universal-ctags is needed (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
cd "$root"
status=0
long=$(ctags -R --languages=C++ --kinds-C++=f --fields=+ne -x --_xformat="%{end} %{line} %F %N" "$@" |
  awk -v max="$max_lines" '{ len = $1 - $2 + 1; if (len > max) print len, $3, $4 }' | sort -rn)
if [[ -n $long ]]; then
  echo "functions over $max_lines lines (split them into named steps):"
  while read -r len file name; do echo "  $file: $name: $len lines"; done <<< "$long"
  status=1
fi
if [[ -d cli ]]; then
  total=$(cat cli/*.cpp | wc -l)
  if ((total > cli_limit)); then
    echo "cli/*.cpp: $total lines, over $cli_limit: move what is not options, calls and printing into the libraries"
    status=1
  fi
fi
exit $status
