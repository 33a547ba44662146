// Transformer layers without tensor parallelism, with Megatron 1-D tensor parallelism ([narayanan2021megatron] §2.3:
// the f/g all-reduces, or all-gather/reduce-scatter with sequence parallelism), and TED's MoE layers
// ([singh2025dissertation] ch. 7: expert all-to-alls, DTD, CAC). ZeRO-3 / FSDP gathers weights and scatters
// gradients as the workload's stack does (workloads/framework.hpp ShardingMechanism): per layer (an
// FSDP unit) or per leaf module (DeepSpeed's submodule hooks), with its prefetch depth, resharding,
// persistent small parameters and gradient buckets.
#include <algorithm>
#include <cmath>
#include <deque>

#include "workloads/lower_internal.hpp"
#include "workloads/pipeline_layers.hpp"

namespace paratwin::workloads::detail {

namespace {

class MegatronLowering final : public LayerLowering {
 public:
  explicit MegatronLowering(const Ctx& c)
      : c_(c),
        h_(c.w.model.hidden),
        f_(c.w.model.ffn_hidden),
        q_(c.w.model.qkv_outputs()),
        f1_(c.w.model.fc1_outputs()),
        a_(c.w.model.heads),
        S_(c.w.model.seq_len),
        V_(c.w.model.vocab),
        T_(c.w.tokens_per_rank()),
        t_(c.size(c.tensor)),
        fe_(c.w.model.expert_ffn()),
        fe1_(c.w.model.fc1_of(c.w.model.expert_ffn())),
        fs_(c.w.model.moe.shared_ffn),
        fs1_(c.w.model.fc1_of(c.w.model.moe.shared_ffn)),
        sp_(c.w.parallel.sequence_parallel),
        zero3_(c.w.parallel.zero_stage == 3),
        sharding_(c.w.framework.sharding) {
    const auto& moe = c.w.model.moe;
    if (moe.enabled()) {
      // TED splits every expert over the tensor ranks, each of which routes all T tokens; Megatron-Core's
      // --expert-tensor-parallel-size 1 keeps experts whole and spreads them over tensor × expert ranks,
      // each routing the T/t tokens of its sequence-parallel shard (MoE parallel folding,
      // megatron/core/parallel_state.py expert groups, core_r0.10+).
      folded_ = c.w.parallel.experts_folded();
      et_ = folded_ ? 1 : t_;
      routed_ = folded_ ? T_ / t_ : T_;
      all_gather_ = c.w.parallel.expert_dispatch == ExpertDispatch::all_gather;
      experts_local_ = moe.experts / c.size(c.expert_group);
      const double k = static_cast<double>(moe.top_k);
      const double T = static_cast<double>(routed_);
      // Capacity routing pads every expert to its capacity (DeepSpeed-MoE); dropless routing sends
      // k·T tokens and the busiest expert computes `imbalance` times its share.
      dispatched_ = moe.capacity_factor > 0 ? std::ceil(moe.capacity_factor * k * T) : k * T;
      computed_ = moe.capacity_factor > 0 ? dispatched_ : std::ceil(moe.imbalance * k * T);
      per_expert_ = static_cast<int64_t>(std::ceil(computed_ / static_cast<double>(experts_local_)));
    }
    ahead_ = sharding_.prefetch >= 0 ? sharding_.prefetch : (c.w.opt.overlap_all_gather ? 1 : 0);
    gather_host_ = {sharding_.call_overhead, sharding_.synchronize_per_gather, sharding_.copy_out};
    chunk_start_.assign(static_cast<size_t>(c.w.model.layers), false);
    recomputed_ = recomputed_layers(c.w);
    for (const int64_t start : virtual_stage_starts(c.w))
      if (start < c.w.model.layers) chunk_start_[static_cast<size_t>(start)] = true;
    dense_params_ = params(false);
    if (moe.enabled()) moe_params_ = params(true);
    if (zero3_) {
      dense_calls_ = make_calls(false);
      if (moe.enabled()) moe_calls_ = make_calls(true);
    }
  }

  // Under full checkpointing a sharding stack's backward prefetch reaches across the recomputation:
  // FSDP's pre-backward hook on a unit, which runs before the checkpointed block inside it is
  // recomputed, issues the next unit's gather (FSDP1 BackwardPrefetch.BACKWARD_PRE, torch/distributed/
  // fsdp/_runtime_utils.py _pre_backward_hook and _prefetch_handle, v2.1; FSDP2 FSDPParamGroup.
  // pre_backward and _backward_prefetch, torch/distributed/_composable/fsdp/_fsdp_param_group.py,
  // v2.4-2.6), and DeepSpeed's trace-driven prefetch walks the recomputed modules of the next layer
  // (partitioned_param_coordinator.py fetch_sub_module, v0.9.2-v0.16.3). So the recompute of `layer`
  // is a pass down to `first` whose gathers were issued ahead during the previous layer's recompute.
  void begin_recompute(int32_t layer, int32_t first) override {
    std::vector<std::pair<std::pair<int32_t, int32_t>, uint32_t>> kept;
    for (const auto& p : carried_)
      if (p.first.first == layer) kept.push_back(p);
    carried_.clear();
    begin_pass(layer, first);
    prefetched_ = std::move(kept);  // not the forward pass's gathers: those weights were resharded
  }

  void forward(Emitter& e, int32_t layer) override {
    const bool comm = !(e.phase == Phase::recompute && c_.w.opt.comm_aware_checkpointing);
    // The recompute pass re-runs the forward hooks, which gather again unless the forward's gathered
    // weights were kept (cached, or a stack that does not reshard after forward).
    gathering_ =
        zero3_ && !(e.phase == Phase::recompute && (c_.w.opt.cache_all_gather || !sharding_.reshard_after_forward));
    fetch(e, layer, Sub::layer);
    attention_forward(e, layer, comm);
    if (c_.w.model.is_moe_layer(layer))
      moe_forward(e, layer, comm);
    else
      mlp_forward(e, layer, comm);
    if (e.phase == Phase::recompute) {
      // The gathers issued ahead into the layers below wait there for their recomputes.
      for (const auto& p : prefetched_)
        if (p.first.first != layer) carried_.push_back(p);
    }
  }

  void backward(Emitter& e, int32_t layer) override {
    // Without full checkpointing a resharding stack gathers again for backward; under it the
    // recompute pass just gathered, and the stack either keeps that copy for the backward (FSDP's unit
    // stays unsharded, DeepSpeed's reuse distance) or gathers once more (regather_after_recompute).
    const bool full = recomputed_[static_cast<size_t>(layer)];
    gathering_ = zero3_ && sharding_.reshard_after_forward && !recomputed_gathers_ &&
                 (!full || (sharding_.regather_after_recompute && !c_.w.opt.cache_all_gather));
    recomputed_gathers_ = false;
    // Under full checkpointing a re-gather for backward (regather_after_recompute) is the layer's
    // alone; the gathers for the layers below were issued ahead during the recompute (begin_recompute).
    if (full) begin_pass(layer, layer);
    fetch(e, layer, Sub::layer);
    if (c_.w.model.is_moe_layer(layer))
      moe_backward(e, layer);
    else
      mlp_backward(e, layer);
    attention_backward(e, layer);
    if (!c_.w.opt.gradient_accumulation_fusion) {
      // Without --gradient-accumulation-fusion the wgrad GEMMs write a gradient of the model's type that
      // a hook adds to the main gradient (Megatron-LM megatron/core/distributed/param_and_grad_buffer.py,
      // main_grad.add_(grad)): read both, write the main gradient.
      double elements = 0;
      for (const auto& p : params_of(c_.w.model.is_moe_layer(layer))) elements += p.elements;
      const double main = bytes_of(c_.w.training.gradient_reduce());
      e.elementwise("grad.accumulate", elements * (c_.e + 2 * main), elements);
    }
    if (zero3_) {
      if (sharding_.gather_unit == GatherUnit::layer) {
        scatter_gradients(e, layer);
      } else if (chunk_start_[static_cast<size_t>(layer)]) {
        // The end of this chunk's backward pass: what is left in the buckets (DeepSpeed's
        // epilogue, stage3.py independent_gradient_partition_epilogue).
        flush_bucket(e, false);
        flush_bucket(e, true);
      }
    }
  }

