// Transformer layers without tensor parallelism, with Megatron 1-D tensor parallelism (seed 003 §2.3:
// the f/g all-reduces, or all-gather/reduce-scatter with sequence parallelism), and TED's MoE layers
// (seed 002 ch. 7: expert all-to-alls, DTD, CAC). ZeRO-3 gathers and scatters whole layers.
#include <cmath>

#include "workloads/lower_internal.hpp"

namespace paratwin::workloads::detail {

namespace {

class MegatronLowering final : public LayerLowering {
 public:
  explicit MegatronLowering(const Ctx& c)
      : c_(c),
        h_(c.w.model.hidden),
        f_(c.w.model.ffn_hidden),
        a_(c.w.model.heads),
        S_(c.w.model.seq_len),
        V_(c.w.model.vocab),
        T_(c.w.training.micro_batch * c.w.model.seq_len),
        t_(c.size(c.tensor)),
        sp_(c.w.parallel.sequence_parallel),
        zero3_(c.w.parallel.zero_stage == 3) {
    const auto& moe = c.w.model.moe;
    if (moe.enabled()) {
      experts_local_ = moe.experts / c.size(c.expert);
      const double k = static_cast<double>(moe.top_k);
      const double T = static_cast<double>(T_);
      // Capacity routing pads every expert to its capacity (DeepSpeed-MoE); dropless routing sends
      // k·T tokens and the busiest expert computes `imbalance` times its share.
      dispatched_ = moe.capacity_factor > 0 ? std::ceil(moe.capacity_factor * k * T) : k * T;
      computed_ = moe.capacity_factor > 0 ? dispatched_ : std::ceil(moe.imbalance * k * T);
      per_expert_ = static_cast<int64_t>(std::ceil(computed_ / static_cast<double>(experts_local_)));
    }
  }

  void forward(Emitter& e, int32_t layer) override {
    const bool comm = !(e.phase == Phase::recompute && c_.w.opt.comm_aware_checkpointing);
    if (zero3_ && !(e.phase == Phase::recompute && c_.w.opt.cache_all_gather))
      gather_weights(e, layer, 0, c_.w.opt.overlap_all_gather);
    attention_forward(e, comm);
    if (c_.w.model.is_moe_layer(layer))
      moe_forward(e, comm);
    else
      mlp_forward(e, comm);
  }

  void backward(Emitter& e, int32_t layer) override {
    // ZeRO-3 without checkpointing (or with gathers cached) keeps no gathered copy past forward's
    // layer: the backward gathers again unless the recompute pass just did.
    const bool regather = zero3_ && c_.w.training.checkpointing != Checkpointing::full;
    if (regather) gather_weights(e, layer, 0, c_.w.opt.overlap_all_gather);
    if (c_.w.model.is_moe_layer(layer))
      moe_backward(e);
    else
      mlp_backward(e);
    attention_backward(e);
    if (zero3_) scatter_gradients(e, layer);
  }

  void recompute_attention(Emitter& e, int32_t layer) override {
    (void)layer;
    attention_core(e, T_, a_ / t_, h_ / a_, S_);
  }

  void embedding_forward(Emitter& e) override {
    e.elementwise("embedding", 2 * T_ * h_ * c_.e, T_ * h_);
    // Vocabulary-parallel embedding: each rank looks up its slice, an all-reduce completes it.
    if (sp_)
      e.blocking(OpKind::reduce_scatter, Stream::tensor, c_.tensor, activation_bytes(), "embedding.reduce_scatter");
    else
      e.blocking(OpKind::all_reduce, Stream::tensor, c_.tensor, activation_bytes(), "embedding.all_reduce");
  }

  void embedding_backward(Emitter& e) override {
    if (sp_) e.blocking(OpKind::all_gather, Stream::tensor, c_.tensor, activation_bytes(), "embedding.all_gather");
    e.elementwise("embedding.bwd", 2 * T_ * h_ * c_.e, T_ * h_);
  }

  void logits_forward(Emitter& e) override {
    if (sp_) e.blocking(OpKind::all_gather, Stream::tensor, c_.tensor, activation_bytes(), "final_ln.all_gather");
    e.gemm("logits", T_, V_ / t_, h_);
    e.elementwise("cross_entropy", 2 * T_ * (V_ / t_) * 4.0, 5.0 * T_ * (V_ / t_));
  }

