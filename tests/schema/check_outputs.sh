#!/usr/bin/env bash
# Every JSON document paratwin writes validates against its schema (schemas/*.schema.json), and the
# schemas name things one way (schemas/README.md). Usage: check_outputs.sh PARATWIN REPO_ROOT [MPIRUN...]
# Writes, in a scratch folder, what simulate, exec and calibrate micro (under MPIRUN, when given), lower,
# search, compare and sweep write with --json (or into their output folder), validates each and the
# committed baselines, accuracy ratchet and profiles; validates the workload files import and search --emit write and the shipped examples
# against the workload schema, whose profile names are the shipped profiles; then checks the schemas' key
# names. Exit 0 when all hold; 1 naming what does not.
set -u
pt=$(realpath "$1"); root=$(realpath "$2"); shift 2
mpirun=("$@")
validate=(node "$root/tests/schema/validate.mjs" "$root/schemas")
[[ -d $root/tests/schema/node_modules/ajv ]] || { echo "check_outputs: Ajv is not installed (scripts/install-deps.sh)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { "$@" > run.log 2>&1 || { fail "exit $?: $*"; tail -5 run.log; }; }
ex=$root/workloads/examples

run "$pt" simulate -w "$ex/tiny-pp-1f1b.json" -m localhost --json simulate-exact.json
run "$pt" simulate -w "$root/tests/e2e/good/tiny-dp3.json" -m frontier --fidelity fast --fold --json simulate-fold.json
if ((${#mpirun[@]})); then
  run "${mpirun[@]}" 2 "$pt" exec -w "$ex/tiny-dp.json" --iterations 2 --warmup 1 --json exec.json
  run "${mpirun[@]}" 2 "$pt" calibrate micro --backend cpu --quick --out profile.json
fi
run "$pt" lower --json lower.json
run "$pt" lower -w "$ex/tiny-pp-1f1b.json" --collectives --machine localhost --json lower-collectives.json
run "$pt" search --gpus 8 --simulate 1 --no-progress --json search.json --emit emit
run "$pt" compare perlmutter frontier -w "$root/tests/e2e/good/tiny-dp3.json" --json compare-machines.json
run "$pt" compare simulate-exact.json simulate-exact.json --json compare-saved.json
run "$pt" sweep --spec "$root/tests/e2e/sweep/tiny-weak.json" --out sweep --no-progress
run "$pt" import megatron --out import-megatron.json --world-size 16 -- --num-layers 32 --hidden-size 4096 \
  --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 \
  --global-batch-size 128 --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --bf16 --vocab-size 32000
run "$pt" import hf "$root/tests/e2e/hf/mixtral-8x7b.json" --workload "$ex/mixtral-8x7b-dgx-h100-64.json" \
  --out import-hf.json

check() {
  local schema=$1; shift
  local f
  for f in "$@"; do [[ -f $f ]] || { fail "no $f to validate against $schema"; return; }; done
  "${validate[@]}" "$schema" "$@" > validate.log 2>&1 || { fail "$schema:"; cat validate.log; }
}
summaries=(simulate-exact.json simulate-fold.json)
[[ -f exec.json ]] && summaries+=(exec.json)
check run-summary.schema.json "${summaries[@]}"
check lower.schema.json lower.json lower-collectives.json
check search.schema.json search.json
check compare.schema.json compare-machines.json compare-saved.json
check sweep.schema.json sweep/sweep.json "$root"/results/sweep/examples/*/sweep.json
check baseline.schema.json $(ls "$root"/results/baselines/*.json | grep -v '/accuracy.json$')
check accuracy.schema.json "$root/results/baselines/accuracy.json"
# Fitted profiles: the one calibrate micro wrote and the committed ones (GPU profiles among them).
profiles_written=("$root"/results/calibration/*.json "$root"/results/calibration/*/profiles/*.json)
[[ -f profile.json ]] && profiles_written+=(profile.json)
check profile.schema.json "${profiles_written[@]}"
# Workload files: the reader (workloads/workload_loader.cpp, framework.cpp) is the authority, the schema
# follows it; its framework profile names are the shipped profiles, no more and no fewer.
check workload.schema.json import-megatron.json import-hf.json emit/*.json "$ex"/*.json
# shellcheck disable=SC2016  # $defs is the script's, not the shell's
profiles=$(node -e 'for (const p of require(process.argv[1]).$defs.framework.properties.profile.enum) console.log(p)' \
  "$root/schemas/workload.schema.json" | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
shipped=$(for f in "$root"/workloads/frameworks/*.json; do f=${f##*/}; echo "${f%.json}"; done |
  LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
[[ $profiles == "$shipped" ]] ||
  fail "workload.schema.json's framework profiles ($profiles) are not workloads/frameworks/ ($shipped)"

# Every document carries its schema_version.
schema_versioned=("${summaries[@]}" lower.json search.json compare-machines.json sweep/sweep.json)
[[ -f profile.json ]] && schema_versioned+=(profile.json)
for f in "${schema_versioned[@]}"; do
  grep -q '"schema_version": 1' "$f" || fail "$f has no \"schema_version\": 1"
done

# One way to name things: seconds end in _s, rates in _per_s, figures per device in _per_gpu.
bad=$(grep -n -o -E '"[a-z0-9_]*(_seconds|_second|per_second|_per_device|_secs)[a-z0-9_]*" *:' "$root"/schemas/*.schema.json)
[[ -z $bad ]] || fail "key names against schemas/README.md's rules:"$'\n'"$bad"

if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "ok: every JSON output validates against its schema and the schemas name things one way"
