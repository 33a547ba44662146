// The driver of lowering: runs each pipeline stage's schedule, asks the tensor-mode lowering for the
// ops of every layer pass, and adds pipeline messages, activation memory events, the gradient
// synchronisation (with ZeRO) and the optimizer step.
#include "workloads/lower.hpp"

#include <algorithm>

#include "workloads/arithmetic.hpp"
#include "workloads/lower_internal.hpp"
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

class StageLowering {
 public:
  StageLowering(const Ctx& c, LayerLowering& layers, Role& role, const std::vector<Slot>& slots)
      : c_(c), layers_(layers), role_(role), e_(role, c), slots_(slots) {
    const auto& pp = c.w.parallel.pipeline;
    p_ = pp.stages;
    v_ = pp.chunks;
    per_chunk_ = static_cast<int32_t>(c.w.model.layers / (p_ * v_));
  }

  void run() {
    // The last backward of each chunk: where its gradients are final.
    std::vector<size_t> last_backward(static_cast<size_t>(v_), 0);
    for (size_t i = 0; i < slots_.size(); ++i)
      if (!slots_[i].forward) last_backward[static_cast<size_t>(slots_[i].chunk)] = i;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const Slot& s = slots_[i];
      e_.micro_batch = s.micro_batch;
      e_.chunk = static_cast<int16_t>(s.chunk);
      if (s.forward)
        forward(s);
      else
        backward(s);
      if (!s.forward && c_.w.opt.overlap_gradient_sync && i == last_backward[static_cast<size_t>(s.chunk)])
        sync_chunk_gradients(s.chunk);
    }
    e_.micro_batch = -1;
    e_.chunk = 0;
    if (!c_.w.opt.overlap_gradient_sync)
      for (int32_t chunk = v_ - 1; chunk >= 0; --chunk) sync_chunk_gradients(chunk);
    optimizer_step();
  }

 private:
  int64_t virtual_stage(int32_t chunk) const { return chunk * p_ + role_.stage; }
  bool first_virtual(int32_t chunk) const { return virtual_stage(chunk) == 0; }
  bool last_virtual(int32_t chunk) const { return virtual_stage(chunk) == p_ * v_ - 1; }
  int32_t first_layer(int32_t chunk) const { return static_cast<int32_t>(virtual_stage(chunk)) * per_chunk_; }
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
    std::vector<uint32_t> deps;
    if (kind == OpKind::send) deps.push_back(e_.last_compute());
    const uint32_t id = e_.add(op, deps);
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
    for (int32_t l = first_layer(chunk); l < first_layer(chunk) + per_chunk_; ++l)
      bytes += layer_activations(c_.w, c_.w.model.is_moe_layer(l)).stash + layers_.comm_stash_bytes(l);
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
      e_.layer = kLayerEmbedding;
      layers_.embedding_forward(e_);
    } else {
      e_.layer = first_layer(s.chunk);
      message(OpKind::recv, false, vs - 1, vs);
    }
    const int32_t first = first_layer(s.chunk), last = first + per_chunk_ - 1;
    layers_.begin_pass(first, last);
    for (int32_t l = first; l <= last; ++l) {
      e_.layer = l;
      layers_.forward(e_, l);
    }
    memory_event(OpKind::alloc, s.chunk);
    if (last_virtual(s.chunk)) {
      e_.layer = kLayerLogits;
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
      layers_.logits_backward(e_);
    } else {
      e_.layer = first_layer(s.chunk) + per_chunk_ - 1;
      message(OpKind::recv, true, vs + 1, vs);
    }
    const int32_t first = first_layer(s.chunk), last = first + per_chunk_ - 1;
    for (int32_t l = last; l >= first; --l) {
      e_.layer = l;
      if (c_.w.training.checkpointing == Checkpointing::full) {
        e_.phase = Phase::recompute;
        layers_.begin_pass(l, l);
        layers_.forward(e_, l);
      } else if (c_.w.training.checkpointing == Checkpointing::selective) {
        e_.phase = Phase::recompute;
        layers_.recompute_attention(e_, l);
      }
      e_.phase = Phase::backward;
      layers_.begin_pass(l, first);
      layers_.backward(e_, l);
    }
    e_.layer = first;
    memory_event(OpKind::free, s.chunk);
    if (first_virtual(s.chunk)) {
      e_.layer = kLayerEmbedding;
      layers_.embedding_backward(e_);
    } else {
      message(OpKind::send, true, vs - 1, vs - 1);
    }
  }

  // Parameter blocks of a chunk: its layers, plus the embeddings on the first and the tied output
  // embedding on the last virtual stage.
  std::vector<std::pair<int32_t, detail::ParamBlock>> chunk_params(int32_t chunk) const {
    std::vector<std::pair<int32_t, detail::ParamBlock>> out;
    for (int32_t l = first_layer(chunk) + per_chunk_ - 1; l >= first_layer(chunk); --l)
      for (const auto& b : layers_.layer_params(l)) out.push_back({l, b});
    if (last_virtual(chunk)) out.push_back({kLayerLogits, {"output_embedding", layers_.embedding_params(), false}});
    if (first_virtual(chunk))
      out.push_back({kLayerEmbedding, {"embedding", layers_.embedding_params() + layers_.position_params(), false}});
    return out;
  }

  void sync_chunk_gradients(int32_t chunk) {
    const auto zero = c_.w.parallel.zero_stage;
    // ZeRO-3 reduce-scattered each layer's gradients in the backward pass; the embeddings stay
    // replicated and are all-reduced here.
    const bool layers_done = zero == 3;  // validate() allows ZeRO-3 only without axonn / optimus
    e_.phase = Phase::grad_sync;
    for (const auto& [layer, block] : chunk_params(chunk)) {
      if (layers_done && layer >= 0) continue;
      e_.layer = layer;
      const AxisMask group = block.expert ? c_.dp_expert : c_.dp_dense;
      std::vector<uint32_t> deps{e_.last_compute()};
      if (!e_.deferred.empty()) deps.push_back(e_.deferred.back());
      const OpKind kind = zero == 0 || layers_done ? OpKind::all_reduce : OpKind::reduce_scatter;
      // Named after the parameter block ("qkv", "layer", "experts", "embedding").
      const double bytes = block.params * bytes_of(c_.w.training.gradient_reduce());
      const uint32_t id = e_.async(kind, Stream::data, group, bytes, block.name, deps);
      if (id != kNoOp) {
        role_.ops[id].expert_params = block.expert;
        synced_.push_back(id);
      }
    }
  }

  void optimizer_step() {
    double shard = 0;  // parameters this rank updates
    const auto zero = c_.w.parallel.zero_stage;
    for (int32_t chunk = 0; chunk < v_; ++chunk)
      for (const auto& [layer, block] : chunk_params(chunk)) {
        const double g = static_cast<double>(c_.size(block.expert ? c_.dp_expert : c_.dp_dense));
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
      // AxoNN (seed 002 §3.3.2): fp32 weights and Adam state stream in from host memory bucket by
      // bucket; the updated state streams back.
      const double moved = (model_state_bytes_per_param(c_.w.training) - 4.0) * shard;
      e_.wait(e_.compute(OpKind::host_transfer, "optimizer.h2d", moved, 0, Stream::host));
      e_.wait(e_.compute(OpKind::optimizer, "adam", traffic, kAdamFlopsPerParam * shard));
      e_.compute(OpKind::host_transfer, "optimizer.d2h", moved, 0, Stream::host);
    } else {
      e_.compute(OpKind::optimizer, "adam", traffic, kAdamFlopsPerParam * shard);
    }
    if (zero == 1 || zero == 2) {
      e_.phase = Phase::optimizer;
      for (int32_t chunk = 0; chunk < v_; ++chunk)
        for (const auto& [layer, block] : chunk_params(chunk)) {
          e_.layer = layer;
          const AxisMask group = block.expert ? c_.dp_expert : c_.dp_dense;
          e_.async(OpKind::all_gather, Stream::data, group, block.params * c_.e, block.name, {e_.last_compute()});
        }
    }
  }

  const Ctx& c_;
  LayerLowering& layers_;
  Role& role_;
  Emitter e_;
  const std::vector<Slot>& slots_;
  int64_t p_ = 1, v_ = 1;
  int32_t per_chunk_ = 1;
  std::vector<uint32_t> synced_;
};

