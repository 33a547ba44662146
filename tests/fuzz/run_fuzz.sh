#!/usr/bin/env bash
# Usage: tests/fuzz/run_fuzz.sh [SECONDS [FUZZER]]
# Runs the workload fuzzer for SECONDS (default 60) with a fresh corpus seeded from the shipped
# examples and the workload dictionary. Builds nothing: FUZZER (or $FUZZ_WORKLOAD) is the binary,
# by default build-fuzz/tests/fuzz/fuzz_workload, built with:
#   CC=clang CXX=clang++ cmake -S . -B build-fuzz -DPARATWIN_FUZZ=ON -DPARATWIN_UNIT_ONLY=ON
#   cmake --build build-fuzz --target fuzz_workload
# Exits non-zero when the fuzzer finds a crash, UB, a leak or a timeout; the reproducer is kept in
# the artifact folder it prints (FUZZ_ARTIFACTS, default a fresh temp folder).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-60}
fuzzer=${2:-${FUZZ_WORKLOAD:-$root/build-fuzz/tests/fuzz/fuzz_workload}}
if [[ ! -x $fuzzer ]]; then
  echo "run_fuzz.sh: no fuzzer at $fuzzer (build it, or set FUZZ_WORKLOAD)" >&2
  exit 2
fi
corpus=$(mktemp -d "${TMPDIR:-/tmp}/paratwin-fuzz-corpus.XXXXXX")
artifacts=${FUZZ_ARTIFACTS:-$(mktemp -d "${TMPDIR:-/tmp}/paratwin-fuzz-artifacts.XXXXXX")}
mkdir -p "$artifacts"
trap 'rm -rf "$corpus"' EXIT
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=4096 -timeout=30 \
  -dict="$here/workload.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
  "$corpus" "$root/workloads/examples"
code=$?
if [[ $code -ne 0 ]]; then
  echo "run_fuzz.sh: fuzz_workload failed (exit $code); reproducer in $artifacts:" >&2
  ls -l "$artifacts" >&2
else
  rmdir "$artifacts" 2>/dev/null || true
fi
exit $code
