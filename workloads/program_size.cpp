#include "workloads/program_size.hpp"

#include <algorithm>

#include "workloads/arithmetic.hpp"
#include "workloads/pipeline_layers.hpp"

namespace paratwin::workloads {

namespace {

// Lowering emits a·layers·m + b·stages·chunks·m + c·layers + d·stages·chunks ops (m micro-batches): a
// per layer and micro-batch (forward, backward, recomputation and their collectives), b per
// micro-batch and model chunk (pipeline messages, activation memory events, embedding and logits), c
// per layer (gradient synchronisation, ZeRO's gathers), d per chunk (embeddings' synchronisation, the
// optimizer). Fitted on every shipped example under each checkpointing, ZeRO stage and overlap option
// it accepts, and MoE in every layer, with its layers and micro-batches doubled, the largest seen were
// a = 59, 69, 68 and 26 + 48q (none, megatron, axonn, optimus), b = 9, 13, 13 and 6 + 9q, c = 10,
// d = 7; the workload fuzzer found an MoE-in-every-layer ZeRO-3 workload at a + c/m = 61 (none).
// Rounded up by a fifth and more.
struct PerMode {
  double layer_pass, chunk_pass;
};
PerMode per_mode(const Workload& w) {
  switch (w.parallel.tensor.mode) {
    case TensorMode::none:
      return {72, 14};
    case TensorMode::megatron:
      return {84, 18};
    case TensorMode::axonn:
      return {84, 18};
    case TensorMode::optimus: {
      const double q = static_cast<double>(w.parallel.tensor.rows);
      return {36 + 56 * q, 8 + 10 * q};
    }
  }
  return {84, 18};
}
constexpr double kOpsPerLayer = 16, kOpsPerChunk = 8;
// Peak memory of lowering per op: the op (112 bytes), its share of the dependency lists, the spare
// capacity of growing vectors and validate_program()'s graph over every op. Measured as peak RSS over
// ops of `paratwin lower` (and `simulate`, whose peak is lowering's): 230-280 bytes from 1.7 × 10^6 to
// 1.7 × 10^7 ops.
constexpr double kBytesPerOp = 300;

}  // namespace

ProgramSize estimate_program_size(const Workload& w) {
  const auto& pp = w.parallel.pipeline;
  PerMode k = per_mode(w);
  // Multi-latent attention's projections (lower_megatron.cpp mla_forward/mla_backward): six GEMMs and
  // norms in place of the QKV GEMM forward, ten ops in place of two backward, the forward again when
  // recomputed: 18 more per layer pass. The shared experts' MLP: up to 5 ops forward (with its
  // tensor-parallel gather and reduction), 8 backward, 5 recomputed, and a ZeRO-3 stack's gather and
  // reduce-scatter of its module each: 22 more.
  if (w.model.mla.enabled()) k.layer_pass += 18;
  if (w.model.moe.shared_ffn > 0) k.layer_pass += 22;
  // Without recomputation a layer has a forward and a backward pass, not three: at most 0.65 of the ops
  // (the backward holds most of them).
  if (w.training.checkpointing == Checkpointing::none) k.layer_pass *= 0.65;
  // With only some layers recomputed (training.recompute_num_layers), the others' passes as that.
  if (w.training.checkpointing == Checkpointing::full && w.training.recompute_num_layers > 0) {
    const auto recomputing = recomputed_layers(w);
    const auto count = std::count(recomputing.begin(), recomputing.end(), true);
    k.layer_pass *= 0.65 + 0.35 * static_cast<double>(count) / static_cast<double>(w.model.layers);
  }
  // optimizations.overlap_tensor_comm splits four GEMMs of each forward (and recomputed forward) into
  // tensor-size or 4 chunks, with a reduce-scatter per 4th chunk, and two of each backward into
  // tensor-size chunks: at most 6·(t − 1) + 24 more ops per layer pass.
  if (w.opt.overlap_tensor_comm) k.layer_pass += 6 * static_cast<double>(w.parallel.tensor.size - 1) + 24;
  const double m = static_cast<double>(w.micro_batches());
  const double layers = static_cast<double>(w.model.layers);
  const double chunks = static_cast<double>(pp.stages) * static_cast<double>(pp.chunks);
  ProgramSize s;
  s.ops = m * (k.layer_pass * layers + k.chunk_pass * chunks) + kOpsPerLayer * layers + kOpsPerChunk * chunks;
  // The pipeline engine's host work: an op per instruction (forward, backward, a send and a recv each).
  if (w.framework.micro_batch_overhead > 0 && pp.stages > 1) s.ops += 4 * m * chunks;
  // Gradient buckets: at most one per bucket of the whole model's gradients (in the wider of the training
  // and the reduction dtype) beyond the per-block collectives counted above, in every micro-batch under
  // ZeRO-2.
  // (A stack sharding by unit under ZeRO-3 reduces its embeddings with their unit, unbucketed: lower.cpp.)
  const bool unit_sharded = w.parallel.zero_stage == 3 && w.framework.sharding.gather_unit == GatherUnit::layer;
  if (w.framework.gradient_bucket_bytes > 0 && !unit_sharded) {
    const double element = std::max(bytes_of(w.training.dtype), bytes_of(w.training.gradient_reduce()));
    const double buckets = element * count_parameters(w.model).total() / w.framework.gradient_bucket_bytes + 2 * chunks;
    // optimizations.overlap_param_gather all-gathers the parameters in the same buckets.
    s.bucket_ops = ((w.parallel.zero_stage == 2 ? m : 1) + (w.opt.overlap_param_gather ? 1 : 0)) * buckets;
    s.ops += s.bucket_ops;
  }
  s.bytes = s.ops * kBytesPerOp;
  return s;
}

}  // namespace paratwin::workloads
