#include "workloads/arithmetic.hpp"

#include <cstdio>
#include <utility>

#include "workloads/pipeline_layers.hpp"

namespace paratwin::workloads {

double parameters_eq2(double l, double h, double V, double S) {
  return 12.0 * l * h * h * (1.0 + 13.0 / (12.0 * h) + (V + S) / (12.0 * l * h));
}

double flops_eq3(double B, double S, double l, double h, double V) {
  return 96.0 * B * S * l * h * h * (1.0 + S / (6.0 * h) + V / (16.0 * l * h));
}

double model_flops_korthikanti(double B, double S, double l, double h, double V) {
  return 72.0 * B * S * l * h * h * (1.0 + S / (6.0 * h) + V / (12.0 * l * h));
}

double palm_flops_per_token(double N, double l, double h, double S) {
  return 6.0 * N + 12.0 * l * h * S;
}

double mla_parameters(const ModelConfig& m) {
  // DeepSeek-V2 §2.1.2-2.1.3 (W^DQ, W^UQ, W^QR; W^DKV, W^UK, W^UV, W^KR; W^O) with the latents' RMSNorm
  // weights, as Megatron-Core's MLASelfAttention and transformers' DeepseekV3Attention hold them.
  const auto& a = m.mla;
  const double h = static_cast<double>(m.hidden), heads = static_cast<double>(m.heads);
  const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
  const double qk = static_cast<double>(a.qk_head_dim + a.rope_head_dim);
  const double q = a.q_lora_rank > 0 ? h * ql + ql + ql * heads * qk : h * heads * qk;
  const double kv = h * (kvl + static_cast<double>(a.rope_head_dim)) + kvl +
                    kvl * heads * static_cast<double>(a.qk_head_dim + a.v_head_dim);
  return q + kv + heads * static_cast<double>(a.v_head_dim) * h;
}

ParameterCounts count_parameters(const ModelConfig& m) {
  const double h = static_cast<double>(m.hidden);
  const double qkv = static_cast<double>(m.qkv_outputs());
  const double norm = static_cast<double>(m.norm_params()), bias = m.bias ? 1.0 : 0.0;
  ParameterCounts c;
  const double qkv_bias = m.has_qkv_bias() ? 1.0 : 0.0;
  c.attention = (m.mla.enabled() ? mla_parameters(m) : (h * qkv + qkv_bias * qkv) + (h * h + bias * h)) + norm;
  const auto mlp_of = [&](int64_t ffn) {
    const double width = static_cast<double>(ffn), fc1_out = static_cast<double>(m.fc1_of(ffn));
    return (h * fc1_out + bias * fc1_out) + (width * h + bias * h);
  };
  c.mlp = mlp_of(m.ffn_hidden) + norm;
  c.expert = mlp_of(m.expert_ffn());
  c.shared = m.moe.shared_ffn > 0 ? mlp_of(m.moe.shared_ffn) : 0.0;
  c.router = m.moe.enabled() ? h * static_cast<double>(m.moe.experts) : 0.0;
  const double V = static_cast<double>(m.vocab), S = static_cast<double>(m.seq_len);
  c.embeddings = V * h * (m.tied_embeddings ? 1.0 : 2.0) + (m.position == Position::learned ? S * h : 0.0) +
                 (m.final_norm ? norm : 0.0);
  const double moe_layers = static_cast<double>(m.moe_layer_count());
  const double dense_layers = static_cast<double>(m.layers) - moe_layers;
  // An MoE layer keeps its second layer norm and gains a router (and the shared experts); its MLP
  // becomes the experts.
  c.dense_total = static_cast<double>(m.layers) * c.attention + dense_layers * c.mlp +
                  moe_layers * (norm + c.router + c.shared) + c.embeddings;
  c.expert_total = moe_layers * static_cast<double>(m.moe.experts) * c.expert;
  return c;
}

double active_parameters(const ModelConfig& m) {
  const ParameterCounts c = count_parameters(m);
  if (!m.moe.enabled()) return c.total();
  return c.dense_total + c.expert_total * static_cast<double>(m.moe.top_k) / static_cast<double>(m.moe.experts);
}

std::string parameters_label(const ModelConfig& m) {
  const auto billions = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, v >= 1e11 ? "%.0f B" : v >= 1e10 ? "%.1f B" : "%.3g B", v / 1e9);
    return std::string(text);
  };
  std::string out = billions(count_parameters(m).total()) + " parameters";
  if (m.moe.enabled()) out += " (" + billions(active_parameters(m)) + " active per token)";
  return out;
}

