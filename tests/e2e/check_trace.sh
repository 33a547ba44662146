#!/usr/bin/env bash
# Traces that scale: every rank of a 64-rank workload (GPT-5B, AxoNN 4-D) traced in at most 20 MB (GPT-80B's
# 64 GCDs gzip-compressed), valid
# JSON loaded by a real viewer (DevTools' trace engine, tests/viewer) with its ranks, threads, slices and
# flows; the default ranks above 64 ranks (one pipeline column and stage 0's tensor group); a folded
# simulation traces its actors and says whom they stand for; rank lists and ranges.
# Usage: check_trace.sh PARATWIN REPO_ROOT
set -u
pt=$(realpath "$1"); root=$(realpath "$2")
viewer="$root/tests/viewer/load_trace.mjs"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
if ! command -v node > /dev/null || [[ ! -d $root/tests/viewer/node_modules/@paulirish/trace_engine ]]; then
  echo "FAIL: the trace viewer (node and tests/viewer/node_modules) is not installed: run scripts/install-deps.sh"
  exit 1
fi
ex=$root/workloads/examples
limit=$((20 * 1024 * 1024))
# processes TRACE: the number of traced ranks (process_name events).
processes() { grep -c '"name":"process_name","args":{"name":"rank ' "$1"; }

# 64 ranks (x 4, y 2, z 4, data 2 on Perlmutter), all traced.
"$pt" simulate -w "$ex/gpt-5b-perlmutter-64-axonn.json" -m perlmutter --trace "$tmp/all.json" --trace-ranks all \
  > "$tmp/all.out" 2>&1 || { fail "simulate --trace-ranks all exited $?"; tail -5 "$tmp/all.out"; }
size=$(stat -c %s "$tmp/all.json" 2> /dev/null || echo 0)
echo "64 ranks, all traced: $size bytes"
((size > 0 && size <= limit)) || fail "the 64-rank trace has $size bytes, more than $limit"
[[ $(processes "$tmp/all.json") == 64 ]] || fail "the 64-rank trace has $(processes "$tmp/all.json") ranks, not 64"
grep -q '"ph":"s"' "$tmp/all.json" || fail "no flow in the 64-rank trace"
node "$viewer" "$tmp/all.json" --processes 64 ||
  fail "the viewer did not load the 64-rank trace"

# GPT-80B weak-scaled to 64 GCDs, every rank traced: too large as JSON, so written gzip-compressed (a
# name ending in .gz), within the limit; the same events as the plain file, and the viewer loads them.
"$pt" simulate -w "$root/tests/e2e/good/gpt-80b-frontier-64.json" -m frontier --trace "$tmp/80b.json.gz" \
  --trace-ranks all > "$tmp/80b.out" 2>&1 || { fail "simulate --trace 80b.json.gz exited $?"; tail -5 "$tmp/80b.out"; }
size=$(stat -c %s "$tmp/80b.json.gz" 2> /dev/null || echo 0)
echo "GPT-80B, 64 ranks, all traced, gzip: $size bytes"
((size > 0 && size <= limit)) || fail "the gzip 64-rank GPT-80B trace has $size bytes, more than $limit"
gzip -dc "$tmp/80b.json.gz" > "$tmp/80b.json" || fail "80b.json.gz is not gzip"
[[ $(processes "$tmp/80b.json") == 64 ]] || fail "the gzip trace has $(processes "$tmp/80b.json") ranks, not 64"
node "$viewer" "$tmp/80b.json" --processes 64 || fail "the viewer did not load the decompressed GPT-80B trace"

# The default above 64 ranks: 128 ranks (tensor 4, pipeline 2, data 16): stage 0's tensor group 0-3
# and stage 1's first rank 4.
"$pt" simulate -w "$ex/gpt-10b-perlmutter-128-megatron.json" -m perlmutter --trace "$tmp/default.json" \
  > "$tmp/default.out" 2>&1 || { fail "simulate --trace (128 ranks) exited $?"; tail -5 "$tmp/default.out"; }
for r in 0 1 2 3 4; do
  grep -q "\"pid\":$r,\"name\":\"process_name\"" "$tmp/default.json" || fail "rank $r is not traced by default"
done
[[ $(processes "$tmp/default.json") == 5 ]] || fail "$(processes "$tmp/default.json") ranks traced by default, not 5"
grep -q '"name":"bubble"' "$tmp/default.json" || fail "no bubble slice in the default pipeline trace"
grep -q '"ph":"C"' "$tmp/default.json" || fail "no counter in the default trace"
node "$viewer" "$tmp/default.json" --processes 5 --min-message-flows 1 ||
  fail "the viewer did not load the default trace"

# Folded (1,024 ranks, one actor per node of a replica): the actor of rank 0, standing for its node's
# rank in every replica.
"$pt" simulate -w "$root/tests/e2e/good/tiny-dp1024.json" -m frontier --no-progress --trace "$tmp/folded.json" \
  > "$tmp/folded.out" 2>&1 || { fail "folded simulate --trace exited $?"; tail -5 "$tmp/folded.out"; }
grep -q '"stands_for":{"rank 0":"0-1023"}' "$tmp/folded.json" || fail "the folded trace does not say whom rank 0 stands for"
grep -q 'stands for 1024 ranks' "$tmp/folded.json" || fail "the folded trace's process name does not say it stands for 1024 ranks"
node "$viewer" "$tmp/folded.json" --processes 1 || fail "the viewer did not load the folded trace"

# Lists and ranges; a bad value is refused before any work.
"$pt" simulate -w "$ex/tiny-pp-1f1b.json" -m localhost --trace "$tmp/ranges.json" --trace-ranks 0-1 > /dev/null 2>&1 ||
  fail "--trace-ranks 0-1 exited $?"
[[ $(processes "$tmp/ranges.json") == 2 ]] || fail "--trace-ranks 0-1 traced $(processes "$tmp/ranges.json") ranks"
out=$("$pt" simulate -w "$ex/tiny-pp-1f1b.json" -m localhost --trace "$tmp/bad.json" --trace-ranks 0-x 2>&1)
[[ $? == 2 && $out == *"--trace-ranks = 0-x is neither a rank"* ]] || fail "--trace-ranks 0-x: $out"
[[ ! -e $tmp/bad.json ]] || fail "a refused --trace-ranks left a trace"
out=$("$pt" simulate -w "$ex/tiny-pp-1f1b.json" -m localhost --trace "$tmp/bad.json" --trace-ranks 0-5 2>&1)
[[ $? == 2 && $out == *"--trace-ranks = 5 but the workload has ranks 0 to 1"* ]] || fail "--trace-ranks 0-5: $out"
ls "$tmp"/*.tmp* 2> /dev/null && fail "temporary files were left behind"

if ((fails)); then echo "$fails failures"; exit 1; fi
echo "ok: traces scale, load in the viewer, and name their ranks"
