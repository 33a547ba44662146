#pragma once
// Model arithmetic: parameters, FLOPs and memory, each formula beside the seed equation it follows.
#include <cstdint>

#include "workloads/workload.hpp"

namespace paratwin::workloads {

// Seed 003 eq. (2): P = 12·l·h²·(1 + 13/(12h) + (V+S)/(12lh)).
double parameters_eq2(double layers, double hidden, double vocab, double seq_len);
// Seed 003 eq. (3): F = 96·B·S·l·h²·(1 + S/(6h) + V/(16lh)), with full recomputation.
double flops_eq3(double batch, double seq_len, double layers, double hidden, double vocab);

// Parameter counts by construction (QKV, projection, two MLP GEMMs with biases, two layer norms per
// layer; word and position embeddings tied to the output layer; no final layer norm, as eq. 2).
struct ParameterCounts {
  double attention = 0;     // per layer: QKV + projection + the first layer norm
  double mlp = 0;           // per dense layer: fc1 + fc2 + the second layer norm
  double expert = 0;        // per expert: fc1 + fc2
  double router = 0;        // per MoE layer
  double embeddings = 0;    // (V + S)·h
  double dense_total = 0;   // everything but expert parameters
  double expert_total = 0;  // all experts of all MoE layers (seed 002 eq. 7.2's NP_exp)
  double total() const { return dense_total + expert_total; }
};
ParameterCounts count_parameters(const ModelConfig& m);

// Model FLOPs of one iteration: GEMM FLOPs of forward (×1), backward (×2) and, with full
// checkpointing, the recomputed forward (×1); logits not recomputed. Equals eq. (3) for a dense model
// with ffn_hidden = 4h and full checkpointing. MoE layers count top_k experts per token.
double model_flops(const Workload& w);

// Mixed-precision Adam state per parameter (bytes): 2 half weights + 2 half gradients + 4 fp32
// master + 8 moments = 16 (ZeRO's convention); + 4 with fp32 gradients = 20 (seed 002 §3.3.2).
double model_state_bytes_per_param(const TrainingConfig& t);
// Memory traffic of one Adam update per parameter: read fp32 weight, both moments and the gradient,
// write them back with the half-precision copy — 28 bytes (30 with fp32 gradients).
double optimizer_bytes_per_param(const TrainingConfig& t);
// Floating-point operations of one Adam update per parameter (moments, bias correction, update).
constexpr double kAdamFlopsPerParam = 12.0;

// Seed 002 §7.1.1: the ZeRO-1 per-GPU lower bound (4 + 12/G_data)·NP bytes.
double zero1_bound(double params_per_gpu, double data_parallel);
// Seed 002 eq. (7.4): TED's bound with separate non-expert and expert data parallelism.
double ted_memory_bound_eq74(double np_nonexp_gpu, double g_data_nonexp, double np_exp_gpu, double g_data_exp);
// Seed 002 eq. (7.5): 4·NP_base·(1/G_tensor + (E+2)/G).
double ted_memory_bound_eq75(double np_base, double g_tensor, double experts, double gpus);

// Activation bytes of one transformer layer for one micro-batch held until its backward pass
// (Korthikanti et al. 2022, the Megatron activation model: sbh(34 + 5as/h) with 16-bit
// activations), divided as the tensor mode distributes activations.
struct LayerActivations {
  double stash = 0;    // kept per in-flight micro-batch (checkpointed input, or everything)
  double working = 0;  // materialised while the layer's backward runs (recomputed activations)
};
LayerActivations layer_activations(const Workload& w, bool moe_layer);

}  // namespace paratwin::workloads