  void logits_backward(Emitter& e) override {
    e.elementwise("cross_entropy.bwd", 2 * T_ * (V_ / t_) * c_.e, 2.0 * T_ * (V_ / t_));
    e.gemm("logits.dgrad", T_, h_, V_ / t_);
    const uint32_t ar = input_grad_reduce(e, "logits.dgrad.all_reduce", "logits.dgrad.reduce_scatter");
    e.gemm("logits.wgrad", V_ / t_, h_, T_, 1, true, false);
    e.wait(ar);
  }

  double activation_message_bytes() const override {
    const double full = activation_bytes();
    return (sp_ || c_.w.opt.scatter_gather) ? full / static_cast<double>(t_) : full;
  }

  std::vector<ParamBlock> layer_params(int32_t layer) const override {
    const double h = static_cast<double>(h_), f = static_cast<double>(f_), t = static_cast<double>(t_);
    const double attention = (3 * h * h + 3 * h) / t + h * h / t + h + 2 * h;
    if (!c_.w.model.is_moe_layer(layer)) return {{"layer", attention + (h * f + f) / t + f * h / t + h + 2 * h, false}};
    const double router = h * static_cast<double>(c_.w.model.moe.experts);
    const double experts = static_cast<double>(experts_local_) * ((h * f + f) / t + f * h / t + h);
    return {{"layer", attention + 2 * h + router, false}, {"experts", experts, true}};
  }

  double logits_bytes() const override { return 4.0 * static_cast<double>(T_ * (V_ / t_)); }
  bool keeps_gathered_weights() const override { return zero3_ && c_.w.opt.cache_all_gather; }

  double embedding_params() const override { return static_cast<double>(V_ * h_) / static_cast<double>(t_); }
  double position_params() const override { return static_cast<double>(S_ * h_); }

  double gathered_weight_bytes(int32_t layer) const override {
    if (!zero3_) return 0;
    double p = 0;
    for (const auto& b : layer_params(layer)) p += b.params;
    return p * c_.e;
  }

  double comm_stash_bytes(int32_t layer) const override {
    if (!c_.w.opt.comm_aware_checkpointing) return 0;
    // CAC keeps the outputs of every collective of the layer's forward pass.
    double bytes = 2.0 * activation_bytes();  // attention all-reduce output
    if (c_.w.model.is_moe_layer(layer))
      bytes += (2.0 * dispatched_ + computed_) * static_cast<double>(h_) * c_.e;
    else
      bytes += activation_bytes();
    return bytes;
  }

 protected:
  GatherSpec gather_spec(int32_t layer, int32_t block) const override {
    (void)block;
    return {c_.dp_dense, gathered_weight_bytes(layer), "zero3.all_gather"};
  }
  int32_t gather_blocks(int32_t layer) const override {
    (void)layer;
    return 1;
  }

 private:
  // Bytes of one micro-batch's whole activation (s·b·h values): what every tensor-parallel collective
  // of a block moves.
  double activation_bytes() const { return static_cast<double>(T_ * h_) * c_.e; }
  double rows() const {
    return sp_ ? static_cast<double>(T_ * h_) / static_cast<double>(t_) : static_cast<double>(T_ * h_);
  }

  // g (forward): all-reduce of the block output, or reduce-scatter with sequence parallelism.
  void output_reduce(Emitter& e, bool comm, const char* ar_name, const char* rs_name) {
    if (!comm) return;
    const double bytes = activation_bytes();
    if (sp_)
      e.blocking(OpKind::reduce_scatter, Stream::tensor, c_.tensor, bytes, rs_name);
    else
      e.blocking(OpKind::all_reduce, Stream::tensor, c_.tensor, bytes, ar_name);
  }
  // The all-gather that sequence parallelism puts before a block (forward) or after its output's
  // gradient arrives (backward).
  void sequence_gather(Emitter& e, bool comm, const char* name) {
    if (sp_ && comm) e.blocking(OpKind::all_gather, Stream::tensor, c_.tensor, activation_bytes(), name);
  }
  // Sequence parallelism keeps only its shard of a column-parallel linear's input (the layer norm's
  // output) for backward: Megatron-LM gathers it again for the weight-gradient GEMM, asynchronously,
  // while the input-gradient GEMM runs (LinearWithGradAccumulationAndAsyncCommunication.backward in
  // its megatron/core/tensor_parallel/layers.py), and waits for it before the weight gradient.
  uint32_t input_regather(Emitter& e, const char* name) {
    if (!sp_) return kNoOp;
    return e.async(OpKind::all_gather, Stream::tensor, c_.tensor, activation_bytes(), name, {e.last_compute()});
  }
  // f (backward): the all-reduce (reduce-scatter with SP) of the block's input gradient. With OAR
  // it runs during the weight-gradient GEMM and is waited for after it.
  uint32_t input_grad_reduce(Emitter& e, const char* ar_name, const char* rs_name) {
    const double bytes = activation_bytes();
    const OpKind kind = sp_ ? OpKind::reduce_scatter : OpKind::all_reduce;
    const char* name = sp_ ? rs_name : ar_name;
    if (c_.w.opt.overlap_all_reduce) return e.async(kind, Stream::tensor, c_.tensor, bytes, name, {e.last_compute()});
    e.blocking(kind, Stream::tensor, c_.tensor, bytes, name);
    return kNoOp;
  }

