# Issue 33, items 8, 10, 11 and 16: inputs that crashed paratwin (a signal, exit 1) or that it silently ignored.

# --- Item 8: import megatron multiplied flags without bounds; products wrapped to 0 and divided by zero
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

# --- Item 16: exec --verify silently ignored the options of a timed run; now each is refused, named.
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
