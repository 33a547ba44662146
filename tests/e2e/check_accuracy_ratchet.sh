#!/usr/bin/env bash
# The accuracy ratchet at `baseline update`: an update that makes a suite worse against the published
# values than its committed figure writes nothing and exits 3, naming the suite and the figure; with
# --accept-worse-accuracy it writes the baselines and raises the figure. Usage: check_accuracy_ratchet.sh
# PARATWIN REPO_ROOT
set -u
pt=$(realpath "$1"); root=$(realpath "$2")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
mkdir baselines && cp "$root"/results/baselines/selene-175b.json "$root"/results/baselines/accuracy.json baselines/
# A bar no prediction meets: selene-175b's error must be 0.
sed -i '/"selene-175b": {/,/}/ s/"\(mean\|max\)_abs_error_percent": [0-9.]*/"\1_abs_error_percent": 0/' baselines/accuracy.json
grep -A4 '"selene-175b"' baselines/accuracy.json | grep -q '"mean_abs_error_percent": 0,' || fail "the bar was not edited"
cp -r baselines before
update=("$pt" baseline update --suite selene-175b --baselines baselines --simulate-up-to 0
        --reference "$root/results/reference")
out=$("${update[@]}" 2>&1); code=$?
[[ $code -eq 3 ]] || fail "an update worse than the ratchet exited $code, expected 3"
grep -Eq "accuracy ratchet broken: 2 figure" <<<"$out" || fail "no 'accuracy ratchet broken' in: $out"
grep -Eq "selene-175b +mean_abs_error_percent +0\.000 +[0-9.]+" <<<"$out" || fail "the breach is not named: $out"
grep -q "Nothing was written" <<<"$out" || fail "the refusal does not say nothing was written"
diff -r before baselines > /dev/null || fail "a refused update changed the baselines folder"
out=$("${update[@]}" --accept-worse-accuracy 2>&1); code=$?
[[ $code -eq 0 ]] || fail "--accept-worse-accuracy exited $code: $out"
grep -q "accepted worse accuracy (--accept-worse-accuracy): 2 figure(s) raised" <<<"$out" || fail "no acceptance line: $out"
grep -A4 '"selene-175b"' baselines/accuracy.json | grep -Eq '"mean_abs_error_percent": [1-9]' ||
  fail "the accepted figure was not written: $(cat baselines/accuracy.json)"
# Other suites' figures are kept.
grep -q '"alps-weak"' baselines/accuracy.json || fail "an update of one suite dropped the others' figures"
if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "ok: the accuracy ratchet refuses a worse update unless accepted"