  void attention_forward(Emitter& e, bool comm) {
    e.elementwise("ln1", 2 * rows() * c_.e, 5 * rows());
    sequence_gather(e, comm, "ln1.all_gather");
    e.gemm("qkv", T_, 3 * h_ / t_, h_);
    attention_core(e, T_, a_ / t_, h_ / a_, S_);
    e.gemm("proj", T_, h_, h_ / t_);
    output_reduce(e, comm, "proj.all_reduce", "proj.reduce_scatter");
    e.elementwise("dropout_residual1", 3 * rows() * c_.e, 2 * rows());
  }

  void attention_backward(Emitter& e) {
    e.elementwise("dropout_residual1.bwd", 3 * rows() * c_.e, 2 * rows());
    sequence_gather(e, true, "proj.bwd.all_gather");
    e.gemm("proj.dgrad", T_, h_ / t_, h_);
    e.gemm("proj.wgrad", h_ / t_, h_, T_, 1, true, false);
    attention_core_backward(e, T_, a_ / t_, h_ / a_, S_);
    const uint32_t ag = input_regather(e, "ln1.bwd.all_gather");
    e.gemm("qkv.dgrad", T_, h_, 3 * h_ / t_);
    const uint32_t ar = input_grad_reduce(e, "attention.dgrad.all_reduce", "attention.dgrad.reduce_scatter");
    e.wait(ag);
    e.gemm("qkv.wgrad", h_, 3 * h_ / t_, T_, 1, true, false);
    e.wait(ar);
    e.elementwise("ln1.bwd", 3 * rows() * c_.e, 8 * rows());
  }

  void mlp_forward(Emitter& e, bool comm) {
    e.elementwise("ln2", 2 * rows() * c_.e, 5 * rows());
    sequence_gather(e, comm, "ln2.all_gather");
    e.gemm("fc1", T_, f_ / t_, h_);
    const double act = static_cast<double>(T_ * (f_ / t_));
    e.elementwise("gelu", 2 * act * c_.e, 8 * act);
    e.gemm("fc2", T_, h_, f_ / t_);
    output_reduce(e, comm, "fc2.all_reduce", "fc2.reduce_scatter");
    e.elementwise("dropout_residual2", 3 * rows() * c_.e, 2 * rows());
  }

  void mlp_backward(Emitter& e) {
    e.elementwise("dropout_residual2.bwd", 3 * rows() * c_.e, 2 * rows());
    sequence_gather(e, true, "fc2.bwd.all_gather");
    e.gemm("fc2.dgrad", T_, f_ / t_, h_);
    e.gemm("fc2.wgrad", f_ / t_, h_, T_, 1, true, false);
    const double act = static_cast<double>(T_ * (f_ / t_));
    e.elementwise("gelu.bwd", 3 * act * c_.e, 10 * act);
    const uint32_t ag = input_regather(e, "ln2.bwd.all_gather");
    e.gemm("fc1.dgrad", T_, h_, f_ / t_);
    const uint32_t ar = input_grad_reduce(e, "mlp.dgrad.all_reduce", "mlp.dgrad.reduce_scatter");
    e.wait(ag);
    e.gemm("fc1.wgrad", h_, f_ / t_, T_, 1, true, false);
    e.wait(ar);
    e.elementwise("ln2.bwd", 3 * rows() * c_.e, 8 * rows());
  }

  // One expert all-to-all. DTD (seed 002 §7.3.1) first drops the copies of tokens that the tensor
  // ranks share, sending 1/G_tensor of the tokens, then all-gathers them across the tensor group.
  void expert_exchange(Emitter& e, bool comm, const char* a2a_name, const char* ag_name) {
    if (!comm) return;
    const double bytes = dispatched_ * static_cast<double>(h_) * c_.e;
    const bool dtd = c_.w.opt.duplicate_token_dropping && t_ > 1;
    e.blocking(OpKind::all_to_all, Stream::expert, c_.expert, dtd ? bytes / static_cast<double>(t_) : bytes, a2a_name);
    if (dtd) e.blocking(OpKind::all_gather, Stream::tensor, c_.tensor, bytes, ag_name);
  }

