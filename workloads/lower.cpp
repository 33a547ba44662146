// The driver of lowering: runs each pipeline stage's schedule, asks the tensor-mode lowering for the
// ops of every layer pass, and adds pipeline messages, activation memory events, the gradient
// synchronisation (with ZeRO) and the optimizer step.
#include "workloads/lower.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/arithmetic.hpp"
#include "workloads/gradient_buckets.hpp"
#include "workloads/lower_internal.hpp"
#include "workloads/pipeline_layers.hpp"
#include "workloads/program_graph.hpp"
#include "workloads/schedule.hpp"

namespace paratwin::workloads {

namespace {

using detail::Ctx;
using detail::Emitter;
using detail::kNoOp;
using detail::LayerLowering;

std::unique_ptr<LayerLowering> make_lowering(const Ctx& c) {
  switch (c.w.parallel.tensor.mode) {
    case TensorMode::axonn:
      return detail::make_axonn_lowering(c);
    case TensorMode::optimus:
      return detail::make_optimus_lowering(c);
    default:
      return detail::make_megatron_lowering(c);
  }
}

// The input embedding's parameters on the first stage: the word embedding and learned positions.
double input_embedding_params(const LayerLowering& l) {
  return l.embedding_params() + l.position_params();
}

// A tied output layer on the one virtual stage that also holds the input embedding is that embedding:
// one weight, one gradient (Megatron-LM share_embeddings_and_output_weights with one stage). On a later
// stage it is a copy of its own (Megatron-LM's last-stage word embeddings, kept equal by an all-reduce).
bool output_is_input_embedding(const Workload& w) {
  return w.model.tied_embeddings && w.parallel.pipeline.stages * w.parallel.pipeline.chunks == 1;
}

class StageLowering {
 public:
  StageLowering(const Ctx& c, LayerLowering& layers, Role& role, const std::vector<Slot>& slots,
                const std::vector<int64_t>& starts)
      : c_(c), layers_(layers), role_(role), e_(role, c), slots_(slots), starts_(starts) {
    const auto& pp = c.w.parallel.pipeline;
    p_ = pp.stages;
    v_ = pp.chunks;
  }

  void run() {
    plan_param_gathers();
    // The last backward of each chunk: where its gradients are final.
    std::vector<size_t> last_backward(static_cast<size_t>(v_), 0);
    for (size_t i = 0; i < slots_.size(); ++i)
      if (!slots_[i].forward) last_backward[static_cast<size_t>(slots_[i].chunk)] = i;
    const bool zero2 = c_.w.parallel.zero_stage == 2;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      e_.micro_batch = s.micro_batch;
      e_.chunk = static_cast<int16_t>(s.chunk);
      if (s.forward) {
        forward(s);
        continue;
      }
      // ZeRO-2 reduces in every micro-batch's backward (DeepSpeed engine.py allreduce_gradients: "ZeRO
      // stage 2 communicates during non gradient accumulation boundaries as well", v0.5.10 l.1638,
      // v0.16.3 l.1975). With overlap, the other stages launch each bucket during the chunk's last
      // backward, under no_sync / is_last_microbatch before it (torch DDP; Megatron-Core
      // distributed_data_parallel.py register_grad_ready, core_v0.12.0).
      const bool last = i == last_backward[static_cast<size_t>(s.chunk)];
      reducing_ = zero2 || (c_.w.opt.overlap_gradient_sync && last);
      if (reducing_) begin_reduction(s.chunk);
      backward(s);
      if (reducing_) grad_ready(kLayerNone);  // anything left, at the end of the pass
      reducing_ = false;
    }
    e_.micro_batch = -1;
    e_.chunk = 0;
    // Without overlap the buckets are reduced after the last micro-batch (Megatron-LM 2021/2022's
    // allreduce_gradients in train_step; DeepSpeed's ReduceGrads instruction, schedule.py
    // TrainSchedule.steps at step_id == total_steps - 1).
    if (!c_.w.opt.overlap_gradient_sync && !zero2)
      for (int32_t chunk = v_ - 1; chunk >= 0; --chunk) {
        begin_reduction(chunk);
        grad_ready(kLayerNone);
      }
    optimizer_step();
  }

