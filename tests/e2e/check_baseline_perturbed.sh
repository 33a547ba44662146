#!/usr/bin/env bash
# The regression baselines must catch a model change: a copy of a built-in machine with one parameter
# perturbed (through --machines, which replaces the built-in of the same name) must make
# `paratwin baseline check` fail, naming the points that moved.
# Usage: check_baseline_perturbed.sh PARATWIN REPO_ROOT MACHINE SUITE 'SED_EXPRESSION' REGEX [CHECK_OPTION...]
# (CHECK_OPTION: e.g. --simulate-up-to N, to leave the suite's larger simulated points unchecked)
set -u
paratwin=$1; root=$2; machine=$3; suite=$4; edit=$5; regex=$6
shift 6
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed -E "$edit" "$root/topology/machines/$machine.json" > "$tmp/$machine.json"
if cmp -s "$root/topology/machines/$machine.json" "$tmp/$machine.json"; then
  echo "FAIL: the edit '$edit' changed nothing in $machine.json"; exit 1
fi
cd "$root" || exit 1
out=$("$paratwin" baseline check --suite "$suite" --machines "$tmp" "$@" 2>&1); code=$?
echo "$out"
if [[ $code -ne 3 ]]; then echo "FAIL: exit $code, expected 3 (the perturbed model must move the baselines)"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$out"; then echo "FAIL: output does not match /$regex/"; exit 1; fi
# Unperturbed, the same check passes: cli.baseline_check runs it over every suite.
echo "ok: perturbing $machine ($edit) fails the $suite baselines"