IterationFlops iteration_flops(const Workload& w) {
  const auto& m = w.model;
  const double h = static_cast<double>(m.hidden);
  const double S = static_cast<double>(m.seq_len);
  const double tokens = static_cast<double>(w.training.global_batch) * S;
  // Forward of one layer: QKV and the output projection (h·(h + 2·kv·d) + h² multiply-adds per
  // token, 4h² with multi-head attention), then Q·Kᵀ and scores·V over all S keys (2·S·h per token);
  // the MLP's fc1 (h·f, or h·2f gated) and fc2 (f·h). The same terms as Megatron-LM's
  // num_floating_point_operations (megatron/training/training.py, core_r0.8.0: (1 + kv/a + S/h) for
  // attention, 3/2 for SwiGLU).
  double core = 4.0 * tokens * S * h;
  double attn = 2.0 * tokens * (h * static_cast<double>(m.qkv_outputs()) + h * h) + core;
  if (m.mla.enabled()) {
    // Multi-latent attention: its projections' multiply-adds (mla_parameters less the norms), and
    // Q·Kᵀ over query/key heads of qk + rope, scores·V over value heads of v (Megatron-LM
    // num_floating_point_operations, main 2026-11, whose core term also counts full S×S before its
    // causal halving).
    const auto& a = m.mla;
    const double heads = static_cast<double>(m.heads);
    const double norms = static_cast<double>(a.q_lora_rank + a.kv_lora_rank);
    core = 2.0 * tokens * S * heads * static_cast<double>(a.qk_head_dim + a.rope_head_dim + a.v_head_dim);
    attn = 2.0 * tokens * (mla_parameters(m) - norms) + core;
  }
  const auto mlp_of = [&](int64_t ffn) {
    return 2.0 * tokens * (h * static_cast<double>(m.fc1_of(ffn)) + static_cast<double>(ffn) * h);
  };
  const double mlp = mlp_of(m.ffn_hidden);
  const double layers = static_cast<double>(m.layers);
  const double moe_layers = static_cast<double>(m.moe_layer_count());
  const double dense_layers = layers - moe_layers;
  const double k = m.moe.enabled() ? static_cast<double>(m.moe.top_k) : 0.0;
  // An MoE layer: top_k experts of their own size per token, and the shared experts on every token.
  const double moe_mlp =
      m.moe.enabled() ? k * mlp_of(m.expert_ffn()) + (m.moe.shared_ffn > 0 ? mlp_of(m.moe.shared_ffn) : 0.0) : 0.0;
  const double forward = layers * attn + dense_layers * mlp + moe_layers * moe_mlp;
  const double logits = 2.0 * tokens * h * static_cast<double>(m.vocab);
  IterationFlops out;
  out.model = 3.0 * (forward + logits);
  double recomputed = 0;
  switch (w.training.checkpointing) {
    case Checkpointing::none:
      break;
    case Checkpointing::full:
      recomputed = forward;
      if (w.training.recompute_num_layers > 0) {
        // Only some layers recompute (Workload::recompute_num_layers): their own forward passes.
        recomputed = 0;
        const auto recomputing = recomputed_layers(w);
        for (int64_t l = 0; l < m.layers; ++l)
          if (recomputing[static_cast<size_t>(l)]) recomputed += attn + (m.is_moe_layer(l) ? moe_mlp : mlp);
      }
      break;
    case Checkpointing::selective:
      recomputed = layers * core;
      break;
    case Checkpointing::selective_op:
      // Every other matmul of a block: K, the output projection and W3 (gated) or W2 (GeLU), each
      // h by its width (dense layers only: validated).
      recomputed = layers * 2.0 * tokens * h *
                   (static_cast<double>(m.kv_head_count() * m.head_dim()) + h + static_cast<double>(m.ffn_hidden));
      break;
  }
  out.hardware = out.model + recomputed;
  return out;
}

FlopRates flop_rates(const IterationFlops& flops, double seconds, double devices, double peak) {
  FlopRates r;
  r.model_per_device = flops.model / seconds / devices;
  r.hardware_per_device = flops.hardware / seconds / devices;
  r.model_percent = 100 * r.model_per_device / peak;
  r.hardware_percent = 100 * r.hardware_per_device / peak;
  return r;
}

double model_state_bytes_per_param(const TrainingConfig& t) {
  if (t.dtype == Dtype::fp32) return 16.0;  // weights, gradients, two moments, all fp32
  return 16.0 + (t.fp32_gradient_copy ? 4.0 : 0.0);
}

double optimizer_bytes_per_param(const TrainingConfig& t) {
  if (t.dtype == Dtype::fp32) return 28.0;  // read w, g, m, v; write w, m, v
  return 28.0 + (t.fp32_gradient_copy ? 2.0 : 0.0);
}

double zero1_bound(double np, double g_data) {
  return (4.0 + 12.0 / g_data) * np;
}

