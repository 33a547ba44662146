#!/bin/bash
# Benchmark: what folding costs in fidelity on five kinds of parallelism. Each shape, derived from a
# shipped example, is simulated twice at fast fidelity: every rank an actor (--fidelity fast) and folded
# (--fidelity fast --fold: one actor per node of a data-parallel replica, standing for it in every
# replica). Prints per shape the GPUs, both runs' actors, wall seconds and predicted iteration times, and
# the fold's difference from every-rank in percent. A shape the program cannot fold says why.
# Usage: bench/fold_error.sh [--markdown FILE] [SHAPE...]
#   SHAPE: ptdp zero3 hsdp cp moe (default: all five)
#   --markdown also writes the rows as the README's table (bench/results/fold_error.md).
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
known=(ptdp zero3 hsdp cp moe)
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=("${known[@]}")
check_shape_names "${known[*]}" "${shapes[@]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shape NAME: writes $work/w.json and sets machine and what (the table's description).
shape() {
  case $1 in
    ptdp)
      derive gpt-70b-dgx-h100-768-mcore.json "$work/w.json" 'w["parallelism"]["data"]["size"] = 16; w["training"]["global_batch"] = 128'
      machine=dgx-h100 what="PTD-P: GPT-70B, Megatron-Core t8 p2 v42 d16 (\`gpt-70b-dgx-h100-768-mcore.json\`, 16 replicas)" ;;
    zero3)
      derive gpt-18b-dgx2-384-zero3-mb2.json "$work/w.json" \
        'w["training"]["dtype"] = "bf16"; w["placement"]["devices_per_node"] = 8'
      machine=selene what="ZeRO-3 over the whole machine: 18B GPT, d384 (\`gpt-18b-dgx2-384-zero3-mb2.json\`, bf16)" ;;
    hsdp)
      derive llama2-7b-fms-hsdp-a100-128.json "$work/w.json" ''
      machine=$root/results/reference/machines/a100-80gb-400g.json
      what="HSDP: Llama 2 7B, sharded in a node, replicated over 16 (\`llama2-7b-fms-hsdp-a100-128.json\`)" ;;
    cp)
      derive llama3-70b-dgx-h100-1024-fp8.json "$work/w.json" 'w["parallelism"]["data"]["size"] = 4; w["training"]["global_batch"] = 64'
      machine=dgx-h100 what="CP: Llama 3 70B, t4 c2 p4 v5 d4 (\`llama3-70b-dgx-h100-1024-fp8.json\`, 4 replicas)" ;;
    moe)
      derive moe-13b-16e-summit-256.json "$work/w.json" ''
      machine=summit what="MoE, EP 16 across nodes: 13B base, t8 e16 d2 (\`moe-13b-16e-summit-256.json\`)" ;;
  esac
}

# run FLAGS...: simulates $work/w.json; sets wall, predicted, actors, folded_note.
run() {
  /usr/bin/time -f '%e' -o "$work/time" "$paratwin" simulate -w "$work/w.json" --machine "$machine" --no-progress \
    "$@" --json "$work/out.json" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
  wall=$(tail -1 "$work/time")
  read -r predicted actors folded_note < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
note = "folded by " + j["folded_by"] if j["folded"] else "not folded: " + j.get("not_folded_because", "?")
print(j["iteration_s"], j["actors"], note)' "$work/out.json")
}

printf '%-6s %6s %8s %9s %14s %8s %9s %14s %9s\n' shape GPUs actors "wall [s]" "every rank [s]" actors "wall [s]" \
  "folded [s]" "fold diff"
: >"$work/rows.md"
for s in "${shapes[@]}"; do
  shape "$s"
  run --fidelity fast
  every_wall=$wall every=$predicted every_actors=$actors
  run --fidelity fast --fold
  python3 - "$s" "$every_wall" "$every" "$every_actors" "$wall" "$predicted" "$actors" "$folded_note" \
    "$machine" "$what" "$work/rows.md" "$work/out.json" <<'PY'
import json, os, sys
s, ew, ep, ea, fw, fp, fa, note, machine, what, rows, out = sys.argv[1:]
ranks = json.load(open(out))["ranks"]
ew, ep, fw, fp, ea, fa = float(ew), float(ep), float(fw), float(fp), int(ea), int(fa)
diff = round(100 * (fp / ep - 1), 2) + 0.0  # no "-0.00"
print(f"{s:6s} {ranks:6d} {ea:8d} {ew:9.1f} {ep:14.4f} {fa:8d} {fw:9.1f} {fp:14.4f} {diff:+8.2f}%  {note}")
machine = os.path.basename(machine).removesuffix(".json")
with open(rows, "a") as f:
    f.write(f"| {what} | {machine} | {ranks:,} | {ea:,} | {ew:.1f} s | {ep:.4f} s | {fa:,} ({note}) | {fw:.1f} s "
            f"| {fp:.4f} s | {diff:+.2f} % |\n")
PY
done

write_markdown_table "| workload | machine | GPUs | actors, every rank | wall | predicted | actors, folded | wall | predicted | fold − every rank |" \
  "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" "$work/rows.md"
