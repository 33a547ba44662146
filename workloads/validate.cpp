// Cross-field rules of a workload. Each rule names the JSON paths involved and the values, e.g.
// "parallelism.tensor.x = 3 does not divide model.hidden = 4096".
#include <iomanip>
#include <sstream>
#include <string>

#include "workloads/error.hpp"
#include "workloads/grid.hpp"
#include "workloads/op_checkpointing.hpp"
#include "workloads/pipeline_layers.hpp"
#include "workloads/program_size.hpp"
#include "workloads/stack_features.hpp"
#include "workloads/workload.hpp"

namespace paratwin::workloads {

namespace {

struct Field {
  std::string path;
  int64_t value;
};

std::string show(const Field& f) {
  return f.path + " = " + std::to_string(f.value);
}

void require_divides(const Field& divisor, const Field& dividend) {
  if (divisor.value > 1 && dividend.value % divisor.value != 0)
    throw WorkloadError(divisor.path, "= " + std::to_string(divisor.value) + " does not divide " + show(dividend));
}

void require(bool ok, const std::string& path, const std::string& message) {
  if (!ok) throw WorkloadError(path, message);
}

// Limits that keep lowering bounded in time and memory; beyond them a description is a mistake.
constexpr int64_t kMaxRanks = int64_t{1} << 22;
// 2.5 × 10^7 ops take about 7.5 GB to lower and check (and a simulation as much), a third of a
// 24 GB workstation; the largest shipped example has 4.4 × 10^6.
constexpr double kMaxProgramOps = 2.5e7;

void validate_model(const ModelConfig& m) {
  require_divides({"model.heads", m.heads}, {"model.hidden", m.hidden});
  if (m.kv_heads > 0) require_divides({"model.kv_heads", m.kv_heads}, {"model.heads", m.heads});
  if (m.moe.enabled()) {
    require(m.moe.every <= m.layers, "model.moe.every",
            "= " + std::to_string(m.moe.every) + " exceeds " + show({"model.layers", m.layers}) +
                ": the model would have no MoE layer");
    require(m.moe_layer_count() > 0, "model.moe.first_dense",
            "= " + std::to_string(m.moe.first_dense) + " leaves no MoE layer among the " + std::to_string(m.layers) +
                " (every " + std::to_string(m.moe.every) + ")");
  }
  if (m.mla.enabled()) {
    // MLA has no key/value heads of its own, no biases (DeepSeek-V2/V3), and is modelled in the
    // fused kernel Megatron-Core runs it with.
    require(m.kv_heads == 0 || m.kv_heads == m.heads, "model.kv_heads",
            "= " + std::to_string(m.kv_heads) + ": multi-latent attention (model.mla) has no key/value groups");
    require(!m.bias, "model.bias", "must be false with multi-latent attention (model.mla has no biases)");
    require(!m.qkv_bias, "model.qkv_bias", "must be false with multi-latent attention (model.mla has no biases)");
    require(m.attention == Attention::flash, "model.mla",
            "is modelled with model.attention \"flash\" (Transformer Engine's fused attention, as Megatron-Core "
            "runs it)");
  }
}

// The Optimus and AxoNN lowerings build a GPT-3 layer: full multi-head attention and a two-GEMM MLP.
void require_classic_layer(const ModelConfig& m, const char* mode) {
  const std::string why =
      std::string("is not modelled with tensor mode \"") + mode + "\" (use \"megatron\" or \"none\")";
  require(m.kv_heads == 0 || m.kv_heads == m.heads, "model.kv_heads",
          "= " + std::to_string(m.kv_heads) + ": grouped-query attention " + why);
  require(m.mlp == Mlp::gelu, "model.mlp", std::string("= \"") + to_string(m.mlp) + "\": a gated MLP " + why);
  require(!m.mla.enabled(), "model.mla", "multi-latent attention " + why);
  require(!m.qkv_bias || m.bias, "model.qkv_bias", "(biases on q, k and v alone) " + why);
  require(m.moe.ffn_hidden == 0 && m.moe.shared_ffn == 0 && m.moe.first_dense == 0,
          m.moe.ffn_hidden   ? "model.moe.ffn_hidden"
          : m.moe.shared_ffn ? "model.moe.shared_ffn"
                             : "model.moe.first_dense",
          "fine-grained, shared experts and dense first layers " + why);
}

void validate_tensor(const Workload& w) {
  const auto& m = w.model;
  const auto& t = w.parallel.tensor;
  const int64_t tokens = w.training.micro_batch * m.seq_len;
  const Field hidden{"model.hidden", m.hidden}, heads{"model.heads", m.heads}, ffn{"model.ffn_hidden", m.ffn_hidden},
      vocab{"model.vocab", m.vocab};
  switch (t.mode) {
    case TensorMode::none:
      require(!w.parallel.sequence_parallel, "parallelism.sequence_parallel",
              "requires parallelism.tensor.mode = \"megatron\"");
      break;
    case TensorMode::megatron: {
      const Field size{"parallelism.tensor.size", t.size};
      require_divides(size, heads);
      // Megatron-Core splits the key/value heads over the tensor ranks (num_query_groups must be a
      // multiple of the tensor-parallel size: megatron/training/arguments.py, core_r0.8.0).
      if (m.kv_heads > 0) require_divides(size, {"model.kv_heads", m.kv_heads});
      require_divides(size, hidden);
      require_divides(size, ffn);
      require_divides(size, vocab);
      if (m.moe.ffn_hidden > 0) require_divides(size, {"model.moe.ffn_hidden", m.moe.ffn_hidden});
      if (m.moe.shared_ffn > 0) require_divides(size, {"model.moe.shared_ffn", m.moe.shared_ffn});
      if (w.parallel.sequence_parallel) {
        if (w.parallel.context > 1)
          require_divides(size, {"model.seq_len / parallelism.context.size", m.seq_len / w.parallel.context});
        else
          require_divides(size, {"model.seq_len", m.seq_len});
      }
      break;
    }
    case TensorMode::optimus: {
      require_classic_layer(m, "optimus");
      const Field q{"parallelism.tensor.q", t.rows};
      require_divides(q, hidden);
      require_divides(q, heads);
      require_divides(q, ffn);
      require_divides(q, vocab);
      require_divides(q, {"training.micro_batch × model.seq_len", tokens});
      require(!w.parallel.sequence_parallel, "parallelism.sequence_parallel",
              "requires parallelism.tensor.mode = \"megatron\"");
      break;
    }
    case TensorMode::axonn: {
      require_classic_layer(m, "axonn");
      // Layers alternate: QKV and fc1 split their outputs over x, proj and fc2 over y (transposed).
      const Field x{"parallelism.tensor.x", t.x}, y{"parallelism.tensor.y", t.y}, z{"parallelism.tensor.z", t.z};
      require_divides(x, hidden);
      require_divides(y, hidden);
      require_divides(x, heads);
      require_divides(x, ffn);
      require_divides(y, ffn);
      require_divides(x, vocab);
      require_divides(z, {"training.micro_batch × model.seq_len", tokens});
      for (const auto& [k, n, what] :
           {std::tuple{m.hidden, 3 * m.hidden, "QKV"}, std::tuple{m.hidden, m.hidden, "proj"},
            std::tuple{m.hidden, m.ffn_hidden, "fc1"}, std::tuple{m.hidden, m.vocab, "logits"}}) {
        // (k/y)·(n/x) mod z, computed without forming the product.
        const int64_t rem = ((k / t.y) % t.z) * ((n / t.x) % t.z) % t.z;
        require(t.z <= 1 || rem == 0, "parallelism.tensor.z",
                "= " + std::to_string(t.z) + " does not divide the " + what + " weight block of " +
                    std::to_string(k / t.y) + " × " + std::to_string(n / t.x) + " elements");
      }
      require(!w.parallel.sequence_parallel, "parallelism.sequence_parallel",
              "requires parallelism.tensor.mode = \"megatron\"");
      require(w.parallel.zero_stage < 3, "parallelism.data.zero",
              "= 3 is not supported with tensor mode \"axonn\": use the z axis, which shards "
              "weights the same way");
      break;
    }
  }
  if (t.mode == TensorMode::optimus)
    require(w.parallel.zero_stage < 3, "parallelism.data.zero", "= 3 is not supported with tensor mode \"optimus\"");
}

// Context parallelism as Megatron-Core runs it through Transformer Engine: fused or flash attention
// only (TE's attn_forward_func_with_cp), the sequence in 2·cp chunks for causal load balancing
// (megatron/core/utils.py get_batch_on_this_cp_rank), and for all_to_all the heads split over the
// context ranks.
void validate_context(const Workload& w) {
  const auto& p = w.parallel;
  if (p.context <= 1) return;
  const Field cp{"parallelism.context.size", p.context};
  require(p.tensor.mode == TensorMode::none || p.tensor.mode == TensorMode::megatron, "parallelism.context.size",
          "= " + std::to_string(p.context) + " is modelled with tensor mode \"megatron\" or \"none\", not \"" +
              to_string(p.tensor.mode) + "\"");
  require(!w.model.mla.enabled(), "parallelism.context.size",
          "= " + std::to_string(p.context) + ": context parallelism with multi-latent attention is not modelled");
  require(w.model.attention == Attention::flash, "parallelism.context.size",
          "= " + std::to_string(p.context) +
              " needs model.attention \"flash\" (Transformer Engine runs context parallelism only in its fused and "
              "flash attention kernels)");
  if (p.context_comm == ContextComm::all_to_all) {
    const int64_t t = p.tensor.mode == TensorMode::megatron ? p.tensor.size : 1;
    require_divides(cp, {"model.heads / tensor size", w.model.heads / t});
    require_divides(cp, {"model.kv_heads / tensor size", w.model.kv_head_count() / t});
    require_divides(cp, {"model.seq_len", w.model.seq_len});
  } else {
    require_divides({"2 × parallelism.context.size", 2 * p.context}, {"model.seq_len", w.model.seq_len});
  }
}

void validate_pipeline(const Workload& w) {
  const auto& p = w.parallel.pipeline;
  const int64_t m = w.micro_batches();
  if (p.chunks > 1)
    require(p.schedule == Schedule::interleaved, "parallelism.pipeline.chunks",
            "= " + std::to_string(p.chunks) + " requires schedule \"interleaved\"");
  if (p.first_stage_layers == 0 && p.last_stage_layers == 0 && !p.embedding_in_split && !p.loss_in_split)
    require_divides({"parallelism.pipeline.stages × chunks", p.stages * p.chunks}, {"model.layers", w.model.layers});
  else
    virtual_stage_starts(w);  // throws naming the field when the split is impossible
  if (p.schedule == Schedule::interleaved) {
    require(p.stages > 1, "parallelism.pipeline.schedule", "\"interleaved\" needs parallelism.pipeline.stages > 1");
    require(m % p.stages == 0, "parallelism.pipeline.stages",
            "= " + std::to_string(p.stages) + " does not divide the " + std::to_string(m) +
                " micro-batches per iteration (the interleaved schedule needs a multiple)");
  }
  if (p.pipeline_limit != 0)
    require(p.schedule == Schedule::axonn, "parallelism.pipeline.pipeline_limit", "applies only to schedule \"axonn\"");
}

void validate_moe(const Workload& w) {
  const auto& moe = w.model.moe;
  if (!moe.enabled()) {
    require(w.parallel.expert == 1, "parallelism.expert.size",
            "= " + std::to_string(w.parallel.expert) + " needs an MoE model (model.moe)");
    require(!w.opt.duplicate_token_dropping, "optimizations.duplicate_token_dropping",
            "needs an MoE model (model.moe)");
    require(!w.opt.comm_aware_checkpointing, "optimizations.comm_aware_checkpointing",
            "needs an MoE model (model.moe)");
    require(w.parallel.expert_tensor == 0, "parallelism.expert.tensor", "needs an MoE model (model.moe)");
    require(w.parallel.expert_dispatch == ExpertDispatch::all_to_all, "parallelism.expert.dispatcher",
            "needs an MoE model (model.moe)");
    return;
  }
  require_divides({"parallelism.expert.size", w.parallel.expert}, {"model.moe.experts", moe.experts});
  const int64_t t = w.parallel.tensor.degree(), et = w.parallel.expert_tensor;
  require(et == 0 || et == 1 || et == t, "parallelism.expert.tensor",
          "= " + std::to_string(et) + ": the experts are split over the whole tensor group (" + std::to_string(t) +
              ") or not at all (1)");
  // Both layouts route each rank's sequence-parallel shard of the tokens.
  const bool gathers = w.parallel.expert_dispatch == ExpertDispatch::all_gather;
  if (t > 1 && (w.parallel.experts_folded() || gathers))
    require(w.parallel.sequence_parallel, "parallelism.sequence_parallel",
            std::string("must be true with ") +
                (w.parallel.experts_folded() ? "parallelism.expert.tensor = 1 and tensor parallelism: each rank "
                                               "routes the tokens of its sequence shard"
                                             : "parallelism.expert.dispatcher = \"all_gather\" and tensor "
                                               "parallelism: the dispatcher gathers each rank's sequence shard") +
                " (Megatron-LM requires --sequence-parallel with MoE and tensor parallelism)");
  if (w.parallel.experts_folded()) {
    // Megatron-Core folds the expert-parallel group over the tensor ranks (parallel_state.py,
    // expert_tensor_and_model_parallel group); each rank routes its own sequence-parallel tokens.
    require(moe.experts % (w.parallel.expert * t) == 0, "model.moe.experts",
            "= " + std::to_string(moe.experts) + " is not divisible by the expert-parallel group, expert size " +
                std::to_string(w.parallel.expert) + " × tensor size " + std::to_string(t) +
                " (parallelism.expert.tensor = 1)");
    require(!w.opt.duplicate_token_dropping, "optimizations.duplicate_token_dropping",
            "has nothing to drop with parallelism.expert.tensor = 1: the tensor ranks route different tokens");
  }
  require(!w.opt.duplicate_token_dropping || !gathers, "optimizations.duplicate_token_dropping",
          "applies to the all-to-all dispatcher only");
  require(w.parallel.tensor.mode == TensorMode::none || w.parallel.tensor.mode == TensorMode::megatron,
          "parallelism.tensor.mode",
          std::string("= \"") + to_string(w.parallel.tensor.mode) +
              "\" is not supported with MoE: TED combines experts with \"megatron\" tensor parallelism");
  require(!w.opt.duplicate_token_dropping || w.parallel.tensor.degree() > 1, "optimizations.duplicate_token_dropping",
          "has no effect without tensor parallelism");
  require(!w.opt.comm_aware_checkpointing || w.training.checkpointing == Checkpointing::full,
          "optimizations.comm_aware_checkpointing", "needs training.checkpointing = \"full\"");
  require(moe.capacity_factor > 0 || moe.imbalance >= 1, "model.moe.imbalance", "must be >= 1");
  require(moe.capacity_factor == 0 || moe.imbalance == 1.0, "model.moe.imbalance",
          "applies only to dropless routing (model.moe.capacity_factor = 0); with a capacity "
          "every expert computes its padded capacity");
}

void validate_op_checkpointing(const Workload& w) {
  if (w.training.checkpointing != Checkpointing::selective_op) return;
  const std::string why = op_checkpointing_unmodelled(w);
  require(why.empty(), "training.checkpointing",
          "= \"selective_op\" (TorchTitan's per-op policy) is modelled on a dense block with flash attention " + why);
  require(
      !w.opt.cache_all_gather, "optimizations.cache_all_gather",
      "applies to full or selective checkpointing, not \"selective_op\" (its recomputation is in the backward pass)");
}

void validate_optimizations(const Workload& w) {
  const auto& o = w.opt;
  const auto& t = w.parallel.tensor;
  const bool axonn = t.mode == TensorMode::axonn;
  const bool shards_weights = (axonn && t.z > 1) || w.parallel.zero_stage == 3;
  require(!o.overlap_all_reduce || t.degree() > 1, "optimizations.overlap_all_reduce",
          "has no effect without tensor parallelism");
  require(!o.overlap_reduce_scatter || shards_weights, "optimizations.overlap_reduce_scatter",
          "has no effect unless weights are sharded (axonn z > 1 or ZeRO stage 3)");
  require(!o.overlap_all_gather || shards_weights, "optimizations.overlap_all_gather",
          "has no effect unless weights are sharded (axonn z > 1 or ZeRO stage 3)");
  require(!o.cache_all_gather || shards_weights, "optimizations.cache_all_gather",
          "has no effect unless weights are sharded (axonn z > 1 or ZeRO stage 3)");
  require(!o.cache_all_gather || w.training.checkpointing != Checkpointing::none, "optimizations.cache_all_gather",
          "has no effect without activation checkpointing");
  require(!o.overlap_gradient_sync || w.batch_replicas() > 1, "optimizations.overlap_gradient_sync",
          "has no effect without data parallelism");
  require(!o.scatter_gather || (t.mode == TensorMode::megatron && t.size > 1 && w.parallel.pipeline.stages > 1),
          "optimizations.scatter_gather",
          "needs megatron tensor parallelism (size > 1) and more than one pipeline stage");
  require(!o.overlap_param_gather || w.parallel.zero_stage == 1 || w.parallel.zero_stage == 2,
          "optimizations.overlap_param_gather",
          "overlaps the all-gather of the updated parameter shards (ZeRO stage 1 or 2) with the next forward; "
          "parallelism.data.zero is " +
              std::to_string(w.parallel.zero_stage));
  require(!o.overlap_param_gather || w.batch_replicas() > 1, "optimizations.overlap_param_gather",
          "has no effect without data parallelism");
  require(o.gradient_accumulation_fusion || t.mode == TensorMode::megatron || t.mode == TensorMode::none,
          "optimizations.gradient_accumulation_fusion",
          "false is modelled for the Megatron layer (tensor mode megatron or none) only");
  require(!o.overlap_tensor_comm || (t.mode == TensorMode::megatron && t.size > 1 && w.parallel.sequence_parallel),
          "optimizations.overlap_tensor_comm",
          "pipelines sequence parallelism's all-gathers and reduce-scatters with their GEMMs: it needs megatron "
          "tensor parallelism (size > 1) with parallelism.sequence_parallel");
  require(!o.overlap_tensor_comm || tensor_comm_overlap_fits(w), "optimizations.overlap_tensor_comm",
          "splits each GEMM into tensor-size and 4 chunks of rows: the micro-batch's tokens (seq_len x micro_batch = " +
              std::to_string(w.model.seq_len * w.training.micro_batch) + ") must be a multiple of both " +
              std::to_string(t.size) + " and 4");
}

std::string gigabytes(double bytes) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << bytes / 1e9 << " GB";
  return s.str();
}

// Before lowering allocates anything: the estimate names the factor that dominates it.
void validate_program_size(const Workload& w) {
  const ProgramSize size = estimate_program_size(w);
  if (size.ops <= kMaxProgramOps) return;
  if (size.bucket_ops > size.ops / 2) {
    std::ostringstream s;
    s << std::setprecision(3) << "= " << w.framework.gradient_bucket_bytes << " bytes makes about " << std::fixed
      << std::setprecision(0) << size.bucket_ops << " gradient-bucket collectives per iteration, a Program of about "
      << size.ops << " ops, more than the limit of " << kMaxProgramOps << "; use larger buckets";
    throw WorkloadError("framework.gradient_bucket_bytes", s.str());
  }
  const int64_t m = w.micro_batches();
  const bool by_layers = w.model.layers >= m;
  std::ostringstream s;
  s << std::fixed << std::setprecision(0);
  const std::string micro_batches = std::to_string(m) + (m == 1 ? " micro-batch" : " micro-batches");
  if (by_layers)
    s << "= " << w.model.layers << " layers with " << micro_batches << " per iteration make";
  else
    s << "= " << w.training.global_batch << " makes " << micro_batches
      << " per iteration (global_batch / (data replicas × micro_batch)) and";
  s << " a Program of about " << size.ops << " ops (" << gigabytes(size.bytes) << " to build), more than the limit of "
    << kMaxProgramOps << " ops (" << gigabytes(size.bytes / size.ops * kMaxProgramOps) << "); use "
    << (by_layers ? "fewer layers" : "fewer micro-batches (a larger training.micro_batch)");
  throw WorkloadError(by_layers ? "model.layers" : "training.global_batch", s.str());
}

// Hybrid sharding (framework.sharding.shard_group): ZeRO-3 inside groups of that many data-parallel
// ranks, replicated across them.
void validate_hybrid_sharding(const Workload& w) {
  const int64_t g = w.framework.sharding.shard_group;
  if (g == 0) return;
  const std::string path = "framework.sharding.shard_group";
  require(w.parallel.zero_stage == 3, path,
          "= " + std::to_string(g) +
              " shards the weights inside groups of data-parallel ranks: it needs "
              "parallelism.data.zero = 3 (FSDP's HYBRID_SHARD)");
  require(w.parallel.context == 1 && !w.model.moe.enabled(), path,
          "= " + std::to_string(g) + ": hybrid sharding is modelled without context parallelism and experts");
  require(g <= w.parallel.data && w.parallel.data % g == 0, path,
          "= " + std::to_string(g) + " does not divide parallelism.data.size = " + std::to_string(w.parallel.data));
}

}  // namespace

