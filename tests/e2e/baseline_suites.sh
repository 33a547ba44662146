#!/usr/bin/env bash
# Runs `paratwin baseline check` on one of two halves of the reference suites, so that ctest runs the
# two halves side by side: the heavy half (four suites of long simulations) or every other
# suite (found in results/reference/, so that a new suite is never left out).
# Usage: baseline_suites.sh PARATWIN heavy|rest
set -u
pt=$1; half=$2
heavy=(dgx2-zero3 perlmutter-4d-frameworks frontera-optimus-strong frontier-weak)
args=()
if [[ $half == heavy ]]; then
  for s in "${heavy[@]}"; do args+=(--suite "$s"); done
else
  for f in results/reference/*.json; do
    s=$(basename "$f" .json)
    [[ " ${heavy[*]} " == *" $s "* ]] || args+=(--suite "$s")
  done
fi
exec "$pt" baseline check "${args[@]}"
