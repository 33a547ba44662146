// Model arithmetic against the papers' equations: [narayanan2021megatron] eq. (2) and (3), model and hardware FLOPs
// (Korthikanti et al. 2022, PaLM App. B, [narayanan2021megatron] §5.1), [singh2025dissertation] §7.1.1 (ZeRO-1 bound,
// eq. 7.2-7.5), and the activation model.
#include "workloads/arithmetic.hpp"

#include <gtest/gtest.h>

#include "tests/unit/test_util.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
using paratwin::test::workload;

namespace {

struct Table1Row {
  double params_billion;  // as printed in [narayanan2021megatron] Table 1
  int64_t heads, hidden, layers;
};

// [narayanan2021megatron] Table 1 (V = 51,200, S = 2,048).
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

// GPT-3 175B in one iteration of 1,536 sequences, as Megatron SC21 trains it.
pw::Workload gpt3_175b(pw::Checkpointing checkpointing) {
  pw::Workload w;
  w.model = gpt(96, 12288, 96);
  w.training.global_batch = 1536;
  w.training.checkpointing = checkpointing;
  return w;
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

TEST(Arithmetic, HardwareFlopsEqualEq3WithFullRecomputationAndModelFlopsKorthikantis) {
  for (const auto& row : kTable1) {
    pw::Workload w;
    w.model = gpt(row.layers, row.hidden, row.heads);
    w.training.global_batch = 1536;
    w.training.checkpointing = pw::Checkpointing::full;
    const auto f = pw::iteration_flops(w);
    // [narayanan2021megatron] eq. (3) counts the recomputed forward: hardware FLOPs.
    EXPECT_NEAR(f.hardware / pw::flops_eq3(1536, 2048, row.layers, row.hidden, 51200), 1.0, 1e-12);
    // Korthikanti et al. 2022's model FLOPs: eq. (3) without it.
    EXPECT_NEAR(f.model / pw::model_flops_korthikanti(1536, 2048, row.layers, row.hidden, 51200), 1.0, 1e-12);
  }
}

TEST(Arithmetic, ModelFlopsDoNotDependOnRecomputation) {
  // The symptom: selective instead of full recomputation made the iteration 55.7 % faster but
  // model TFLOP/s only 17 % higher, because model FLOPs shrank with the recomputation they counted.
  pw::Workload w = gpt3_175b(pw::Checkpointing::full);
  const auto full = pw::iteration_flops(w);
  w.training.checkpointing = pw::Checkpointing::selective;
  const auto selective = pw::iteration_flops(w);
  w.training.checkpointing = pw::Checkpointing::none;
  const auto none = pw::iteration_flops(w);
  EXPECT_EQ(full.model, selective.model);
  EXPECT_EQ(full.model, none.model);
  EXPECT_EQ(none.hardware, none.model);
  // Selective recomputation repeats Q·Kᵀ and scores·V: 4·B·s²·h per layer (Korthikanti et al. §5).
  const double core = 4.0 * 1536 * 2048.0 * 2048 * 12288 * 96;
  EXPECT_NEAR(selective.hardware - selective.model, core, 1e-12 * core);
  EXPECT_GT(full.hardware, selective.hardware);
  // With a fixed model and batch, model FLOP/s per device follow the throughput: MFU of two iteration
  // times is in their inverse ratio, whatever each recomputes.
  const auto a = pw::flop_rates(full, 10.0, 1024, 312e12), b = pw::flop_rates(selective, 10.0 / 1.557, 1024, 312e12);
  EXPECT_NEAR(b.model_per_device / a.model_per_device, 1.557, 1e-12);
  EXPECT_NEAR(b.model_percent / a.model_percent, 1.557, 1e-12);
  EXPECT_LT(b.hardware_per_device / a.hardware_per_device, 1.557);
}

TEST(Arithmetic, Gpt3ModelFlopsPerTokenArePalms6NPlusAttention) {
  // PaLM (Chowdhery et al. 2022) App. B: 6N + 12·l·h·s model FLOPs per token, non-causal attention;
  // N counts the embeddings, whose tied output layer is the logits GEMM. GPT-3 175B: 6N is 1.05 TFLOP
  // per token, attention adds 2.8 %.
  const pw::Workload w = gpt3_175b(pw::Checkpointing::full);
  const double tokens = 1536.0 * 2048;
  const double N = pw::count_parameters(w.model).total();
  const double per_token = pw::iteration_flops(w).model / tokens;
  // Biases, layer norms and position embeddings are parameters without 6 FLOPs per token each.
  EXPECT_NEAR(per_token / pw::palm_flops_per_token(N, 96, 12288, 2048), 1.0, 1e-3);
  EXPECT_NEAR(per_token / (6 * N), 1.028, 0.002);
}

TEST(Arithmetic, Gpt3On1024GpusTakes34DaysAsSeed003Says) {
  // [narayanan2021megatron] §5.1: 300B tokens of GPT-3 175B on 1,024 A100s at X = 140 TFLOP/s per GPU take 34 days,
  // estimated as 8·T·P/(n·X): 8 FLOPs per parameter and token, full recomputation counted. That X is
  // a hardware FLOP rate: with eq. (3)'s hardware FLOPs per token the same X gives 34 days; with model
  // FLOPs the same days are 3/4 of the rate, 105 TFLOP/s per GPU.
  pw::Workload w = gpt3_175b(pw::Checkpointing::full);
  const auto f = pw::iteration_flops(w);
  const double tokens = 1536.0 * 2048;
  const double days = 300e9 * f.hardware / tokens / (1024 * 140e12) / 86400;
  EXPECT_NEAR(days, 34, 1.0);
  const double N = pw::count_parameters(w.model).total();
  EXPECT_NEAR(f.hardware / tokens / (8 * N), 1.0, 0.03);  // the paper's "8TP" approximation
  const auto r = pw::flop_rates(f, days * 86400 / (300e9 / tokens), 1024, 312e12);
  EXPECT_NEAR(r.hardware_per_device / 1e12, 140, 1e-9);
  EXPECT_NEAR(r.model_per_device / r.hardware_per_device, 0.75, 0.01);
  // [narayanan2021megatron] Table 1, 1.7B on 32 GPUs: 137 TFLOP/s per GPU is its 44 % of 312.
  EXPECT_NEAR(pw::flop_rates({137e12, 137e12}, 1, 1, 312e12).hardware_percent, 44, 0.5);
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
    EXPECT_NEAR(p.hardware_flops / eq3, 1.0, 1e-12) << file;
  }
}

TEST(Arithmetic, MixedPrecisionStateBytes) {
  pw::TrainingConfig t;
  EXPECT_EQ(pw::model_state_bytes_per_param(t), 16.0);  // ZeRO's 2 + 2 + 12
  t.fp32_gradient_copy = true;
  EXPECT_EQ(pw::model_state_bytes_per_param(t), 20.0);  // [singh2025dissertation] §3.3.2: 20φ
}

TEST(Arithmetic, Zero1MemoryOfAProgramEqualsTheBound) {
  // [singh2025dissertation] §7.1.1: ZeRO-1 needs (4 + 12/G_data)·NP bytes per GPU for model state.
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