 private:
  int64_t virtual_stage(int32_t chunk) const { return chunk * p_ + role_.stage; }
  bool first_virtual(int32_t chunk) const { return virtual_stage(chunk) == 0; }
  bool last_virtual(int32_t chunk) const { return virtual_stage(chunk) == p_ * v_ - 1; }
  int32_t first_layer(int32_t chunk) const {
    return static_cast<int32_t>(starts_[static_cast<size_t>(virtual_stage(chunk))]);
  }
  // Whether layer l of the chunk recomputes its forward pass (pipeline_layers.hpp recomputes).
  bool recomputed(int32_t chunk, int32_t l) const { return recomputes(c_.w.training, l - first_layer(chunk)); }
  // The first layer of l's run of layers that recompute alike: weight prefetches of a pass stay inside
  // it (an approximation where a stack's prefetch crosses from a recomputed layer into one that is not).
  // Under full checkpointing of the chunk's first n layers, the kept ones start at first + n.
  int32_t run_first(int32_t chunk, int32_t l) const {
    const int32_t first = first_layer(chunk);
    const int64_t n = c_.w.training.recompute_num_layers;
    return c_.w.training.checkpointing == Checkpointing::full && n > 0 && l - first >= n
               ? first + static_cast<int32_t>(n)
               : first;
  }
  // One past the chunk's last layer.
  int32_t end_layer(int32_t chunk) const {
    return static_cast<int32_t>(starts_[static_cast<size_t>(virtual_stage(chunk)) + 1]);
  }
  uint64_t tag(int32_t micro_batch, int64_t receiver_virtual_stage, bool backward) const {
    return ((static_cast<uint64_t>(micro_batch) * static_cast<uint64_t>(p_ * v_) +
             static_cast<uint64_t>(receiver_virtual_stage))
            << 1) |
           (backward ? 1u : 0u);
  }

  void message(OpKind kind, bool backward, int64_t peer_virtual, int64_t receiver_virtual) {
    const Stream s = kind == OpKind::send ? (backward ? Stream::send_bwd : Stream::send_fwd)
                                          : (backward ? Stream::recv_bwd : Stream::recv_fwd);
    Op op = e_.labelled(kind, s,
                        kind == OpKind::send ? (backward ? "send.grad" : "send.activation")
                                             : (backward ? "recv.grad" : "recv.activation"));
    op.peer_stage = static_cast<int32_t>(peer_virtual % p_);
    op.bytes = layers_.activation_message_bytes();
    op.tag = tag(e_.micro_batch, receiver_virtual, backward);
    engine_instruction(kind == OpKind::send ? (backward ? "engine.send_grad" : "engine.send_activation")
                                            : (backward ? "engine.recv_grad" : "engine.recv_activation"));
    // A send's data is the last computation's output (after the engine's instruction). Receives stay
    // posted ahead, as the schedule's order of sends and receives lets a synchronous engine's peers
    // meet (DeepSpeed schedule.py TrainSchedule alternates them by stage parity).
    std::vector<uint32_t> deps;
    if (kind == OpKind::send) deps.push_back(e_.last_compute());
    const uint32_t id = e_.add(op, deps);
    // A synchronous send holds the instruction stream until the peer has received the message.
    if (kind == OpKind::send && synchronous_p2p()) e_.wait(id);
    if (kind == OpKind::recv) {
      e_.wait(id);
      // Megatron's scatter/gather: each tensor rank sent 1/t of the activation; reassemble it.
      if (c_.w.opt.scatter_gather && !c_.w.parallel.sequence_parallel)
        e_.blocking(OpKind::all_gather, Stream::tensor, c_.tensor,
                    layers_.activation_message_bytes() * static_cast<double>(c_.size(c_.tensor)),
                    backward ? "recv.grad.all_gather" : "recv.activation.all_gather");
    }
  }

  double stash_bytes(int32_t chunk) const {
    double bytes = 0;
    for (int32_t l = first_layer(chunk); l < end_layer(chunk); ++l)
      bytes +=
          layer_activations(c_.w, c_.w.model.is_moe_layer(l), recomputed(chunk, l)).stash + layers_.comm_stash_bytes(l);
    if (last_virtual(chunk)) bytes += layers_.logits_bytes();
    return bytes;
  }

  void memory_event(OpKind kind, int32_t chunk) {
    Op op = e_.labelled(kind, Stream::compute, kind == OpKind::alloc ? "activations.stash" : "activations.release");
    op.bytes = stash_bytes(chunk);
    e_.add(op, {e_.last_compute()});
  }

