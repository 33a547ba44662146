// Memory per rank against published figures: the model state of Llama 3 8B/70B/405B, Mixtral 8x7B and
// DeepSeek-V3 against the estimate Megatron-LM prints at start-up, and the whole footprint of TorchTitan's
// Llama 3.1 8B runs against the peak memory its benchmark table reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/unit/test_util.hpp"
#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace pw = paratwin::workloads;
using nlohmann::json;
using paratwin::test::example;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Layout {
  int64_t tensor, pipeline, data, expert;
};

// Megatron-LM's compute_weight_and_optimizer_memory (megatron/training/theoretical_memory_usage.py,
// NVIDIA/Megatron-LM main at 1bcb3b9e, 2026-06), written out from the source for the models below:
// bf16 weights, fp32 main gradients, the distributed optimizer's fp32 master weights and Adam moments
// sharded over the data-parallel group (6 + 12/d bytes per parameter; the routed experts' d is the
// expert data-parallel size), on the most loaded shard: 1/PP of the transformer block plus one
// embedding, split by tensor parallelism (norms and routers replicated, experts split by EP), and
// the untied output layer too when there is one stage.
double megatron_weight_and_optimizer_bytes(const pw::ModelConfig& m, const Layout& l) {
  const double h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads);
  const double norm = m.norm == pw::Norm::rmsnorm ? 1 : 2;
  double attention = 0;
  if (m.mla.enabled()) {
    const double q = static_cast<double>(m.mla.q_lora_rank), kv = static_cast<double>(m.mla.kv_lora_rank);
    const double qk = static_cast<double>(m.mla.qk_head_dim), rope = static_cast<double>(m.mla.rope_head_dim);
    const double v = static_cast<double>(m.mla.v_head_dim);
    attention = q * (h + a * (qk + rope) + norm) + kv * (h + a * (qk + v) + norm) + h * rope + a * v * h;
  } else {
    const double g = static_cast<double>(m.kv_head_count());
    attention = 2 * h * h * (1 + g / a);
  }
  const double gated = m.mlp == pw::Mlp::gelu ? 1.0 : 1.5;
  const bool moe = m.moe.experts > 1;
  const double experts = moe ? static_cast<double>(m.moe.experts) : 1;
  const double moe_ffn = moe ? static_cast<double>(m.moe.ffn_hidden > 0 ? m.moe.ffn_hidden : m.ffn_hidden) : 0;
  const double dense_mlp = 2 * h * static_cast<double>(m.ffn_hidden) * gated;
  const double shared = 2 * h * static_cast<double>(m.moe.shared_ffn) * gated;
  const double routed = 2 * h * moe_ffn * experts * gated;
  const double layernorm = 2 * h * norm, router = moe ? h * experts : 0;
  const double moe_layers = moe ? static_cast<double>(m.layers - m.moe.first_dense) : 0;
  const double dense_layers = static_cast<double>(m.layers) - moe_layers;
  const double embedding = h * static_cast<double>(m.vocab), final_norm = norm * h;

  const double pp = static_cast<double>(l.pipeline), tp = static_cast<double>(l.tensor);
  const double ep = static_cast<double>(l.expert);
  const double world = static_cast<double>(l.tensor * l.pipeline * l.data);
  const double tp_sharded_block = (attention + dense_mlp) * dense_layers + (attention + shared) * moe_layers;
  const double replicated_block = layernorm * dense_layers + (layernorm + router) * moe_layers + final_norm;
  double tp_sharded = (tp_sharded_block / pp + embedding) / tp;
  if (!m.tied_embeddings && l.pipeline == 1) tp_sharded += embedding / tp;
  const double replicated = replicated_block / pp;
  const double expert_sharded = routed * moe_layers / pp / ep;
  const double expert_data = world / (ep * pp);  // expert tensor parallelism 1
  auto bytes_per_param = [](double d) { return 6.0 + 12.0 / d; };
  return (tp_sharded + replicated) * bytes_per_param(static_cast<double>(l.data)) +
         expert_sharded * bytes_per_param(expert_data);
}

// The workload of `file` on `l` (l.data: Megatron's data-parallel size, experts included): Megatron-Core with the
// distributed optimizer, bf16 with fp32 gradient reduction (Megatron-LM's --bf16), one micro-batch, no fp8 or context
// parallelism (the estimator counts neither).
pw::Workload on_layout(const std::string& file, const Layout& l) {
  json j = pw::to_json(example(file));
  // paratwin's expert axis is carved out of the data-parallel ranks (data × expert replicas).
  j["parallelism"] = {
      {"data", {{"size", l.data / l.expert}, {"zero", 1}}},
      {"tensor", l.tensor > 1 ? json{{"mode", "megatron"}, {"size", l.tensor}} : json{{"mode", "none"}}},
      {"pipeline", {{"stages", l.pipeline}, {"schedule", "1f1b"}}}};
  if (l.expert > 1) j["parallelism"]["expert"] = {{"size", l.expert}};
  if (l.tensor > 1) j["parallelism"]["sequence_parallel"] = true;
  j["training"]["fp8"] = "none";
  j["training"]["fp8_param_gather"] = false;
  j["training"]["gradient_reduce_dtype"] = "fp32";
  j["training"]["micro_batch"] = 1;
  j["training"]["global_batch"] = l.data * 8;
  j.erase("optimizations");
  j.erase("placement");
  return paratwin::test::workload(j);
}

