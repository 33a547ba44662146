#!/usr/bin/env bash
# Runs a CLI command and checks its exit code and that its output (stdout+stderr) matches a regex.
# Usage: check_cli.sh EXPECTED_EXIT REGEX [--no-file PATH] -- COMMAND...
set -u
expected=$1; regex=$2; shift 2
absent=""
if [[ ${1:-} == --no-file ]]; then absent=$2; shift 2; fi
[[ ${1:-} == -- ]] && shift
out=$("$@" 2>&1); code=$?
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
