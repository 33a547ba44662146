#!/usr/bin/env bash
# One command from a fresh Debian machine: install dependencies, build, and pass every test —
# the unit and end-to-end suites, the unit tests again under ASan + UBSan, and a bounded libFuzzer
# run of each input reader (workload, machine, sweep spec; PARATWIN_FUZZ_SECONDS each, default 50).
# Usage: scripts/test.sh [--quick]   (--quick: the first suite only)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[[ ${1:-} == --quick ]] && quick=1
fuzz_seconds=${PARATWIN_FUZZ_SECONDS:-50}
jobs=$(nproc 2>/dev/null || echo 2)

passed=0
# Runs ctest in a build folder and adds its count of passed tests to the total.
run_ctest() {
  local dir=$1; shift
  local log
  log=$(mktemp)
  (cd "$dir" && "$@" --output-on-failure) 2>&1 | tee "$log"
  local status=${PIPESTATUS[0]}
  local n
  n=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -n 1)
  rm -f "$log"
  [[ $status -eq 0 && -n $n ]] || exit 1
  passed=$((passed + n))
}

scripts/install-deps.sh
# Warnings in our code are errors here (CI); a developer's build reports them and goes on.
PARATWIN_WERROR=ON scripts/build.sh release
echo "== unit and end-to-end tests =="
run_ctest build ctest -j"$jobs" --timeout 300
if ((quick)); then
  echo "paratwin: $passed passed, 0 failed"
  exit 0
fi

echo "== unit tests under AddressSanitizer + UndefinedBehaviorSanitizer =="
scripts/build.sh sanitize
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_ctest build-sanitize ctest -j"$jobs" -L unit --timeout 600

scripts/build.sh fuzz
echo "== libFuzzer targets' seeds =="
run_ctest build-fuzz ctest -L fuzz --timeout 300
for target in workload machine sweep_spec; do
  echo "== libFuzzer: $target reader, ${fuzz_seconds} s =="
  fuzz_log=build-fuzz/fuzz-$target.log
  if ! tests/fuzz/run_fuzz.sh "$target" "$fuzz_seconds" > "$fuzz_log" 2>&1; then
    tail -n 60 "$fuzz_log"
    exit 1
  fi
  grep -E "^(Done|stat::|run_fuzz.sh:)" "$fuzz_log" || true
  passed=$((passed + 1))
done
echo "paratwin: $passed passed, 0 failed"