double ted_memory_bound_eq74(double np_nonexp_gpu, double g_nonexp, double np_exp_gpu, double g_exp) {
  return (4.0 + 12.0 / g_nonexp) * np_nonexp_gpu + (4.0 + 12.0 / g_exp) * np_exp_gpu;
}

double ted_memory_bound_eq75(double np_base, double g_tensor, double experts, double gpus) {
  return 4.0 * np_base * (1.0 / g_tensor + (experts + 2.0) / gpus);
}

namespace {

// A layer's activation terms in 16-bit sbh units (s·b·h: tokens × micro-batch × hidden), before
// tensor parallelism splits them.
struct ActivationTerms {
  double kv;         // key/value heads per head
  double attention;  // all of attention's, and the part tensor parallelism splits
  double attention_split;
  double replicated;      // kept whole on every tensor rank unless sequence parallel
  double mlp, mlp_split;  // the MLP's, and the part tensor parallelism splits
  double scores;          // the attention scores, in bytes (not sbh units)
};

ActivationTerms activation_terms(const Workload& w, bool moe_layer, double s, double b) {
  const auto& m = w.model;
  const double h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads);
  ActivationTerms x{};
  // 34·sbh = 11·sbh in attention + 19·sbh in the MLP + 4·sbh in the layer norms; 5·a·s²·b are the
  // attention scores. With tensor parallelism 10·sbh stay replicated (layer-norm inputs, block
  // inputs, dropout masks) unless sequence parallel; 8·sbh of attention and 16·sbh of the MLP split.
  // The MLP part grows with ffn_hidden/4h and, in an MoE layer, with the tokens each rank computes.
  double ratio = static_cast<double>(m.ffn_hidden) / (4 * h);
  if (moe_layer) {
    // top_k experts of their own size per token, and the shared experts on every token.
    const double load = m.moe.capacity_factor > 0 ? m.moe.capacity_factor : m.moe.imbalance;
    ratio = static_cast<double>(m.expert_ffn()) / (4 * h) * static_cast<double>(m.moe.top_k) * load +
            static_cast<double>(m.moe.shared_ffn) / (4 * h);
  }
  // A gated MLP keeps fc1's 2·ffn_hidden outputs (the activation's input) where GeLU keeps ffn_hidden:
  // 8·sbh more per 4h of ffn_hidden. Grouped-query attention keeps keys and values of kv_heads heads:
  // of the attention's 11·sbh, K and V are 4·sbh × kv/heads.
  double mlp = (m.mlp == Mlp::gelu ? 19.0 : 27.0) * ratio, mlp_split = (m.mlp == Mlp::gelu ? 16.0 : 24.0) * ratio;
  const double kv = static_cast<double>(m.kv_head_count()) / a;
  double attention = 7.0 + 4.0 * kv, attention_split = 4.0 + 4.0 * kv, replicated = 10.0;
  if (m.mla.enabled()) {
    // Multi-latent attention keeps the two normed latents (and the shared rotary key), whole on every
    // tensor rank, and per head Q and K of qk + rope, V of v, and the output of v: in sbh units.
    const auto& l = m.mla;
    const double latents = 2.0 * static_cast<double>(l.q_lora_rank + l.kv_lora_rank + l.rope_head_dim) / h;
    const double heads = 2.0 * a * static_cast<double>(2 * (l.qk_head_dim + l.rope_head_dim) + 2 * l.v_head_dim) / h;
    attention = 3.0 + latents + heads;
    attention_split = heads;
    replicated = 10.0 + latents;
  }
  if (w.training.fp8 != Fp8::none) {
    // Transformer Engine keeps an fp8 GEMM's input for its weight gradient as the fp8 cast it made
    // (v1.8 module/linear.py and layernorm_linear.py save the cast, not the 16-bit tensor): the QKV
    // and fc1 inputs (the norms' outputs, 2·sbh each, replicated under tensor parallelism), the
    // projection's input (2·sbh) and fc2's (8·sbh per 4h of ffn_hidden) at one byte each.
    attention -= 2.0;
    attention_split -= 1.0;
    replicated -= 2.0;
    mlp -= 5.0 * ratio;
    mlp_split -= 4.0 * ratio;
  }
  x.kv = kv;
  x.attention = attention;
  x.attention_split = attention_split;
  x.replicated = replicated;
  x.mlp = mlp;
  x.mlp_split = mlp_split;
  // A flash kernel keeps no scores, only their row statistics (O(s), neglected).
  x.scores = m.attention == Attention::flash ? 0.0 : 5.0 * a * s * s * b;
  return x;
}