  void recompute_attention(Emitter& e, int32_t layer) override {
    (void)layer;
    if (c_.w.model.mla.enabled()) return attention_core(e, T_, mla_heads(), mla_core_width(), S_);
    context_attention(e, true);
  }

  // TorchTitan's per-op policy (workload.hpp Checkpointing::selective_op) on a dense block, in forward
  // order: the norms, rotary embedding, residual adds and the activation, and the 2nd, 4th and 6th
  // matmul (K; the output projection; W3 of a gated MLP, W2 of a GeLU one). The flash kernel's output
  // and the reduce-scatters' are saved; sequence parallelism's all-gathers are not, so they run again.
  // The block's weights are gathered first (FSDP's pre-backward hook unshards the unit before the
  // checkpoint's recomputation), in the backward pass's order, where a resharding stack gathers.
  void recompute_ops(Emitter& e, int32_t layer) override {
    gathering_ = zero3_ && sharding_.reshard_after_forward;
    const auto& calls = calls_of(layer);
    if (gathering_)
      for (int32_t b = static_cast<int32_t>(calls.size()) - 1; b >= 0; --b) gather_weights(e, layer, b, ahead_);
    recomputed_gathers_ = gathering_;
    e.phase = Phase::recompute;
    const bool gated = c_.w.model.mlp != Mlp::gelu;
    const int64_t kv = c_.w.model.kv_head_count() * c_.w.model.head_dim() / t_;
    norm(e, "ln1");
    sequence_gather(e, true, "ln1.all_gather", norm_output_bytes());
    fp8_cast(e, "ln1.fp8_cast", rows());
    lin(e, "k", T_, kv, h_);
    rope(e, "rope");
    fp8_cast(e, "proj.fp8_cast", static_cast<double>(T_ * (h_ / t_)));
    lin(e, "proj", T_, h_, h_ / t_);
    if (!sp_ && t_ > 1) output_reduce(e, true, "proj.all_reduce", "proj.reduce_scatter");
    e.elementwise("dropout_residual1", 3 * rows() * c_.e, 2 * rows());
    norm(e, "ln2");
    sequence_gather(e, true, "ln2.all_gather", norm_output_bytes());
    fp8_cast(e, "ln2.fp8_cast", rows());
    if (gated) {
      lin(e, "fc1.value", T_, f_ / t_, h_);
      activation(e, static_cast<double>(T_ * (f_ / t_)), "gelu", "swiglu");
    } else {
      activation(e, static_cast<double>(T_ * (f_ / t_)), "gelu", "swiglu");
      fp8_cast(e, "fc2.fp8_cast", static_cast<double>(T_ * (f_ / t_)));
      lin(e, "fc2", T_, h_, f_ / t_);
      if (!sp_ && t_ > 1) output_reduce(e, true, "fc2.all_reduce", "fc2.reduce_scatter");
    }
    e.elementwise("dropout_residual2", 3 * rows() * c_.e, 2 * rows());
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
    e.elementwise("cross_entropy", 2 * T_ * (V_ / t_) * 4.0 * traffic().loss, 5.0 * T_ * (V_ / t_));
  }

  void logits_backward(Emitter& e) override {
    e.elementwise("cross_entropy.bwd", 2 * T_ * (V_ / t_) * c_.e * traffic().loss_backward, 2.0 * T_ * (V_ / t_));
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
    const bool moe = c_.w.model.is_moe_layer(layer);
    double dense = 0, experts = 0;
    for (const auto& p : params_of(moe)) (p.expert ? experts : dense) += p.elements;
    if (!moe) return {{"layer", dense, false}};
    return {{"layer", dense, false}, {"experts", experts, true}};
  }

  double logits_bytes() const override { return 4.0 * static_cast<double>(T_ * (V_ / t_)); }
  bool keeps_gathered_weights() const override {
    return zero3_ && (c_.w.opt.cache_all_gather || !sharding_.reshard_after_forward);
  }
  double live_gathered_weight_bytes(double largest_layer, bool overlap_all_gather) const override {
    (void)overlap_all_gather;
    if (sharding_.gather_unit == GatherUnit::layer) return largest_layer * (1.0 + ahead_);
    // The unit computing and the `ahead_` calls after it: the largest such window of calls.
    double most = 0;
    for (const auto* calls : {&dense_calls_, &moe_calls_}) {
      const size_t n = calls->size();
      for (size_t i = 0; i < n; ++i) {
        double sum = 0;
        for (size_t k = 0; k <= static_cast<size_t>(ahead_); ++k) sum += (*calls)[(i + k) % n].bytes;
        most = std::max(most, sum);
      }
    }
    return most;
  }

  double embedding_params() const override { return static_cast<double>(V_ * h_) / static_cast<double>(t_); }
  double position_params() const override {
    return c_.w.model.position == Position::learned ? static_cast<double>(S_ * h_) : 0.0;
  }

  double gathered_weight_bytes(int32_t layer) const override {
    if (!zero3_) return 0;
    double bytes = 0;
    for (const auto& call : calls_of(layer)) bytes += call.bytes;
    return bytes;
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
    const Call& call = calls_of(layer)[static_cast<size_t>(block)];
    return {call.expert ? c_.shard_expert : c_.shard_dense, call.bytes, call.gather_name,
            sharding_.gather_unit == GatherUnit::layer || call.params > 1};
  }
  int32_t gather_blocks(int32_t layer) const override { return static_cast<int32_t>(calls_of(layer).size()); }

 private:
  // The modules of a layer that own parameters, in forward order; `layer` stands for the whole
  // layer as one unit (FSDP's flat parameter of a transformer block).
  enum class Sub : uint8_t { layer, ln1, qkv, proj, ln2, fc1, fc2, router, experts, shared };
  struct Param {
    Sub sub;
    double elements;  // per rank (tensor-parallel shard)
    bool expert;
    bool weight = false;  // a linear layer's weight: gathered in fp8 under training.fp8_param_gather
  };
  // One gather call: a unit's parameters (or one parameter, for a stack that gathers each alone).
  struct Call {
    Sub sub;
    double elements;
    double bytes;  // gathered: fp8 weights under training.fp8_param_gather, the rest in the model's type
    bool expert;
    const char* gather_name;
    const char* scatter_name;
    int params = 1;  // parameters gathered by the call
  };

  static const char* gather_name(Sub s) {
    static const char* const names[] = {"zero3.all_gather",       "zero3.ln1.all_gather",    "zero3.qkv.all_gather",
                                        "zero3.proj.all_gather",  "zero3.ln2.all_gather",    "zero3.fc1.all_gather",
                                        "zero3.fc2.all_gather",   "zero3.router.all_gather", "zero3.experts.all_gather",
                                        "zero3.shared.all_gather"};
    return names[static_cast<size_t>(s)];
  }
  static const char* scatter_name(Sub s) {
    static const char* const names[] = {"zero3.reduce_scatter",         "zero3.ln1.reduce_scatter",
                                        "zero3.qkv.reduce_scatter",     "zero3.proj.reduce_scatter",
                                        "zero3.ln2.reduce_scatter",     "zero3.fc1.reduce_scatter",
                                        "zero3.fc2.reduce_scatter",     "zero3.router.reduce_scatter",
                                        "zero3.experts.reduce_scatter", "zero3.shared.reduce_scatter"};
    return names[static_cast<size_t>(s)];
  }

