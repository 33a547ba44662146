#!/usr/bin/env bash
# Usage: tests/fuzz/run_fuzz.sh TARGET [SECONDS [FUZZER]]
#   TARGET   workload, machine or sweep_spec: the reader fuzzed by build-fuzz/tests/fuzz/fuzz_TARGET
#   SECONDS  how long to fuzz (default 60)
#   FUZZER   the binary (default build-fuzz/tests/fuzz/fuzz_TARGET, built by scripts/build.sh fuzz)
# Environment:
#   FUZZ_RUNS       stop after this many executions instead (SECONDS is then only a bound)
#   FUZZ_CORPUS     the folder the grown corpus is kept in (default: a fresh temp folder, removed after)
#   FUZZ_ARTIFACTS  where a reproducer is written (default: a fresh temp folder, kept on failure)
# The run starts from the target's seeds in the repository (workloads/examples for the workload
# reader, tests/fuzz/corpus/TARGET for the others) and its dictionary, and exits non-zero when the
# fuzzer finds a crash, UB, a leak or a timeout; the last lines of its log are its executions and time.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${1:-}
case $target in
  workload) seeds=$root/workloads/examples ;;
  machine | sweep_spec) seeds=$here/corpus/$target ;;
  *)
    echo "usage: $0 workload|machine|sweep_spec [SECONDS [FUZZER]]" >&2
    exit 2
    ;;
esac
seconds=${2:-60}
fuzzer=${3:-$root/build-fuzz/tests/fuzz/fuzz_$target}
if [[ ! -x $fuzzer ]]; then
  echo "run_fuzz.sh: no fuzzer at $fuzzer (build it with scripts/build.sh fuzz)" >&2
  exit 2
fi
if [[ -n ${FUZZ_CORPUS:-} ]]; then
  corpus=$FUZZ_CORPUS
  mkdir -p "$corpus"
else
  corpus=$(mktemp -d "${TMPDIR:-/tmp}/paratwin-fuzz-corpus.XXXXXX")
  trap 'rm -rf "$corpus"' EXIT
fi
artifacts=${FUZZ_ARTIFACTS:-$(mktemp -d "${TMPDIR:-/tmp}/paratwin-fuzz-artifacts.XXXXXX")}
mkdir -p "$artifacts"
runs=()
[[ -n ${FUZZ_RUNS:-} ]] && runs=(-runs="$FUZZ_RUNS")
start=$(date +%s)
"$fuzzer" "${runs[@]}" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 -timeout=30 \
  -dict="$here/$target.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
  "$corpus" "$seeds"
code=$?
echo "run_fuzz.sh: fuzz_$target ran $(($(date +%s) - start)) s; corpus $(find "$corpus" -type f | wc -l) files"
if [[ $code -ne 0 ]]; then
  echo "run_fuzz.sh: fuzz_$target failed (exit $code); reproducer in $artifacts:" >&2
  ls -l "$artifacts" >&2
else
  rmdir "$artifacts" 2>/dev/null || true
fi
exit $code
