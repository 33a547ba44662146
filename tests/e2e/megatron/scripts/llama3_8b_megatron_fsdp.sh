#!/bin/bash
# In the form of Megatron-LM's examples/megatron_fsdp/train_llama3_8b_fsdp_h100_fp8.sh: `uv run` and an
# empty profiler array before `python -m torch.distributed.run`, Megatron-FSDP chosen by an environment
# variable with a default, fp8 parameters gathered.
USE_MEGATRON_FSDP=${USE_MEGATRON_FSDP:-1}
SHARDING_STRATEGY=${SHARDING_STRATEGY:-"optim_grads_params"}
VENV_PREFIX="uv run"
PROFILE_CMD=()
TRAINING_ARGS=(--micro-batch-size 1 --global-batch-size 128 --bf16)
if [ "${USE_MEGATRON_FSDP}" = 1 ]; then
    TRAINING_ARGS=("${TRAINING_ARGS[@]}" --use-megatron-fsdp --data-parallel-sharding-strategy ${SHARDING_STRATEGY}
        --no-gradient-accumulation-fusion --ckpt-format fsdp_dtensor --fsdp-double-buffer)
fi
$VENV_PREFIX "${PROFILE_CMD[@]}" python -m torch.distributed.run --nproc_per_node 8 --nnodes 1 pretrain_gpt.py \
    --use-mcore-models --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 \
    --group-query-attention --num-query-groups 8 --seq-length 8192 --max-position-embeddings 8192 \
    --position-embedding-type rope --swiglu --normalization RMSNorm --untie-embeddings-and-output-weights \
    --disable-bias-linear --attention-dropout 0.0 ${TRAINING_ARGS[@]} --fp8-format hybrid --fp8-param-gather \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --mock-data --tokenizer-type NullTokenizer --vocab-size 128256
