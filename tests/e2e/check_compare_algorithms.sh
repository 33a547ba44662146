#!/usr/bin/env bash
# paratwin compare and the algorithm each side ran: RCCL against PCCL on a
# workload whose z groups have one GCD per node changes the z all-gathers and reduce-scatters (PCCL's
# inter-node recursive doubling and halving, Thesis §6.2.3) and leaves the data all-reduce to RCCL;
# --algorithm forces one algorithm on both sides; and an out-of-memory side is marked, as simulate marks it.
# Usage: check_compare_algorithms.sh PARATWIN EXAMPLES_DIR GOOD_DIR
set -u
pt=$1; ex=$2; good=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
w=$good/tiny-axonn-z-across-nodes.json

out=$("$pt" compare rccl pccl -w "$w" -m frontier --json "$dir/c.json" 2>&1) || fail "compare rccl pccl: $out"
for kind in all_gather reduce_scatter; do
  grep -Eq "^  $kind z \(group size 4\): algorithm +ring +hierarchical +changed" <<<"$out" ||
    fail "$kind z: no algorithm row with ring (rccl) and hierarchical (pccl): $out"
  line=$(grep -E "^  $kind z \(group size 4\): total \[ms\]" <<<"$out") || fail "$kind z: no total row: $out"
  grep -Eq " [+-][0-9.]+ %$" <<<"$line" && ! grep -Eq " [+-]?0\.0 %$| 0 %$" <<<"$line" ||
    fail "$kind z: PCCL did not change the time: $line"
done
# PCCL implements all-gather and reduce-scatter only: the data all-reduce is RCCL's, as RCCL tunes it.
grep -Eq "^  all_reduce data \(group size 2\): algorithm +(ring|tree) +(ring|tree) +same" <<<"$out" ||
  fail "the data all-reduce is not RCCL's on both sides: $out"
grep -q "B (pccl): all-gather and reduce-scatter run PCCL's hierarchical algorithms; all-reduce, broadcast and reduce run rccl's" <<<"$out" ||
  fail "no note on what PCCL runs: $out"
grep -Eq '"b": "hierarchical"' "$dir/c.json" && grep -q '"changed": true' "$dir/c.json" ||
  fail "c.json has no algorithm rows"

# --algorithm, as in simulate, for both sides: rings everywhere, the z collectives the same algorithm.
out=$("$pt" compare rccl pccl -w "$w" -m frontier --algorithm all_gather=ring --algorithm reduce_scatter=ring 2>&1) ||
  fail "compare --algorithm: $out"
grep -Eq "^  all_gather z \(group size 4\): algorithm +ring +ring +same" <<<"$out" || fail "--algorithm not applied: $out"

# Out of memory on one side ([narayanan2021megatron]'s 1.7B on 32 GPUs: 45.9 GiB per rank, Summit's V100s hold 16 GB):
# the verdict of each side and the memory row marked.
out=$("$pt" compare selene summit -w "$ex/gpt-1.7b-selene-32.json" --json "$dir/m.json" 2>&1) || fail "compare selene summit: $out"
grep -Eq "^A  selene: .*memory [0-9.]+ GiB per rank of [0-9.]+ GiB: fits$" <<<"$out" || fail "no verdict for A: $out"
grep -Eq "^B  summit: .*memory [0-9.]+ GiB per rank of [0-9.]+ GiB: OUT OF MEMORY$" <<<"$out" || fail "no verdict for B: $out"
grep -Eq "^  memory per rank \[GiB\] .*<< B: OUT OF MEMORY$" <<<"$out" || fail "memory row not marked: $out"
grep -Eq "^  fits in device memory +yes +NO: OOM " <<<"$out" || fail "no fits row: $out"
grep -q '"out_of_memory": true' "$dir/m.json" || fail "m.json does not say B is out of memory"
echo "compare: algorithms per side, PCCL's z collectives, --algorithm and the memory verdict all pass"