double most_loaded_model_state(const pw::Program& p) {
  double most = 0;
  for (const auto& r : p.roles) most = std::max(most, r.memory.weights + r.memory.gradients + r.memory.optimizer);
  return most;
}

}  // namespace

// Megatron-LM prints "Theoretical memory footprints: weight and optimizer=… MB" for the run it starts
// (theoretical_memory_usage.py); its model-state figure must be ours, rank for rank.
TEST(PublishedMemory, ModelStateEqualsMegatronsEstimateForTodaysModels) {
  struct Case {
    const char* name;
    const char* file;
    Layout layout;
  };
  const Case cases[] = {
      {"Llama 3 8B, DP8", "llama3-8b-dgx-h100-8-fp8.json", {1, 1, 8, 1}},
      {"Llama 3 70B, TP8 PP8 DP16", "llama3-70b-dgx-h100-1024-fp8.json", {8, 8, 16, 1}},
      {"Llama 3.1 405B, TP8 PP9 DP8", "llama31-405b-dgx-h100-1024-fp8cs.json", {8, 9, 8, 1}},
      {"Mixtral 8x7B, PP4 DP16 EP8", "mixtral-8x7b-dgx-h100-64.json", {1, 4, 16, 8}},
      {"DeepSeek-V3, DP64 EP64", "deepseek-v3-dgx-h100-1024.json", {1, 1, 64, 64}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const pw::Workload w = on_layout(c.file, c.layout);
    const double ours = most_loaded_model_state(pw::lower(w));
    EXPECT_NEAR(ours / megatron_weight_and_optimizer_bytes(w.model, c.layout), 1.0, 2e-4);
  }
}

// Megatron's main gradients are fp32 under --bf16: two bytes per parameter more than the bf16
// gradients a stack that reduces in bf16 keeps (--grad-reduce-in-bf16).
TEST(PublishedMemory, GradientsLiveInTheReductionDtypeBelowZero3) {
  const Layout l{8, 8, 16, 1};
  pw::Workload w = on_layout("llama3-70b-dgx-h100-1024-fp8.json", l);
  const auto fp32 = pw::lower(w).roles[1];
  w.training.gradient_reduce_dtype = pw::Dtype::bf16;
  const auto bf16 = pw::lower(w).roles[1];
  EXPECT_DOUBLE_EQ(fp32.memory.gradients, 2 * bf16.memory.gradients);
  EXPECT_DOUBLE_EQ(fp32.memory.gradients, 4 * fp32.params);
}

// TorchTitan's Llama 3.1 8B on 8 and 128 H100s, FSDP2, local batch 2 of 8,192 tokens, per-op selective
// checkpointing (pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, Tables 1 and 3,
// column 'Memory(GiB)': the largest peak over the GPUs of torch.cuda's reserved memory). Reserved
// memory also holds the caching allocator's freed blocks, which no model of live bytes sees: the
// estimate must lie below the published peak and within 20 % of it. The loss's fp32 copies of the
// 16,384 x 128,256 logits (fsdp2's loss_logit_bytes: 12 bytes per logit at its peak, 15.7 GiB beyond
// the 4 the stash keeps) are what brings it there.
TEST(PublishedMemory, TorchTitanLlama31EightBFitsItsPublishedPeak) {
  struct Row {
    const char* file;
    double published_gib;
  };
  const Row rows[] = {
      {"llama31-8b-torchtitan-h100-8.json", 82.4},            // Table 1, FSDP
      {"llama31-8b-torchtitan-h100-8-compile.json", 77.0},    // Table 1, FSDP + torch.compile
      {"llama31-8b-torchtitan-h100-128.json", 67.0},          // Table 3, FSDP
      {"llama31-8b-torchtitan-h100-128-compile.json", 62.0},  // Table 3, FSDP + torch.compile
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.file);
    pw::Workload w = example(row.file);
    const double ratio = pw::lower(w).roles[0].memory.total() / kGiB / row.published_gib;
    EXPECT_LE(ratio, 1.0);
    EXPECT_GE(ratio, 0.8);
    // Without the loss's copies (only the stashed fp32 logits) the estimate falls out of the band.
    w.framework.loss_logit_bytes = 4;
    EXPECT_LT(pw::lower(w).roles[0].memory.total() / kGiB / row.published_gib, 0.8);
  }
}
