# Outputs that would destroy inputs or each other, names that climb out of their folder, temporary
# files left behind, JSON with a NUL, bytes that are not UTF-8, and messages that name the wrong thing.

# --- An output naming an input of the same run: exit 2 naming both options, nothing replaced.
hostile_case(outputs_sweep_out_holds_spec 2 [=[--out d/sweep.json: is the same file as --spec d/sweep.json]=]
  [=[mkdir d && cp $EX/tiny-dp.json d/w.json &&
     echo '{"name": "s", "workloads": ["w.json"], "machines": ["localhost"], "gpus": [2], "scaling": "weak"}' > d/sweep.json]=]
  [=[$PT sweep --spec d/sweep.json --out d]=])
hostile_case(outputs_sweep_out_holds_workload 2 [=[--out d/sweep.csv: is the same file as workloads\[0\] of --spec s.json]=]
  [=[mkdir d && cp $EX/tiny-dp.json d/sweep.csv &&
     echo '{"name": "s", "workloads": ["d/sweep.csv"], "machines": ["localhost"], "gpus": [2], "scaling": "weak"}' > s.json]=]
  [=[$PT sweep --spec s.json --out d]=])
hostile_case(outputs_lower_json_is_workload 2 [=[--json w.json: is the same file as --workload w.json]=]
  [=[cp $EX/tiny-dp.json w.json]=] [=[$PT lower -w w.json --json w.json]=])
hostile_case(outputs_lower_json_is_workload_spelt_otherwise 2 [=[--json .*/w.json: is the same file as --workload ./w.json]=]
  [=[cp $EX/tiny-dp.json w.json]=] [=[$PT lower -w ./w.json --json "$PWD/w.json"]=])
hostile_case(outputs_lower_json_links_to_workload 2 [=[--json l.json: is the same file as --workload w.json]=]
  [=[cp $EX/tiny-dp.json w.json && ln -s w.json l.json]=] [=[$PT lower -w w.json --json l.json]=])
hostile_case(outputs_lower_json_hard_links_to_workload 2 [=[--json h.json: is the same file as --workload w.json]=]
  [=[cp $EX/tiny-dp.json w.json && ln w.json h.json]=] [=[$PT lower -w w.json --json h.json]=])
hostile_case(outputs_simulate_trace_is_workload 2 [=[--trace w.json: is the same file as --workload w.json]=]
  [=[cp $EX/tiny-dp.json w.json]=] [=[$PT simulate -w w.json -m localhost --trace w.json]=])
hostile_case(outputs_simulate_json_is_profile 2 [=[--json p.json: is the same file as --profile p.json]=]
  [=[cp $GOOD/profile-localhost.json p.json]=] [=[$PT simulate -w $EX/tiny-dp.json -m localhost --profile p.json --json p.json]=])
hostile_case(outputs_simulate_json_is_machine 2 [=[--json m.json: is the same file as --machine m.json]=]
  [=[cp $SRC/topology/machines/localhost.json m.json]=] [=[$PT simulate -w $EX/tiny-dp.json -m m.json --json m.json]=])
hostile_case(outputs_search_json_is_workload 2 [=[--json w.json: is the same file as --workload w.json]=]
  [=[cp $EX/tiny-dp.json w.json]=] [=[$PT search -w w.json -m localhost -n 2 --json w.json]=])
hostile_case(outputs_compare_json_is_a 2 [=[--json a.json: is the same file as A a.json]=]
  [=[cp $EX/tiny-dp.json a.json && cp $EX/tiny-dp.json b.json]=]
  [=[$PT compare a.json b.json -m localhost --json a.json]=])
hostile_case(outputs_import_out_is_machine 2 [=[--out m.json: is the same file as --machine m.json]=]
  [=[cp $SRC/topology/machines/localhost.json m.json]=]
  [=[$PT import megatron --machine m.json --out m.json -- pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --max-position-embeddings 64 --micro-batch-size 1 --global-batch-size 2 --vocab-size 1024 --nproc_per_node 2]=])

# --- Two outputs of one run on one file: exit 2 naming both.
hostile_case(outputs_simulate_json_and_trace_one_file 2 [=[--json x.json: is the same file as --trace x.json, another output]=] ""
  [=[$PT simulate -w $EX/tiny-dp.json -m localhost --json x.json --trace x.json]=])
hostile_case(outputs_simulate_json_and_trace_spelt_otherwise 2 [=[--json x.json: is the same file as --trace ./x.json, another output]=] ""
  [=[$PT simulate -w $EX/tiny-dp.json -m localhost --json x.json --trace ./x.json]=])
