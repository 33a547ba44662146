#!/bin/bash
# End-to-end checks of paratwin calibrate that need more than one command's output:
#   suite PARATWIN SUITE DIR           the suite runs and writes every file of its report
#   roundtrip PARATWIN PROFILE DIR     a profile rewritten (reformatted JSON) simulates identically, and
#                                      differently from no profile at all
set -u
mode=$1 pt=$2 input=$3 dir=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir"
case $mode in
  suite)
    "$pt" calibrate suite "$input" --out "$dir/report" > "$dir/out.txt" 2>&1 || { cat "$dir/out.txt"; fail "exit status $?"; }
    grep -q '^\[1/2\] micro-benchmarks on 2 ranks' "$dir/out.txt" || fail "no progress line for the micro-benchmarks"
    grep -qE '^\[2/2\] tiny-dp \(DP, 2 ranks\): measured [0-9.e-]+ s, predicted [0-9.e-]+ s' "$dir/out.txt" || fail "no result line"
    for f in README.md suite.csv classes.csv iteration.gp iteration.svg profiles/profile-2ranks.json \
             tiny-dp/comparison.md tiny-dp/comparison.csv tiny-dp/bars.svg tiny-dp/timeline.png \
             tiny-dp/run/measured.json tiny-dp/run/predicted-trace.json; do
      [[ -s $dir/report/$f ]] || fail "the report has no $f"
    done
    grep -q '^| tiny-dp | DP | 2 | ' "$dir/report/README.md" || fail "README.md has no row for tiny-dp"
    grep -q '"gemm_shapes"' "$dir/report/profiles/profile-2ranks.json" || fail "the profile has no GEMM shapes"
    [[ $(grep -c '"m":' "$dir/report/profiles/profile-2ranks.json") -ge 5 ]] || fail "fewer than 5 GEMM shapes timed"
    grep -q '^tiny-dp,2,GEMM,' "$dir/report/classes.csv" || fail "classes.csv has no GEMM row"
    echo "ok: suite report complete"
    ;;
  roundtrip)
    w=$(dirname "$0")/../../workloads/examples/tiny-dp.json
    python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"))' "$input" "$dir/copy.json"
    for p in "$input" "$dir/copy.json"; do
      "$pt" simulate --workload "$w" --machine localhost --profile "$p" --json "$dir/$(basename "$p").out" > /dev/null || fail "simulate with $p"
    done
    "$pt" simulate --workload "$w" --machine localhost --json "$dir/none.out" > /dev/null || fail "simulate without a profile"
    strip() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("profile", None); print(json.dumps(d, sort_keys=True))' "$1"; }
    [[ "$(strip "$dir/$(basename "$input").out")" == "$(strip "$dir/copy.json.out")" ]] || fail "the rewritten profile simulates differently"
    [[ "$(strip "$dir/copy.json.out")" != "$(strip "$dir/none.out")" ]] || fail "the profile changed nothing"
    echo "ok: a profile read back from a rewritten file gives the identical simulation"
    ;;
  *) echo "usage: $0 suite|roundtrip PARATWIN FILE DIR" >&2; exit 2 ;;
esac