  void moe_forward(Emitter& e, bool comm) {
    e.elementwise("ln2", 2 * rows() * c_.e, 5 * rows());
    const int64_t E = c_.w.model.moe.experts;
    e.gemm("router", T_, E, h_);
    e.elementwise("router.topk", 2.0 * T_ * E * 4.0, 5.0 * T_ * E);
    expert_exchange(e, comm, "dispatch.all_to_all", "dispatch.all_gather");
    e.gemm("expert.fc1", per_expert_, f_ / t_, h_, experts_local_);
    const double act = static_cast<double>(per_expert_ * experts_local_ * (f_ / t_));
    e.elementwise("expert.gelu", 2 * act * c_.e, 8 * act);
    e.gemm("expert.fc2", per_expert_, h_, f_ / t_, experts_local_);
    if (comm)
      e.blocking(OpKind::all_reduce, Stream::tensor, c_.tensor, computed_ * static_cast<double>(h_) * c_.e,
                 "expert.all_reduce");
    expert_exchange(e, comm, "combine.all_to_all", "combine.all_gather");
    e.elementwise("combine", (dispatched_ + 2.0 * static_cast<double>(T_)) * static_cast<double>(h_) * c_.e,
                  2 * dispatched_ * static_cast<double>(h_));
    e.elementwise("dropout_residual2", 3 * rows() * c_.e, 2 * rows());
  }

  void moe_backward(Emitter& e) {
    e.elementwise("dropout_residual2.bwd", 3 * rows() * c_.e, 2 * rows());
    e.elementwise("combine.bwd", (dispatched_ + 2.0 * static_cast<double>(T_)) * static_cast<double>(h_) * c_.e,
                  2 * dispatched_ * static_cast<double>(h_));
    expert_exchange(e, true, "combine.bwd.all_to_all", "combine.bwd.all_gather");
    e.gemm("expert.fc2.dgrad", per_expert_, f_ / t_, h_, experts_local_);
    e.gemm("expert.fc2.wgrad", f_ / t_, h_, per_expert_, experts_local_, true, false);
    const double act = static_cast<double>(per_expert_ * experts_local_ * (f_ / t_));
    e.elementwise("expert.gelu.bwd", 3 * act * c_.e, 10 * act);
    e.gemm("expert.fc1.dgrad", per_expert_, h_, f_ / t_, experts_local_);
    const uint32_t ar = input_grad_reduce(e, "experts.dgrad.all_reduce", "experts.dgrad.reduce_scatter");
    e.gemm("expert.fc1.wgrad", h_, f_ / t_, per_expert_, experts_local_, true, false);
    e.wait(ar);
    expert_exchange(e, true, "dispatch.bwd.all_to_all", "dispatch.bwd.all_gather");
    const int64_t E = c_.w.model.moe.experts;
    e.gemm("router.dgrad", T_, h_, E);
    e.gemm("router.wgrad", h_, E, T_, 1, true, false);
    e.elementwise("ln2.bwd", 3 * rows() * c_.e, 8 * rows());
  }

  void scatter_gradients(Emitter& e, int32_t layer) {
    for (const auto& block : layer_params(layer)) {
      const AxisMask group = block.expert ? c_.dp_expert : c_.dp_dense;
      const double bytes = block.params * c_.e;
      if (c_.w.opt.overlap_reduce_scatter) {
        const uint32_t id =
            e.async(OpKind::reduce_scatter, Stream::shard, group, bytes, "zero3.reduce_scatter", {e.last_compute()});
        if (id != kNoOp) e.deferred.push_back(id);
      } else {
        e.blocking(OpKind::reduce_scatter, Stream::shard, group, bytes, "zero3.reduce_scatter");
      }
    }
  }

  const Ctx& c_;
  int64_t h_, f_, a_, S_, V_, T_, t_;
  bool sp_, zero3_;
  int64_t experts_local_ = 0, per_expert_ = 0;
  double dispatched_ = 0, computed_ = 0;
};

}  // namespace

std::unique_ptr<LayerLowering> make_megatron_lowering(const Ctx& c) {
  return std::make_unique<MegatronLowering>(c);
}

}  // namespace paratwin::workloads::detail
