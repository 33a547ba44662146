#!/usr/bin/env bash
# One command from a fresh Debian machine: install dependencies, build, and pass every test —
# the unit and end-to-end suites, the unit tests again under ASan + UBSan, and a bounded libFuzzer
# run of the workload loader. Usage: scripts/test.sh [--quick]   (--quick: the first suite only)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[[ ${1:-} == --quick ]] && quick=1
fuzz_seconds=${PARATWIN_FUZZ_SECONDS:-60}
jobs=$(nproc 2>/dev/null || echo 2)

scripts/install-deps.sh
scripts/build.sh release
echo "== unit and end-to-end tests =="
(cd build && ctest -j"$jobs" --output-on-failure --timeout 300)
((quick)) && exit 0

echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer =="
scripts/build.sh sanitize
(cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest -j"$jobs" -L unit --output-on-failure --timeout 600)

echo "== libFuzzer: workload loader and validator, ${fuzz_seconds} s =="
scripts/build.sh fuzz
tests/fuzz/run_fuzz.sh "$fuzz_seconds" build-fuzz/tests/fuzz/fuzz_workload
