#pragma once
// Gradient buckets: how a data-parallel stack groups gradients into collectives. Gradients are
// produced in the order backward runs (output embedding, the layers from last to first, the input
// embedding); a stack fills a bucket in that order and reduces it as one collective once its last
// gradient is ready (torch DDP's Reducer, Li et al. VLDB 2020 §3.2.3; Megatron-Core
// param_and_grad_buffer.py register_grad_ready, core_v0.12.0; DeepSpeed stage_1_and_2.py
// reduce_independent_p_g_buckets_and_remove_grads, v0.16.3).
#include <cstdint>
#include <vector>

namespace paratwin::workloads::detail {

// The gradients of one parameter block, ready when the backward of `layer` has run.
struct GradientBlock {
  int32_t layer;
  const char* name;
  double bytes;  // per rank, in the reduction's dtype
  bool expert;   // reduced over the expert-data group, in buckets of its own
};

struct GradientBucket {
  int32_t ready_layer;  // the layer whose backward completes the bucket
  const char* name;     // the block's name when the bucket holds one block's gradients, else "grad.bucket"
  double bytes;
  bool expert;
};

// `blocks` in the order backward produces them. bucket_bytes 0: one bucket per block. Otherwise the
// gradients are cut into buckets of bucket_bytes as a stream (a block larger than a bucket spans
// several, as its parameters do), the last bucket of each group holding the remainder; buckets come
// out in the order they are ready.
std::vector<GradientBucket> gradient_buckets(const std::vector<GradientBlock>& blocks, double bucket_bytes);

}  // namespace paratwin::workloads::detail