  void forward(const Slot& s) {
    e_.phase = Phase::forward;
    const int64_t vs = virtual_stage(s.chunk);
    if (first_virtual(s.chunk)) {
      engine_instruction("engine.forward");
      e_.layer = kLayerEmbedding;
      wait_for_params(s, kLayerEmbedding);
      gather_embedding(kLayerEmbedding);
      layers_.embedding_forward(e_);
    } else {
      e_.layer = first_layer(s.chunk);
      message(OpKind::recv, false, vs - 1, vs);
      engine_instruction("engine.forward");
    }
    const int32_t first = first_layer(s.chunk), last = end_layer(s.chunk) - 1;
    layers_.begin_pass(first, last);
    for (int32_t l = first; l <= last; ++l) {
      e_.layer = l;
      wait_for_params(s, l);
      layers_.forward(e_, l);
    }
    memory_event(OpKind::alloc, s.chunk);
    if (last_virtual(s.chunk)) {
      e_.layer = kLayerLogits;
      wait_for_params(s, kLayerLogits);
      gather_embedding(kLayerLogits);
      layers_.logits_forward(e_);
    } else {
      message(OpKind::send, false, vs + 1, vs + 1);
    }
  }

  void backward(const Slot& s) {
    const int64_t vs = virtual_stage(s.chunk);
    e_.phase = Phase::backward;
    if (last_virtual(s.chunk)) {
      e_.layer = kLayerLogits;
      engine_instruction("engine.backward");
      gather_embedding(kLayerLogits);
      layers_.logits_backward(e_);
      grad_ready(kLayerLogits);
    } else {
      e_.layer = end_layer(s.chunk) - 1;
      message(OpKind::recv, true, vs + 1, vs);
      engine_instruction("engine.backward");
    }
    const int32_t first = first_layer(s.chunk), last = end_layer(s.chunk) - 1;
    for (int32_t l = last; l >= first; --l) {
      e_.layer = l;
      if (recomputed(s.chunk, l)) {
        e_.phase = Phase::recompute;
        layers_.begin_recompute(l, run_first(s.chunk, l));
        layers_.forward(e_, l);
      } else if (c_.w.training.checkpointing == Checkpointing::selective) {
        e_.phase = Phase::recompute;
        layers_.recompute_attention(e_, l);
      }
      e_.phase = Phase::backward;
      layers_.begin_pass(l, run_first(s.chunk, l));
      if (c_.w.training.checkpointing == Checkpointing::selective_op) {
        // The block's backward pass begins with its recomputation (inside the same backward pre-hook).
        layers_.recompute_ops(e_, l);
        e_.phase = Phase::backward;
      }
      layers_.backward(e_, l);
      grad_ready(l);
    }
    e_.layer = first;
    memory_event(OpKind::free, s.chunk);
    if (first_virtual(s.chunk)) {
      e_.layer = kLayerEmbedding;
      gather_embedding(kLayerEmbedding);
      layers_.embedding_backward(e_);
      grad_ready(kLayerEmbedding);
    } else {
      message(OpKind::send, true, vs - 1, vs - 1);
    }
  }

  // Parameter blocks of a chunk: its layers, plus the embeddings on the first and the output embedding
  // on the last virtual stage.
  std::vector<std::pair<int32_t, detail::ParamBlock>> chunk_params(int32_t chunk) const {
    std::vector<std::pair<int32_t, detail::ParamBlock>> out;
    for (int32_t l = end_layer(chunk) - 1; l >= first_layer(chunk); --l)
      for (const auto& b : layers_.layer_params(l)) out.push_back({l, b});
    if (last_virtual(chunk) && !output_is_input_embedding(c_.w))
      out.push_back({kLayerLogits, {"output_embedding", layers_.embedding_params(), false}});
    if (first_virtual(chunk)) out.push_back({kLayerEmbedding, {"embedding", input_embedding_params(layers_), false}});
    return out;
  }