hostile_case(outputs_simulate_json_and_plot_one_file 2 [=[--plot x.svg: is the same file as --json x.svg]=] ""
  [=[$PT simulate -w $EX/tiny-dp.json -m localhost --json x.svg --plot x.svg]=])
hostile_case(outputs_compare_json_and_plot_one_file 2 [=[--plot x.svg: is the same file as --json x.svg]=] ""
  [=[$PT compare localhost perlmutter -w $EX/tiny-dp.json --json x.svg --plot x.svg]=])
hostile_case(outputs_search_emit_holds_json 2 [=[--json em/index.csv: is the same file as --emit em/index.csv]=] ""
  [=[$PT search -w $EX/tiny-dp.json -m localhost -n 2 --emit em --json em/index.csv]=])
hostile_case(outputs_search_emit_holds_json_folder_exists 2 [=[--json em/index.csv: is the same file as --emit em/index.csv]=]
  [=[mkdir em]=] [=[$PT search -w $EX/tiny-dp.json -m localhost -n 2 --emit em --json em/index.csv]=])

# --- Names that become part of a path: one rule, "." and ".." refused.
hostile_case(outputs_calibration_suite_named_dotdot 2 [=[s.json: name = "\.\.": use letters, digits]=]
  [=[cp $EX/tiny-dp.json w.json &&
     echo '{"name": "..", "workloads": [{"workload": "w.json", "label": "DP", "ranks": 2}]}' > s.json]=]
  [=[$PT calibrate suite s.json --out o]=])
hostile_case(outputs_calibration_suite_workload_stem_dot 2 [=[names a report folder: use letters, digits]=]
  [=[cp $EX/tiny-dp.json ..json &&
     echo '{"name": "s", "workloads": [{"workload": "..json", "label": "DP", "ranks": 2}]}' > s.json]=]
  [=[$PT calibrate suite s.json --out o]=])
hostile_case(outputs_compare_machines_name_climbs_out 2 [=[--machine = "\.\./x" names the file of --machines DIR: use letters]=]
  [=[mkdir d && cp $SRC/topology/machines/localhost.json x.json]=]
  [=[$PT compare --machines d --machine ../x -w $EX/tiny-dp.json]=])

