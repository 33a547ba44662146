#!/usr/bin/env bash
# The round trip of `paratwin import megatron`: a Megatron-LM command line from a test data file
# (tests/e2e/megatron/*.args: '#' lines are comments, the rest is split on white space) is imported
# to a workload file, which `paratwin lower` validates and `paratwin simulate` predicts on MACHINE.
# Usage: check_import.sh PARATWIN ARGS_FILE MACHINE OUT_DIR [IMPORT_OPTION...]
set -u
pt=$1; args_file=$2; machine=$3; out_dir=$4; shift 4
mkdir -p "$out_dir"
out=$out_dir/$(basename "$args_file" .args).json
rm -f "$out"
# shellcheck disable=SC2046
words=$(grep -v '^[[:space:]]*#' "$args_file")
# shellcheck disable=SC2086
if ! "$pt" import megatron "$@" --machine "$machine" --out "$out" -- $words 2>"$out.stderr"; then
  echo "FAIL: import exited $?"; cat "$out.stderr"; exit 1
fi
grep -q "not modelled (no effect on the cost model)" "$out.stderr" || { echo "FAIL: no not-modelled list"; cat "$out.stderr"; exit 1; }
"$pt" lower --workload "$out" >"$out.lower" 2>&1 || { echo "FAIL: paratwin lower rejects $out"; cat "$out.lower"; exit 1; }
"$pt" simulate --workload "$out" --machine "$machine" >"$out.simulate" 2>&1 ||
  { echo "FAIL: paratwin simulate failed on $out"; cat "$out.simulate"; exit 1; }
grep -q "iteration time" "$out.simulate" || { echo "FAIL: no iteration time"; cat "$out.simulate"; exit 1; }
echo "ok: $(head -1 "$out.stderr")"
grep "iteration time" "$out.simulate" | head -1
