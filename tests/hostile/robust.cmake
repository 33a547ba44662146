# Inputs that crashed paratwin (a signal, exit 1) or that it silently ignored.

# --- import megatron multiplied flags without bounds; products wrapped to 0 and divided by zero
# (SIGFPE, exit 136). Every integer flag is range-checked, every product overflow-checked.
set(MEGATRON_BASE [=[$PT import megatron -- --nproc_per_node 8 --num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 128 --vocab-size 1000]=])
hostile_case(robust_import_tp_pp_wrap 2 [=[--tensor-model-parallel-size = 4294967296 is out of range \[1, 4194304\]]=] ""
  "${MEGATRON_BASE} --tensor-model-parallel-size 4294967296 --pipeline-model-parallel-size 4294967296")
hostile_case(robust_import_pp_wrap 2 [=[--pipeline-model-parallel-size = 4294967296 is out of range \[1, 65536\]]=] ""
  "${MEGATRON_BASE} --pipeline-model-parallel-size 4294967296")
hostile_case(robust_import_micro_batch_wrap 2 [=[--micro-batch-size = 4611686018427387904 is out of range \[1, 1073741824\]]=] ""
  "${MEGATRON_BASE} --micro-batch-size 4611686018427387904")
hostile_case(robust_import_nproc_wrap 2 [=[--nproc_per_node = 4611686018427387904 is out of range \[1, 65536\]]=] ""
  [=[$PT import megatron -- --nproc_per_node 4611686018427387904 --nnodes 4 --num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 128 --vocab-size 1000]=])
hostile_case(robust_import_world_too_large 2 [=[--nnodes: makes the world size 274877906944 \(--nproc_per_node 65536 × --nnodes 4194304\), more than 4194304 ranks]=] ""
  [=[$PT import megatron -- --nproc_per_node 65536 --nnodes 4194304 --num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 128 --vocab-size 1000]=])
hostile_case(robust_import_beyond_int64 2 [=[--global-batch-size = 99999999999999999999999 is out of range]=] ""
  "${MEGATRON_BASE} --global-batch-size 99999999999999999999999")
hostile_case(robust_import_negative 2 [=[--num-layers = -4 is out of range \[1, 1000000\]]=] ""
  [=[$PT import megatron -- --nproc_per_node 8 --num-layers -4 --hidden-size 256 --num-attention-heads 8 --seq-length 128 --vocab-size 1000]=])
hostile_case(robust_import_hidden_too_large 2 [=[--hidden-size = 2305843009213693952 is out of range \[1, 1048576\]]=] ""
  [=[$PT import megatron -- --nproc_per_node 8 --num-layers 4 --hidden-size 2305843009213693952 --num-attention-heads 8 --seq-length 128 --vocab-size 1000]=])
hostile_case(robust_import_divisible_by_wrap 2 [=[--make-vocab-size-divisible-by = 4611686018427387904 is out of range]=] ""
  "${MEGATRON_BASE} --make-vocab-size-divisible-by 4611686018427387904 --tensor-model-parallel-size 4")

# --- exec --verify silently ignored the options of a timed run; now each is refused, named.
set(MPI_EXEC [=[export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; mpirun --oversubscribe -np 2 $PT exec --workload $EX/tiny-pp-1f1b.json --verify]=])
hostile_case(robust_exec_verify_json 2 [=[--json: cannot be used with --verify: verify mode writes no summary]=] ""
  "${MPI_EXEC} --json v.json")
hostile_case(robust_exec_verify_trace 2 [=[--trace: cannot be used with --verify: verify mode records no trace]=] ""
  "${MPI_EXEC} --trace v.json.gz")
hostile_case(robust_exec_verify_fail_at 2 [=[--fail-at: cannot be used with --verify: verify mode injects no faults]=] ""
  "${MPI_EXEC} --fail-at 1:fc1")
hostile_case(robust_exec_verify_backend 2 [=[--backend: cannot be used with --verify: verify mode runs on the CPU backend only]=] ""
  "${MPI_EXEC} --backend cuda")
hostile_case(robust_exec_verify_iterations 2 [=[--iterations: cannot be used with --verify: verify mode runs each check once]=] ""
  "${MPI_EXEC} --iterations 5")
hostile_case(robust_exec_verify_warmup 2 [=[--warmup: cannot be used with --verify: verify mode runs each check once]=] ""
  "${MPI_EXEC} --warmup 0")

# --- 8,192 actors reserved 8 MiB of stack each (64 GiB of address space) and aborted with
# SIGABRT under an 8 GiB limit, or ran for hours unlimited. The run is estimated before any actor starts:
# refused when it would take longer than --max-hours (default 1) or need more than ulimit -v allows,
# naming --fidelity, the figures and what to use instead.
hostile_case(robust_simulate_exact_8192_ulimit 2
  [=[--fidelity = exact: 8192 actors for 8192 ranks, [0-9]+ communication steps: about [0-9]+ h and [0-9.]+ GiB of address space \(estimated\), longer than --max-hours 1; --fidelity fast --fold]=] ""
  [=[ulimit -v 8388608; $PT simulate -w $EX/gpt-80b-frontier-8192.json -m frontier --fidelity exact]=])
hostile_case(robust_simulate_fast_8192_ulimit 2
  [=[--fidelity = fast: 8192 actors for 8192 ranks, .*longer than --max-hours 0.5; --fidelity fast --fold]=] ""
  [=[ulimit -v 8388608; $PT simulate -w $EX/gpt-80b-frontier-8192.json -m frontier --fidelity fast --max-hours 0.5]=])
hostile_case(robust_simulate_exact_8192_address_space 2
  [=[--fidelity = exact: 8192 actors .* more than the [0-9.]+ GiB this process may use \(ulimit -v\)]=] ""
  [=[ulimit -v 2097152; $PT simulate -w $EX/gpt-80b-frontier-8192.json -m frontier --fidelity exact --max-hours 0]=])

# --- Ctrl-C during a simulation ended it with exit status 1 (SimGrid's SIGINT handler, which
# calls exit(1)), as a bug would. Now the process keeps its own disposition: ended by the signal, as a
# shell reports it (128 + 2 = 130; SIGTERM 143). Job control on (set -m), so that the simulation started
# in the background does not ignore SIGINT, as a command started from a terminal does not.
set(SIGNAL_CASE [=[set -m
  coproc SIM { exec "$PT" simulate -w "$EX/gpt-80b-frontier-8192.json" -m frontier --fidelity fast --max-hours 0 2>&1<semicolon> }
  pid=$SIM_PID
  while IFS= read -r line <&"${SIM[0]}"<semicolon> do echo "$line"<semicolon> [[ $line == *"warning: --fidelity"* ]] && break<semicolon> done
  sleep 3
  kill -SIGNAL $pid
  out=$(cat <&"${SIM[0]}")
  echo "$out"
  wait $pid<semicolon> s=$?
  echo "exit status $s"
  [[ $s -eq STATUS ]] && ! grep -q "CTRL-C" <<<"$out"]=])
string(REPLACE SIGNAL INT SIGINT_CASE "${SIGNAL_CASE}")
string(REPLACE STATUS 130 SIGINT_CASE "${SIGINT_CASE}")
string(REPLACE SIGNAL TERM SIGTERM_CASE "${SIGNAL_CASE}")
string(REPLACE STATUS 143 SIGTERM_CASE "${SIGTERM_CASE}")
hostile_case(robust_simulate_sigint 0 [=[exit status 130]=] "" "${SIGINT_CASE}")
hostile_case(robust_simulate_sigterm 0 [=[exit status 143]=] "" "${SIGTERM_CASE}")
