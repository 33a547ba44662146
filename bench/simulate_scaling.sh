#!/bin/bash
# Benchmark: how the cost of `paratwin simulate --fidelity fast` grows with ranks (issue 4). GPT-80B with
# the 4-D configuration of workloads/examples/gpt-80b-frontier-8192.json (x=4, y=2, z=8), weak-scaled
# over data parallelism: 64 GCDs per replica, 16 sequences per replica. Prints one row per rank count:
# wall seconds, peak RSS, SimGrid actors, transfers simulated and the predicted iteration time.
# Usage: bench/simulate_scaling.sh [RANKS...]   (default: 1024 2048 4096 8192)
# Extra simulate options (e.g. --fold) go in PARATWIN_OPTIONS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
paratwin=${PARATWIN:-$root/build/cli/paratwin}
[ -x "$paratwin" ] || { echo "build first: scripts/build.sh release" >&2; exit 1; }
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1024 2048 4096 8192)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%8s %8s %10s %10s %8s %12s %14s\n' ranks nodes "wall [s]" "RSS [MiB]" actors transfers "predicted [s]"
for n in "${ranks[@]}"; do
  if (( n % 64 != 0 )); then echo "ranks must be a multiple of 64: $n" >&2; exit 2; fi
  data=$((n / 64))
  python3 - "$root/workloads/examples/gpt-80b-frontier-8192.json" "$work/w.json" "$data" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
d = int(sys.argv[3])
w["name"] = f"gpt-80b-frontier-{64 * d}"
w["parallelism"]["data"]["size"] = d
w["training"]["global_batch"] = 16 * d
json.dump(w, open(sys.argv[2], "w"))
PY
  /usr/bin/time -f '%e %M' -o "$work/time" "$paratwin" simulate -w "$work/w.json" --machine frontier --fidelity fast \
    ${PARATWIN_OPTIONS:-} --json "$work/out.json" >/dev/null
  read -r wall rss <"$work/time"
  python3 - "$work/out.json" "$n" "$wall" "$rss" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"{int(sys.argv[2]):8d} {j['nodes']:8d} {float(sys.argv[3]):10.1f} {int(sys.argv[4]) / 1024:10.0f} "
      f"{j['actors']:8d} {j['flows']:12d} {j['iteration_seconds']:14.4f}", flush=True)
PY
done