  // Every parameter tensor of a layer on one rank, in forward order; they sum to layer_params().
  // A norm is a weight (RMSNorm) or a weight and a bias (LayerNorm); a linear layer's bias exists
  // unless model.bias is false (Megatron's --disable-bias-linear), split with its output.
  std::vector<Param> params(bool moe) const {
    const auto& m = c_.w.model;
    const double h = static_cast<double>(h_), f = static_cast<double>(f_), t = static_cast<double>(t_);
    const double q = static_cast<double>(q_), f1 = static_cast<double>(f1_);
    std::vector<Param> out;
    const auto norm = [&](Sub sub) {
      out.push_back({sub, h, false});
      if (m.norm == Norm::layernorm) out.push_back({sub, h, false});
    };
    const auto linear = [&](Sub sub, double weight, double bias, bool expert) {
      out.push_back({sub, weight, expert, true});
      if (m.bias || (sub == Sub::qkv && m.qkv_bias)) out.push_back({sub, bias, expert});
    };
    norm(Sub::ln1);
    if (m.mla.enabled()) {
      // Megatron-Core's MLASelfAttention: the down projections are whole on every tensor rank, the up
      // projections and the output projection split over the heads (megatron/core/transformer/
      // multi_latent_attention.py); each latent has an RMSNorm weight. No biases (validated).
      const auto& a = m.mla;
      const double heads = static_cast<double>(a_) / t, ql = static_cast<double>(a.q_lora_rank);
      const double kvl = static_cast<double>(a.kv_lora_rank), qk = static_cast<double>(a.qk_head_dim + a.rope_head_dim);
      if (a.q_lora_rank > 0) {
        out.push_back({Sub::qkv, h * ql, false, true});
        out.push_back({Sub::qkv, ql, false});
        out.push_back({Sub::qkv, ql * heads * qk, false, true});
      } else {
        out.push_back({Sub::qkv, h * heads * qk, false, true});
      }
      out.push_back({Sub::qkv, h * (kvl + static_cast<double>(a.rope_head_dim)), false, true});
      out.push_back({Sub::qkv, kvl, false});
      out.push_back({Sub::qkv, kvl * heads * static_cast<double>(a.qk_head_dim + a.v_head_dim), false, true});
      out.push_back({Sub::proj, heads * static_cast<double>(a.v_head_dim) * h, false, true});
    } else {
      linear(Sub::qkv, h * q / t, q / t, false);
      linear(Sub::proj, h * h / t, h, false);
    }
    norm(Sub::ln2);
    if (!moe) {
      linear(Sub::fc1, h * f1 / t, f1 / t, false);
      linear(Sub::fc2, f * h / t, h, false);
      return out;
    }
    out.push_back({Sub::router, h * static_cast<double>(m.moe.experts), false});
    if (fs_ > 0) {
      const double fs = static_cast<double>(fs_), fs1 = static_cast<double>(fs1_);
      linear(Sub::shared, h * fs1 / t, fs1 / t, false);
      linear(Sub::shared, fs * h / t, h, false);
    }
    const double fe = static_cast<double>(fe_), fe1 = static_cast<double>(fe1_);
    const double et = static_cast<double>(et_);
    for (int64_t x = 0; x < experts_local_; ++x) {
      linear(Sub::experts, h * fe1 / et, fe1 / et, true);
      linear(Sub::experts, fe * h / et, h, true);
    }
    return out;
  }

  // The gather calls of a layer: one for the whole layer (today's lowering, all of it over the dense
  // data-parallel group), or one per leaf module with parameters to gather, or one per parameter.
  // Parameters under the persistence threshold stay whole on every rank and are not gathered.
  std::vector<Call> make_calls(bool moe) const {
    const double threshold = sharding_.persistence_threshold;
    std::vector<Call> out;
    if (sharding_.gather_unit == GatherUnit::layer) {
      double elements = 0, bytes = 0;
      int params = 0;
      for (const auto& p : params_of(moe))
        if (p.elements >= threshold) elements += p.elements, bytes += p.elements * gathered_bytes(p), ++params;
      if (elements > 0)
        out.push_back({Sub::layer, elements, bytes, false, gather_name(Sub::layer), scatter_name(Sub::layer), params});
      return out;
    }
    for (const auto& p : params_of(moe)) {
      if (p.elements < threshold) continue;
      const double bytes = p.elements * gathered_bytes(p);
      if (!sharding_.synchronize_per_gather && !out.empty() && out.back().sub == p.sub) {
        out.back().elements += p.elements;
        out.back().bytes += bytes;
        ++out.back().params;
      } else {
        out.push_back({p.sub, p.elements, bytes, p.expert, gather_name(p.sub), scatter_name(p.sub)});
      }
    }
    return out;
  }
  // Bytes per gathered element: Megatron-LM's --fp8-param-gather keeps the linear layers' weights as
  // fp8 tensors and gathers them so (megatron_fsdp.md 'quantized parameter gather'; Transformer Engine
  // Float8Tensor), norms, biases and the router in the model's type.
  double gathered_bytes(const Param& p) const { return c_.w.training.fp8_param_gather && p.weight ? 1.0 : c_.e; }
  const std::vector<Param>& params_of(bool moe) const { return moe ? moe_params_ : dense_params_; }
  const std::vector<Call>& calls_of(int32_t layer) const {
    return c_.w.model.is_moe_layer(layer) ? moe_calls_ : dense_calls_;
  }

  // Gathers the weights of module `sub` of `layer` before it computes, in a pass that gathers.
  void fetch(Emitter& e, int32_t layer, Sub sub) {
    if (!gathering_) return;
    const auto& calls = calls_of(layer);
    const bool backward = e.phase == Phase::backward;
    const int32_t n = static_cast<int32_t>(calls.size());
    for (int32_t k = 0; k < n; ++k) {
      const int32_t b = backward ? n - 1 - k : k;  // a backward pass meets a module's parameters in reverse
      if (calls[static_cast<size_t>(b)].sub == sub) gather_weights(e, layer, b, ahead_);
    }
  }

  // A reduce-scatter of `bytes` of gradients after the stack's host work for the call.
  void reduce_scatter(Emitter& e, AxisMask group, double bytes, const char* name) {
    // A stack that bounds the reduce-scatters in flight waits for the oldest before it issues another.
    if (sharding_.reduce_in_flight > 0)
      for (; static_cast<int>(in_flight_.size()) >= sharding_.reduce_in_flight; in_flight_.pop_front())
        e.wait(in_flight_.front());
    std::vector<uint32_t> deps{e.last_compute()};
    const uint32_t host = e.host_work("zero3.scatter.host", sharding_.call_overhead, Stream::shard, deps);
    if (host != kNoOp) deps = {host};
    const uint32_t id =
        e.replicate(group, bytes, e.async(OpKind::reduce_scatter, Stream::shard, group, bytes, name, deps));
    if (id == kNoOp) return;
    if (sharding_.reduce_in_flight > 0) in_flight_.push_back(id);
    if (c_.w.opt.overlap_reduce_scatter)
      e.deferred.push_back(id);
    else
      e.wait(id);
  }

