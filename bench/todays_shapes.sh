#!/bin/bash
# Benchmark: `paratwin simulate` (default flags: fidelity and folding chosen by size) on the shapes
# people plan today, each derived from a shipped example. Prints one row per shape: GPUs, actors, wall
# seconds, peak RSS, SimGrid flows and the predicted iteration time, with how the workload was made.
# Usage: bench/todays_shapes.sh [--markdown FILE] [SHAPE...]
#   SHAPE: gpt80b-8192 gpt80b-frontier zero3-1536 zero3-2048 gpt462b-6144 llama405b-1024 deepseek-1024
#   (default: all of them), or gpt80b-8192-every-rank (every rank an actor: about 12 minutes, not by default).
#   --markdown also writes the rows as the README's table (bench/results/todays_shapes.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
paratwin=${PARATWIN:-$root/build/cli/paratwin}
[ -x "$paratwin" ] || { echo "build first: scripts/build.sh release" >&2; exit 1; }
# shellcheck source=markdown_table.sh
source "$root/bench/markdown_table.sh"
# shellcheck source=example_shapes.sh
source "$root/bench/example_shapes.sh"
markdown_option "$@"
shift "$markdown_args"
defaults=(gpt80b-8192 gpt80b-frontier zero3-1536 zero3-2048 gpt462b-6144 llama405b-1024 deepseek-1024)
known=("${defaults[@]}" gpt80b-8192-every-rank)
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=("${defaults[@]}")
check_shape_names "${known[*]}" "${shapes[@]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ex=$root/workloads/examples

# shape NAME: sets workload, machine, options, what (the workload's description for the table).
shape() {
  options=()
  case $1 in
    gpt80b-8192 | gpt80b-8192-every-rank)
      workload=$ex/gpt-80b-frontier-8192.json machine=frontier what="GPT-80B, AxoNN 4-D (\`gpt-80b-frontier-8192.json\`)"
      [[ $1 == gpt80b-8192 ]] || { options=(--fidelity fast); what="$what, every rank an actor (\`--fidelity fast\`)"; } ;;
    gpt80b-frontier)
      derive gpt-80b-frontier-8192.json "$work/w.json" \
        'w["name"] = "gpt-80b-frontier-75264"; w["parallelism"]["data"]["size"] = 1176; w["training"]["global_batch"] = 16 * 1176'
      workload=$work/w.json machine=frontier what="GPT-80B, AxoNN 4-D on the whole of Frontier (the example with 1,176 replicas)" ;;
    zero3-1536 | zero3-2048)
      local n=${1#zero3-} n_text
      n_text=$(python3 -c "print(f'{$n:,}')")
      derive gpt-18b-dgx2-384-zero3-mb2.json "$work/w.json" \
        "w['name'] = 'gpt-18b-selene-$n-zero3'; w['parallelism']['data']['size'] = $n; w['training']['global_batch'] = 2 * $n; w['training']['dtype'] = 'bf16'; w['placement']['devices_per_node'] = 8"
      workload=$work/w.json machine=selene
      what="ZeRO-3 18B GPT, no model parallelism (\`gpt-18b-dgx2-384-zero3-mb2.json\` on $n_text GPUs, bf16)" ;;
    gpt462b-6144)
      workload=$ex/gpt-462b-dgx-h100-6144-mcore.json machine=dgx-h100 what="GPT-462B, Megatron-Core t8 p16 v7 (\`gpt-462b-dgx-h100-6144-mcore.json\`)" ;;
    llama405b-1024)
      workload=$ex/llama31-405b-dgx-h100-1024-fp8cs.json machine=dgx-h100 what="Llama 3.1 405B, fp8, t8 p8 c2 v8 (\`llama31-405b-dgx-h100-1024-fp8cs.json\`)" ;;
    deepseek-1024)
      workload=$ex/deepseek-v3-dgx-h100-1024.json machine=dgx-h100 what="DeepSeek-V3, EP 64 across nodes (\`deepseek-v3-dgx-h100-1024.json\`)" ;;
  esac
}

printf '%-16s %7s %7s %9s %10s %9s %14s\n' shape GPUs actors "wall [s]" "RSS [MiB]" flows "predicted [s]"
: > "$work/rows.md"
for s in "${shapes[@]}"; do
  shape "$s"
  /usr/bin/time -f '%e %M' -o "$work/time" "$paratwin" simulate -w "$workload" --machine "$machine" --no-progress \
    "${options[@]}" --json "$work/out.json" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  read -r wall rss <"$work/time"
  python3 - "$work/out.json" "$s" "$wall" "$rss" "$machine" "$what" "$work/rows.md" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
shape, wall, rss, machine, what = sys.argv[2], float(sys.argv[3]), int(sys.argv[4]) / 1024, sys.argv[5], sys.argv[6]
print(f"{shape:16s} {j['ranks']:7d} {j['actors']:7d} {wall:9.1f} {rss:10.0f} {j['flows']:9d} {j['iteration_s']:14.4f}")
w = f"{wall:.1f} s" if wall < 100 else f"{wall:.0f} s"
with open(sys.argv[7], "a") as f:
    f.write(f"| {what} | {machine} | {j['ranks']:,} | {j['actors']:,} | {w} | {rss:.0f} MiB | {j['flows']:,} | {j['iteration_s']:.4f} s |\n")
PY
done
write_markdown_table "| workload | machine | GPUs | actors | wall | peak RSS | SimGrid flows | predicted |" \
  "|---|---|---:|---:|---:|---:|---:|---:|" "$work/rows.md"
