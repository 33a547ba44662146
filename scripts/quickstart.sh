#!/usr/bin/env bash
# One command from a fresh Debian machine: install dependencies, build, and run the main job on the
# built-in example workload and machine: lower it, then simulate one iteration on Frontier. Extra
# arguments go to `paratwin simulate`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
echo
echo "== paratwin lower (built-in example workload) =="
./build/cli/paratwin lower --machine frontier
echo
echo "== paratwin simulate (built-in example workload on Frontier) =="
./build/cli/paratwin simulate --machine frontier "$@"
