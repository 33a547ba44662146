// Model arithmetic against the seeds' equations: seed 003 eq. (2) and (3), seed 002 §7.1.1 (ZeRO-1
// bound, eq. 7.2-7.5), and the activation model.
#include "workloads/arithmetic.hpp"

#include <gtest/gtest.h>

#include "tests/unit/test_util.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
using paratwin::test::workload;

namespace {

struct Table1Row {
  double params_billion;  // as printed in seed 003 Table 1
  int64_t heads, hidden, layers;
};

// Seed 003 Table 1 (V = 51,200, S = 2,048).
const Table1Row kTable1[] = {{1.7, 24, 2304, 24},      {3.6, 32, 3072, 30},     {7.5, 32, 4096, 36},
                             {18.4, 48, 6144, 40},     {39.1, 64, 8192, 48},    {76.1, 80, 10240, 60},
                             {145.6, 96, 12288, 80},   {310.1, 128, 16384, 96}, {529.6, 128, 20480, 105},
                             {1008.0, 160, 25600, 128}};

pw::ModelConfig gpt(int64_t layers, int64_t hidden, int64_t heads) {
  pw::ModelConfig m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.seq_len = 2048;
  m.vocab = 51200;
  return m;
}

}  // namespace

TEST(Arithmetic, ParametersEqualEq2ForGpt3_175B) {
  const auto m = gpt(96, 12288, 96);
  EXPECT_DOUBLE_EQ(pw::count_parameters(m).total(), pw::parameters_eq2(96, 12288, 51200, 2048));
  EXPECT_NEAR(pw::parameters_eq2(96, 12288, 51200, 2048) / 1e9, 174.6, 0.1);
}

TEST(Arithmetic, ParametersEqualEq2AndTable1) {
  for (const auto& row : kTable1) {
    const auto m = gpt(row.layers, row.hidden, row.heads);
    const double p = pw::count_parameters(m).total();
    EXPECT_DOUBLE_EQ(p, pw::parameters_eq2(row.layers, row.hidden, 51200, 2048)) << row.params_billion;
    // The table prints one decimal (three significant digits for the smallest models).
    EXPECT_NEAR(p / 1e9, row.params_billion, row.params_billion < 10 ? 0.05 : 0.051 * row.params_billion / 10)
        << row.params_billion;
  }
}

TEST(Arithmetic, ModelFlopsEqualEq3WithFullRecomputation) {
  for (const auto& row : kTable1) {
    pw::Workload w;
    w.model = gpt(row.layers, row.hidden, row.heads);
    w.training.global_batch = 1536;
    w.training.checkpointing = pw::Checkpointing::full;
    EXPECT_DOUBLE_EQ(pw::model_flops(w), pw::flops_eq3(1536, 2048, row.layers, row.hidden, 51200));
  }
}

TEST(Arithmetic, ExecutedGemmFlopsOfMegatronProgramsEqualEq3) {
  // Table 1 configurations lowered for real: every GEMM of every rank, summed, is eq. (3).
  for (const char* file : {"gpt-1.7b-selene-32.json", "gpt-18b-selene-256.json", "gpt-39b-selene-512.json",
                           "gpt3-175b-selene-1024.json"}) {
    const auto w = paratwin::test::example(file);
    const auto p = pw::lower(w);
    const double eq3 = pw::flops_eq3(static_cast<double>(w.training.global_batch), static_cast<double>(w.model.seq_len),
                                     static_cast<double>(w.model.layers), static_cast<double>(w.model.hidden),
                                     static_cast<double>(w.model.vocab));
    EXPECT_NEAR(paratwin::test::gemm_flops_all_ranks(p) / eq3, 1.0, 1e-12) << file;
    EXPECT_DOUBLE_EQ(p.model_flops, eq3) << file;
  }
}

TEST(Arithmetic, MixedPrecisionStateBytes) {
  pw::TrainingConfig t;
  EXPECT_EQ(pw::model_state_bytes_per_param(t), 16.0);  // ZeRO's 2 + 2 + 12
  t.fp32_gradient_copy = true;
  EXPECT_EQ(pw::model_state_bytes_per_param(t), 20.0);  // seed 002 §3.3.2: 20φ
}

TEST(Arithmetic, Zero1MemoryOfAProgramEqualsTheBound) {
  // Seed 002 §7.1.1: ZeRO-1 needs (4 + 12/G_data)·NP bytes per GPU for model state.
  auto j = paratwin::test::base_gpt();
  j["training"]["checkpointing"] = "full";
  j["parallelism"] = {{"data", {{"size", 8}, {"zero", 1}}}, {"tensor", {{"mode", "megatron"}, {"size", 2}}}};
  const auto p = pw::lower(workload(j));
  const auto& r = p.roles[0];
  const double state = r.memory.weights + r.memory.gradients + r.memory.optimizer;
  EXPECT_DOUBLE_EQ(state, pw::zero1_bound(r.params, 8));
}

TEST(Arithmetic, TedBoundEq74EqualsEq75) {
  // With G_expert = E, NP_exp = E/3·NP_base (7.2) and NP_nonexp = 2/3·NP_base (7.3), eq. 7.4
  // simplifies to eq. 7.5.
  const double np_base = 6.7e9, E = 32, Gt = 4, G = 128;
  const double nonexp = 2.0 / 3.0 * np_base, exp = E / 3.0 * np_base;
  const double eq74 = pw::ted_memory_bound_eq74(nonexp / Gt, G / Gt, exp / (Gt * E), G / (Gt * E));
  EXPECT_NEAR(eq74 / pw::ted_memory_bound_eq75(np_base, Gt, E, G), 1.0, 1e-12);
}

