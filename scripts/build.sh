#!/usr/bin/env bash
# Configures and builds paratwin. Usage: scripts/build.sh [release|sanitize|fuzz]
#   release   (default) everything, in build/; warnings in our code are errors when PARATWIN_WERROR=ON
#             (scripts/test.sh, what CI runs, sets it)
#   sanitize  libraries and unit tests with ASan + UBSan, in build-sanitize/
#   fuzz      the libFuzzer targets (workload, machine and sweep-spec readers) with clang, in build-fuzz/
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-release}
jobs=$(nproc 2>/dev/null || echo 2)
case $kind in
  release)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARATWIN_WERROR="${PARATWIN_WERROR:-OFF}"
    cmake --build build -j"$jobs" ;;
  sanitize)
    cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DPARATWIN_SANITIZE=ON -DPARATWIN_UNIT_ONLY=ON
    cmake --build build-sanitize -j"$jobs" --target unit_tests exec_unit_tests topology_unit_tests sim_unit_tests calibration_unit_tests predict_unit_tests validation_unit_tests ;;
  fuzz)
    CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARATWIN_FUZZ=ON -DPARATWIN_UNIT_ONLY=ON
    cmake --build build-fuzz -j"$jobs" --target fuzz_workload fuzz_machine fuzz_sweep_spec ;;
  *) echo "usage: $0 [release|sanitize|fuzz]" >&2; exit 2 ;;
esac
