#!/usr/bin/env bash
# The headline job from a fresh Debian machine: installs the dependencies and builds (both skipped when
# already done), then simulates one training iteration of GPT-80B on 8,192 GCDs of Frontier (1,024
# nodes; AxoNN's 4-D tensor parallelism x=4 y=2 z=8 inside 8-node groups, 128 data-parallel replicas),
# prints the breakdown and the collective table, and writes a Perfetto trace, a plot and the JSON
# summary into quickstart/. Extra arguments go to `paratwin simulate`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null
if [[ ! -x build/cli/paratwin ]]; then
  echo "quickstart: building paratwin (once; about 10 minutes on 2 cores)" >&2
fi
scripts/build.sh release >/dev/null
mkdir -p quickstart
./build/cli/paratwin simulate -w workloads/examples/gpt-80b-frontier-8192.json -m frontier \
  --trace quickstart/trace.json --plot quickstart/breakdown.svg --json quickstart/summary.json "$@"
echo
echo "quickstart: wrote quickstart/trace.json (open it in https://ui.perfetto.dev or chrome://tracing)," \
  "quickstart/breakdown.svg and quickstart/summary.json"
