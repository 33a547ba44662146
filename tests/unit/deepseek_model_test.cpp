// DeepSeek-class layers: multi-latent attention, fine-grained routed experts, a shared expert and dense
// first layers. Parameter counts against the published DeepSeek-V3 figures, FLOPs against Megatron-LM's
// formula, and the lowered GEMMs against both.
#include <gtest/gtest.h>

#include "tests/unit/test_util.hpp"
#include "workloads/arithmetic.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;

namespace {

// The layer today's decoders share: SwiGLU, RMSNorm, rotary positions, no biases, an untied output layer,
// a final norm; flash attention.
void modern_layer(pw::ModelConfig& m) {
  m.attention = pw::Attention::flash;
  m.mlp = pw::Mlp::swiglu;
  m.norm = pw::Norm::rmsnorm;
  m.position = pw::Position::rope;
  m.bias = false;
  m.tied_embeddings = false;
  m.final_norm = true;
}

// DeepSeek-V3 (DeepSeek-AI, "DeepSeek-V3 Technical Report", 2024, §4.2 and the released config.json):
// 61 layers, hidden 7168, 128 heads; MLA with q_lora_rank 1536, kv_lora_rank 512, per-head 128 + 64
// rotary query/key dimensions and 128 value dimensions; the first 3 layers dense (FFN 18432), the
// others 1 shared and 256 routed experts of 2048, 8 routed per token; vocabulary 129,280, untied.
pw::ModelConfig deepseek_v3() {
  pw::ModelConfig m;
  m.layers = 61;
  m.hidden = 7168;
  m.heads = 128;
  m.ffn_hidden = 18432;
  m.seq_len = 4096;
  m.vocab = 129280;
  modern_layer(m);
  m.moe.experts = 256;
  m.moe.top_k = 8;
  m.moe.capacity_factor = 0;
  m.moe.every = 1;
  m.moe.ffn_hidden = 2048;
  m.moe.shared_ffn = 2048;
  m.moe.first_dense = 3;
  m.mla = {1536, 512, 128, 64, 128};
  return m;
}

}  // namespace