  // ZeRO-3 shards the embeddings as it shards the layers (FSDP's root unit: TorchTitan applies
  // fully_shard(model) over tok_embeddings, norm and output, parallelize_llama.py apply_fsdp, commit
  // 9dec370; DeepSpeed partitions every module's parameters): they are gathered before the forward and,
  // where the stack reshards after forward, the backward that use them, and their gradients
  // reduce-scattered (grad_ready) as the rest of the sharded optimizer state expects.
  void gather_embedding(int32_t layer) {
    if (c_.w.parallel.zero_stage != 3) return;
    if (e_.phase == Phase::backward && !c_.w.framework.sharding.reshard_after_forward) return;
    const bool output = layer == kLayerLogits;
    const double params = output ? layers_.embedding_params() : input_embedding_params(layers_);
    e_.blocking(OpKind::all_gather, Stream::shard, c_.shard_dense, params * c_.e,
                output ? "zero3.output.all_gather" : "zero3.embedding.all_gather");
  }

  // The chunk's gradients in the order its backward produces them: the output embedding's (the loss's
  // backward), the layers' from last to first, the input embedding's.
  std::vector<detail::GradientBlock> gradient_blocks(int32_t chunk) const {
    const double bytes = bytes_of(c_.w.training.gradient_reduce());
    // ZeRO-3 reduce-scatters each layer's gradients in the backward pass (workloads/lower_megatron.cpp);
    // the embeddings' are reduce-scattered here (gather_embedding). validate() allows ZeRO-3 only
    // without axonn or optimus.
    const bool layers_done = c_.w.parallel.zero_stage == 3;
    std::vector<detail::GradientBlock> out;
    if (last_virtual(chunk) && !output_is_input_embedding(c_.w))
      out.push_back({kLayerLogits, "output_embedding", layers_.embedding_params() * bytes, false});
    if (!layers_done)
      for (int32_t l = end_layer(chunk) - 1; l >= first_layer(chunk); --l)
        for (const auto& b : layers_.layer_params(l)) out.push_back({l, b.name, b.params * bytes, b.expert});
    if (first_virtual(chunk))
      out.push_back({kLayerEmbedding, "embedding", input_embedding_params(layers_) * bytes, false});
    return out;
  }

  double bucket_cap(int32_t chunk) const {
    const auto& f = c_.w.framework;
    // A stack that shards by unit reduce-scatters the embeddings' gradients with their unit, one call
    // each (FSDP's root), not in the DDP buckets of unsharded training.
    if (c_.w.parallel.zero_stage == 3 && f.sharding.gather_unit == GatherUnit::layer) return HUGE_VAL;
    if (f.gradient_buckets_first_stage_only && (role_.stage > 0 || chunk > 0)) return HUGE_VAL;
    return f.gradient_bucket_bytes;
  }

  void begin_reduction(int32_t chunk) {
    buckets_ = detail::gradient_buckets(gradient_blocks(chunk), bucket_cap(chunk));
    next_bucket_ = 0;
  }

  // optimizations.overlap_param_gather, Megatron-Core's --overlap-param-gather: the distributed
  // optimizer's all-gathers of the updated parameters move from the end of the optimizer step into
  // the next iteration's first forward, bucket by bucket (the gradient buckets, in forward order,
  // chunk after chunk). The first is dispatched when the iteration starts (zero_grad); each forward
  // pre-hook waits for the bucket holding its module's parameters and then dispatches the next one,
  // only one, so that communication kernels do not block the compute stream's (core_v0.8.0
  // megatron/core/optimizer/distrib_optimizer.py l.1330-1337 and 1455-1475; core_v0.9.0
  // distributed_data_parallel.py l.191-198 and 307-336, param_and_grad_buffer.py finish_param_sync).
  // The steady state of consecutive iterations is what one iteration's program holds.
  // Bytes of a gathered parameter: fp8 for the layers' weights under fp8_param_gather (Megatron-LM
  // --fp8-param-gather; the embeddings stay 16-bit), else the training dtype's.
  double param_bytes(int32_t layer) const {
    const bool embedding = layer == kLayerEmbedding || layer == kLayerLogits;
    return c_.w.training.fp8_param_gather && !embedding ? 1.0 : c_.e;
  }

  bool param_gathers_overlapped() const {
    const auto zero = c_.w.parallel.zero_stage;
    return c_.w.opt.overlap_param_gather && (zero == 1 || zero == 2);
  }