// One tensor rank's share: {its activations, its share of the block's 2·sbh input}.
std::pair<double, double> tensor_rank_share(const Workload& w, const ActivationTerms& x, double sbh) {
  const auto& t = w.parallel.tensor;
  const double scores = x.scores;
  const double everything = (x.attention + 4.0 + x.mlp) * sbh + scores;
  double full = 0, input = 2.0 * sbh;
  switch (t.mode) {
    case TensorMode::none:
      full = everything;
      break;
    case TensorMode::megatron: {
      const double tp = static_cast<double>(t.size);
      const double split = (x.attention_split + x.mlp_split) * sbh + scores;
      if (w.parallel.sequence_parallel) {
        full = (x.replicated * sbh + split) / tp;
        input /= tp;
      } else {
        full = x.replicated * sbh + split / tp;
      }
      break;
    }
    case TensorMode::optimus: {
      const double q2 = static_cast<double>(t.rows * t.cols);
      full = everything / q2;
      input /= q2;
      break;
    }
    case TensorMode::axonn: {
      // Inputs are split over z (tokens) and y (features) and replicated over x; scores split over
      // x (heads) and z.
      const double zy = static_cast<double>(t.z * t.y), xz = static_cast<double>(t.x * t.z);
      full = (everything - scores) / zy + scores / xz;
      input /= zy;
      break;
    }
  }
  return {full, input};
}

// What the layer keeps for backward (stash) and needs while it runs backward (working), by its
// checkpointing; `full` and `input` are the rank's activations and input (tensor_rank_share).
LayerActivations checkpointed(const Workload& w, const ActivationTerms& x, bool recomputed, double full, double input,
                              double sbh) {
  const auto& m = w.model;
  const auto& t = w.parallel.tensor;
  const double h = static_cast<double>(m.hidden), kv = x.kv, scores = x.scores;
  LayerActivations out;
  // A layer that full checkpointing leaves out (recompute_num_layers) keeps its activations.
  const Checkpointing checkpointing =
      w.training.checkpointing == Checkpointing::full && !recomputed ? Checkpointing::none : w.training.checkpointing;
  switch (checkpointing) {
    case Checkpointing::none:
      out.stash = full;
      break;
    case Checkpointing::full:
      out.stash = input;
      out.working = full;
      break;
    case Checkpointing::selective_op: {
      // Saved (TorchTitan's policy): the block's input, the outputs of the 1st, 3rd, 5th and 7th
      // matmul (Q, V, W1 and W2 of a gated MLP; Q, V and W1 without a gate) and of the flash kernel
      // (its O(s) statistics neglected), and under tensor parallelism the reduce-scatters' outputs
      // (torch.ops._c10d_functional.reduce_scatter_tensor is on the save list). In 16-bit sbh units:
      // input 2, Q 2, V 2·kv, attention output 2, W1 8·ratio, W2 2. The rest is recomputed: the working
      // memory of the layer in backward is its full activations.
      const bool gated = m.mlp != Mlp::gelu;
      double split = 2.0 + 2.0 * kv + 2.0 + 8.0 * (static_cast<double>(m.ffn_hidden) / (4 * h));
      double whole = gated ? 2.0 : 0.0;  // W2's output: a partial sum of every row under tensor parallelism
      double in = 2.0;
      if (t.mode == TensorMode::megatron && t.size > 1) {
        const double tp = static_cast<double>(t.size);
        split /= tp;
        if (w.parallel.sequence_parallel) in = 6.0 / tp;  // the input and the two reduce-scatters' outputs
      }
      out.stash = (in + split + whole) * sbh;
      out.working = full;
      break;
    }
    case Checkpointing::selective: {
      const double divisor = t.mode == TensorMode::megatron  ? static_cast<double>(t.size)
                             : t.mode == TensorMode::optimus ? static_cast<double>(t.rows * t.cols)
                             : t.mode == TensorMode::axonn   ? static_cast<double>(t.x * t.z)
                                                             : 1.0;
      out.stash = full - scores / divisor;
      out.working = scores / divisor;
      break;
    }
  }
  return out;
}

}  // namespace

LayerActivations layer_activations(const Workload& w, bool moe_layer, bool recomputed) {
  const auto& m = w.model;
  // A context-parallel rank holds seq_len/context tokens of each sequence.
  const double s = static_cast<double>(m.seq_len / w.parallel.context), b = static_cast<double>(w.training.micro_batch);
  const double h = static_cast<double>(m.hidden);
  const double scale = bytes_of(w.training.dtype) / 2.0;  // the model counts 16-bit activations
  const double sbh = s * b * h;
  const ActivationTerms x = activation_terms(w, moe_layer, s, b);
  const auto [full, input] = tensor_rank_share(w, x, sbh);
  LayerActivations out = checkpointed(w, x, recomputed, full, input, sbh);
  out.stash *= scale;
  out.working *= scale;
  return out;
}

}  // namespace paratwin::workloads
