#!/usr/bin/env bash
# Model and hardware FLOPs end to end: model TFLOP/s and MFU do not count
# recomputation, so they change with the throughput when only the recomputation changes; hardware
# TFLOP/s and HFU are printed beside them; compare reads summaries saved before the two were told apart.
# Usage: check_metrics.sh PARATWIN EXAMPLES_DIR GOOD_DIR
set -u
pt=$1; ex=$2; good=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The change column of a compare row ("+55.7 %"), by the row's name.
change() { grep -E "^  $1 " <<<"$2" | awk '{print $(NF-1)}'; }

# Selective instead of full recomputation (Korthikanti et al. 2022, Table 3's GPT 22B on 8 A100s): the
# iteration gets faster; model TFLOP/s and MFU by exactly as much as the throughput, hardware TFLOP/s by less.
out=$("$pt" compare "$ex/gpt-22b-selene-8-full-recompute.json" "$ex/gpt-22b-selene-8-sp-selective.json" -m selene 2>&1) ||
  fail "compare full vs selective: $out"
tp=$(change "throughput \[tokens/s\]" "$out")
model=$(change "model TFLOP/s per device \[TFLOP/s\]" "$out")
mfu=$(change "model FLOPs: of peak \(MFU\) \[%\]" "$out")
hw=$(change "hardware TFLOP/s per device \[TFLOP/s\]" "$out")
[[ -n $tp && $tp == "$model" && $tp == "$mfu" ]] ||
  fail "model TFLOP/s ($model) and MFU ($mfu) do not change as the throughput ($tp): $out"
[[ -n $hw && $hw != "$tp" ]] || fail "hardware TFLOP/s ($hw) changed as the throughput ($tp): $out"
grep -q "add what checkpointing recomputes (A: full, B: selective)" <<<"$out" ||
  fail "no note on what each side recomputes: $out"

# simulate prints both, and names the convention.
out=$("$pt" simulate -w "$good/tiny-dp128.json" -m frontier --json "$dir/new.json" 2>&1) || fail "simulate: $out"
grep -Eq "^  model FLOPs +[0-9.]+ TFLOP/s per device = [0-9.]+% of [a-z0-9]+ peak \(MFU" <<<"$out" || fail "no MFU line: $out"
grep -Eq "^  hardware FLOPs +[0-9.]+ TFLOP/s per device = [0-9.]+% of [a-z0-9]+ peak \(HFU, " <<<"$out" ||
  fail "no HFU line: $out"
grep -q "both count the full s×s attention" <<<"$out" || fail "no attention convention: $out"
grep -q '"hardware_tflops_per_gpu"' "$dir/new.json" || fail "no hardware_tflops_per_gpu in the JSON"

# A summary saved by an older paratwin: one "model" figure that counted recomputation. compare shows it
# as hardware FLOPs, its model FLOPs as unknown, and says so.
python3 - "$dir/new.json" "$dir/old.json" <<'EOF' || fail "could not write the legacy summary"
import json, sys
d = json.load(open(sys.argv[1]))
# The names before schema version 1, and its one FLOP figure.
del d["schema_version"]
d["iteration_seconds"] = d.pop("iteration_s")
d["tokens_per_second"] = d.pop("tokens_per_s")
d["ranks_compute_exposed_bubble_other"] = d.pop("ranks_compute_exposed_bubble_other_s")
d["memory"]["max_bytes_per_rank"] = d["memory"].pop("max_bytes_per_gpu")
for st in d["stages"]:
    for key in ("compute", "exposed_comm", "bubble", "other_idle"):
        st[key] = st.pop(key + "_s")
d["model_tflops_per_device"] = d.pop("hardware_tflops_per_gpu")
d["percent_of_peak"] = d.pop("percent_of_peak_hardware")
for key in ("model_tflops_per_gpu", "flops_convention"):
    del d[key]
for c in d.get("collectives", []):
    del c["waiting_s"]
    c["seconds"] = c.pop("total_s")
    c["exposed_seconds"] = c.pop("exposed_s")
json.dump(d, open(sys.argv[2], "w"), indent=2)
EOF
out=$("$pt" compare "$dir/old.json" "$dir/new.json" 2>&1) || fail "compare of a legacy and a new summary: $out"
grep -Eq "^  model TFLOP/s per device \[TFLOP/s\] +- +[0-9.]+ " <<<"$out" || fail "legacy model TFLOP/s not unknown: $out"
grep -Eq "^  hardware TFLOP/s per device \[TFLOP/s\] +([0-9.]+) +[0-9.]+ +0 +0 %" <<<"$out" ||
  fail "legacy hardware TFLOP/s differs from the new one: $out"
grep -q "A: old was saved by an older paratwin" <<<"$out" || fail "no legacy note: $out"
exit 0