  void plan_param_gathers() {
    if (!param_gathers_overlapped()) return;
    // The parameter buffer is bucketed as the gradient buffer (the same parameters; Megatron-Core's
    // bucket_size counts parameters): each bucket's gradient bytes rescaled to the parameters' dtype.
    const double per_grad = bytes_of(c_.w.training.gradient_reduce());
    for (int32_t chunk = 0; chunk < v_; ++chunk) {
      const auto buckets = detail::gradient_buckets(gradient_blocks(chunk), bucket_cap(chunk));
      for (auto b = buckets.rbegin(); b != buckets.rend(); ++b)
        gathers_.push_back(
            {chunk, b->ready_layer, b->bytes * param_bytes(b->ready_layer) / per_grad, b->expert, kNoOp, false});
    }
    if (!gathers_.empty()) dispatch_gather(0, {});
  }

  void dispatch_gather(size_t i, std::vector<uint32_t> deps) {
    auto& g = gathers_[i];
    const Phase phase = e_.phase;
    const int32_t layer = e_.layer;
    // Once per iteration, whichever forward waits for it: counted with the optimizer step it completes
    // (not per micro-batch).
    e_.phase = Phase::optimizer;
    e_.layer = g.layer;
    std::erase(deps, kNoOp);
    g.id = e_.async(OpKind::all_gather, Stream::data, g.expert ? c_.dp_expert : c_.dp_dense, g.bytes,
                    "params.all_gather", deps);
    if (g.id != kNoOp) role_.ops[g.id].expert_params = g.expert;
    g.dispatched = true;
    e_.phase = phase;
    e_.layer = layer;
  }

  // The forward pre-hook of `layer` in the chunk's first micro-batch.
  void wait_for_params(const Slot& s, int32_t layer) {
    for (; next_gather_ < gathers_.size() && gathers_[next_gather_].chunk == s.chunk &&
           gathers_[next_gather_].layer == layer;
         ++next_gather_) {
      if (!gathers_[next_gather_].dispatched) dispatch_gather(next_gather_, {});
      const uint32_t id = gathers_[next_gather_].id;
      e_.wait(id);
      if (next_gather_ + 1 < gathers_.size()) dispatch_gather(next_gather_ + 1, {id});
    }
  }

  // Launches the buckets that the backward of `layer` completed (kNone: every one left). Each bucket
  // reduces over the data-parallel group on the data stream once the layer's last computation (and
  // any asynchronous weight-gradient reduction before it) is done.
  void grad_ready(int32_t layer) {
    if (!reducing_ && layer != kLayerNone) return;
    const auto zero = c_.w.parallel.zero_stage;
    const Phase phase = e_.phase;
    const int32_t current = e_.layer;
    // ZeRO-2's per-micro-batch reductions are part of each backward pass (as ZeRO-3's reduce-scatters).
    e_.phase = zero == 2 ? Phase::backward : Phase::grad_sync;
    // ZeRO-1/2/3 reduce-scatter (each rank keeps the shard it updates; ZeRO-3 only the embeddings' here);
    // ZeRO-0 all-reduces.
    const OpKind kind = zero >= 1 ? OpKind::reduce_scatter : OpKind::all_reduce;
    for (; next_bucket_ < buckets_.size() && (layer == kLayerNone || buckets_[next_bucket_].ready_layer == layer);
         ++next_bucket_) {
      const auto& b = buckets_[next_bucket_];
      e_.layer = b.ready_layer;
      std::vector<uint32_t> deps{e_.last_compute()};
      if (!e_.deferred.empty()) deps.push_back(e_.deferred.back());
      // ZeRO-3's shards are those of its shard group (the whole data-parallel group but with hybrid
      // sharding, whose replicas then all-reduce the reduced shard).
      const AxisMask group =
          zero == 3 ? (b.expert ? c_.shard_expert : c_.shard_dense) : (b.expert ? c_.dp_expert : c_.dp_dense);
      const uint32_t reduced = e_.async(kind, Stream::data, group, b.bytes, b.name, deps);
      if (reduced == kNoOp) continue;
      const uint32_t id = e_.replicate(group, b.bytes, reduced);
      role_.ops[reduced].expert_params = role_.ops[id].expert_params = b.expert;
      synced_.push_back(id);
      // DeepSpeed without overlap_comm reduces on the current (compute) stream (stage_1_and_2.py
      // reduce_ipg_grads: reduction_stream only if overlap_comm), so the backward waits for it.
      if (zero == 2 && !c_.w.opt.overlap_gradient_sync) e_.wait(id);
    }
    e_.phase = phase;
    e_.layer = current;
  }

