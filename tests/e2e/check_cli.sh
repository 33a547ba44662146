#!/usr/bin/env bash
# Runs a CLI command and checks its exit code and that its output (stdout+stderr) matches a regex.
# Usage: check_cli.sh EXPECTED_EXIT REGEX [--no-file PATH] [--max-memory-mb MB] [--max-seconds S] -- COMMAND...
#   --no-file PATH      PATH must not exist afterwards
#   --max-memory-mb MB  the command runs with at most MB of address space (ulimit -v): an input refused
#                       before anything large is allocated passes, one that allocates first fails
#   --max-seconds S     the command is stopped after S seconds (exit 124: a failure)
set -u
expected=$1; regex=$2; shift 2
absent=""; memory_kb=""; seconds=""
while [[ ${1:-} == --* && ${1:-} != -- ]]; do
  case $1 in
    --no-file) absent=$2 ;;
    --max-memory-mb) memory_kb=$(($2 * 1024)) ;;
    --max-seconds) seconds=$2 ;;
    *) echo "check_cli.sh: unknown option $1"; exit 2 ;;
  esac
  shift 2
done
[[ ${1:-} == -- ]] && shift
out=$(
  exec 2>&1
  if [[ -n $memory_kb ]]; then ulimit -v "$memory_kb"; fi
  if [[ -n $seconds ]]; then exec timeout "$seconds" "$@"; else exec "$@"; fi
)
code=$?
if [[ $code -ne $expected ]]; then
  echo "FAIL: exit code $code, expected $expected"; echo "$out"; exit 1
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
  echo "FAIL: output does not match /$regex/"; echo "$out"; exit 1
fi
if [[ -n $absent && -e $absent ]]; then
  echo "FAIL: $absent exists but must not"; exit 1
fi
echo "ok: exit $code, output matches /$regex/"
