#!/usr/bin/env bash
# `paratwin search --emit`: the files it writes run as they are. The best configuration's file is
# simulated by `paratwin simulate -w`, with no hand edit, in the same time the search printed for it;
# every emitted file passes `paratwin lower`; --json carries each configuration's whole workload (the
# one in the file); with MPIRUN words, `paratwin exec -w` runs an emitted configuration of a tiny
# workload on its ranks.
# Usage: check_search_emit.sh PARATWIN WORKLOAD MACHINE GPUS [TINY_WORKLOAD MPIRUN...]
set -u
pt=$(realpath "$1"); workload=$2; machine=$3; gpus=$4; shift 4
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$pt" search -w "$workload" -m "$machine" --gpus "$gpus" --simulate 1 --top 3 --emit "$tmp/emit" \
  --json "$tmp/search.json" > "$tmp/search.out" 2>&1 || { fail "search exited $?"; cat "$tmp/search.out"; exit 1; }
[[ -f $tmp/emit/index.csv ]] || { fail "no index.csv"; exit 1; }
rows=$(($(wc -l < "$tmp/emit/index.csv") - 1))
[[ $rows -eq 3 ]] || fail "index.csv lists $rows configurations, not the 3 printed"
best=$(sed -n 2p "$tmp/emit/index.csv" | cut -d, -f2)
[[ $best =~ ^0+1- ]] || fail "the best configuration's file is '$best', not 01-... (or 001-...)"
ls "$tmp/emit" | sort -c || fail "the files do not sort by rank"
for f in "$tmp"/emit/*.json; do
  "$pt" lower -w "$f" > /dev/null 2>&1 || fail "paratwin lower refuses $(basename "$f")"
done

"$pt" simulate -w "$tmp/emit/$best" -m "$machine" --json "$tmp/simulate.json" > "$tmp/simulate.out" 2>&1 ||
  { fail "simulate -w $best exited $?"; cat "$tmp/simulate.out"; }
python3 - "$tmp/search.json" "$tmp/simulate.json" "$tmp/emit/$best" <<'PY' || fail "the emitted best does not simulate as searched"
import json, sys
search, simulated, emitted = (json.load(open(p)) for p in sys.argv[1:4])
best = search["ranked"][0]
searched = best["simulated"]["iteration_s"]
again = simulated["iteration_s"]
print(f"search: {best['configuration']} simulated {searched!r} s; simulate -w {best['file']}: {again!r} s")
assert searched == again, (searched, again)
assert best["workload"] == emitted, "--json's workload differs from the emitted file"
assert emitted["training"]["micro_batch"] == best["micro_batch"]
PY

if [[ $# -ge 2 ]]; then
  tiny=$1; shift
  "$pt" search -w "$tiny" -m localhost --gpus 2 --simulate 0 --top 1 --emit "$tmp/tiny" > "$tmp/tiny.out" 2>&1 ||
    { fail "search of $tiny exited $?"; cat "$tmp/tiny.out"; }
  one=$(sed -n 2p "$tmp/tiny/index.csv" | cut -d, -f2)
  out=$("$@" -np 2 "$pt" exec -w "$tmp/tiny/$one" --iterations 1 2>&1) || { fail "exec -w $one exited $?"; echo "$out" | tail -5; }
  grep -q "measured" <<<"$out" || { fail "exec printed no measured times"; echo "$out" | tail -5; }
  echo "exec -w $one: $(grep -c measured <<<"$out") lines of measured times"
fi
[[ $fails -eq 0 ]] && echo "ok: search --emit round trip"
exit $((fails > 0))
