#!/bin/bash
# In the form of Megatron-LM's examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh: the training command
# a string that a job script, submitted through sbatch's standard input, runs under `srun bash -c`.
MEGATRON_PATH=${MEGATRON_PATH:-"your_own_megatron_path"}
PRETRAIN_ARGS=(
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 2 --sequence-parallel
    --num-layers 8 --hidden-size 1024 --num-attention-heads 16 --seq-length 2048 --max-position-embeddings 2048
    --micro-batch-size 1 --global-batch-size 64 --bf16 --use-flash-attn --disable-bias-linear
    --tokenizer-type NullTokenizer --vocab-size 32000 --use-distributed-optimizer
)
TRAINING_CMD="
cd ${MEGATRON_PATH};
python ${MEGATRON_PATH}/pretrain_gpt.py ${PRETRAIN_ARGS[@]}"
set +e
sbatch <<EOF
#!/bin/bash
#SBATCH --nodes=your_own_num_nodes
srun --mpi=pmix -l bash -x -c "${TRAINING_CMD}" 2>&1 | tee job.log
EOF