std::string op_checkpointing_unmodelled(const Workload& w) {
  const std::string tp = "and Megatron-style tensor parallelism: ";
  if (w.model.moe.enabled()) return tp + "not with model.moe";
  if (w.model.mla.enabled()) return tp + "not with model.mla";
  if (w.model.attention != Attention::flash)
    return "(the policy saves the flash kernel's output): model.attention = \"" +
           std::string(to_string(w.model.attention)) + "\"";
  if (w.parallel.tensor.mode != TensorMode::none && w.parallel.tensor.mode != TensorMode::megatron)
    return tp + "parallelism.tensor.mode = \"" + to_string(w.parallel.tensor.mode) + "\"";
  return "";
}

void validate(const Workload& w) {
  validate_model(w.model);
  validate_hybrid_sharding(w);
  // Products in double first: the axis sizes alone may overflow 64-bit integers.
  const auto& par = w.parallel;
  const double ranks = static_cast<double>(par.tensor.x) * static_cast<double>(par.tensor.y) *
                       static_cast<double>(par.tensor.z) * static_cast<double>(par.tensor.size) *
                       static_cast<double>(par.tensor.rows) * static_cast<double>(par.tensor.cols) *
                       static_cast<double>(par.expert) * static_cast<double>(par.pipeline.stages) *
                       static_cast<double>(par.data);
  if (ranks > static_cast<double>(kMaxRanks)) {
    std::ostringstream s;
    s << "describes " << std::fixed << std::setprecision(0) << ranks << " ranks, more than the limit of " << kMaxRanks;
    throw WorkloadError("parallelism", s.str());
  }
  require(static_cast<double>(w.training.micro_batch) * static_cast<double>(w.model.seq_len) <= 2147483648.0,
          "training.micro_batch", "× model.seq_len exceeds 2^31 tokens per micro-batch");
  const int64_t replicas_micro = w.batch_replicas() * w.training.micro_batch;
  if (w.training.global_batch % replicas_micro != 0)
    throw WorkloadError("training.global_batch",
                        "= " + std::to_string(w.training.global_batch) +
                            " is not a multiple of data replicas × micro_batch = " + std::to_string(replicas_micro) +
                            (w.parallel.expert > 1 ? " (data size × expert size × micro_batch)"
                                                   : " (parallelism.data.size × training.micro_batch)"));
  if (w.training.offload_optimizer)
    require(w.training.dtype != Dtype::fp32, "training.offload_optimizer",
            "models AxoNN's mixed-precision offload and needs dtype bf16 or fp16");
  if (w.training.fp8 != Fp8::none) {
    require(w.training.dtype == Dtype::bf16 || w.training.dtype == Dtype::fp16, "training.fp8",
            std::string("= \"") + to_string(w.training.fp8) +
                "\" needs dtype bf16 or fp16 (Transformer Engine keeps the weights and activations in 16 bits)");
    const auto mode = w.parallel.tensor.mode;
    require(mode == TensorMode::none || mode == TensorMode::megatron, "training.fp8",
            std::string("is modelled with tensor mode \"megatron\" or \"none\", not \"") + to_string(mode) + "\"");
    require(!w.model.mla.enabled(), "training.fp8",
            "with multi-latent attention is not modelled (DeepSeek-V3's block-scaled fp8 neither)");
  }
  require(!w.training.fp8_param_gather || w.training.fp8 != Fp8::none, "training.fp8_param_gather",
          "needs training.fp8 (\"delayed\" or \"current\")");
  require(w.training.recompute_num_layers == 0 || w.training.checkpointing == Checkpointing::full,
          "training.recompute_num_layers", "needs training.checkpointing = \"full\"");
  require(w.training.recompute_num_layers <= w.model.layers, "training.recompute_num_layers",
          "= " + std::to_string(w.training.recompute_num_layers) +
              " exceeds model.layers = " + std::to_string(w.model.layers));
  validate_context(w);
  validate_tensor(w);
  validate_moe(w);
  validate_pipeline(w);
  validate_optimizations(w);
  validate_op_checkpointing(w);
  require_stack_features(w);
  validate_program_size(w);
  const Grid grid = make_grid(w);
  PlacementMap check(grid, w.placement.order, w.placement.devices_per_node, w.placement.tile);
  (void)check;
}

}  // namespace paratwin::workloads
