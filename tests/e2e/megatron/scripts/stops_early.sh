#!/bin/bash
# A script that stops before it launches anything (as gpt-oss's does without --checkpoint-path).
CHECKPOINT_PATH="NO_VALUE_PROVIDED"
if [ ! -d "$CHECKPOINT_PATH" ]; then
    echo "Error: Checkpoint path does not exist: $CHECKPOINT_PATH"
    exit 1
fi
torchrun pretrain_gpt.py --num-layers 2
