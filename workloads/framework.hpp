#pragma once
// The software stack a run used (training framework and its version): the mechanisms by which it
// turns a workload into kernels and collectives. Published runs of one model on one machine differ
// between stacks (kernel fusion, how sharded weights are gathered, when gradients are reduced, the
// pipeline engine, what overlaps what), so the stack is declared in the workload rather than folded
// into a machine's GEMM efficiency. Profiles ship in workloads/frameworks/ and are compiled in; every
// value of a profile names its source (file and version of the framework's code, or a measurement).
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/json_reader.hpp"

namespace paratwin::workloads {

// How a sharded-data-parallel stack (ZeRO-3, FSDP) groups parameters into one all-gather.
enum class GatherUnit {
  layer,      // one flat parameter per transformer block (FSDP with a transformer auto-wrap policy)
  submodule,  // the parameters of each leaf module (DeepSpeed ZeRO-3's pre-forward hook per submodule)
};
const char* to_string(GatherUnit u);

// What a stack does for ZeRO-3 / FSDP (parallel.zero_stage = 3).
struct ShardingMechanism {
  GatherUnit gather_unit = GatherUnit::layer;
  // Gather calls issued ahead of the one the computation waits for (FSDP1's backward prefetch and
  // limit_all_gathers, FSDP2's implicit prefetch, DeepSpeed's prefetch bucket). 0: each gather
  // blocks the computation that needs it. -1: the workload's optimizations.overlap_all_gather
  // decides (one ahead with it, none without: the lowering of [singh2025dissertation] §5.1.4).
  int prefetch = -1;
  // Whether the gathered weights are freed after a unit's forward (and gathered again for backward).
  bool reshard_after_forward = true;
  // Under full recomputation the recomputed forward gathers the unit's weights (its pre-forward hook
  // runs again); whether the backward then gathers them once more (true) or keeps the recompute's
  // (false: FSDP's unit stays unsharded through its backward, DeepSpeed keeps parameters reused within
  // stage3_max_reuse_distance).
  bool regather_after_recompute = false;
  // Host seconds per gather or reduce-scatter call that the training process spends before the call
  // reaches the library (Python hooks, flattening, stream bookkeeping); exposed when it delays the call.
  double call_overhead = 0;
  // Ranks a parameter is sharded over; the data-parallel ranks beyond form replicas that all-reduce
  // the reduced shards (FSDP HYBRID_SHARD, ZeRO++ hpZ). 0: the whole data-parallel group.
  int64_t shard_group = 0;
  // Parameters with fewer elements (per tensor-parallel rank) stay whole on every rank and are never
  // gathered (DeepSpeed stage3_param_persistence_threshold, 1e5 by default: deepspeed/runtime/zero/
  // constants.py @ v0.3.16, config.py @ v0.16.3). 0: every parameter is sharded (FSDP).
  double persistence_threshold = 0;
  // One gather call per parameter, each after a host-device synchronisation: DeepSpeed <= v0.5
  // (partition_parameters.py _allgather_param calls torch.cuda.synchronize() before each parameter's
  // all_gather, v0.3.16 to v0.5.10), so a gather waits for the computation queued before it and the
  // computation waits for the gather; reduce-scatters are one call per parameter too
  // (_reduce_scatter_gradients @ v0.3.16).
  bool synchronize_per_gather = false;
  // Copies around the collectives. copy_out: each gathered unit is copied out into its parameters on
  // the compute stream after its gather (FSDP2's foreach_all_gather_copy_out, split_with_sizes_copy,
  // torch/distributed/_composable/fsdp/_fsdp_collectives.py v2.4-2.6; DeepSpeed's
  // AllGatherCoalescedHandle.wait, a torch.cat of the ranks' partitions per parameter,
  // deepspeed/runtime/zero/partition_parameters.py v0.9.2 l.567-584, v0.16.3 l.701-707, for a fetch of
  // several parameters only: a single one is gathered into its own buffer). copy_in: each
  // unit's gradients are cast-copied into the reduce-scatter's input (FSDP2's foreach_reduce_scatter,
  // torch.cat into a reduce_dtype buffer; on its reduce-scatter stream, sharing the device with the next
  // unit's backward: counted on the compute stream here).
  bool copy_out = false;
  bool copy_in = false;
  // A bucket's gradients are divided by the group's size in place before their reduce-scatter (read and
  // write them once), after a torch.cat that interleaves the ranks' partitions when the bucket holds
  // several tensors or one the group does not divide (DeepSpeed's reduce_scatter_coalesced,
  // deepspeed/runtime/comm/coalesced_collectives.py: 'tensor_partition_flat_buffer.div_(world_sz)  #
  // pre-divide', v0.9.2 l.51-73, v0.16.3 l.179-201). On the reduction stream, sharing the device with
  // the backward pass: counted on the compute stream, as copy_in.
  bool predivide = false;
  // Reduce-scatters in flight before the host waits for the oldest to finish, holding back the work it
  // has not launched yet (DeepSpeed stage3.py __reduce_and_partition_ipg_grads: more than
  // max_param_reduce_events = 2 recorded events and it synchronizes on the oldest, v0.9.2 l.1096-1097,
  // v0.16.3 l.1302-1303: at most 3 in flight). 0: no limit.
  int reduce_in_flight = 0;
};

// Bytes a stack's element-wise ops move over those of the fused kernels the lowering counts (Megatron-
// Core's and Transformer Engine's), forward and backward: 1 for a stack that runs such fused kernels,
// more for one that runs the operation op by op (eager PyTorch: an RMSNorm of seven kernels in fp32).
// RMSNorm only (a LayerNorm is one native kernel in eager PyTorch as well), a gated activation only (a
// GeLU is one kernel either way).
struct ElementwiseTraffic {
  double rmsnorm = 1, rmsnorm_backward = 1;
  double rope = 1, rope_backward = 1;
  double gated_activation = 1, gated_activation_backward = 1;
  double loss = 1, loss_backward = 1;
};

// Where each value of a profile came from: (key, source) pairs, for reports and `validate`.
struct Sourced {
  std::string key;
  std::string source;
};

// The features a stack offers: a workload that claims one its stack lacks is refused, and `search`
// proposes only what the stack runs.
struct StackFeatures {
  std::vector<int> zero_stages{0, 1, 2, 3};
  int zero_with_pipeline = 3;  // the highest ZeRO stage the stack runs together with pipeline stages
  std::vector<std::string> tensor_modes{"none", "megatron", "optimus", "axonn"};
  bool pipeline = true;
  bool interleaved = true;
  bool sequence_parallel = true;
  bool selective_recompute = true;
  // training.checkpointing "selective_op": per-op selective checkpointing through PyTorch's
  // create_selective_checkpoint_contexts (torch 2.4+) with TorchTitan's policy.
  bool op_selective_recompute = true;
  bool flash_attention = true;
  bool moe = true;
  bool param_gather_overlap = true;  // optimizations.overlap_param_gather (Megatron-Core --overlap-param-gather)
  bool tensor_comm_overlap = true;   // optimizations.overlap_tensor_comm (Megatron-Core --tp-comm-overlap)
  bool context_parallel = true;      // parallelism.context
  bool fp8 = true;                   // training.fp8 (Transformer Engine, torchao float8)
  // parallelism.pipeline.first/last_stage_layers, embedding/loss_in_split: Megatron-Core's uneven
  // splits (--decoder-first/last-pipeline-num-layers, --account-for-embedding/loss-in-pipeline-split).
  bool uneven_stages = true;
};

struct Framework {
  std::string profile = "generic";  // the shipped profile it started from
  // Non-empty when the workload named no framework and this one was chosen from its configuration:
  // why (workloads/default_stack.hpp).
  std::string chosen_because;
  std::string description;
  // Fraction of the machine model's rate that the stack's kernels sustain inside a training iteration,
  // by op class: GEMMs (the GEMM shape model), the attention core (its GEMMs, softmax, flash kernel),
  // memory-bound element-wise kernels and the optimizer step.
  double kernel_efficiency = 1.0;  // GEMMs; the other classes default to it
  double attention_efficiency = 1.0;
  double elementwise_efficiency = 1.0;
  double optimizer_efficiency = 1.0;
  ElementwiseTraffic elementwise_traffic;
  std::string source;  // where kernel_efficiency comes from (sourced, or the points it was fitted to)
  // Bytes the optimizer step moves per parameter it updates, when the stack's optimizer makes more
  // passes than one fused Adam (e.g. Megatron-LM's fp16 optimizer: grad copy, unscale, norm, Adam,
  // parameter copy); 0: the fused Adam's own traffic (workloads/arithmetic.hpp).
  double optimizer_bytes_per_param = 0;
  // Bytes per logit (the last stage's micro-batch tokens times its share of the vocabulary) live at
  // the loss's peak. Megatron-LM's vocab-parallel cross entropy copies the 16-bit logits to fp32
  // while they are alive and computes the softmax and its gradient in place in that copy
  // (megatron/core/tensor_parallel/cross_entropy.py, calculate_logits_max: .float()): 2 + 4.
  double loss_logit_bytes = 6;
  // Gradient reduction without sharding (and ZeRO-1/2): bytes of gradients per bucket, reduced as one
  // collective when its last gradient is ready (torch DDP bucket_cap_mb, Megatron-LM's DDP buckets,
  // DeepSpeed's reduce_bucket_size). 0: one collective per parameter block of a layer.
  double gradient_bucket_bytes = 0;
  // Buckets only on the first pipeline stage's first model chunk; every other stage and chunk reduces
  // its gradients as one bucket, off the critical path (Megatron-Core distributed_data_parallel.py,
  // core_v0.12.0: bucket_size = None when get_pipeline_model_parallel_rank() > 0, and
  // disable_bucketing for the interleaved schedule's later chunks).
  bool gradient_buckets_first_stage_only = false;
  ShardingMechanism sharding;
  // Pipeline engine: send/recv issued as broadcasts over two-rank groups (DeepSpeed's 2021 p2p), and
  // host seconds the engine spends per micro-batch instruction (forward, backward, send, recv).
  bool broadcast_p2p = false;
  double micro_batch_overhead = 0;
  // Send/recv that block the instruction stream until the message has been delivered (DeepSpeed's
  // pipeline engine: p2p.py asserts async_op == False, v0.3.16 to v0.16.3); broadcast_p2p implies it.
  bool synchronous_p2p = false;
  StackFeatures features;
  std::vector<Sourced> sources;  // per value: where it comes from

  // A new GEMM efficiency (a fit's trial value), carried to the op classes that follow it (those the
  // profile did not rate on their own).
  void set_kernel_efficiency(double value);
};

std::vector<std::string> builtin_framework_names();
// A shipped profile by name; throws WorkloadError listing the known ones.
Framework builtin_framework(const std::string& name);
// The workload's "framework" object: {"profile": NAME} with optional overrides.
Framework read_framework(JsonReader r);
// "framework NAME", with "(chosen: REASON; name one with \"framework\")" when the workload named none.
std::string stack_label(const Framework& f);
// Every value, for reports.
nlohmann::json to_json(const Framework& f);
// The workload's "framework" object: the profile and the values that differ from the shipped profile's.
nlohmann::json to_workload_json(const Framework& f);

}  // namespace paratwin::workloads
