#pragma once
// The Program: the IR that lower() produces and that the simulator and the executor consume.
// Ranks that play the same role (the same pipeline stage) share one op list; collective groups are
// axis masks resolved against the Grid at run time, so the Program's size does not grow with ranks.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/framework.hpp"
#include "workloads/grid.hpp"
#include "workloads/workload.hpp"

namespace paratwin::workloads {

enum class OpKind : uint8_t {
  gemm,
  elementwise,
  optimizer,
  host_transfer,  // PCIe copies of offloaded optimizer state
  all_reduce,
  reduce_scatter,
  all_gather,
  all_to_all,
  broadcast,
  reduce,
  send,
  recv,
  alloc,  // memory events: activation stash kept from forward to backward
  free,
};
constexpr int kOpKinds = 14;

enum class Phase : uint8_t { forward, backward, recompute, grad_sync, optimizer };
constexpr int kPhases = 5;

// Streams run concurrently; ops on one stream run in list order.
enum class Stream : uint8_t {
  compute,
  tensor,  // tensor-parallel collectives
  shard,   // weight gather / gradient scatter of sharded weights (axonn z, ZeRO-3)
  expert,  // MoE all-to-alls
  data,    // data-parallel gradient synchronisation
  send_fwd,
  send_bwd,
  recv_fwd,
  recv_bwd,
  host,     // host <-> device copies
  context,  // context-parallel exchanges of keys and values
};
constexpr int kStreams = 11;

const char* to_string(OpKind k);
// The kind named as to_string names it, if any.
std::optional<OpKind> parse_op_kind(const std::string& name);
const char* to_string(Phase p);
const char* to_string(Stream s);
bool is_collective(OpKind k);
bool is_p2p(OpKind k);
bool is_compute(OpKind k);

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  bool trans_a = false, trans_b = false;
};

// Layer labels for the ops that do not belong to a transformer layer.
constexpr int32_t kLayerEmbedding = -1;
constexpr int32_t kLayerLogits = -2;
constexpr int32_t kLayerNone = -3;

struct Op {
  OpKind kind = OpKind::elementwise;
  Stream stream = Stream::compute;
  Phase phase = Phase::forward;
  Dtype dtype = Dtype::bf16;
  AxisMask group = 0;       // collectives: the axes the group spans
  int32_t root = -1;        // broadcast / reduce: root's index within the group
  int32_t peer_stage = -1;  // send / recv: the peer's pipeline stage
  int32_t layer = kLayerNone;
  int32_t micro_batch = -1;
  int16_t chunk = 0;           // model chunk (interleaved schedule)
  bool expert_params = false;  // grad_sync: reduces expert (not shared) parameters
  const char* name = "";       // static label, e.g. "fc1.wgrad"
  GemmShape gemm;
  // Compute ops that stand for host work of the software stack (hooks, engine instructions) rather
  // than a kernel: its seconds, which replace the cost model's kernel time.
  double host_seconds = 0;
  double flops = 0;        // compute ops
  double bytes = 0;        // compute: memory traffic; collective: buffer per rank as nccl-tests
                           // counts it (all-gather: output, reduce-scatter: input); p2p: message
  uint64_t tag = 0;        // send / recv matching
  uint32_t dep_begin = 0;  // explicit dependencies: Role::deps[dep_begin, dep_begin + dep_count)
  uint32_t dep_count = 0;
};

// The attention core's kernels (score and context GEMMs, softmax, mask, dropout, the flash kernel):
// the emitter names them "attn.*" (workloads/emitter.cpp attention_core).
bool is_attention_kernel(const Op& op);

struct MemoryEstimate {
  double weights = 0;  // device bytes
  double gradients = 0;
  double optimizer = 0;         // fp32 master copy + Adam moments (+ fp32 gradients) on the device
  double host_optimizer = 0;    // bytes kept in host memory when offloading
  double gathered_weights = 0;  // buffers of all-gathered weight shards (axonn z, ZeRO-3)
  double activations = 0;       // peak stash + one layer's working set
  double comm_stash = 0;        // CAC: stashed collective outputs (included in activations' peak)
  double loss_transient = 0;    // the loss's copies of the logits beyond the stash (last stage; included when
                                // larger than a layer's working set)
  double total() const { return weights + gradients + optimizer + gathered_weights + activations; }
};

struct Role {
  std::string name;  // "stage 0"
  int64_t stage = 0;
  int64_t ranks = 0;  // how many ranks share this op list
  std::vector<Op> ops;
  std::vector<uint32_t> deps;
  double params = 0;         // parameters held by one rank of this role (before ZeRO sharding)
  double expert_params = 0;  // of which expert parameters
  MemoryEstimate memory;

  const uint32_t* deps_of(const Op& op) const { return deps.data() + op.dep_begin; }
};

struct Program {
  std::string workload_name;
  std::string workload_description;
  Framework framework;  // the software stack: scales the machine model's kernel times
  Grid grid;
  std::vector<std::string> placement_order;
  PlacementMap::Tile placement_tile;
  int64_t devices_per_node = 0;
  int64_t micro_batches = 0;
  int64_t tokens_per_iteration = 0;
  // FLOPs of one iteration, all ranks (workloads/arithmetic.hpp iteration_flops): model FLOPs (no
  // recomputation, MFU's) and hardware FLOPs (recomputation counted, HFU's; [narayanan2021megatron] eq. 3's with full).
  double model_flops = 0, hardware_flops = 0;
  double parameters = 0;    // whole model
  std::vector<Role> roles;  // indexed by pipeline stage

  int64_t role_of(int64_t rank) const;
  PlacementMap placement() const { return PlacementMap(grid, placement_order, devices_per_node, placement_tile); }
};

// A Program of one collective of `bytes` (as Op::bytes) over the "data" axis of `grid`: collective
// benchmarks (the papers' library comparisons) and collective-cost tests.
Program single_collective_program(Grid grid, int64_t devices_per_node, OpKind kind, double bytes);

}  // namespace paratwin::workloads
