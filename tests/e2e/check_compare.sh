#!/usr/bin/env bash
# paratwin compare end to end: two machines (a built-in one and an edited copy, also as --machines DIR),
# two workloads, two libraries and two saved summaries, each with its table, JSON and plot; and the
# inputs it refuses. Usage: check_compare.sh PARATWIN EXAMPLES_DIR WHATIF_DIR
set -u
pt=$1; ex=$2; good=$3; whatif=$3/whatif-2x-nic
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# What if Frontier's NICs were twice as fast? The data-parallel all-reduce of 128 GCDs on 16 nodes
# crosses them.
out=$("$pt" compare frontier "$whatif/frontier.json" -w "$good/tiny-dp128.json" --plot "$dir/m.svg" --json "$dir/m.json" 2>&1) ||
  fail "compare of two machines: $out"
grep -Eq "^A  frontier \(built-in\): tiny-dp128 on frontier, 128 ranks" <<<"$out" || fail "no A line: $out"
grep -Eq "^  iteration time \[s\] +[0-9.e+-]+ +[0-9.e+-]+ +-[0-9.e+-]+ +-[0-9.]+ %" <<<"$out" ||
  fail "faster NICs did not make the iteration faster: $out"
grep -Eq "all_reduce data \(group size 128\): busbw \[GB/s\]" <<<"$out" || fail "no collective rows: $out"
head -c 400 "$dir/m.svg" | grep -q "<svg" || fail "m.svg is not an SVG"
grep -q '"change_percent"' "$dir/m.json" || fail "m.json has no rows"

# The same question as a what-if folder: the same table.
out2=$("$pt" compare --machines "$whatif" -w "$good/tiny-dp128.json" 2>&1) || fail "compare --machines: $out2"
[[ $(grep "iteration time" <<<"$out") == "$(grep "iteration time" <<<"$out2")" ]] ||
  fail "--machines differs from naming the two machines"

# Two workloads on one machine, a PNG.
out=$("$pt" compare "$ex/tiny-tp1d.json" "$ex/tiny-gpt-3d.json" -m perlmutter --plot "$dir/w.png" 2>&1) ||
  fail "compare of two workloads: $out"
grep -Eq "^A  tiny-tp1d: " <<<"$out" && grep -Eq "^B  tiny-gpt-3d: " <<<"$out" || fail "workload labels: $out"
[[ $(head -c 4 "$dir/w.png" | od -An -c | tr -d ' ') == *PNG* ]] || fail "w.png is not a PNG"

# Two libraries.
out=$("$pt" compare rccl pccl -w "$ex/tiny-gpt-3d.json" -m frontier 2>&1) || fail "compare of two libraries: $out"
grep -Eq "^A  rccl: " <<<"$out" && grep -Eq "^B  pccl: " <<<"$out" || fail "library labels: $out"

# Two saved summaries: what simulate wrote, compared without simulating again.
"$pt" simulate -w "$good/tiny-dp128.json" -m frontier --json "$dir/a.json" >/dev/null 2>&1 || fail "simulate a"
"$pt" simulate -w "$good/tiny-dp128.json" -m "$whatif/frontier.json" --json "$dir/b.json" >/dev/null 2>&1 || fail "simulate b"
out3=$("$pt" compare "$dir/a.json" "$dir/b.json" 2>&1) || fail "compare of two summaries: $out3"
grep -q "simulating" <<<"$out3" && fail "saved summaries were simulated again"
[[ $(grep "iteration time" <<<"$out3") == "$(grep "iteration time" <<<"$out2")" ]] ||
  fail "saved summaries differ from simulating: $out3"

# Refused, exit 2, nothing written.
expect2() {
  local regex=$1; shift
  local o
  o=$("$@" 2>&1)
  local code=$?
  [[ $code -eq 2 ]] || fail "exit $code (expected 2) for $*: $o"
  grep -Eq -- "$regex" <<<"$o" || fail "message for $* does not match '$regex': $o"
}
expect2 "A \(frontier\) is a machine but B .* is a workload" "$pt" compare frontier "$ex/tiny-dp.json"
expect2 "\"fronteer\" is neither a file" "$pt" compare fronteer frontier
expect2 "must end in .svg or .png" "$pt" compare rccl pccl --plot "$dir/x.pdf"
expect2 "does not exist: put an edited copy of summit there" "$pt" compare --machines "$whatif" -m summit
expect2 "give two runs" "$pt" compare frontier
sed 's/"stages"/"stagez"/' "$dir/a.json" >"$dir/broken.json"
expect2 "broken.json: stages: is required but missing" "$pt" compare "$dir/broken.json" "$dir/b.json"
expect2 "m.json" "$pt" compare "$dir/m.json" "$dir/m.json"
[[ -e $dir/x.pdf ]] && fail "x.pdf written"
echo "compare: machines, --machines, workloads, libraries, summaries and refusals all pass"
