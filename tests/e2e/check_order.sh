#!/usr/bin/env bash
# Runs a CLI command and checks that, in its output (stdout+stderr, as a terminal shows them), the first
# line matching FIRST comes before the first line matching SECOND, and that both appear.
# Usage: check_order.sh FIRST SECOND -- COMMAND...
set -u
first=$1; second=$2; shift 2
[[ ${1:-} == -- ]] && shift
out=$("$@" 2>&1); code=$?
if [[ $code -ne 0 ]]; then echo "FAIL: exit code $code"; echo "$out"; exit 1; fi
a=$(grep -nE -m1 -- "$first" <<<"$out" | cut -d: -f1)
b=$(grep -nE -m1 -- "$second" <<<"$out" | cut -d: -f1)
if [[ -z $a || -z $b ]]; then echo "FAIL: /$first/ at line '${a}', /$second/ at line '${b}'"; echo "$out"; exit 1; fi
if (( a >= b )); then echo "FAIL: /$first/ (line $a) is not before /$second/ (line $b)"; echo "$out"; exit 1; fi
echo "ok: /$first/ (line $a) before /$second/ (line $b)"
