# paratwin compare: saved summaries whose figures no run produces, and runs whose inputs are wrong on
# one side. Every case exits 2 naming the side or the file and JSON path,
# before anything is simulated and with nothing written (--json out.json must not appear).

# A saved summary of tiny-dp on Frontier (a.json), and b.json: the same with EDIT applied to its
# document `d` (Python).
set(COMPARE_SAVED_SETUP [=[$PT simulate -w $EX/tiny-dp.json -m frontier --json a.json >/dev/null 2>&1 &&
  python3 -c 'import json, sys; d = json.load(open("a.json")); exec(sys.argv[1]); json.dump(d, open("b.json", "w"))' ]=])
function(compare_saved_case name regex edit)
  hostile_case(compare_${name} 2 "${regex}" "${COMPARE_SAVED_SETUP}${edit}"
    [=[$PT compare a.json b.json --json out.json]=])
endfunction()

# "stages": [] made compare exit 1 (a run summary without stages).
compare_saved_case(summary_without_stages [=[b\.json: stages = \[\]: a run has at least one pipeline stage]=] [=['d["stages"] = []']=])
# Times no run produces: negative, zero, 1e308 (whose differences overflowed into null in --json).
compare_saved_case(summary_negative_iteration [=[b\.json: iteration_s = -1 is out of range]=]
  [=['d["iteration_s"] = -1']=])
compare_saved_case(summary_zero_iteration [=[b\.json: iteration_s = 0 is not a run's figure]=]
  [=['d["iteration_s"] = 0']=])
compare_saved_case(summary_huge_iteration [=[b\.json: iteration_s = 1e\+308 is out of range]=]
  [=['d["iteration_s"] = 1e308']=])
compare_saved_case(summary_negative_stage_time [=[b\.json: stages\[0\]\.compute_s = -0\.5 is out of range]=]
  [=['d["stages"][0]["compute_s"] = -0.5']=])
compare_saved_case(summary_huge_collective_time [=[b\.json: collectives\[0\]\.total_s = 1e\+308 is out of range]=]
  [=['d["collectives"][0]["total_s"] = 1e308']=])
compare_saved_case(summary_negative_rank_time
  [=[b\.json: ranks_compute_exposed_bubble_other_s\[1\]\[2\] = -1 is out of range]=]
  [=['d["ranks_compute_exposed_bubble_other_s"][1][2] = -1']=])
# Groups of no rank, negative counts and sizes.
compare_saved_case(summary_group_size_zero [=[b\.json: collectives\[0\]\.group_size = 0 is out of range \[1, 2\]]=]
  [=['d["collectives"][0]["group_size"] = 0']=])
compare_saved_case(summary_negative_count [=[b\.json: collectives\[0\]\.count = -3 is out of range]=]
  [=['d["collectives"][0]["count"] = -3']=])
compare_saved_case(summary_negative_bytes [=[b\.json: collectives\[0\]\.bytes = -1 is out of range]=]
  [=['d["collectives"][0]["bytes"] = -1']=])
compare_saved_case(summary_negative_ranks [=[b\.json: ranks = -2 is out of range]=] [=['d["ranks"] = -2']=])
compare_saved_case(summary_rows_not_per_rank [=[b\.json: ranks_compute_exposed_bubble_other_s: has 1 rows but "ranks" = 2]=]
  [=['d["ranks_compute_exposed_bubble_other_s"].pop()']=])
compare_saved_case(summary_zero_device_memory [=[b\.json: memory\.device_bytes = 0 is not a run's figure]=]
  [=['d["memory"]["device_bytes"] = 0']=])
compare_saved_case(summary_fits_not_boolean [=[b\.json: memory\.fits: expected true or false]=]
  [=['d["memory"]["fits"] = "yes"']=])
# The first side is checked as strictly as the second.
hostile_case(compare_summary_first_side_bad 2 [=[b\.json: iteration_s = -1 is out of range]=]
  "${COMPARE_SAVED_SETUP}'d[\"iteration_s\"] = -1'" [=[$PT compare b.json a.json --json out.json]=])
# --algorithm cannot re-run a saved summary.
hostile_case(compare_summary_with_algorithm 2 [=[--algorithm: saved summaries are compared as they ran]=]
  "${COMPARE_SAVED_SETUP}'pass'" [=[$PT compare a.json b.json --algorithm all_reduce=tree --json out.json]=])

# Input errors of one side made compare exit 1 from inside its child simulation: both sides are now
# checked before either starts.
hostile_case(compare_machine_too_small_both 2 [=[A \(localhost\): localhost has 1 node but the workload needs 128 devices]=] ""
  [=[$PT compare localhost localhost -w $GOOD/tiny-dp128.json --json out.json]=])
hostile_case(compare_machine_too_small_b 2 [=[B \(perlmutter\): perlmutter has [0-9]+ nodes but the workload needs 32768 devices]=] ""
  [=[$PT compare frontier perlmutter -w $EX/gpt-320b-frontier-32768.json --json out.json]=])
hostile_case(compare_workload_too_large_for_library_machine 2 [=[A \(rccl\): --machine: localhost has]=] ""
  [=[$PT compare rccl pccl -m localhost -w $GOOD/tiny-dp128.json --json out.json]=])
hostile_case(compare_fold_with_exact_fidelity 2 [=[A \(rccl\): --fold: folding is part of fast fidelity]=] ""
  [=[$PT compare rccl pccl -w $EX/tiny-gpt-3d.json --fidelity exact --fold --json out.json]=])
# --algorithm, as simulate checks it, for both sides.
hostile_case(compare_algorithm_unknown 2 [=[A \(rccl\): --algorithm: "all_reduce=bogus": unknown algorithm]=] ""
  [=[$PT compare rccl pccl -w $EX/tiny-gpt-3d.json --algorithm all_reduce=bogus --json out.json]=])
hostile_case(compare_algorithm_not_power_of_two 2 [=[A \(rccl\): --algorithm: .*power-of-two]=] ""
  [=[$PT compare rccl pccl -m frontier -w $GOOD/tiny-dp3.json --algorithm all_reduce=recursive --json out.json]=])
