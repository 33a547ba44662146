#pragma once
// Shared by the lowering files: the op-list builder and the per-tensor-mode layer lowerings.
#include <memory>
#include <string>
#include <vector>

#include "workloads/program.hpp"
#include "workloads/workload.hpp"

namespace paratwin::workloads::detail {

constexpr uint32_t kNoOp = UINT32_MAX;

struct Ctx {
  const Workload& w;
  const Grid& grid;
  double e = 2;       // bytes per element of the training dtype
  double tokens = 0;  // tokens of one micro-batch of one model replica: micro_batch · seq_len
  AxisMask tensor = 0, x = 0, y = 0, z = 0, col = 0, row = 0, expert = 0, pipe = 0, data = 0, context = 0;
  AxisMask dp_dense = 0;   // gradient reduction of shared parameters (data, expert for TED, context)
  AxisMask dp_expert = 0;  // gradient reduction of expert parameters
  // The ranks the experts are spread over: the expert axis, and the tensor ranks too when each expert
  // is whole on its rank (parallelism.expert.tensor = 1).
  AxisMask expert_group = 0;
  // ZeRO-3's gathers and reduce-scatters: the data-parallel group, or with hybrid sharding
  // (framework.sharding.shard_group) the shard group inside it; `replica` joins the shard groups.
  AxisMask shard_dense = 0, shard_expert = 0, replica = 0;
  Ctx(const Workload& w, const Grid& g);
  int64_t size(AxisMask m) const { return grid.group_size(m); }
};

// Builds one role's op list. Compute ops wait for `pending` (collectives whose results the next
// computation needs); collectives issued "blocking" are added to it, "async" ones are waited for
// explicitly with wait(). Ops on one stream keep their list order.
class Emitter {
 public:
  Emitter(Role& role, const Ctx& ctx) : role_(role), ctx_(ctx) {}

  Phase phase = Phase::forward;
  int32_t layer = kLayerNone;
  int32_t micro_batch = -1;
  int16_t chunk = 0;

  uint32_t gemm(const char* name, int64_t m, int64_t n, int64_t k, int64_t batch = 1, bool trans_a = false,
                bool trans_b = false);
  // A GEMM whose operands are `dtype` (fp8: one byte each, the output in the training dtype).
  uint32_t gemm_in(Dtype dtype, const char* name, int64_t m, int64_t n, int64_t k, int64_t batch = 1,
                   bool trans_a = false, bool trans_b = false);
  uint32_t elementwise(const char* name, double bytes, double flops);
  uint32_t compute(OpKind kind, const char* name, double bytes, double flops, Stream s = Stream::compute);
  // `seconds` of the stack's host work on stream `s` (Op::host_seconds), after `deps`; none for 0 s.
  uint32_t host_work(const char* name, double seconds, Stream s, std::vector<uint32_t> deps);
  // A collective over `group`; none is emitted (kNoOp) for a group of one rank.
  uint32_t blocking(OpKind kind, Stream s, AxisMask group, double bytes, const char* name, int32_t root = -1);
  uint32_t async(OpKind kind, Stream s, AxisMask group, double bytes, const char* name, std::vector<uint32_t> deps,
                 int32_t root = -1);
  void wait(uint32_t op) {
    if (op != kNoOp) pending_.push_back(op);
  }
  // Hybrid sharding (Ctx::replica): the all-reduce across the replicas of the shard that
  // `reduce_scatter` (of `bytes` over `group`) leaves; returns the op that completes the reduction,
  // `reduce_scatter` itself without replicas.
  uint32_t replicate(AxisMask group, double bytes, uint32_t reduce_scatter);
  uint32_t last_compute() const { return last_compute_; }
  // Asynchronous reductions of weight gradients (ORS) that the gradient synchronisation and the
  // optimizer must wait for.
  std::vector<uint32_t> deferred;
  uint32_t add(Op op, const std::vector<uint32_t>& deps);
  Op labelled(OpKind kind, Stream s, const char* name) const;
  const Ctx& ctx() const { return ctx_; }
  Role& role() { return role_; }

