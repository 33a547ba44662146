#!/usr/bin/env bash
# The README's exit-status table and `paratwin --help`'s (and every subcommand's) hold the same rows.
# Usage: check_exit_table.sh PARATWIN README
set -u
pt=$1; readme=$2
from_readme=$(sed -nE 's/^\| ([0-9]) \| (.*) \|$/\1 \2/p' "$readme")
[[ -n $from_readme ]] || { echo "FAIL: no exit-status table in $readme"; exit 1; }
for cmd in "" lower machine simulate sweep search exec calibrate validate baseline "baseline check" "calibrate micro" compare import "import megatron"; do
  # shellcheck disable=SC2086
  from_help=$("$pt" $cmd --help | sed -nE 's/^  ([0-9])  (.*)$/\1 \2/p')
  if [[ $from_help != "$from_readme" ]]; then
    echo "FAIL: paratwin $cmd --help and README.md differ:"
    diff <(echo "$from_help") <(echo "$from_readme")
    exit 1
  fi
done
echo "ok: README.md and every command's --help give the same exit-status table ($(wc -l <<<"$from_readme") rows)"