  // Host work of the pipeline engine per instruction it interprets (DeepSpeed's _exec_schedule runs
  // each of ForwardPass, BackwardPass, Send/RecvActivation, Send/RecvGrad in Python; schedule.py).
  uint32_t engine_instruction(const char* name) {
    if (p_ == 1) return kNoOp;
    return e_.host_work(name, c_.w.framework.micro_batch_overhead, Stream::compute, {e_.last_compute()});
  }
  bool synchronous_p2p() const { return c_.w.framework.synchronous_p2p || c_.w.framework.broadcast_p2p; }

  void optimizer_step() {
    double shard = 0;  // parameters this rank updates
    const auto zero = c_.w.parallel.zero_stage;
    for (int32_t chunk = 0; chunk < v_; ++chunk)
      for (const auto& [layer, block] : chunk_params(chunk)) {
        // (ZeRO-3 with hybrid sharding updates its shard group's share.)
        const double g = static_cast<double>(c_.size(block.expert ? c_.shard_expert : c_.shard_dense));
        shard += zero >= 1 ? block.params / g : block.params;
        (block.expert ? role_.expert_params : role_.params) += block.params;
      }
    role_.params += role_.expert_params;
    e_.phase = Phase::optimizer;
    e_.layer = kLayerNone;
    for (uint32_t id : synced_) e_.wait(id);
    for (uint32_t id : e_.deferred) e_.wait(id);
    const double per_param = c_.w.framework.optimizer_bytes_per_param > 0 ? c_.w.framework.optimizer_bytes_per_param
                                                                          : optimizer_bytes_per_param(c_.w.training);
    const double traffic = per_param * shard;
    if (c_.w.training.offload_optimizer) {
      // AxoNN ([singh2025dissertation] §3.3.2): fp32 weights and Adam state stream in from host memory bucket by
      // bucket; the updated state streams back.
      const double moved = (model_state_bytes_per_param(c_.w.training) - 4.0) * shard;
      e_.wait(e_.compute(OpKind::host_transfer, "optimizer.h2d", moved, 0, Stream::host));
      e_.wait(e_.compute(OpKind::optimizer, "adam", traffic, kAdamFlopsPerParam * shard));
      e_.compute(OpKind::host_transfer, "optimizer.d2h", moved, 0, Stream::host);
    } else {
      e_.compute(OpKind::optimizer, "adam", traffic, kAdamFlopsPerParam * shard);
    }
    if ((zero == 1 || zero == 2) && !param_gathers_overlapped()) {
      e_.phase = Phase::optimizer;
      for (int32_t chunk = 0; chunk < v_; ++chunk)
        for (const auto& [layer, block] : chunk_params(chunk)) {
          e_.layer = layer;
          const AxisMask group = block.expert ? c_.dp_expert : c_.dp_dense;
          e_.async(OpKind::all_gather, Stream::data, group, block.params * param_bytes(layer), block.name,
                   {e_.last_compute()});
        }
    }
  }

