#!/bin/bash
# Benchmark: how the cost of `paratwin simulate` (default settings: fidelity chosen by size) grows
# with ranks. First, what any run costs before it simulates much: the peak RSS of `paratwin --version`
# and of a 2-rank simulate (workloads/examples/tiny-dp.json on localhost; target: at most 60 MB).
# Then GPT-80B with the 4-D configuration of workloads/examples/gpt-80b-frontier-8192.json
# (x=4, y=2, z=8), weak-scaled over data parallelism: 64 GCDs per replica, 16 sequences per replica;
# then GPT-320B on 32,768 GCDs (workloads/examples/gpt-320b-frontier-32768.json). Prints one row per
# run: wall seconds, peak RSS, SimGrid actors, SimGrid transfers, the device-to-device transfers they
# stand for, and the predicted iteration time.
# Usage: bench/simulate_scaling.sh [--markdown FILE] [RANKS...|gpt-320b]
#   (default: 1024 2048 4096 8192 16384 32768 gpt-320b). --markdown also writes the rows as the README's
#   table (bench/results/simulate_scaling.md; scripts/readme_tables.sh copies it into the README).
# Extra simulate options (e.g. --fidelity fast, --fold) go in PARATWIN_OPTIONS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
paratwin=${PARATWIN:-$root/build/cli/paratwin}
[ -x "$paratwin" ] || { echo "build first: scripts/build.sh release" >&2; exit 1; }
# shellcheck source=markdown_table.sh
source "$root/bench/markdown_table.sh"
markdown_option "$@"
shift "$markdown_args"
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(1024 2048 4096 8192 16384 32768 gpt-320b)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Start-up: every process maps the libraries paratwin links (SimGrid, MPI, BLAS), whatever it does.
peak_rss() { /usr/bin/time -f '%M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  echo "$(($(cat "$work/time") / 1024))"; }
echo "peak RSS: paratwin --version $(peak_rss "$paratwin" --version) MiB, 2-rank simulate" \
  "$(peak_rss "$paratwin" simulate -w "$root/workloads/examples/tiny-dp.json" -m localhost --no-progress) MiB"
printf '%-9s %8s %8s %9s %10s %8s %10s %12s %14s\n' model ranks nodes "wall [s]" "RSS [MiB]" actors flows transfers \
  "predicted [s]"
for run in "${runs[@]}"; do
  if [[ $run == gpt-320b ]]; then
    model=GPT-320B
    cp "$root/workloads/examples/gpt-320b-frontier-32768.json" "$work/w.json"
  else
    if ! [[ $run =~ ^[0-9]+$ ]] || (( run % 64 != 0 )); then
      echo "a run is gpt-320b or a multiple of 64 ranks: $run" >&2
      exit 2
    fi
    model=GPT-80B
    python3 - "$root/workloads/examples/gpt-80b-frontier-8192.json" "$work/w.json" "$((run / 64))" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
d = int(sys.argv[3])
w["name"] = f"gpt-80b-frontier-{64 * d}"
w["parallelism"]["data"]["size"] = d
w["training"]["global_batch"] = 16 * d
json.dump(w, open(sys.argv[2], "w"))
PY
  fi
  /usr/bin/time -f '%e %M' -o "$work/time" "$paratwin" simulate -w "$work/w.json" --machine frontier --no-progress \
    ${PARATWIN_OPTIONS:-} --json "$work/out.json" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  read -r wall rss <"$work/time"
  python3 - "$work/out.json" "$model" "$wall" "$rss" "$work/rows.md" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
wall, rss = float(sys.argv[3]), int(sys.argv[4]) / 1024
print(f"{sys.argv[2]:9s} {j['ranks']:8d} {j['nodes']:8d} {wall:9.1f} {rss:10.0f} "
      f"{j['actors']:8d} {j['flows']:10d} {j['transfers']:12d} {j['iteration_s']:14.4f}", flush=True)
with open(sys.argv[5], "a") as md:
    md.write(f"| {sys.argv[2]} | {j['ranks']:,} | {j['nodes']:,} | {wall:.1f} s | {rss:.0f} MiB | {j['actors']:,} | "
             f"{j['flows']:,} | {j['transfers']:,} | {j['iteration_s']:.4f} s |\n")
PY
done
write_markdown_table \
  "| model | ranks | nodes | wall | peak RSS | actors | SimGrid flows | transfers they stand for | predicted |" \
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|" \
  "$work/rows.md"
