#!/bin/bash
# `paratwin validate --fit` recovers a known kernel_efficiency: points are made by simulating two
# workloads with the megatron-lm-2021 profile at 0.62, one of them declared a calibration point; the fit
# must return 0.62 and bring the held-out point's error to ~0.
#   check_fit.sh PARATWIN EXAMPLES DIR
set -u
pt=$1 ex=$2 dir=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir/reference"
truth=0.62
for w in tiny-dp tiny-pp-1f1b; do
  python3 - "$ex/$w.json" "$dir/$w.json" "$dir/$w-truth.json" "$truth" <<'PY' || fail "writing $w"
import json, sys
w = json.load(open(sys.argv[1]))
w["framework"] = {"profile": "megatron-lm-2021"}
json.dump(w, open(sys.argv[2], "w"))
w["framework"]["kernel_efficiency"] = float(sys.argv[4])
json.dump(w, open(sys.argv[3], "w"))
PY
  "$pt" simulate --workload "$dir/$w-truth.json" --machine localhost --nodes 1 --json "$dir/$w.out.json" > /dev/null \
    || fail "simulate $w"
done
python3 - "$dir" <<'PY' || fail "writing the suite"
import json, sys
d = sys.argv[1]
points = []
for w, cal in (("tiny-dp", True), ("tiny-pp-1f1b", False)):
    t = json.load(open(f"{d}/{w}.out.json"))["iteration_s"]
    points.append({"label": w, "workload": f"{d}/{w}.json", "machine": "localhost", "published": t,
                   "where": "synthetic", "calibration": cal})
json.dump({"suite": "synthetic", "title": "synthetic points", "source": {"publication": "none", "where": "made by the test"},
           "metric": "iteration_s", "units": "s", "held_fixed": "", "assumptions": "", "end_to_end": True,
           "points": points}, open(f"{d}/reference/synthetic.json", "w"))
PY
"$pt" validate --fit --machine localhost --reference "$dir/reference" > "$dir/out.txt" 2> "$dir/err.txt" \
  || { cat "$dir/out.txt" "$dir/err.txt"; fail "validate --fit failed"; }
cat "$dir/out.txt"
grep -qE 'fitted: [0-9.]+ -> 0\.6(19|20|21) ' "$dir/out.txt" || fail "did not recover kernel_efficiency $truth"
grep -qE 'the 1 points not used: mean \|error\| [0-9.]+ % -> 0\.[0-2] %' "$dir/out.txt" || fail "held-out point not within 0.3 %"
echo "ok: recovered $truth"