  const Ctx& c_;
  LayerLowering& layers_;
  Role& role_;
  Emitter e_;
  const std::vector<Slot>& slots_;
  int64_t p_ = 1, v_ = 1;
  const std::vector<int64_t>& starts_;  // first layer of each virtual stage (pipeline_layers.hpp)
  std::vector<uint32_t> synced_;
  std::vector<detail::GradientBucket> buckets_;
  size_t next_bucket_ = 0;
  bool reducing_ = false;
  struct ParamGather {
    int32_t chunk, layer;  // the forward pre-hook that waits for it
    double bytes;          // per rank, gathered (the bucket's parameters in the training dtype)
    bool expert;
    uint32_t id;
    bool dispatched;
  };
  std::vector<ParamGather> gathers_;  // in the order the forward needs them
  size_t next_gather_ = 0;
};

MemoryEstimate estimate_memory(const Ctx& c, const LayerLowering& layers, const Role& role, int32_t first_layer,
                               int32_t last_layer_exclusive, int64_t chunks, const std::vector<int64_t>& starts,
                               int64_t stages) {
  MemoryEstimate m;
  const auto& t = c.w.training;
  const int zero = static_cast<int>(c.w.parallel.zero_stage);
  const double half = t.dtype == Dtype::fp32 ? 4.0 : 2.0;
  const double rest = model_state_bytes_per_param(t) - 2.0 * half;  // master, moments, fp32 grads
  const double dense = role.params - role.expert_params, expert = role.expert_params;
  // Sharded over the ZeRO group: the data-parallel group, or a hybrid sharding's shard group.
  const double gd = static_cast<double>(c.size(c.shard_dense)), ge = static_cast<double>(c.size(c.shard_expert));
  auto shard = [&](double p, double g, bool sharded) { return sharded ? p / g : p; };
  m.weights = half * (shard(dense, gd, zero >= 3) + shard(expert, ge, zero >= 3));
  if (t.fp8 != Fp8::none) {
    // Transformer Engine keeps an fp8 copy of each linear weight and its transpose (two bytes per
    // parameter of the layers, the embeddings not); with fp8_param_gather the weight itself is the
    // fp8 copy, which the transpose doubles: as many bytes as the 16-bit weight, nothing more.
    double embeddings = 0;
    if (role.stage == 0) embeddings += input_embedding_params(layers);
    if (role.stage == stages - 1 && !output_is_input_embedding(c.w)) embeddings += layers.embedding_params();
    const double linear = shard(dense - embeddings, gd, zero >= 3) + shard(expert, ge, zero >= 3);
    m.weights += t.fp8_param_gather ? 0.0 : 2.0 * linear;
  }
  // Below ZeRO-3 the gradients live in the buffer the data-parallel group reduces, in its dtype:
  // Megatron-LM's main_grad buffer is fp32 under --bf16 (accumulate_allreduce_grads_in_fp32), so its
  // model state is 2 + 4 + 12/d bytes per parameter with the distributed optimizer (docs/source/
  // api-guide/dist_optimizer.md; theoretical_memory_usage.py's 6 + 12/d). Under ZeRO-3 the fp32
  // master shard is the parameter and the gradient shard is counted beside it (16/d in all).
  const bool reduced_wider = zero < 3 && !t.fp32_gradient_copy && bytes_of(t.gradient_reduce()) > half;
  const double gradient_bytes = reduced_wider ? bytes_of(t.gradient_reduce()) : half;
  m.gradients = gradient_bytes * (shard(dense, gd, zero >= 2) + shard(expert, ge, zero >= 2));
  if (zero == 2) {
    // ZeRO-2 keeps its gradient shards plus the bucket of full gradients being filled and reduced
    // (DeepSpeed stage_1_and_2.py: the IPG buffer of reduce_bucket_size elements, v0.16.3); without a
    // bucket size, the largest parameter block's.
    double largest = 0;
    for (int32_t l = first_layer; l < last_layer_exclusive; ++l)
      for (const auto& b : layers.layer_params(l)) largest = std::max(largest, b.params);
    if (role.stage == 0 || role.stage == stages - 1)
      largest = std::max(largest, layers.embedding_params() + (role.stage == 0 ? layers.position_params() : 0));
    const double bucket = c.w.framework.gradient_bucket_bytes;
    m.gradients += bucket > 0 ? std::min(bucket, half * (dense + expert)) : half * largest;
  }
  const double opt = rest * (shard(dense, gd, zero >= 1) + shard(expert, ge, zero >= 1));
  if (t.offload_optimizer) {
    m.host_optimizer = opt;
    m.optimizer = 16.0 * static_cast<double>(t.offload_bucket);
  } else {
    m.optimizer = opt;
  }
  // Gathered weights: the unit computing and those gathered ahead of it, or every layer of the stage
  // when the gathers are kept from the forward pass to the backward pass.
  double largest = 0, all = 0;
  for (int64_t chunk = 0; chunk < chunks; ++chunk)
    for (int64_t i = starts[static_cast<size_t>(chunk * stages + role.stage)];
         i < starts[static_cast<size_t>(chunk * stages + role.stage) + 1]; ++i) {
      const int32_t l = static_cast<int32_t>(i);
      largest = std::max(largest, layers.gathered_weight_bytes(l));
      all += layers.gathered_weight_bytes(l);
    }
  m.gathered_weights =
      layers.keeps_gathered_weights() ? all : layers.live_gathered_weight_bytes(largest, c.w.opt.overlap_all_gather);
  if (zero >= 3) {
    // ZeRO-3's gathered embeddings (gather_embedding): live beside the layers' when the stack keeps its
    // gathers, else on their own while the embedding or the logits compute.
    double embedding = 0;
    if (role.stage == 0) embedding = input_embedding_params(layers);
    if (role.stage == stages - 1) embedding = std::max(embedding, layers.embedding_params());
    embedding *= half;
    m.gathered_weights =
        layers.keeps_gathered_weights() ? m.gathered_weights + embedding : std::max(m.gathered_weights, embedding);
  }
  // Activations: the peak of the stash over the op list, plus one layer's working set.
  double live = 0, peak = 0, working = 0, comm = 0;
  for (const auto& op : role.ops) {
    if (op.kind == OpKind::alloc) live += op.bytes;
    if (op.kind == OpKind::free) live -= op.bytes;
    peak = std::max(peak, live);
  }
  const auto recomputing = recomputed_layers(c.w);
  for (int32_t l = first_layer; l < last_layer_exclusive; ++l) {
    working = std::max(working,
                       layer_activations(c.w, c.w.model.is_moe_layer(l), recomputing[static_cast<size_t>(l)]).working);
    comm = std::max(comm, layers.comm_stash_bytes(l));
  }
  // The loss's transient on the last stage: beyond the 4 bytes per logit the stash keeps, the stack's
  // cross entropy holds more copies while it runs (Framework::loss_logit_bytes); it is live when no
  // layer's working set is.
  if (role.stage == stages - 1)
    m.loss_transient = std::max(0.0, c.w.framework.loss_logit_bytes - 4.0) * layers.logits_bytes() / 4.0;
  m.activations = peak + std::max(working, m.loss_transient);
  m.comm_stash = comm;
  return m;
}

}  // namespace