# --- Interrupted runs leave no temporary file; stale ones of dead runs are swept.
# The runner fails the case if a NAME.tmp-PID.stream is left in the folder.
# set -m: a background job of a shell without job control would ignore SIGINT. The wait is bounded, so
# that a run that does not end fails the case instead of its timeout.
function(interrupted_simulate_case name signal number)
  hostile_case(outputs_simulate_${name}_removes_stream 0 "simulate ended by signal ${number}"
    [=[cp $EX/gpt-20b-perlmutter-2048.json w.json]=]
    "set -m<semicolon> $PT simulate -w w.json -m perlmutter --fidelity fast --trace t.json --no-progress >/dev/null 2>&1 & pid=$!
     for i in $(seq 200)<semicolon> do compgen -G 't.json.tmp-*.stream' >/dev/null && break<semicolon> sleep 0.05<semicolon> done
     sleep 0.5<semicolon> kill -${signal} $pid
     for i in $(seq 300)<semicolon> do kill -0 $pid 2>/dev/null || break<semicolon> sleep 0.1<semicolon> done
     kill -0 $pid 2>/dev/null && { echo \"simulate still runs 30 s after SIG${signal}\"<semicolon> kill -KILL $pid<semicolon> }
     wait $pid<semicolon> s=$?<semicolon> echo \"simulate ended by signal $((s - 128))\"")
endfunction()
interrupted_simulate_case(sigterm TERM 15)
interrupted_simulate_case(sigint INT 2)
hostile_case(outputs_stale_temporaries_swept 0 [=[^left: other.tmp-[0-9]+.stream t.json t.json.tmp-1.stream w.json$]=] ""
  [=[d=$(mktemp -d) && cp $EX/tiny-dp.json $d/w.json && cd $d || exit 1
     dead=$(bash -c 'echo $$')
     touch t.json.tmp-$dead.stream t.json.tmp-$dead.1 t.json.tmp-$dead t.json.tmp-1.stream other.tmp-$dead.stream
     $PT simulate -w w.json -m localhost --trace t.json >/dev/null 2>&1; s=$?
     echo "left:" $(ls); cd /; rm -rf "$d"; exit $s]=])

# --- JSON with a NUL and anything after it.
hostile_case(outputs_workload_nul_then_garbage 2 [=[w.json: is not valid JSON: a NUL byte at line]=]
  [=[cp $EX/tiny-dp.json w.json && printf '\0{"garbage' >> w.json]=] [=[$PT lower -w w.json]=])
hostile_case(outputs_machine_nul_then_garbage 2 [=[m.json: is not valid JSON: a NUL byte]=]
  [=[cp $SRC/topology/machines/localhost.json m.json && printf '\0\0\0' >> m.json]=]
  [=[$PT lower -w $EX/tiny-dp.json -m m.json]=])
hostile_case(outputs_sweep_spec_nul_then_garbage 2 [=[s.json: is not valid JSON: a NUL byte at line 1, column [0-9]+]=]
  [=[printf '{"name": "s", "workloads": ["%s"], "machines": ["localhost"], "gpus": [2], "scaling": "weak"}\0x' "$EX/tiny-dp.json" > s.json]=]
  [=[$PT sweep --spec s.json --out o]=])

# --- Bytes that are not UTF-8: exit 2 naming the argument, or written safely with exit 0.
hostile_case(outputs_import_name_not_utf8 2 [=[--name: is not UTF-8 text \(byte 0xff at offset 3\)]=] ""
  [=[$PT import megatron --name $'bad\xff' -- pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --max-position-embeddings 64 --micro-batch-size 1 --global-batch-size 2 --vocab-size 1024 --nproc_per_node 2]=])
hostile_case(outputs_import_unknown_argument_not_utf8 0 [=[Unknown, left out \(--allow-unknown\): --foo]=] ""
  [=[$PT import megatron --allow-unknown -- pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --max-position-embeddings 64 --micro-batch-size 1 --global-batch-size 2 --vocab-size 1024 --nproc_per_node 2 $'--foo\xff' 1]=])
hostile_case(outputs_compare_file_name_not_utf8 0 [=["label": "tiny-dp \(A.+\.json\)"]=]
  [=[cp $EX/tiny-dp.json $'A\xff.json' && cp $EX/tiny-dp.json b.json]=]
  [=[$PT compare $'A\xff.json' b.json -m localhost --json /dev/stdout]=])

# --- Messages that name what is wrong.
hostile_case(outputs_number_just_past_bound 2 [=[gemm_cache_MB = 1000000\.5 is out of range \[0, 1e\+06\]]=]
  [=[sed 's/"gemm_cache_MB": 1,/"gemm_cache_MB": 1000000.5,/' $SRC/topology/machines/localhost.json > m.json]=]
  [=[$PT lower -w $EX/tiny-dp.json -m m.json]=])
hostile_case(outputs_validate_machines_file_named_otherwise 2 [=[--machines: d/localhost.json: "name" = "perlmutter"]=]
  [=[mkdir d && sed 's/"name": "perlmutter"/"name": "perlmutter"/' $SRC/topology/machines/perlmutter.json > d/localhost.json]=]
  [=[$PT validate --reference $SRC/results/reference --machines d --out o]=])
hostile_case(outputs_sweep_spec_lists_folder 2 [=[workloads\[0\] = "d" is a folder]=]
  [=[mkdir d && echo '{"name": "s", "workloads": ["d"], "machines": ["localhost"], "gpus": [2], "scaling": "weak"}' > s.json]=]
  [=[$PT sweep --spec s.json --out o]=])
hostile_case(outputs_import_error_names_the_flag 2 [=[--micro-batch-size \(the workload's training.micro_batch\): × model.seq_len exceeds]=] ""
  [=[$PT import megatron -- pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --max-position-embeddings 64 --micro-batch-size 100000000 --global-batch-size 200000000 --vocab-size 1024 --nproc_per_node 2]=])
hostile_case(outputs_empty_number_names_the_option 2 [=[^--gpus: the value is empty: give one or leave the option out]=] ""
  [=[$PT search -w $EX/tiny-dp.json -n '']=])
hostile_case(outputs_empty_choice_names_the_option 2 [=[^--fidelity: the value is empty]=] ""
  [=[$PT simulate -w $EX/tiny-dp.json --fidelity '']=])
hostile_case(outputs_empty_megatron_value_names_the_flag 2 [=[^--num-layers \(in command\): the value is empty]=] ""
  [=[$PT import megatron -- pretrain_gpt.py --num-layers '' --hidden-size 64]=])
