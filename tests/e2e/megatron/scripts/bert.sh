#!/bin/bash
# A BERT script's launch (Megatron-LM examples/bert): refused by its entry point.
torchrun --nproc_per_node 8 pretrain_bert.py --num-layers 24 --hidden-size 1024 --num-attention-heads 16 \
    --seq-length 512 --micro-batch-size 4 --global-batch-size 32 --fp16
