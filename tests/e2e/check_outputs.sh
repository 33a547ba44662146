#!/usr/bin/env bash
# Outputs go where the user points them and are never lost or half written; bad options and output
# paths are refused with exit 2 before any work. Usage: check_outputs.sh PARATWIN REPO_ROOT
set -u
pt=$(realpath "$1"); root=$(realpath "$2")
tmp=$(mktemp -d); trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect CODE REGEX COMMAND...: exit status and a line of stdout+stderr.
expect() {
  local code=$1 regex=$2; shift 2
  out=$("$@" 2>&1); local got=$?
  [[ $got -eq $code ]] || { fail "exit $got, expected $code: $*"; echo "$out" | tail -5; return; }
  grep -Eq -- "$regex" <<<"$out" || { fail "no /$regex/ in the output of: $*"; echo "$out" | tail -5; }
}
tiny=$root/workloads/examples/tiny-dp.json

# Special files are written through: /dev/stdout lands where the shell redirected it, after the report.
"$pt" lower --json /dev/stdout > redirected.txt || fail "lower --json /dev/stdout exited $?"
grep -q '"ranks"' redirected.txt || fail "the JSON did not reach the redirected stdout"
grep -q 'stage 0' redirected.txt || fail "the report is not in the redirected stdout beside the JSON"
[[ -c /dev/null ]] || fail "/dev/null is no longer a device"
"$pt" lower --json /dev/null > /dev/null || fail "lower --json /dev/null exited $?"
[[ -c /dev/null ]] || fail "lower --json /dev/null replaced /dev/null"
if [[ -c /dev/full ]]; then
  expect 2 "/dev/full: write failed: No space left on device" "$pt" lower --json /dev/full
  [[ -c /dev/full ]] || fail "/dev/full was replaced"
  # A failed --json takes the --trace of the same run with it (simulate writes both or neither).
  expect 2 "/dev/full: write failed" "$pt" simulate --workload "$tiny" --machine localhost --json /dev/full --trace t.json
  [[ ! -e t.json ]] || fail "simulate left its --trace behind when --json failed"
fi
mkfifo fifo
(timeout 60 cat fifo > from-fifo.txt) &
"$pt" lower --json fifo > /dev/null || fail "lower --json FIFO exited $?"
wait
grep -q '"ranks"' from-fifo.txt || fail "the JSON did not go through the FIFO"
[[ -p fifo ]] || fail "the FIFO was replaced by a file"

# A symbolic link stays a link; its target gets the output.
echo old > real.json && ln -s real.json link.json
"$pt" lower --json link.json > /dev/null || fail "lower --json LINK exited $?"
[[ -L link.json ]] || fail "the symbolic link was replaced by a file"
grep -q '"ranks"' real.json || fail "the link's target did not get the JSON"

# Refused before any work, exit 2, nothing written: a read-only file, a folder, a missing folder.
echo keep > ro.json && chmod 444 ro.json
expect 2 "--json ro.json: is read-only" "$pt" lower --json ro.json
[[ $(cat ro.json) == keep ]] || fail "the read-only file was changed"
mkdir folder
expect 2 "--json folder: is a folder, not a file" "$pt" simulate --workload "$tiny" --machine localhost --json folder
expect 2 "--trace no/such/t.json: cannot be written: the folder no/such does not exist" \
  "$pt" simulate --workload "$tiny" --machine localhost --trace no/such/t.json
expect 2 "--json folder: is a folder, not a file" "$pt" search --gpus 8 --json folder
ls folder/* *.tmp* 2> /dev/null && fail "temporary files were left behind"
touch a-file
expect 2 "--out a-file: is a file, not a folder" "$pt" validate --out a-file --suite alps-weak --model analytical \
  --reference "$root/results/reference"
expect 2 "--out ro.json: is read-only" "$pt" calibrate refit "$root/tests/e2e/good/profile-localhost.json" --out ro.json

# Option values no option means.
expect 2 "--workload: the value is empty" "$pt" simulate --workload ""
expect 2 "--device-memory: = nan is not a finite number" "$pt" lower --device-memory nan
expect 2 "--tolerance: = nan is not a finite number" "$pt" baseline check --tolerance nan
expect 2 "--trace-ranks = 99 but the workload has ranks 0 to 1" \
  "$pt" simulate --workload "$tiny" --machine localhost --trace t.json --trace-ranks 99
[[ ! -e t.json ]] || fail "a refused --trace-ranks left a trace"
expect 2 "--trace-ranks requires --trace" "$pt" simulate --workload "$tiny" --trace-ranks 0
# The default workload has 8 ranks, localhost 4 devices in 1 node: the machine is named, not --nodes.
expect 2 "^paratwin: error: --machine: localhost has 1 node but the workload needs 8 devices" "$pt" simulate -m localhost

# A broken machine file under --machines: exit 2 naming it, before any point, and no output.
mkdir machines && echo '{"name": "frontier",' > machines/frontier.json
expect 2 "machines/frontier.json: is not valid JSON" "$pt" validate --machines machines --suite alps-weak \
  --model analytical --reference "$root/results/reference" --out validation
[[ ! -e validation/validation.csv ]] || fail "validate wrote outputs after a bad --machines file"
mkdir baselines && cp "$root"/results/baselines/frontier-weak.json "$root"/results/baselines/alps-weak.json baselines/
cp -r baselines baselines.before
expect 2 "machines/frontier.json: is not valid JSON" "$pt" baseline update --machines machines --suite frontier-weak \
  --baselines baselines --simulate-up-to 0 --reference "$root/results/reference"
diff -r baselines.before baselines > /dev/null || fail "baseline update changed baselines after a bad --machines file"
# All or nothing: the second suite's file cannot be replaced, so the first is not rewritten either.
sed -i 's/"value": \([0-9]\)/"value": 1\1/' baselines/alps-weak.json && cp baselines/alps-weak.json alps.edited
chmod 444 baselines/frontier-weak.json
expect 2 "frontier-weak.json: is read-only" "$pt" baseline update --suite alps-weak --suite frontier-weak \
  --baselines baselines --simulate-up-to 0 --reference "$root/results/reference"
cmp -s baselines/alps-weak.json alps.edited || fail "baseline update rewrote alps-weak before failing on frontier-weak"

if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "ok: outputs are written where pointed, whole or not at all, and bad options are refused"
