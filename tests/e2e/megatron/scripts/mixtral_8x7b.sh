#!/bin/bash
# In the form of Megatron-LM's examples/mixtral/train_mixtral_8x7b_distributed.sh: the node count from
# the launcher's environment (SLURM_NNODES), the tokenizer and data paths from the script's arguments.
NNODES=${SLURM_NNODES:-"1"}
TOKENIZER_MODEL=$1
DATA_PATH=$2
torchrun --nproc_per_node 8 --nnodes $NNODES --node_rank ${RANK:-"0"} pretrain_gpt.py \
    --use-mcore-models --disable-bias-linear --seq-length 4096 --max-position-embeddings 32768 --num-layers 32 \
    --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 --normalization RMSNorm \
    --position-embedding-type rope --swiglu --untie-embeddings-and-output-weights --group-query-attention \
    --num-query-groups 8 --no-masked-softmax-fusion --no-position-embedding --attention-dropout 0.0 \
    --num-experts 8 --moe-router-topk 2 --moe-grouped-gemm --moe-token-dispatcher-type alltoall \
    --overlap-param-gather --overlap-grad-reduce --tokenizer-type Llama2Tokenizer --tokenizer-model ${TOKENIZER_MODEL} \
    --data-path $DATA_PATH --micro-batch-size 1 --global-batch-size 256 --bf16 \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 --expert-model-parallel-size 8 \
    --use-distributed-optimizer --sequence-parallel
