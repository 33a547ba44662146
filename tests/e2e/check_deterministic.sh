#!/usr/bin/env bash
# Runs `paratwin simulate` twice with the same inputs and checks that the JSON results and the trace are
# byte-identical (the simulator must be deterministic).
# Usage: check_deterministic.sh PARATWIN SIMULATE-ARGS...
set -u
paratwin=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for run in 1 2; do
  if ! "$paratwin" simulate "$@" --json "$dir/$run.json" --trace "$dir/$run.trace.json" >"$dir/$run.out" 2>&1; then
    echo "FAIL: run $run exited non-zero"; cat "$dir/$run.out"; exit 1
  fi
done
for f in json trace.json out; do
  if ! cmp -s "$dir/1.$f" "$dir/2.$f"; then
    echo "FAIL: the two runs' .$f outputs differ"; diff <(head -c 2000 "$dir/1.$f") <(head -c 2000 "$dir/2.$f"); exit 1
  fi
done
echo "ok: two runs gave byte-identical JSON, trace and summary"