MemoryEstimate estimate_memory(const Ctx& c, const LayerLowering& layers, const Role& role, int32_t first_layer,
                               int32_t last_layer_exclusive, int64_t chunks, int64_t layers_per_chunk, int64_t stages) {
  MemoryEstimate m;
  const auto& t = c.w.training;
  const int zero = static_cast<int>(c.w.parallel.zero_stage);
  const double half = t.dtype == Dtype::fp32 ? 4.0 : 2.0;
  const double rest = model_state_bytes_per_param(t) - 2.0 * half;  // master, moments, fp32 grads
  const double dense = role.params - role.expert_params, expert = role.expert_params;
  const double gd = static_cast<double>(c.size(c.dp_dense)), ge = static_cast<double>(c.size(c.dp_expert));
  auto shard = [&](double p, double g, bool sharded) { return sharded ? p / g : p; };
  m.weights = half * (shard(dense, gd, zero >= 3) + shard(expert, ge, zero >= 3));
  m.gradients = half * (shard(dense, gd, zero >= 2) + shard(expert, ge, zero >= 2));
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
    for (int64_t i = 0; i < layers_per_chunk; ++i) {
      const int32_t l = static_cast<int32_t>((chunk * stages + role.stage) * layers_per_chunk + i);
      largest = std::max(largest, layers.gathered_weight_bytes(l));
      all += layers.gathered_weight_bytes(l);
    }
  m.gathered_weights =
      layers.keeps_gathered_weights() ? all : layers.live_gathered_weight_bytes(largest, c.w.opt.overlap_all_gather);
  // Activations: the peak of the stash over the op list, plus one layer's working set.
  double live = 0, peak = 0, working = 0, comm = 0;
  for (const auto& op : role.ops) {
    if (op.kind == OpKind::alloc) live += op.bytes;
    if (op.kind == OpKind::free) live -= op.bytes;
    peak = std::max(peak, live);
  }
  for (int32_t l = first_layer; l < last_layer_exclusive; ++l) {
    working = std::max(working, layer_activations(c.w, c.w.model.is_moe_layer(l)).working);
    comm = std::max(comm, layers.comm_stash_bytes(l));
  }
  m.activations = peak + working;
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
  const int64_t per_chunk = w.model.layers / (pp.stages * pp.chunks);
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
    StageLowering(ctx, *layers, role, schedules[static_cast<size_t>(s)]).run();
    int32_t lo = INT32_MAX, hi = 0;
    for (int64_t c = 0; c < pp.chunks; ++c) {
      lo = std::min<int32_t>(lo, static_cast<int32_t>((c * pp.stages + s) * per_chunk));
      hi = std::max<int32_t>(hi, static_cast<int32_t>((c * pp.stages + s + 1) * per_chunk));
    }
    role.memory = estimate_memory(ctx, *layers, role, lo, hi, pp.chunks, per_chunk, pp.stages);
  }
  if (options.validate_program) validate_program(prog);
  return prog;
}

}  // namespace paratwin::workloads
