# The reproducers of answers that misled a what-if study, run as the report ran
# them: each must now end with exit 0 and give the corrected answer, writing nothing into its folder.
# (The behaviour behind each is tested in detail by the e2e and unit tests named beside it.)

# 1. RCCL against PCCL on the headline job: the z all-gathers (one GCD per node) change algorithm and
#    time, the data all-reduce stays RCCL's tree on both sides (cli.compare_algorithms).
hostile_case(answers_pccl_z_collectives 0
  [=[all_reduce data \(group size 128\): algorithm +tree +tree +same.*all_gather z \(group size 8\): algorithm +ring +hierarchical +changed]=] ""
  [=[$PT compare rccl pccl -w $EX/gpt-80b-frontier-8192.json -m frontier 2>&1 | tr '\n' ' ']=])
# 2. compare keeps the out-of-memory verdict of each side.
hostile_case(answers_compare_out_of_memory 0 [=[B  summit: .*OUT OF MEMORY]=] ""
  [=[$PT compare selene summit -w $EX/gpt-1.7b-selene-32.json]=])
# 3. Model TFLOP/s (MFU) follow the throughput whatever the recomputation; hardware TFLOP/s beside them
#    (cli.model_and_hardware_flops).
hostile_case(answers_mfu_follows_throughput 0 [=[^MFU change = throughput change$]=] ""
  [=[out=$($PT compare $EX/gpt-22b-selene-8-full-recompute.json $EX/gpt-22b-selene-8-sp-selective.json -m selene) || exit 1
     grep -q "hardware FLOPs: of peak (HFU)" <<<"$out" || exit 1
     t=$(grep -E "^  throughput " <<<"$out" | awk '{print $NF, $(NF-1)}'); m=$(grep -E "^  model TFLOP/s per device" <<<"$out" | awk '{print $NF, $(NF-1)}')
     echo "throughput $t, model $m"; [[ -n $t && $t == "$m" ]] && echo "MFU change = throughput change"]=])
# 4. search's help names emitted files as they are written (cli.search_help_emit_names).
hostile_case(answers_search_help_file_names 0 [=[001-]=] "" [=[$PT search --help]=])
# 5. A sweep of 1,024 GPUs with no "fidelity" runs folded, as simulate would, and says so per point.
hostile_case(answers_sweep_automatic_fidelity 0 [=[1024 GPUs.*(folded|fold)]=] ""
  [=[o=$(mktemp -d); $PT sweep --spec $SRC/tests/e2e/sweep/auto-fidelity.json --out $o --plots none 2>&1; s=$?; rm -rf $o; exit $s]=])
# 6. validate run from another folder writes there, not into the repository (cli.validate_default_out).
hostile_case(answers_validate_writes_here 0 [=[results/validation untouched]=] ""
  [=[before=$(cd $SRC && git status --porcelain results/validation 2>/dev/null | sha256sum)
     o=$(mktemp -d); (cd $o && $PT validate --suite selene-175b --model analytical --plots none >/dev/null 2>&1 && test -f validation/validation.csv); s=$?; rm -rf $o
     after=$(cd $SRC && git status --porcelain results/validation 2>/dev/null | sha256sum)
     [[ $s -eq 0 && $before == "$after" ]] && echo "results/validation untouched"]=])
# 7. The x all-reduce inside a node takes one time per call at exact and fast fidelity
#    (CollectiveTime.PerCallTimeOfAnInNodeAllReduceAgreesAcrossFidelities).
hostile_case(answers_collective_time_by_fidelity 0 [=[^same x all-reduce time per call: ]=] ""
  [=[for f in exact fast; do
       $PT simulate -w $GOOD/gpt-80b-frontier-64.json -m frontier --fidelity $f --no-progress 2>/dev/null | awk '$1 == "all_reduce" && $3 == "x" {print $7}' > /tmp/answers7.$$.$f
     done
     a=$(cat /tmp/answers7.$$.exact); b=$(cat /tmp/answers7.$$.fast); rm -f /tmp/answers7.$$.*
     echo "exact $a us, fast $b us"; [[ -n $a && $a == "$b" ]] && echo "same x all-reduce time per call: $a us"]=])
# Found running exec on a GPU with the default machine (localhost, CPU cores with an fp32 peak only): a
# bf16 run was said to reach "4.8e+05% of bf16 peak". The percentages now name the peak they are of.
hostile_case(answers_peak_of_another_dtype 0 [=[of fp32 peak \(MFU.*localhost lists no bf16 peak]=]
  [=[python3 -c 'import json, os; d = json.load(open(os.environ["EX"] + "/tiny-dp.json")); d["training"]["dtype"] = "bf16"; d["parallelism"]["data"]["size"] = 1; d["optimizations"] = {}; json.dump(d, open("w.json", "w"))']=]
  [=[$PT simulate -w w.json -m localhost 2>&1 | tr '\n' ' ']=])
