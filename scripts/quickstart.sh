#!/usr/bin/env bash
# One command from a fresh Debian machine: install dependencies, build, and run the main job on the
# built-in example workload. Extra arguments go to `paratwin lower`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh release
echo
echo "== paratwin lower (built-in example workload) =="
./build/cli/paratwin lower "$@"
