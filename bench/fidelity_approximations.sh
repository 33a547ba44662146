#!/bin/bash
# Benchmark: what the simulator's two approximations cost in fidelity and buy in speed. GPT-80B with the
# 4-D configuration of workloads/examples/gpt-80b-frontier-8192.json (x=4, y=2, z=8: 64 GCDs per
# data-parallel replica), weak-scaled over data parallelism on Frontier, simulated three ways:
#   exact  every rank an actor, every transfer a rendezvous of its two ranks (--fidelity exact)
#   fast   every rank an actor, communication in phases (--fidelity fast)
#   fold   fast, one actor per node of a replica standing for it in every replica (--fold; the
#          default above 512 ranks)
# and prints, per rank count, each run's wall time and predicted iteration time, and the differences
# fast - exact and fold - fast in percent. A run over its time limit prints "-".
# Usage: bench/fidelity_approximations.sh [--markdown FILE] [RANKS...]   (default: 64 256 512 1024 2048)
# --markdown also writes the rows as the README's table (bench/results/fidelity_approximations.md;
# scripts/readme_tables.sh copies it into the README).
# PARATWIN_LIMIT_S (default 1200) bounds each run; PARATWIN_SKIP_EXACT_ABOVE (default 2048) skips exact
# above that many ranks.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
paratwin=${PARATWIN:-$root/build/cli/paratwin}
[ -x "$paratwin" ] || { echo "build first: scripts/build.sh release" >&2; exit 1; }
limit=${PARATWIN_LIMIT_S:-1200}
skip_exact_above=${PARATWIN_SKIP_EXACT_ABOVE:-2048}
# shellcheck source=markdown_table.sh
source "$root/bench/markdown_table.sh"
markdown_option "$@"
shift "$markdown_args"
runs=("$@")
[ ${#runs[@]} -gt 0 ] || runs=(64 256 512 1024 2048)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Runs one simulation; prints "WALL PREDICTED" or "- -" when it ran past the limit.
simulate() {
  local ranks=$1 mode=$2
  local flags
  case $mode in
    exact) flags=(--fidelity exact) ;;
    fast) flags=(--fidelity fast) ;;
    fold) flags=(--fidelity fast --fold) ;;
  esac
  if [[ $mode == exact ]] && ((ranks > skip_exact_above)); then
    echo "- -"
    return
  fi
  if timeout "$limit" /usr/bin/time -f '%e' -o "$work/time" "$paratwin" simulate -w "$work/w$ranks.json" \
    --machine frontier --no-progress "${flags[@]}" --json "$work/out.json" >/dev/null 2>"$work/err"; then
    python3 -c 'import json,sys; print(open(sys.argv[1]).read().split()[-1], json.load(open(sys.argv[2]))["iteration_s"])' \
      "$work/time" "$work/out.json"
  else
    local rc=$?
    if ((rc == 124)); then echo "- -"; else cat "$work/err" >&2; exit 1; fi
  fi
}

printf '%8s %10s %10s %10s %12s %12s %12s %9s %9s\n' ranks "exact [s]" "fast [s]" "fold [s]" "exact pred" \
  "fast pred" "fold pred" "fast-ex" "fold-fast"
for ranks in "${runs[@]}"; do
  if ! [[ $ranks =~ ^[0-9]+$ ]] || ((ranks % 64 != 0)); then
    echo "a run is a multiple of 64 ranks: $ranks" >&2
    exit 2
  fi
  python3 - "$root/workloads/examples/gpt-80b-frontier-8192.json" "$work/w$ranks.json" "$((ranks / 64))" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
d = int(sys.argv[3])
w["name"] = f"gpt-80b-frontier-{64 * d}"
w["parallelism"]["data"]["size"] = d
w["training"]["global_batch"] = 16 * d
json.dump(w, open(sys.argv[2], "w"))
PY
  read -r ew ep < <(simulate "$ranks" exact)
  read -r sw sp < <(simulate "$ranks" fast)
  read -r fw fp < <(simulate "$ranks" fold)
  python3 - "$ranks" "$ew" "$ep" "$sw" "$sp" "$fw" "$fp" "$work/rows.md" <<'PY'
import sys
ranks, ew, ep, sw, sp, fw, fp, rows = sys.argv[1:]
def num(s): return None if s == "-" else float(s)
def pct(a, b): return "-" if a is None or b is None else f"{100 * (a - b) / b:+.2f}%"
ep, sp, fp = num(ep), num(sp), num(fp)
pred = lambda v: "-" if v is None else f"{v:.4f}"
print(f"{int(ranks):8d} {ew:>10s} {sw:>10s} {fw:>10s} {pred(ep):>12s} {pred(sp):>12s} {pred(fp):>12s} "
      f"{pct(sp, ep):>9s} {pct(fp, sp):>9s}", flush=True)
def wall(s): return "-" if s == "-" else (f"{float(s):.2g} s" if float(s) < 10 else f"{float(s):.0f} s")
def md_pred(v): return "-" if v is None else f"{v:.4f} s"
def md_pct(a, b): return "-" if a is None or b is None else f"{100 * (a - b) / b:+.2f} %".replace("-", "\u2212")
with open(rows, "a") as md:
    md.write(f"| {int(ranks):,} | {wall(ew)} | {wall(sw)} | {wall(fw)} | {md_pred(ep)} | {md_pred(sp)} | {md_pred(fp)} | "
             f"{md_pct(sp, ep)} | {md_pct(fp, sp)} |\n")
PY
done
write_markdown_table \
  "| ranks | exact: wall | fast: wall | fold: wall | exact: predicted | fast: predicted | fold: predicted | fast − exact | fold − fast |" \
  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|" \
  "$work/rows.md"