Program lower(const Workload& w, const LowerOptions& options) {
  validate(w);
  Program prog;
  prog.workload_name = w.name;
  prog.workload_description = w.description;
  prog.framework = w.framework;
  prog.grid = make_grid(w);
  prog.placement_order = w.placement.order;
  prog.placement_tile = w.placement.tile;
  prog.devices_per_node = options.devices_per_node > 0 ? options.devices_per_node : w.placement.devices_per_node;
  prog.micro_batches = w.micro_batches();
  prog.tokens_per_iteration = w.training.global_batch * w.model.seq_len;
  const auto flops = iteration_flops(w);
  prog.model_flops = flops.model;
  prog.hardware_flops = flops.hardware;
  prog.parameters = count_parameters(w.model).total();

  const Ctx ctx(w, prog.grid);
  auto layers = make_lowering(ctx);
  const auto& pp = w.parallel.pipeline;
  ScheduleSpec spec{pp.schedule, pp.stages, w.micro_batches(), pp.chunks, pp.pipeline_limit};
  const auto schedules = all_stage_schedules(spec);
  const std::vector<int64_t> starts = virtual_stage_starts(w);
  prog.roles.resize(static_cast<size_t>(pp.stages));
  for (int64_t s = 0; s < pp.stages; ++s) {
    Role& role = prog.roles[static_cast<size_t>(s)];
    role.stage = s;
    role.name = "stage " + std::to_string(s);
    role.ranks = prog.grid.size() / pp.stages;
    if (s > 0) {  // stages have about the same op count: avoid regrowing the vectors
      role.ops.reserve(prog.roles[0].ops.size() + prog.roles[0].ops.size() / 8);
      role.deps.reserve(prog.roles[0].deps.size() + prog.roles[0].deps.size() / 8);
    }
    StageLowering(ctx, *layers, role, schedules[static_cast<size_t>(s)], starts).run();
    int32_t lo = INT32_MAX, hi = 0;
    for (int64_t c = 0; c < pp.chunks; ++c) {
      lo = std::min<int32_t>(lo, static_cast<int32_t>(starts[static_cast<size_t>(c * pp.stages + s)]));
      hi = std::max<int32_t>(hi, static_cast<int32_t>(starts[static_cast<size_t>(c * pp.stages + s) + 1]));
    }
    role.memory = estimate_memory(ctx, *layers, role, lo, hi, pp.chunks, starts, pp.stages);
  }
  if (options.validate_program) validate_program(prog);
  return prog;
}

}  // namespace paratwin::workloads