  // The gradients of module `sub` are final: reduce-scatter them per module, or add them to the
  // stack's bucket (DeepSpeed's reduce_bucket_size: a bucket is reduced when the next gradient would
  // overflow it, stage3.py reduce_independent_p_g_buckets_and_remove_grads), per leaf-module stacks.
  void gradients_ready(Emitter& e, int32_t layer, Sub sub) {
    if (!zero3_ || sharding_.gather_unit == GatherUnit::layer) return;
    const bool moe = c_.w.model.is_moe_layer(layer);
    const double bucket = c_.w.framework.gradient_bucket_bytes;
    const auto& ps = params_of(moe);
    for (auto it = ps.rbegin(); it != ps.rend(); ++it) {  // backward order
      if (it->sub != sub) continue;
      auto& b = it->expert ? expert_bucket_ : dense_bucket_;
      if (bucket > 0 && !b.empty() && (bucket_elements(b) + it->elements) * c_.e > bucket) flush_bucket(e, it->expert);
      b.push_back(*it);
    }
    if (bucket <= 0) {
      flush_bucket(e, false);
      flush_bucket(e, true);
    }
  }
  static double bucket_elements(const std::vector<Param>& b) {
    double n = 0;
    for (const auto& p : b) n += p.elements;
    return n;
  }
  // One reduce-scatter of the bucket (or one per parameter, for a stack that calls per parameter).
  void flush_bucket(Emitter& e, bool expert) {
    auto& b = expert ? expert_bucket_ : dense_bucket_;
    if (b.empty()) return;
    const AxisMask group = expert ? c_.shard_expert : c_.shard_dense;
    const bool bucketed = c_.w.framework.gradient_bucket_bytes > 0;
    if (sharding_.synchronize_per_gather) {
      for (const auto& p : b) reduce_scatter(e, group, p.elements * reduce_bytes(), scatter_name(p.sub));
    } else {
      if (sharding_.predivide) {
        const double elements = bucket_elements(b), bytes = elements * reduce_bytes();
        if (b.size() > 1 || std::fmod(elements, static_cast<double>(c_.size(group))) != 0)
          e.elementwise("zero3.bucket.interleave", 2 * bytes, 0);
        e.elementwise("zero3.bucket.predivide", 2 * bytes, elements);
      }
      const bool one_module = std::all_of(b.begin(), b.end(), [&](const Param& p) { return p.sub == b.front().sub; });
      reduce_scatter(e, group, bucket_elements(b) * reduce_bytes(),
                     bucketed || !one_module ? "zero3.bucket.reduce_scatter" : scatter_name(b.front().sub));
    }
    b.clear();
  }

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
  void sequence_gather(Emitter& e, bool comm, const char* name, double bytes) {
    if (sp_ && comm) e.blocking(OpKind::all_gather, Stream::tensor, c_.tensor, bytes, name);
  }
  // optimizations.overlap_tensor_comm, Megatron-Core's --tp-comm-overlap: Transformer Engine's
  // userbuffers overlap (v1.8 transformer_engine/pytorch/module/base.py initialize_ub: l.100-102 the
  // methods, l.229-231 the splits) pipelines sequence parallelism's collectives with the GEMM beside
  // them. Not modelled: the 16 SMs a pipelined reduce-scatter's kernels take from its GEMM, and the
  // copy-engine traffic of the ring exchange competing with the GEMM for memory bandwidth.
  bool tensor_overlap(bool comm) const { return comm && sp_ && c_.w.opt.overlap_tensor_comm; }
  // All-gather + GEMM ("ring_exchange": qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad): the GEMM runs in
  // t chunks of rows, each on the shard the ring has delivered; the last waits for the whole gather.
  // `sub`'s sharded weights (ZeRO-3) are fetched after the activation's gather is issued.
  // A layer norm's output is gathered as the GEMM will read it: in fp8 under training.fp8 (Transformer
  // Engine's LayerNormLinear casts before it gathers), `norm_input`.
  void gathered_gemm(Emitter& e, bool comm, const char* gather_name, int32_t layer, Sub sub, const char* gemm_name,
                     int64_t n, int64_t k, bool norm_input = false) {
    const double bytes = norm_input ? norm_output_bytes() : activation_bytes();
    if (!tensor_overlap(comm)) {
      sequence_gather(e, comm, gather_name, bytes);
      fetch(e, layer, sub);
      lin(e, gemm_name, T_, n, k);
      return;
    }
    const uint32_t gather =
        e.async(OpKind::all_gather, Stream::tensor, c_.tensor, bytes, gather_name, {e.last_compute()});
    fetch(e, layer, sub);
    for (int64_t i = 0; i + 1 < t_; ++i) lin(e, gemm_name, T_ / t_, n, k);
    e.wait(gather);
    lin(e, gemm_name, T_ / t_, n, k);
  }
  // GEMM + reduce-scatter ("pipeline": proj_fprop, fc2_fprop): the GEMM in num_splits chunks of rows,
  // each chunk's reduce-scatter launched as it is done, overlapping the next chunk.
  void scattered_gemm(Emitter& e, bool comm, const char* gemm_name, int64_t n, int64_t k, const char* ar_name,
                      const char* rs_name) {
    if (!tensor_overlap(comm)) {
      lin(e, gemm_name, T_, n, k);
      output_reduce(e, comm, ar_name, rs_name);
      return;
    }
    std::vector<uint32_t> scatters;
    for (int64_t i = 0; i < kTensorCommPipelineSplits; ++i) {
      lin(e, gemm_name, T_ / kTensorCommPipelineSplits, n, k);
      scatters.push_back(e.async(OpKind::reduce_scatter, Stream::tensor, c_.tensor,
                                 activation_bytes() / kTensorCommPipelineSplits, rs_name, {e.last_compute()}));
    }
    for (const uint32_t id : scatters) e.wait(id);
  }
  // Sequence parallelism keeps only its shard of a column-parallel linear's input (the layer norm's
  // output) for backward: Megatron-LM gathers it again for the weight-gradient GEMM, asynchronously,
  // while the input-gradient GEMM runs (LinearWithGradAccumulationAndAsyncCommunication.backward in
  // its megatron/core/tensor_parallel/layers.py), and waits for it before the weight gradient.
  uint32_t input_regather(Emitter& e, const char* name) {
    if (!sp_) return kNoOp;
    return e.async(OpKind::all_gather, Stream::tensor, c_.tensor, norm_output_bytes(), name, {e.last_compute()});
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

  // The dtype of the layers' linear GEMMs: fp8 under training.fp8, else the training dtype.
  Dtype linear_dtype() const { return c_.w.training.fp8 != Fp8::none ? Dtype::fp8 : c_.w.training.dtype; }
  uint32_t lin(Emitter& e, const char* name, int64_t m, int64_t n, int64_t k, int64_t batch = 1, bool ta = false,
               bool tb = false) {
    return e.gemm_in(linear_dtype(), name, m, n, k, batch, ta, tb);
  }
  double norm_output_bytes() const {
    return c_.w.training.fp8 != Fp8::none ? static_cast<double>(T_ * h_) : activation_bytes();
  }
  // Transformer Engine's fp8 casts (v1.8 transformer_engine/pytorch/module/linear.py, layernorm_linear.py):
  // each fp8 GEMM's input, and in backward its output gradient, is cast with its transpose in one kernel
  // (cast_transpose: read 16 bits, write two 8-bit copies per element, the transpose for the weight
  // gradient); current scaling first reads the tensor once more for its amax. A layer norm or the
  // SwiGLU kernel writes no fp8 of its own in Megatron-Core, so every input is cast.
  void fp8_cast(Emitter& e, const char* name, double elements) {
    if (c_.w.training.fp8 == Fp8::none) return;
    const double amax = c_.w.training.fp8 == Fp8::current ? c_.e : 0.0;
    e.elementwise(name, elements * (c_.e + 2.0 + amax), 2 * elements);
  }
  // The weights are cast once per iteration, in the first micro-batch's forward (Megatron passes TE
  // is_first_microbatch, which caches the fp8 weights for the others); with fp8_param_gather they
  // arrive in fp8 and are only transposed (read and write a byte each).
  void fp8_weight_cast(Emitter& e, const char* name, double elements) {
    if (c_.w.training.fp8 == Fp8::none || e.micro_batch != 0 || e.phase != Phase::forward) return;
    const double bytes = c_.w.training.fp8_param_gather ? 2.0 * elements : elements * (c_.e + 2.0);
    e.elementwise(name, bytes, 2 * elements);
  }

  // The MLP's activation over `act` outputs of ffn_hidden: GeLU reads and writes each; a gated unit
  // (SwiGLU/GeGLU, Megatron-Core's bias_swiglu_impl fused kernel) reads the gate's and the value's
  // outputs and writes their product; backward reads both and the incoming gradient, writes two.
  void activation(Emitter& e, double act, const char* gelu, const char* gated) {
    if (c_.w.model.mlp == Mlp::gelu)
      e.elementwise(gelu, 2 * act * c_.e, 8 * act);
    else
      e.elementwise(gated, 3 * act * c_.e * traffic().gated_activation, 10 * act);
  }
  void activation_backward(Emitter& e, double act, const char* gelu, const char* gated) {
    if (c_.w.model.mlp == Mlp::gelu)
      e.elementwise(gelu, 3 * act * c_.e, 10 * act);
    else
      e.elementwise(gated, 5 * act * c_.e * traffic().gated_activation_backward, 16 * act);
  }
  const ElementwiseTraffic& traffic() const { return c_.w.framework.elementwise_traffic; }
  // A block's norm: read and write each value (backward: read it and its gradient, write the gradient),
  // times the stack's traffic for an RMSNorm.
  void norm(Emitter& e, const char* name, bool backward = false) {
    const bool rms = c_.w.model.norm == Norm::rmsnorm;
    const double factor = !rms ? 1.0 : backward ? traffic().rmsnorm_backward : traffic().rmsnorm;
    e.elementwise(name, (backward ? 3 : 2) * rows() * c_.e * factor, (backward ? 8 : 5) * rows());
  }
  // Rotary embeddings rotate each query and key (Megatron-Core's fused apply_rotary_pos_emb, one
  // kernel over Q and K, reading and writing them); ALiBi adds its biases inside the score kernel.
  void rope(Emitter& e, const char* name, bool backward = false) {
    if (c_.w.model.position != Position::rope) return;
    const double qk = static_cast<double>(T_) * static_cast<double>(h_ + c_.w.model.kv_head_count() * (h_ / a_)) /
                      static_cast<double>(t_);
    e.elementwise(name, 2 * qk * c_.e * (backward ? traffic().rope_backward : traffic().rope), 3 * qk);
  }

  // Context parallelism (Megatron-Core --context-parallel-size through Transformer Engine's
  // attn_forward_func_with_cp, v1.8 transformer_engine/pytorch/attention.py): each rank holds T_ =
  // micro_batch·seq_len/cp tokens in two load-balanced chunks and attends to the whole sequence.
  int64_t cp() const { return c_.size(c_.context); }
  // Keys and values of this rank's tokens for its kv_heads/t heads.
  double kv_block_bytes() const {
    return 2.0 * static_cast<double>(T_) * static_cast<double>(c_.w.model.kv_head_count() / t_) *
           static_cast<double>(h_ / a_) * c_.e;
  }
  // One step of the p2p ring: every rank sends a block of `bytes` to the next and receives one from
  // the previous, timed as an all-gather over the context group that moves `bytes` per rank (its cp-1
  // ring steps of bytes/(cp-1) each: the same bytes on the same ring; the latency of cp-1 steps).
  uint32_t ring_step(Emitter& e, double bytes, const char* name) {
    const double n = static_cast<double>(cp());
    return e.async(OpKind::all_gather, Stream::context, c_.context, bytes * n / (n - 1), name, {e.last_compute()});
  }
  void context_attention(Emitter& e, bool comm) {
    const int64_t n = cp(), heads = a_ / t_, d = h_ / a_;
    if (n <= 1 || !comm) {
      if (n > 1 && c_.w.parallel.context_comm == ContextComm::all_to_all)
        attention_core(e, T_ * n, heads / n, d, S_);
      else
        attention_core(e, T_, heads, d, S_);
      return;
    }
    switch (c_.w.parallel.context_comm) {
      case ContextComm::p2p: {
        // cp blocks of S/cp keys each; the next block's keys and values travel while one computes.
        for (int64_t j = 0; j < n; ++j) {
          const uint32_t next = j + 1 < n ? ring_step(e, kv_block_bytes(), "cp.kv.ring") : kNoOp;
          attention_core(e, T_, heads, d, S_ / n);
          e.wait(next);
        }
        break;
      }
      case ContextComm::all_gather:
        e.blocking(OpKind::all_gather, Stream::context, c_.context, kv_block_bytes() * static_cast<double>(n),
                   "cp.kv.all_gather");
        attention_core(e, T_, heads, d, S_);
        break;
      case ContextComm::all_to_all: {
        // DeepSpeed-Ulysses: Q, K and V of heads/cp heads for the whole sequence, and the output back.
        const double qkv = static_cast<double>(T_) * static_cast<double>(q_ / t_) * c_.e;
        e.blocking(OpKind::all_to_all, Stream::context, c_.context, qkv, "cp.qkv.all_to_all");
        attention_core(e, T_ * n, heads / n, d, S_);
        e.blocking(OpKind::all_to_all, Stream::context, c_.context, static_cast<double>(T_ * (h_ / t_)) * c_.e,
                   "cp.out.all_to_all");
        break;
      }
    }
  }
  void context_attention_backward(Emitter& e) {
    const int64_t n = cp(), heads = a_ / t_, d = h_ / a_;
    if (n <= 1) {
      attention_core_backward(e, T_, heads, d, S_);
      return;
    }
    switch (c_.w.parallel.context_comm) {
      case ContextComm::p2p: {
        // Each step brings the next block's keys and values and passes on the gradients of the
        // block just done: twice the forward's bytes per step.
        for (int64_t j = 0; j < n; ++j) {
          const uint32_t next = j + 1 < n ? ring_step(e, 2 * kv_block_bytes(), "cp.kv_dkv.ring") : kNoOp;
          attention_core_backward(e, T_, heads, d, S_ / n);
          e.wait(next);
        }
        break;
      }
      case ContextComm::all_gather:
        e.blocking(OpKind::all_gather, Stream::context, c_.context, kv_block_bytes() * static_cast<double>(n),
                   "cp.kv.bwd.all_gather");
        attention_core_backward(e, T_, heads, d, S_);
        e.blocking(OpKind::reduce_scatter, Stream::context, c_.context, kv_block_bytes() * static_cast<double>(n),
                   "cp.dkv.reduce_scatter");
        break;
      case ContextComm::all_to_all: {
        e.blocking(OpKind::all_to_all, Stream::context, c_.context, static_cast<double>(T_ * (h_ / t_)) * c_.e,
                   "cp.out.bwd.all_to_all");
        attention_core_backward(e, T_ * n, heads / n, d, S_);
        const double qkv = static_cast<double>(T_) * static_cast<double>(q_ / t_) * c_.e;
        e.blocking(OpKind::all_to_all, Stream::context, c_.context, qkv, "cp.dqkv.all_to_all");
        break;
      }
    }
  }

  void attention_forward(Emitter& e, int32_t layer, bool comm) {
    if (c_.w.model.mla.enabled()) return mla_forward(e, layer, comm);
    fetch(e, layer, Sub::ln1);
    norm(e, "ln1");
    fp8_cast(e, "ln1.fp8_cast", rows());
    fp8_weight_cast(e, "qkv.weight.fp8_cast", static_cast<double>(h_ * (q_ / t_)));
    gathered_gemm(e, comm, "ln1.all_gather", layer, Sub::qkv, "qkv", q_ / t_, h_, true);
    rope(e, "rope");
    context_attention(e, comm);
    fetch(e, layer, Sub::proj);
    fp8_cast(e, "proj.fp8_cast", static_cast<double>(T_ * (h_ / t_)));
    fp8_weight_cast(e, "proj.weight.fp8_cast", static_cast<double>((h_ / t_) * h_));
    scattered_gemm(e, comm, "proj", h_, h_ / t_, "proj.all_reduce", "proj.reduce_scatter");
    e.elementwise("dropout_residual1", 3 * rows() * c_.e, 2 * rows());
  }

  void attention_backward(Emitter& e, int32_t layer) {
    if (c_.w.model.mla.enabled()) return mla_backward(e, layer);
    e.elementwise("dropout_residual1.bwd", 3 * rows() * c_.e, 2 * rows());
    fp8_cast(e, "proj.grad.fp8_cast", rows());
    gathered_gemm(e, true, "proj.bwd.all_gather", layer, Sub::proj, "proj.dgrad", h_ / t_, h_);
    lin(e, "proj.wgrad", h_ / t_, h_, T_, 1, true, false);
    gradients_ready(e, layer, Sub::proj);
    context_attention_backward(e);
    rope(e, "rope.bwd", true);
    fp8_cast(e, "qkv.grad.fp8_cast", static_cast<double>(T_ * (q_ / t_)));
    const uint32_t ag = input_regather(e, "ln1.bwd.all_gather");
    fetch(e, layer, Sub::qkv);
    lin(e, "qkv.dgrad", T_, h_, q_ / t_);
    const uint32_t ar = input_grad_reduce(e, "attention.dgrad.all_reduce", "attention.dgrad.reduce_scatter");
    e.wait(ag);
    lin(e, "qkv.wgrad", h_, q_ / t_, T_, 1, true, false);
    gradients_ready(e, layer, Sub::qkv);
    e.wait(ar);
    fetch(e, layer, Sub::ln1);
    norm(e, "ln1.bwd", true);
    gradients_ready(e, layer, Sub::ln1);
  }

  // Multi-latent attention as Megatron-Core computes it (multi_latent_attention.py MLASelfAttention,
  // main 2026-11): the normed input (gathered under sequence parallelism) projected down to the query
  // and key/value latents, each RMSNorm-ed and projected up to this rank's heads; rotary embedding of
  // the decoupled parts; the attention kernel over query/key heads of qk + rope and value heads of v
  // (timed as a flash kernel of their mean width: the same multiply-adds); the output projection.
  int64_t mla_heads() const { return a_ / t_; }
  int64_t mla_core_width() const {
    const auto& a = c_.w.model.mla;
    return (a.qk_head_dim + a.rope_head_dim + a.v_head_dim) / 2;
  }
  double mla_rope_elements() const {
    const auto& a = c_.w.model.mla;
    return static_cast<double>(T_) * static_cast<double>((mla_heads() + 1) * a.rope_head_dim);
  }
  void mla_forward(Emitter& e, int32_t layer, bool comm) {
    const auto& a = c_.w.model.mla;
    const int64_t heads = mla_heads(), qk = a.qk_head_dim + a.rope_head_dim;
    fetch(e, layer, Sub::ln1);
    norm(e, "ln1");
    sequence_gather(e, comm, "ln1.all_gather", norm_output_bytes());
    fetch(e, layer, Sub::qkv);
    if (a.q_lora_rank > 0) {
      lin(e, "mla.q_down", T_, a.q_lora_rank, h_);
      latent_norm(e, "mla.q_norm", a.q_lora_rank);
      lin(e, "mla.q_up", T_, heads * qk, a.q_lora_rank);
    } else {
      lin(e, "mla.q_proj", T_, heads * qk, h_);
    }
    lin(e, "mla.kv_down", T_, a.kv_lora_rank + a.rope_head_dim, h_);
    latent_norm(e, "mla.kv_norm", a.kv_lora_rank);
    lin(e, "mla.kv_up", T_, heads * (a.qk_head_dim + a.v_head_dim), a.kv_lora_rank);
    e.elementwise("mla.rope", 2 * mla_rope_elements() * c_.e, 3 * mla_rope_elements());
    attention_core(e, T_, heads, mla_core_width(), S_);
    fetch(e, layer, Sub::proj);
    scattered_gemm(e, comm, "proj", h_, heads * a.v_head_dim, "proj.all_reduce", "proj.reduce_scatter");
    e.elementwise("dropout_residual1", 3 * rows() * c_.e, 2 * rows());
  }
  void mla_backward(Emitter& e, int32_t layer) {
    const auto& a = c_.w.model.mla;
    const int64_t heads = mla_heads(), qk = a.qk_head_dim + a.rope_head_dim;
    e.elementwise("dropout_residual1.bwd", 3 * rows() * c_.e, 2 * rows());
    gathered_gemm(e, true, "proj.bwd.all_gather", layer, Sub::proj, "proj.dgrad", heads * a.v_head_dim, h_);
    lin(e, "proj.wgrad", heads * a.v_head_dim, h_, T_, 1, true, false);
    gradients_ready(e, layer, Sub::proj);
    attention_core_backward(e, T_, heads, mla_core_width(), S_);
    e.elementwise("mla.rope.bwd", 2 * mla_rope_elements() * c_.e, 3 * mla_rope_elements());
    fetch(e, layer, Sub::qkv);
    const int64_t kv_up = heads * (a.qk_head_dim + a.v_head_dim);
    lin(e, "mla.kv_up.dgrad", T_, a.kv_lora_rank, kv_up);
    lin(e, "mla.kv_up.wgrad", a.kv_lora_rank, kv_up, T_, 1, true, false);
    latent_norm(e, "mla.kv_norm.bwd", a.kv_lora_rank, true);
    if (a.q_lora_rank > 0) {
      lin(e, "mla.q_up.dgrad", T_, a.q_lora_rank, heads * qk);
      lin(e, "mla.q_up.wgrad", a.q_lora_rank, heads * qk, T_, 1, true, false);
      latent_norm(e, "mla.q_norm.bwd", a.q_lora_rank, true);
    }
    const uint32_t ag = input_regather(e, "ln1.bwd.all_gather");
    const int64_t q_in = a.q_lora_rank > 0 ? a.q_lora_rank : heads * qk;
    lin(e, "mla.q_down.dgrad", T_, h_, q_in);
    lin(e, "mla.kv_down.dgrad", T_, h_, a.kv_lora_rank + a.rope_head_dim);
    const uint32_t ar = input_grad_reduce(e, "attention.dgrad.all_reduce", "attention.dgrad.reduce_scatter");
    e.wait(ag);
    lin(e, "mla.q_down.wgrad", h_, q_in, T_, 1, true, false);
    lin(e, "mla.kv_down.wgrad", h_, a.kv_lora_rank + a.rope_head_dim, T_, 1, true, false);
    gradients_ready(e, layer, Sub::qkv);
    e.wait(ar);
    fetch(e, layer, Sub::ln1);
    norm(e, "ln1.bwd", true);
    gradients_ready(e, layer, Sub::ln1);
  }
  // An RMSNorm over a latent of `width` per token: read and write it (backward: read it and its
  // gradient, write the gradient).
  void latent_norm(Emitter& e, const char* name, int64_t width, bool backward = false) {
    const double n = static_cast<double>(T_) * static_cast<double>(width);
    e.elementwise(name, (backward ? 3 : 2) * n * c_.e, (backward ? 8 : 5) * n);
  }

  // The shared experts (DeepSeekMoE): a dense gated MLP of moe.shared_ffn on every token beside the
  // routed experts, split over the tensor ranks as the dense MLP is (Megatron-Core SharedExpertMLP).
  void shared_forward(Emitter& e, int32_t layer, bool comm) {
    if (fs_ == 0) return;
    gathered_gemm(e, comm, "shared.all_gather", layer, Sub::shared, "shared.fc1", fs1_ / t_, h_, true);
    activation(e, static_cast<double>(T_ * (fs_ / t_)), "shared.gelu", "shared.swiglu");
    scattered_gemm(e, comm, "shared.fc2", h_, fs_ / t_, "shared.all_reduce", "shared.reduce_scatter");
  }
  void shared_backward(Emitter& e, int32_t layer) {
    if (fs_ == 0) return;
    gathered_gemm(e, true, "shared.bwd.all_gather", layer, Sub::shared, "shared.fc2.dgrad", fs_ / t_, h_);
    lin(e, "shared.fc2.wgrad", fs_ / t_, h_, T_, 1, true, false);
    activation_backward(e, static_cast<double>(T_ * (fs_ / t_)), "shared.gelu.bwd", "shared.swiglu.bwd");
    const uint32_t ag = input_regather(e, "shared.bwd.input.all_gather");
    lin(e, "shared.fc1.dgrad", T_, h_, fs1_ / t_);
    const uint32_t ar = input_grad_reduce(e, "shared.dgrad.all_reduce", "shared.dgrad.reduce_scatter");
    e.wait(ag);
    lin(e, "shared.fc1.wgrad", h_, fs1_ / t_, T_, 1, true, false);
    gradients_ready(e, layer, Sub::shared);
    e.wait(ar);
  }

  void mlp_forward(Emitter& e, int32_t layer, bool comm) {
    fetch(e, layer, Sub::ln2);
    norm(e, "ln2");
    fp8_cast(e, "ln2.fp8_cast", rows());
    fp8_weight_cast(e, "fc1.weight.fp8_cast", static_cast<double>(h_ * (f1_ / t_)));
    gathered_gemm(e, comm, "ln2.all_gather", layer, Sub::fc1, "fc1", f1_ / t_, h_, true);
    activation(e, static_cast<double>(T_ * (f_ / t_)), "gelu", "swiglu");
    fetch(e, layer, Sub::fc2);
    fp8_cast(e, "fc2.fp8_cast", static_cast<double>(T_ * (f_ / t_)));
    fp8_weight_cast(e, "fc2.weight.fp8_cast", static_cast<double>((f_ / t_) * h_));
    scattered_gemm(e, comm, "fc2", h_, f_ / t_, "fc2.all_reduce", "fc2.reduce_scatter");
    e.elementwise("dropout_residual2", 3 * rows() * c_.e, 2 * rows());
  }

  void mlp_backward(Emitter& e, int32_t layer) {
    e.elementwise("dropout_residual2.bwd", 3 * rows() * c_.e, 2 * rows());
    fp8_cast(e, "fc2.grad.fp8_cast", rows());
    gathered_gemm(e, true, "fc2.bwd.all_gather", layer, Sub::fc2, "fc2.dgrad", f_ / t_, h_);
    lin(e, "fc2.wgrad", f_ / t_, h_, T_, 1, true, false);
    gradients_ready(e, layer, Sub::fc2);
    activation_backward(e, static_cast<double>(T_ * (f_ / t_)), "gelu.bwd", "swiglu.bwd");
    fp8_cast(e, "fc1.grad.fp8_cast", static_cast<double>(T_ * (f1_ / t_)));
    const uint32_t ag = input_regather(e, "ln2.bwd.all_gather");
    fetch(e, layer, Sub::fc1);
    lin(e, "fc1.dgrad", T_, h_, f1_ / t_);
    const uint32_t ar = input_grad_reduce(e, "mlp.dgrad.all_reduce", "mlp.dgrad.reduce_scatter");
    e.wait(ag);
    lin(e, "fc1.wgrad", h_, f1_ / t_, T_, 1, true, false);
    gradients_ready(e, layer, Sub::fc1);
    e.wait(ar);
    fetch(e, layer, Sub::ln2);
    norm(e, "ln2.bwd", true);
    gradients_ready(e, layer, Sub::ln2);
  }

  // One exchange of the routed tokens. All-to-all: every rank sends the tokens it routed to the
  // experts' ranks; DTD ([singh2025dissertation] §7.3.1) first drops the copies of tokens that the tensor ranks share,
  // sending 1/G_tensor of the tokens, then all-gathers them across the tensor group. All-gather
  // (Megatron-Core MoEAllGatherTokenDispatcher, token_dispatcher.py): the dispatch gathers every
  // rank's sequence-parallel tokens, with their routing probabilities and map, over the tensor ×
  // expert ranks, and each rank computes those routed to its experts; the combine reduce-scatters
  // the experts' outputs back, summing the tensor ranks' partial products on the way. `gathers`: the
  // forward dispatch and the backward of the combine (all-gathers); the others reduce-scatter.
  void expert_exchange(Emitter& e, bool comm, bool gathers, const char* a2a_name, const char* dtd_name,
                       const char* dispatcher_name) {
    if (!comm) return;
    const double h = static_cast<double>(h_);
    if (all_gather_) {
      const AxisMask group = c_.expert | c_.tensor;
      const double tokens = static_cast<double>(T_ / t_ * c_.size(group));  // every rank's sequence shard
      const double E = static_cast<double>(c_.w.model.moe.experts);
      const bool forward = e.phase != Phase::backward;
      if (gathers) {
        e.blocking(OpKind::all_gather, Stream::expert, group, tokens * h * c_.e, dispatcher_name);
        // fp32 probabilities and the boolean routing map, gathered beside the tokens in forward.
        if (forward)
          e.blocking(OpKind::all_gather, Stream::expert, group, tokens * E * 5.0, "dispatch.probs.all_gather");
      } else {
        e.blocking(OpKind::reduce_scatter, Stream::expert, group, tokens * h * c_.e, dispatcher_name);
        if (!forward)
          e.blocking(OpKind::reduce_scatter, Stream::expert, group, tokens * E * 4.0,
                     "dispatch.probs.bwd.reduce_scatter");
      }
      return;
    }
    const double bytes = dispatched_ * h * c_.e;
    const bool dtd = c_.w.opt.duplicate_token_dropping && t_ > 1;
    e.blocking(OpKind::all_to_all, Stream::expert, c_.expert_group, dtd ? bytes / static_cast<double>(t_) : bytes,
               a2a_name);
    if (dtd) e.blocking(OpKind::all_gather, Stream::tensor, c_.tensor, bytes, dtd_name);
  }

  // The experts' partial products over the tensor ranks need a reduction of their own unless the experts
  // are whole (folded) or the all-gather dispatcher's reduce-scatter sums them.
  bool experts_reduce_partials() const { return !folded_ && !all_gather_; }

  void moe_forward(Emitter& e, int32_t layer, bool comm) {
    fetch(e, layer, Sub::ln2);
    norm(e, "ln2");
    const int64_t E = c_.w.model.moe.experts;
    fetch(e, layer, Sub::router);
    e.gemm("router", routed_, E, h_);
    e.elementwise("router.topk", 2.0 * routed_ * E * 4.0, 5.0 * routed_ * E);
    shared_forward(e, layer, comm);
    expert_exchange(e, comm, true, "dispatch.all_to_all", "dispatch.all_gather", "dispatch.all_gather");
    fetch(e, layer, Sub::experts);
    const double rows_in = static_cast<double>(per_expert_ * experts_local_);
    fp8_cast(e, "expert.fc1.fp8_cast", rows_in * static_cast<double>(h_));
    fp8_weight_cast(e, "expert.fc1.weight.fp8_cast", static_cast<double>(experts_local_ * h_ * (fe1_ / et_)));
    lin(e, "expert.fc1", per_expert_, fe1_ / et_, h_, experts_local_);
    activation(e, rows_in * static_cast<double>(fe_ / et_), "expert.gelu", "expert.swiglu");
    fp8_cast(e, "expert.fc2.fp8_cast", rows_in * static_cast<double>(fe_ / et_));
    fp8_weight_cast(e, "expert.fc2.weight.fp8_cast", static_cast<double>(experts_local_ * (fe_ / et_) * h_));
    lin(e, "expert.fc2", per_expert_, h_, fe_ / et_, experts_local_);
    if (comm && experts_reduce_partials())
      e.blocking(OpKind::all_reduce, Stream::tensor, c_.tensor, computed_ * static_cast<double>(h_) * c_.e,
                 "expert.all_reduce");
    expert_exchange(e, comm, false, "combine.all_to_all", "combine.all_gather", "combine.reduce_scatter");
    e.elementwise("combine", (dispatched_ + 2.0 * static_cast<double>(routed_)) * static_cast<double>(h_) * c_.e,
                  2 * dispatched_ * static_cast<double>(h_));
    e.elementwise("dropout_residual2", 3 * rows() * c_.e, 2 * rows());
  }

  void moe_backward(Emitter& e, int32_t layer) {
    e.elementwise("dropout_residual2.bwd", 3 * rows() * c_.e, 2 * rows());
    e.elementwise("combine.bwd", (dispatched_ + 2.0 * static_cast<double>(routed_)) * static_cast<double>(h_) * c_.e,
                  2 * dispatched_ * static_cast<double>(h_));
    expert_exchange(e, true, true, "combine.bwd.all_to_all", "combine.bwd.all_gather", "combine.bwd.all_gather");
    fetch(e, layer, Sub::experts);
    const double rows_in = static_cast<double>(per_expert_ * experts_local_);
    fp8_cast(e, "expert.fc2.grad.fp8_cast", rows_in * static_cast<double>(h_));
    lin(e, "expert.fc2.dgrad", per_expert_, fe_ / et_, h_, experts_local_);
    lin(e, "expert.fc2.wgrad", fe_ / et_, h_, per_expert_, experts_local_, true, false);
    activation_backward(e, rows_in * static_cast<double>(fe_ / et_), "expert.gelu.bwd", "expert.swiglu.bwd");
    fp8_cast(e, "expert.fc1.grad.fp8_cast", rows_in * static_cast<double>(fe1_ / et_));
    lin(e, "expert.fc1.dgrad", per_expert_, h_, fe1_ / et_, experts_local_);
    const uint32_t ar = experts_reduce_partials()
                            ? input_grad_reduce(e, "experts.dgrad.all_reduce", "experts.dgrad.reduce_scatter")
                            : kNoOp;
    lin(e, "expert.fc1.wgrad", h_, fe1_ / et_, per_expert_, experts_local_, true, false);
    gradients_ready(e, layer, Sub::experts);
    e.wait(ar);
    expert_exchange(e, true, false, "dispatch.bwd.all_to_all", "dispatch.bwd.all_gather",
                    "dispatch.bwd.reduce_scatter");
    shared_backward(e, layer);
    const int64_t E = c_.w.model.moe.experts;
    fetch(e, layer, Sub::router);
    e.gemm("router.dgrad", routed_, h_, E);
    e.gemm("router.wgrad", h_, E, routed_, 1, true, false);
    gradients_ready(e, layer, Sub::router);
    fetch(e, layer, Sub::ln2);
    norm(e, "ln2.bwd", true);
    gradients_ready(e, layer, Sub::ln2);
  }

  // Gradients are reduce-scattered in the workload's reduction dtype (FSDP's MixedPrecisionPolicy
  // reduce_dtype; DeepSpeed's communication_data_type, the training dtype by default).
  double reduce_bytes() const { return bytes_of(c_.w.training.gradient_reduce()); }
  void scatter_gradients(Emitter& e, int32_t layer) {
    for (const auto& block : layer_params(layer)) {
      const AxisMask group = block.expert ? c_.shard_expert : c_.shard_dense;
      const double bytes = block.params * reduce_bytes();
      if (sharding_.copy_in) e.elementwise("zero3.copy_in", block.params * (c_.e + reduce_bytes()), 0);
      if (sharding_.call_overhead > 0) {
        reduce_scatter(e, group, bytes, "zero3.reduce_scatter");
      } else if (c_.w.opt.overlap_reduce_scatter) {
        const uint32_t id = e.replicate(
            group, bytes,
            e.async(OpKind::reduce_scatter, Stream::shard, group, bytes, "zero3.reduce_scatter", {e.last_compute()}));
        if (id != kNoOp) e.deferred.push_back(id);
      } else {
        const uint32_t rs = e.blocking(OpKind::reduce_scatter, Stream::shard, group, bytes, "zero3.reduce_scatter");
        const uint32_t all = e.replicate(group, bytes, rs);
        if (all != rs) e.wait(all);
      }
    }
  }

  const Ctx& c_;
  int64_t h_, f_, q_, f1_, a_, S_, V_, T_, t_;  // q_: QKV outputs, f1_: fc1 outputs
  int64_t fe_, fe1_, fs_, fs1_;                 // an expert's FFN and fc1 outputs; the shared experts
  bool sp_, zero3_;
  ShardingMechanism sharding_;
  int ahead_ = 0;                    // gather calls issued ahead of the one a computation waits for
  std::vector<bool> chunk_start_;    // the first layer of a model chunk: where its backward pass ends
  std::vector<bool> recomputed_;     // per layer: its forward is recomputed in backward (recomputed_layers)
  bool gathering_ = false;           // whether the pass being lowered gathers weights
  bool recomputed_gathers_ = false;  // recompute_ops gathered the next backward's weights
  // Gathers a full-checkpointing recompute issued ahead for the layers below (begin_recompute).
  std::vector<std::pair<std::pair<int32_t, int32_t>, uint32_t>> carried_;
  std::deque<uint32_t> in_flight_;                // reduce-scatters issued and not yet waited for
  std::vector<Param> dense_params_, moe_params_;  // params(), made once
  std::vector<Call> dense_calls_, moe_calls_;
  std::vector<Param> dense_bucket_, expert_bucket_;
  int64_t experts_local_ = 0, per_expert_ = 0;
  int64_t et_ = 1, routed_ = 0;  // tensor ranks splitting an expert; tokens this rank routes
  bool folded_ = false, all_gather_ = false;
  double dispatched_ = 0, computed_ = 0;
};

}  // namespace

std::unique_ptr<LayerLowering> make_megatron_lowering(const Ctx& c) {
  return std::make_unique<MegatronLowering>(c);
}

}  // namespace paratwin::workloads::detail
