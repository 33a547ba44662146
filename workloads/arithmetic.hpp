#pragma once
// Model arithmetic: parameters, FLOPs and memory, each formula beside the published equation it follows.
#include <cstdint>
#include <string>

#include "workloads/workload.hpp"

namespace paratwin::workloads {

// [narayanan2021megatron] eq. (2): P = 12·l·h²·(1 + 13/(12h) + (V+S)/(12lh)).
double parameters_eq2(double layers, double hidden, double vocab, double seq_len);
// [narayanan2021megatron] eq. (3) (Narayanan et al., SC21): F = 96·B·S·l·h²·(1 + S/(6h) + V/(16lh)). It counts
// full recomputation as a fourth forward pass (4 × 24·B·S·h² + 4 × 4·B·S²·h per layer) and every
// query against every key: these are hardware FLOPs in Korthikanti et al.'s terms.
double flops_eq3(double batch, double seq_len, double layers, double hidden, double vocab);
// Model FLOPs of Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
// Models", §6): 72·B·S·l·h²·(1 + S/(6h) + V/(12lh)), eq. (3) without the recomputed forward.
double model_flops_korthikanti(double batch, double seq_len, double layers, double hidden, double vocab);
// PaLM (Chowdhery et al. 2022, Appendix B): model FLOPs per token 6·N + 12·l·h·S for N parameters,
// attention not reduced by the causal mask.
double palm_flops_per_token(double params, double layers, double hidden, double seq_len);

// Parameter counts by construction: per layer the QKV projection (h + 2·kv_heads·head_dim outputs),
// the output projection, fc1 (ffn_hidden outputs, 2·ffn_hidden gated) and fc2, with biases unless
// model.bias is false, and two norms (LayerNorm 2h, RMSNorm h); the word embedding, the output layer
// unless tied to it, learned positions, and the final norm where the model counts it. The defaults
// (GPT-3: tied, learned positions, no final norm) give eq. (2) exactly.
struct ParameterCounts {
  double attention = 0;     // per layer: QKV + projection + the first layer norm
  double mlp = 0;           // per dense layer: fc1 + fc2 + the second layer norm
  double expert = 0;        // per expert: fc1 + fc2
  double router = 0;        // per MoE layer
  double shared = 0;        // per MoE layer: the shared experts' MLP
  double embeddings = 0;    // (V + S)·h with the defaults
  double dense_total = 0;   // everything but expert parameters
  double expert_total = 0;  // all experts of all MoE layers ([singh2025dissertation] eq. 7.2's NP_exp)
  double total() const { return dense_total + expert_total; }
};
ParameterCounts count_parameters(const ModelConfig& m);
// One layer's multi-latent attention projections and latent norms (model.mla).
double mla_parameters(const ModelConfig& m);
// The parameters a token passes through: the dense ones and top_k of each MoE layer's experts
// (Mixtral 8x7B's "12.9B active", DeepSeek-V3's "37B activated").
double active_parameters(const ModelConfig& m);
// "46.7 B parameters (12.9 B active per token)", "8.03 B parameters".
std::string parameters_label(const ModelConfig& m);

// The FLOPs of one training iteration, all ranks: the GEMMs and attention products of the layers
// and the logits, 2 per multiply-add, a backward pass twice its forward. MoE layers count top_k
// experts per token. Both figures count the full S×S score matrix (Q·Kᵀ and scores·V, 4·B·S²·h per
// layer forward), as eq. (3) and PaLM do, not the causal half a masked kernel computes: the
// convention is kAttentionFlops.
struct IterationFlops {
  // Model FLOPs, MFU's numerator: forward + backward, whatever the recomputation (Korthikanti et al.
  // 2022; PaLM App. B). For a fixed model and batch it is a constant, so model FLOP/s per device is
  // proportional to throughput.
  double model = 0;
  // Hardware FLOPs, HFU's numerator: the model FLOPs plus what activation checkpointing recomputes.
  // Full: every layer's forward again, logits not (eq. 3 for a dense model with ffn_hidden = 4h);
  // selective: the attention core (Q·Kᵀ and scores·V, Korthikanti et al. §5). Recomputation inside a
  // kernel (a flash kernel's backward) is not counted.
  double hardware = 0;
};
IterationFlops iteration_flops(const Workload& w);
inline constexpr const char* kAttentionFlops = "full";  // every query against every key, not causal

// FLOP/s per device of an iteration that took `seconds` on `devices` devices, each figure also as a
// percentage of a device's `peak` FLOP/s: MFU and HFU (Korthikanti et al. 2022, §6; PaLM App. B).
struct FlopRates {
  double model_per_device = 0, hardware_per_device = 0;  // FLOP/s
  double model_percent = 0, hardware_percent = 0;        // of peak: MFU and HFU × 100
};
FlopRates flop_rates(const IterationFlops& flops, double seconds, double devices, double peak);

// Mixed-precision Adam state per parameter (bytes): 2 half weights + 2 half gradients + 4 fp32
// master + 8 moments = 16 (ZeRO's convention); + 4 with fp32 gradients = 20 ([singh2025dissertation] §3.3.2).
double model_state_bytes_per_param(const TrainingConfig& t);
// Memory traffic of one Adam update per parameter: read fp32 weight, both moments and the gradient,
// write them back with the half-precision copy — 28 bytes (30 with fp32 gradients).
double optimizer_bytes_per_param(const TrainingConfig& t);
// Floating-point operations of one Adam update per parameter (moments, bias correction, update).
constexpr double kAdamFlopsPerParam = 12.0;

// [singh2025dissertation] §7.1.1: the ZeRO-1 per-GPU lower bound (4 + 12/G_data)·NP bytes.
double zero1_bound(double params_per_gpu, double data_parallel);
// [singh2025dissertation] eq. (7.4): TED's bound with separate non-expert and expert data parallelism.
double ted_memory_bound_eq74(double np_nonexp_gpu, double g_data_nonexp, double np_exp_gpu, double g_data_exp);
// [singh2025dissertation] eq. (7.5): 4·NP_base·(1/G_tensor + (E+2)/G).
double ted_memory_bound_eq75(double np_base, double g_tensor, double experts, double gpus);

// Activation bytes of one transformer layer for one micro-batch held until its backward pass
// (Korthikanti et al. 2022, the Megatron activation model: sbh(34 + 5as/h) with 16-bit
// activations), divided as the tensor mode distributes activations. `recomputed`: false for a layer
// that full checkpointing leaves out (training.recompute_num_layers), which keeps its activations.
struct LayerActivations {
  double stash = 0;    // kept per in-flight micro-batch (checkpointed input, or everything)
  double working = 0;  // materialised while the layer's backward runs (recomputed activations)
};
LayerActivations layer_activations(const Workload& w, bool moe_layer, bool recomputed = true);

}  // namespace paratwin::workloads