// "DeepSeek-V3, a strong Mixture-of-Experts (MoE) language model with 671B total parameters with 37B
// activated for each token" (the report's abstract). The main model's tensors of the released
// checkpoint, the multi-token-prediction module and the routers' bias terms left out, are
// 671,026,404,352 (the sum written out per tensor below).
TEST(DeepSeekModel, ParameterCountsEqualThePublishedOnes) {
  const auto m = deepseek_v3();
  const double h = 7168;
  const double attention = h * 1536 + 1536 + 1536 * 128 * 192 + h * 576 + 512 + 512 * 128 * 256 + 128 * 128 * h + h;
  EXPECT_DOUBLE_EQ(pw::count_parameters(m).attention, attention);
  const double dense_mlp = 3 * h * 18432 + h, expert = 3 * h * 2048;
  const double moe_layer = 256 * h + 256 * expert + expert + h;
  const double total = 61 * attention + 3 * dense_mlp + 58 * moe_layer + 2 * 129280 * h + h;
  EXPECT_DOUBLE_EQ(total, 671'026'404'352.0);
  EXPECT_DOUBLE_EQ(pw::count_parameters(m).total(), total);
  EXPECT_NEAR(pw::count_parameters(m).total() / 1e9, 671, 0.5);
  // Activated: everything but 248 of the 256 routed experts in each of the 58 MoE layers.
  EXPECT_DOUBLE_EQ(pw::active_parameters(m), total - 58 * 248 * expert);
  EXPECT_NEAR(pw::active_parameters(m) / 1e9, 37, 0.6);
  EXPECT_EQ(m.moe_layer_count(), 58);
  EXPECT_FALSE(m.is_moe_layer(2));
  EXPECT_TRUE(m.is_moe_layer(3));
}

// Megatron-LM's num_floating_point_operations for MLA and MoE (megatron/training/training.py, main
// 2026-11), written out from the source with its core-attention term doubled: it halves Q·Kᵀ and
// scores·V for the causal mask, paratwin counts the full S×S as its other FLOPs do (and the norms'
// +1 terms, elementwise work, are not GEMMs).
TEST(DeepSeekModel, ModelFlopsFollowMegatronsFormula) {
  const auto m = deepseek_v3();
  auto j = paratwin::test::base_gpt();
  pw::Workload w = paratwin::test::workload(j);
  w.model = m;
  w.training.global_batch = 16;
  w.training.checkpointing = pw::Checkpointing::none;
  const double tokens = 16.0 * 4096, s = 4096, h = 7168, a = 128;
  const double q_term = 1536 * (h + a * 192 + 1);
  const double kv_term = 512 * (h + a * (128 + 128) + 1) + h * 64;
  const double attn = 3 * 2 * (q_term + kv_term + a * 128 * h) * tokens + 3 * 2 * (a * 192 + a * 128) * tokens * s;
  const double dense = 3 * 4 * (18432 / h) * 1.5 * tokens * h * h;
  const double moe = 3 * (4 * tokens * h * 2048 * 8 * 1.5 + 4 * tokens * h * 2048 * 1.5);
  const double logits = 3 * 2 * tokens * h * 129280;
  const double megatron = 61 * attn + 3 * dense + 58 * moe + logits;
  EXPECT_NEAR(pw::iteration_flops(w).model / megatron, 1.0, 1e-5);
  // About 6 × the activated parameters per token, plus attention: the report's 37B-activated model.
  const double per_token = pw::iteration_flops(w).model / tokens;
  EXPECT_NEAR(per_token / (6 * pw::active_parameters(m)), 1.0, 0.35);
}

// A small DeepSeek-shaped model on 2 tensor x 2 pipeline x 2 expert ranks: the GEMMs of every rank
// outside the attention kernel are the iteration's FLOPs outside the attention core.
TEST(DeepSeekModel, LoweredGemmsCarryTheModelsFlops) {
  auto j = paratwin::test::base_gpt();
  j["model"] = paratwin::test::small_deepseek_model();
  j["training"]["global_batch"] = 8;
  j["training"]["checkpointing"] = "none";
  j["parallelism"] = {{"data", {{"size", 1}}},
                      {"tensor", {{"mode", "megatron"}, {"size", 2}}},
                      {"pipeline", {{"stages", 2}}},
                      {"expert", {{"size", 2}}}};
  const auto w = paratwin::test::workload(j);
  const auto p = pw::lower(w);
  double gemms = 0;
  for (const auto& r : p.roles)
    for (const auto& op : r.ops)
      if (op.kind == pw::OpKind::gemm && std::string(op.name).rfind("attn.flash", 0) != 0)
        gemms += op.flops * static_cast<double>(r.ranks);
  // The attention core: Q·Kᵀ over 8 heads of 32 + 16 and scores·V over 8 heads of 32, forward and
  // twice for backward, in each of the 4 layers, over 8 sequences of 64 tokens.
  const double core = 3 * 4 * 2.0 * (8 * 64) * 64 * 8 * (32 + 16 + 32);
  // The down projections are whole on both tensor ranks: their GEMMs run twice.
  const double down = 3 * 4 * 2.0 * (8 * 64) * 256 * (96 + 64 + 16);
  // The router's GEMM (not in the model's FLOPs, as in Megatron-LM's) runs whole on both tensor ranks
  // of the 3 MoE layers.
  const double router = 2 * 3 * 3 * 2.0 * (8 * 64) * 256 * 4;
  EXPECT_NEAR((gemms - down - router) / (pw::iteration_flops(w).hardware - core), 1.0, 1e-12);
  const auto& r = p.roles[0];
  const auto shape = [&](const char* name) {
    return paratwin::test::ops_where(r, [&](const pw::Op& op) { return std::string(op.name) == name; }).front().gemm;
  };
  EXPECT_EQ(shape("mla.q_up").n, 8 / 2 * (32 + 16));
  EXPECT_EQ(shape("mla.kv_up").n, 8 / 2 * (32 + 32));
  EXPECT_EQ(shape("mla.kv_down").n, 64 + 16);
  EXPECT_EQ(shape("shared.fc1").n, 2 * 128 / 2);
  EXPECT_EQ(shape("fc1").n, 2 * 512 / 2);  // the dense first layer
}

// Mixtral 8x7B (Jiang et al., "Mixtral of Experts", 2024: 32 layers, hidden 4096, 32 heads with 8 key/value
// heads, 8 SwiGLU experts of 14336, 2 per token, vocabulary 32,000): 46.7 B parameters, 12.9 B active;
// FLOPs as Megatron-LM's num_floating_point_operations counts an MoE layer (4·tokens·h·ffn·k·3/2), with
// its attention terms (1 + g/a + s/h) as for Llama.
TEST(MixtralModel, ParametersAndFlopsFollowThePublishedCounts) {
  auto j = paratwin::test::base_gpt();
  pw::Workload w = paratwin::test::workload(j);
  pw::ModelConfig& m = w.model;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.ffn_hidden = 14336;
  m.seq_len = 4096;
  m.vocab = 32000;
  modern_layer(m);
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.capacity_factor = 0;
  m.moe.every = 1;
  EXPECT_DOUBLE_EQ(pw::count_parameters(m).total(), 46'702'792'704.0);
  EXPECT_NEAR(pw::active_parameters(m) / 1e9, 12.9, 0.05);
  w.training.global_batch = 8;
  w.training.checkpointing = pw::Checkpointing::none;
  const double tokens = 8.0 * 4096, s = 4096, h = 4096, l = 32, V = 32000;
  const double attention = 12 * tokens * l * h * h * (1 + 8.0 / 32 + s / h);
  const double moe = 3 * l * 4 * tokens * h * 14336 * 2 * 1.5;
  const double logits = 6 * tokens * h * V;
  EXPECT_NEAR(pw::iteration_flops(w).model / (attention + moe + logits), 1.0, 1e-12);
}
