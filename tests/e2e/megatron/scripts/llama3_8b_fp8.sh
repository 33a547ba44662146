#!/bin/bash
# A launch script in the form of Megatron-LM's examples/llama/train_llama3_8b_h100_fp8.sh: defaults
# of its arguments, folders it creates, a check that it runs from the repository's root, arrays of
# arguments, a conditional block of fp8 arguments given as "flag value" words, torchrun at the end.
CHECKPOINT_PATH=${1:-"checkpoints/llama3_8b_fp8"}
TOKENIZER_ARG=${2:-"MOCK"}
mkdir -p "$(dirname "$CHECKPOINT_PATH")"
GPUS_PER_NODE=8
NUM_NODES=1
MASTER_ADDR=${MASTER_ADDR:-localhost}
DTYPE="fp8"
PRETRAIN_SCRIPT_PATH="pretrain_gpt.py"

DISTRIBUTED_ARGS=(--nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES --master_addr $MASTER_ADDR --master_port 29500)
MODEL_ARGS=(
    --use-mcore-models --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32
    --group-query-attention --num-query-groups 8 --kv-channels 128 --seq-length 8192
    --max-position-embeddings 8192 --position-embedding-type rope --rotary-base 1000000 --swiglu
    --normalization RMSNorm --attention-backend fused --untie-embeddings-and-output-weights --disable-bias-linear
    --attention-dropout 0.0 --hidden-dropout 0.0
)
TRAINING_ARGS=(--micro-batch-size 1 --global-batch-size 128 --lr 0.00015 --bf16 --grad-reduce-in-bf16)
DTYPE_ARGS=()
if [[ "$DTYPE" == "fp8" ]]; then
    DTYPE_ARGS+=("--fp8-format hybrid" "--fp8-amax-history-len 1024" "--fp8-param-gather")
fi
PARALLEL_ARGS=(--tensor-model-parallel-size 1 --context-parallel-size 1 --sequence-parallel)
TRAINING_ARGS+=(--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather)
DATA_ARGS=()
if [[ "$TOKENIZER_ARG" == "MOCK" ]]; then
    DATA_ARGS+=("--mock-data" "--tokenizer-type NullTokenizer" "--vocab-size 128256")
fi
if [ ! -f "$PRETRAIN_SCRIPT_PATH" ]; then
    echo "Error: pretrain_gpt.py not found"
    exit 1
fi
torchrun ${DISTRIBUTED_ARGS[@]} "$PRETRAIN_SCRIPT_PATH" ${MODEL_ARGS[@]} ${TRAINING_ARGS[@]} ${DTYPE_ARGS[@]} \
    ${PARALLEL_ARGS[@]} ${DATA_ARGS[@]} --save "$CHECKPOINT_PATH" --log-interval 1