 private:
  Role& role_;
  const Ctx& ctx_;
  uint32_t last_compute_ = kNoOp;
  std::vector<uint32_t> pending_;
};

// The attention core of one layer for `rows` query tokens and `heads` local heads of size `head_dim`
// over `seq` keys: scores (QKᵀ), softmax, context (PV) — and their backward.
void attention_core(Emitter& e, int64_t rows, int64_t heads, int64_t head_dim, int64_t seq);
void attention_core_backward(Emitter& e, int64_t rows, int64_t heads, int64_t head_dim, int64_t seq);

// A block of parameters whose gradients are reduced together over the data-parallel group.
struct ParamBlock {
  const char* name;
  double params;  // per rank
  bool expert;
};

class LayerLowering {
 public:
  virtual ~LayerLowering() = default;
  // Called before the layers from..to (inclusive, either direction) of one model chunk run one
  // pass of one micro-batch: weight prefetches reach no further than this range. A call for the
  // next layer of the same pass (the backward driver calls it per layer) keeps what was prefetched:
  // a gather issued ahead is not issued again.
  void begin_pass(int32_t from, int32_t to) {
    // (The last layer of a backward pass comes as from == to: its direction is the pass's.)
    const bool continues =
        to == pass_to_ && from == pass_from_ + pass_step_ && (from == to || (to > from) == (pass_step_ > 0));
    pass_from_ = from;
    pass_to_ = to;
    if (!continues) {
      pass_step_ = to >= from ? 1 : -1;
      prefetched_.clear();
    }
  }
  // Called before the recomputed forward of `layer` under full checkpointing, in a backward pass that
  // goes down to layer `first`. By default that recompute is a pass of its own: no gather is
  // prefetched into it or out of it.
  virtual void begin_recompute(int32_t layer, int32_t first) {
    (void)first;
    begin_pass(layer, layer);
  }
  virtual void forward(Emitter& e, int32_t layer) = 0;  // e.phase: forward or recompute
  virtual void backward(Emitter& e, int32_t layer) = 0;
  virtual void recompute_attention(Emitter& e, int32_t layer) = 0;  // selective checkpointing
  // selective_op checkpointing: called in the layer's backward pass (e.phase backward) before
  // backward(); gathers what the recomputation needs and emits it. Only the Megatron lowering has it
  // (validate refuses the mode elsewhere).
  virtual void recompute_ops(Emitter& e, int32_t layer) {
    (void)e;
    (void)layer;
    throw std::logic_error("per-op selective checkpointing is lowered for Megatron tensor parallelism only");
  }
  virtual void embedding_forward(Emitter& e) = 0;
  virtual void embedding_backward(Emitter& e) = 0;
  virtual void logits_forward(Emitter& e) = 0;
  virtual void logits_backward(Emitter& e) = 0;
  virtual double activation_message_bytes() const = 0;  // pipeline p2p per micro-batch per rank
  virtual std::vector<ParamBlock> layer_params(int32_t layer) const = 0;
  virtual double embedding_params() const = 0;  // word (+ position on the first stage) embedding
  virtual double position_params() const = 0;
  // Bytes of gathered (unsharded) weights a rank holds while computing `layer` (axonn z, ZeRO-3).
  virtual double gathered_weight_bytes(int32_t layer) const = 0;
  virtual double comm_stash_bytes(int32_t layer) const {
    (void)layer;
    return 0;
  }
  // fp32 logits kept from the loss's forward to its backward, per micro-batch.
  virtual double logits_bytes() const = 0;
  // Whether gathered weights stay allocated from forward to backward for every layer (otherwise one
  // layer's, two with prefetching, are live at a time).
  virtual bool keeps_gathered_weights() const { return false; }
  // Bytes of gathered weights live at once when they are not kept, given the largest layer's: the
  // unit computing and the gathers issued ahead of it.
  virtual double live_gathered_weight_bytes(double largest_layer, bool overlap_all_gather) const {
    return largest_layer * (overlap_all_gather ? 2.0 : 1.0);
  }

 protected:
  // Weight all-gathers (axonn z, ZeRO-3), one call per (layer, block); blocks are numbered within a
  // layer in forward order, and a backward pass visits them in reverse.
  struct GatherSpec {
    AxisMask group;
    double bytes;
    const char* name;
    // Whether a copying stack (GatherHost::copy_out) copies this call's buffer out: DeepSpeed's fetch
    // of a single parameter gathers straight into the parameter's own buffer (partition_parameters.py
    // all_gather_coalesced, 'if len(params) == 1': AllGatherHandle, no torch.cat, v0.9.2 l.908-920,
    // v0.16.3 l.1246-1291); only a coalesced fetch of several is split out with torch.cat.
    bool copied = true;
  };
  virtual GatherSpec gather_spec(int32_t layer, int32_t block) const = 0;
  virtual int32_t gather_blocks(int32_t layer) const = 0;
  // Host work before each gather call reaches the library (a stack's hooks: ShardingMechanism::
  // call_overhead), and whether the host first waits for the device (DeepSpeed <= v0.5's
  // torch.cuda.synchronize() per parameter): then the host work sits on the compute stream.
  struct GatherHost {
    double seconds = 0;
    bool synchronize = false;
    bool copy_out = false;  // ShardingMechanism::copy_out: the gathered unit copied out after its gather
    // (a call whose GatherSpec::copied is false excepted)
  };
  GatherHost gather_host_;
  // Makes the gathered weights of (layer, block) available to the next computation. The gathers of
  // the next `ahead` calls of this pass are issued too, before the computation of this block (with
  // OAG one ahead, [singh2025dissertation] §5.1.4; a stack's prefetch depth, ShardingMechanism::prefetch); with 0
  // each gather blocks the computation that needs it.
  void gather_weights(Emitter& e, int32_t layer, int32_t block, int ahead);

  int32_t pass_from_ = 0, pass_to_ = 0, pass_step_ = 1;
  std::vector<std::pair<std::pair<int32_t, int32_t>, uint32_t>> prefetched_;
};

std::unique_ptr<LayerLowering> make_megatron_lowering(const Ctx& c);  // none, megatron, TED MoE
std::unique_ptr<LayerLowering> make_axonn_lowering(const Ctx& c);
std::unique_ptr<LayerLowering> make_optimus_lowering(const Ctx& c);

}  // namespace paratwin::workloads::detail