TEST(Arithmetic, TedProgramMemoryMatchesEq74) {
  auto j = paratwin::test::base_gpt();
  j["model"]["moe"] = {{"experts", 4}};
  j["training"]["global_batch"] = 16;
  j["parallelism"] = {
      {"data", {{"size", 2}, {"zero", 1}}}, {"tensor", {{"mode", "megatron"}, {"size", 2}}}, {"expert", {{"size", 4}}}};
  const auto w = workload(j);
  const auto p = pw::lower(w);
  const auto& r = p.roles[0];
  const double nonexp = r.params - r.expert_params;
  const double state = r.memory.weights + r.memory.gradients + r.memory.optimizer;
  // Non-expert data parallelism spans expert × data = 8 ranks, expert data parallelism 2.
  EXPECT_DOUBLE_EQ(state, pw::ted_memory_bound_eq74(nonexp, 8, r.expert_params, 2));
  // Expert parameters: each rank holds E / G_expert = 1 expert, split over G_tensor = 2.
  const auto counts = pw::count_parameters(w.model);
  EXPECT_NEAR(r.expert_params, counts.expert_total / (4.0 * 2.0), counts.expert_total * 1e-3);
}

TEST(Arithmetic, OffloadKeepsOnlyHalfPrecisionStateOnTheDevice) {
  auto j = paratwin::test::base_gpt();
  j["training"]["offload_optimizer"] = true;
  j["training"]["fp32_gradient_copy"] = true;
  j["training"]["offload_bucket"] = 1000;
  const auto p = pw::lower(workload(j));
  const auto& m = p.roles[0].memory;
  EXPECT_DOUBLE_EQ(m.weights + m.gradients, 4.0 * p.roles[0].params);  // θ16 and ∇θ16
  EXPECT_DOUBLE_EQ(m.host_optimizer, 16.0 * p.roles[0].params);        // θ, ∇θ, Adam state
  EXPECT_DOUBLE_EQ(m.optimizer, 16.0 * 1000);                          // 16·bsize buffers
}

TEST(Arithmetic, ActivationsFollowTheMegatronModel) {
  auto j = paratwin::test::base_gpt();
  j["training"]["checkpointing"] = "none";
  const double s = 64, b = 1, h = 256, a = 8;
  EXPECT_DOUBLE_EQ(pw::layer_activations(workload(j), false).stash, s * b * h * (34 + 5 * a * s / h));
  j["parallelism"] = {{"tensor", {{"mode", "megatron"}, {"size", 4}}}};
  EXPECT_DOUBLE_EQ(pw::layer_activations(workload(j), false).stash, s * b * h * (10 + 24.0 / 4 + 5 * a * s / (h * 4)));
  j["parallelism"]["sequence_parallel"] = true;
  EXPECT_DOUBLE_EQ(pw::layer_activations(workload(j), false).stash, s * b * h / 4 * (34 + 5 * a * s / h));
  j["training"]["checkpointing"] = "full";
  EXPECT_DOUBLE_EQ(pw::layer_activations(workload(j), false).stash, 2 * s * b * h / 4);
}

TEST(Arithmetic, StashPeakFollowsTheSchedule) {
  // 1F1B keeps at most p micro-batches in flight on stage 0, GPipe all m.
  auto j = paratwin::test::base_gpt();
  j["training"]["global_batch"] = 16;
  j["parallelism"] = {{"pipeline", {{"stages", 4}, {"schedule", "1f1b"}}}};
  const auto one = pw::lower(workload(j));
  j["parallelism"]["pipeline"]["schedule"] = "gpipe";
  const auto gpipe = pw::lower(workload(j));
  const double per_mb = pw::layer_activations(workload(j), false).stash;  // one layer per stage
  const double working = pw::layer_activations(workload(j), false).working;
  EXPECT_DOUBLE_EQ(one.roles[0].memory.activations, 4 * per_mb + working);
  const double logits = 4.0 * 64 * 512;  // fp32 logits of one micro-batch on the last stage
  EXPECT_DOUBLE_EQ(one.roles[3].memory.activations, 1 * (per_mb + logits) + working);
  EXPECT_DOUBLE_EQ(gpipe.roles[0].memory.activations, 16 * per_mb + working);
}

// FlashAttention-2 keeps no scores (only their O(s) row statistics): the 5·a·s²·b term of the
// activation model ("Reducing Activation Recomputation", eq. 1) goes.
TEST(Arithmetic, FlashAttentionStoresNoScores) {
  auto j = paratwin::test::base_gpt();
  j["training"]["checkpointing"] = "none";
  j["model"]["attention"] = "flash";
  const double s = 64, b = 1, h = 256;
  EXPECT_DOUBLE_EQ(pw::layer_activations(workload(j), false).stash, 34 * s * b * h);
  j["training"]["checkpointing"] = "selective";  // nothing left to recompute
  EXPECT_DOUBLE_EQ(pw::layer_activations(workload(j), false).working, 0);
}
