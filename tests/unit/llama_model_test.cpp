// Llama-class layers: grouped-query attention, SwiGLU, RMSNorm, rotary positions, no biases, an untied
// output layer and a final norm. Parameter counts against the published checkpoints, FLOPs per token
// against Megatron-LM's formula and PaLM's 6N convention, and the lowered GEMMs against both.
#include <gtest/gtest.h>

#include "tests/unit/test_util.hpp"
#include "workloads/arithmetic.hpp"
#include "workloads/error.hpp"
#include "workloads/lower.hpp"

namespace pw = paratwin::workloads;
using paratwin::test::ops_where;

namespace {

// Llama 3 (Grattafiori et al., "The Llama 3 Herd of Models", 2024, Table 3: layers, model dimension,
// FFN dimension, attention and key/value heads; vocabulary 128K, the 128,256 entries of the released
// tokenizer; RMSNorm, SwiGLU, RoPE, no biases, untied output layer).
pw::ModelConfig llama3(int64_t layers, int64_t hidden, int64_t ffn, int64_t heads) {
  pw::ModelConfig m;
  m.layers = layers;
  m.hidden = hidden;
  m.ffn_hidden = ffn;
  m.heads = heads;
  m.kv_heads = 8;
  m.seq_len = 8192;
  m.vocab = 128256;
  m.mlp = pw::Mlp::swiglu;
  m.norm = pw::Norm::rmsnorm;
  m.position = pw::Position::rope;
  m.bias = false;
  m.tied_embeddings = false;
  m.final_norm = true;
  return m;
}

struct Published {
  const char* name;
  pw::ModelConfig model;
  double parameters;
};

// The released checkpoints' parameter counts: the bf16 byte totals of Meta-Llama-3-8B,
// Meta-Llama-3-70B and Llama-3.1-405B (model.safetensors.index.json metadata.total_size:
// 16,060,522,496, 141,107,412,992 and 811,706,777,600 bytes), halved.
const Published kLlama3[] = {
    {"Llama 3 8B", llama3(32, 4096, 14336, 32), 8'030'261'248.0},
    {"Llama 3 70B", llama3(80, 8192, 28672, 64), 70'553'706'496.0},
    {"Llama 3 405B", llama3(126, 16384, 53248, 128), 405'853'388'800.0},
};

// Megatron-LM's num_floating_point_operations (megatron/training/training.py, core_r0.8.0), written
// out from the source: 12·B·s·l·h²·((1 + g/a + s/h)·1 + (f/h)·3/2 + V/(2·l·h)) for a SwiGLU model with
// g query groups (kv heads) and query projection = hidden.
double megatron_flops(const pw::ModelConfig& m, double batch) {
  const double s = static_cast<double>(m.seq_len), l = static_cast<double>(m.layers);
  const double h = static_cast<double>(m.hidden), a = static_cast<double>(m.heads);
  const double g = static_cast<double>(m.kv_head_count()), f = static_cast<double>(m.ffn_hidden);
  const double V = static_cast<double>(m.vocab);
  return 12 * batch * s * l * h * h * ((1 + g / a + s / h) + (f / h) * 1.5 + V / (2 * l * h));
}

}  // namespace

TEST(LlamaModel, ParameterCountsEqualThePublishedCheckpoints) {
  for (const auto& p : kLlama3) EXPECT_DOUBLE_EQ(pw::count_parameters(p.model).total(), p.parameters) << p.name;
  // Each feature counted as the checkpoints hold it: 8B's layer is 218,112,000 parameters (Q and O
  // 4096², K and V 4096·1024 each, three 4096·14336 MLP matrices, two 4096 RMSNorm weights).
  const auto c = pw::count_parameters(kLlama3[0].model);
  EXPECT_DOUBLE_EQ(c.attention + c.mlp, 218'112'000.0);
  EXPECT_DOUBLE_EQ(c.embeddings, 2 * 128256.0 * 4096 + 4096);  // input, output, final norm
}

TEST(LlamaModel, ModelFlopsFollowMegatronAndSixNPlusAttention) {
  for (const auto& p : kLlama3) {
    pw::Workload w;
    w.model = p.model;
    w.training.global_batch = 16;
    const double flops = pw::iteration_flops(w).model;
    EXPECT_NEAR(flops / megatron_flops(p.model, 16), 1.0, 1e-12) << p.name;
    // PaLM App. B's 6N + 12·l·h·s per token, N without the input embedding and the norms (a lookup
    // and element-wise scaling, no multiply-adds of a GEMM): the convention of Llama 3's 6ND budget.
    const auto& m = p.model;
    const double h = static_cast<double>(m.hidden), l = static_cast<double>(m.layers);
    const double norms = (2 * l + 1) * h;
    const double gemm_params = p.parameters - static_cast<double>(m.vocab) * h - norms;
    const double per_token = flops / (16.0 * 8192);
    EXPECT_NEAR(per_token / (6 * gemm_params + 12 * l * h * 8192), 1.0, 1e-12) << p.name;
  }
  // Llama 3 405B: 3.8e25 FLOPs for 15.6T tokens (the paper's §3.2.1 and §1): 6·N·D's 3.80e25 within
  // a percent; at 8K context attention's 12·l·h·s adds 8 % to 6N (the input embedding takes 0.5 %).
  pw::Workload w;
  w.model = kLlama3[2].model;
  w.training.global_batch = 1;
  const double per_token = pw::iteration_flops(w).model / 8192;
  EXPECT_NEAR(6 * 405.85e9 * 15.6e12 / 3.8e25, 1.0, 0.01);
  EXPECT_NEAR(per_token / (6 * 405.85e9), 1.078, 0.001);
}

TEST(LlamaModel, LoweredGemmsCarryTheModelsFlops) {
  // A small Llama-shaped model on 2 tensor x 2 pipeline ranks: every GEMM of every rank, summed, is
  // the iteration's hardware FLOPs (full recomputation, unfused attention: the scores are GEMMs).
  auto j = paratwin::test::base_gpt();
  j["model"] = {{"layers", 4},       {"hidden", 256},      {"heads", 8},    {"kv_heads", 2},
                {"ffn_hidden", 704}, {"seq_len", 64},      {"vocab", 512},  {"mlp", "swiglu"},
                {"norm", "rmsnorm"}, {"position", "rope"}, {"bias", false}, {"tied_embeddings", false},
                {"final_norm", true}};
  j["training"]["global_batch"] = 8;
  j["parallelism"] = {{"tensor", {{"mode", "megatron"}, {"size", 2}}}, {"pipeline", {{"stages", 2}}}};
  const auto w = paratwin::test::workload(j);
  const auto p = pw::lower(w);
  EXPECT_NEAR(paratwin::test::gemm_flops_all_ranks(p) / pw::iteration_flops(w).hardware, 1.0, 1e-12);
  // The shapes: QKV has h + 2·kv·d = 256 + 2·2·32 outputs, fc1 2·704 (gate and value), both split
  // over the 2 tensor ranks; fc2 reads 704/2.
  const auto& r = p.roles[0];
  const auto named = [&](const char* name) {
    return ops_where(r, [&](const pw::Op& op) { return std::string(op.name) == name; }).front();
  };
  EXPECT_EQ(named("qkv").gemm.n, (256 + 2 * 2 * 32) / 2);
  EXPECT_EQ(named("fc1").gemm.n, 2 * 704 / 2);
  EXPECT_EQ(named("fc2").gemm.k, 704 / 2);
  EXPECT_FALSE(ops_where(r, [](const pw::Op& op) { return std::string(op.name) == "rope"; }).empty());
  EXPECT_FALSE(ops_where(r, [](const pw::Op& op) { return std::string(op.name) == "swiglu"; }).empty());
  EXPECT_TRUE(ops_where(r, [](const pw::Op& op) { return std::string(op.name) == "gelu"; }).empty());
  // Every rank's parameters add up to the model's: no bias, no norm bias, no position embedding.
  double params = 0;
  for (const auto& role : p.roles) params += role.params * static_cast<double>(role.ranks);
  // The tensor ranks hold the norms whole (2 per layer, 4 layers, 2 ranks each); the final norm is
  // counted by the model, not lowered as a parameter of the last stage.
  const double replicated_norms = 4 * 2 * 256.0;
  EXPECT_DOUBLE_EQ(params - replicated_norms, pw::count_parameters(w.model).total() - 256);
}

TEST(LlamaModel, GroupedQueryAttentionKeepsFewerKeysAndValues) {
  // Korthikanti et al.'s 11·sbh of attention activations hold K and V as 4·sbh; with kv/a = 1/4 of
  // the heads they are 1·sbh: 3·sbh less per layer. A gated MLP keeps its 2f activation input: 8·sbh
  // more at f = 4h.
  pw::Workload w;
  w.model = kLlama3[0].model;
  w.model.ffn_hidden = 4 * w.model.hidden;
  w.training.micro_batch = 1;
  w.training.checkpointing = pw::Checkpointing::none;
  w.model.attention = pw::Attention::flash;
  const double sbh = 8192.0 * 4096;
  const double gqa_swiglu = pw::layer_activations(w, false).stash;
  w.model.kv_heads = 0;
  w.model.mlp = pw::Mlp::gelu;
  const double mha_gelu = pw::layer_activations(w, false).stash;
  EXPECT_DOUBLE_EQ(mha_gelu, 34 * sbh);
  EXPECT_DOUBLE_EQ(gqa_swiglu, (34 - 3 + 8) * sbh);
  // With fp8 GEMMs Transformer Engine keeps the QKV, projection, fc1 and fc2 inputs as its one-byte
  // casts: 1 + 1 + 1 + 4 sbh less.
  w.training.fp8 = pw::Fp8::delayed;
  EXPECT_DOUBLE_EQ(pw::layer_activations(w, false).stash, (34 - 7) * sbh);
}

namespace {

// A small Llama-shaped model with fp8 GEMMs on 2 tensor ranks, ZeRO-1 over 2 data ranks, 2 micro-batches.
nlohmann::json fp8_llama(const char* recipe, bool param_gather) {
  auto j = paratwin::test::base_gpt();
  j["model"] = {{"layers", 2},       {"hidden", 256},      {"heads", 8},    {"kv_heads", 2},
                {"ffn_hidden", 704}, {"seq_len", 64},      {"vocab", 512},  {"mlp", "swiglu"},
                {"norm", "rmsnorm"}, {"position", "rope"}, {"bias", false}, {"tied_embeddings", false}};
  j["training"] = {{"global_batch", 4},       {"micro_batch", 1}, {"dtype", "bf16"},
                   {"checkpointing", "none"}, {"fp8", recipe},    {"fp8_param_gather", param_gather}};
  j["parallelism"] = {{"data", {{"size", 2}, {"zero", 1}}}, {"tensor", {{"mode", "megatron"}, {"size", 2}}}};
  return j;
}

int named(const pw::Role& r, const std::string& name) {
  return paratwin::test::count_where(r, [&](const pw::Op& op) { return name == op.name; });
}

}  // namespace

TEST(Fp8Training, LinearGemmsRunInFp8WithTheirCasts) {
  const auto p = pw::lower(paratwin::test::workload(fp8_llama("delayed", false)));
  const auto& r = p.roles[0];
  // The four linear GEMMs of a layer, forward and backward, are fp8; attention and logits stay bf16.
  for (const auto& op : r.ops) {
    if (op.kind != pw::OpKind::gemm) continue;
    const std::string name = op.name;
    const bool linear = name.rfind("qkv", 0) == 0 || name.rfind("proj", 0) == 0 || name.rfind("fc", 0) == 0;
    EXPECT_EQ(op.dtype, linear ? pw::Dtype::fp8 : pw::Dtype::bf16) << name;
    if (linear && name.find("grad") == std::string::npos) {  // operands of one byte, a bf16 output
      EXPECT_DOUBLE_EQ(op.bytes, static_cast<double>(op.gemm.m * op.gemm.k + op.gemm.k * op.gemm.n) +
                                     2.0 * static_cast<double>(op.gemm.m * op.gemm.n))
          << name;
    }
  }
  // Per layer and micro-batch: each GEMM's input cast in forward, each output gradient in backward
  // (2 layers x 2 micro-batches); the weights once per iteration, in the first micro-batch.
  for (const char* cast : {"ln1.fp8_cast", "proj.fp8_cast", "ln2.fp8_cast", "fc2.fp8_cast", "proj.grad.fp8_cast",
                           "qkv.grad.fp8_cast", "fc2.grad.fp8_cast", "fc1.grad.fp8_cast"})
    EXPECT_EQ(named(r, cast), 2 * 2) << cast;
  for (const char* cast : {"qkv.weight.fp8_cast", "proj.weight.fp8_cast", "fc1.weight.fp8_cast", "fc2.weight.fp8_cast"})
    EXPECT_EQ(named(r, cast), 2) << cast;
  // Current scaling reads each cast tensor once more for its amax.
  const auto current = pw::lower(paratwin::test::workload(fp8_llama("current", false)));
  const auto bytes_of = [](const pw::Role& role, const char* name) {
    double sum = 0;
    for (const auto& op : role.ops)
      if (std::string(op.name) == name) sum += op.bytes;
    return sum;
  };
  EXPECT_DOUBLE_EQ(bytes_of(current.roles[0], "ln1.fp8_cast") / bytes_of(r, "ln1.fp8_cast"), 6.0 / 4.0);
}

TEST(Fp8Training, Fp8ParameterGatherMovesAndKeepsOneBytePerWeight) {
  const auto bf16 = pw::lower(paratwin::test::workload(fp8_llama("delayed", false)));
  const auto fp8 = pw::lower(paratwin::test::workload(fp8_llama("delayed", true)));
  const auto gathered = [](const pw::Role& r, bool layers) {
    double sum = 0;
    for (const auto& op : r.ops)
      if (op.kind == pw::OpKind::all_gather && op.phase == pw::Phase::optimizer && (op.layer >= 0) == layers)
        sum += op.bytes;
    return sum;
  };
  // The distributed optimizer's all-gather of the updated layer weights halves; the embeddings' does not.
  EXPECT_DOUBLE_EQ(gathered(fp8.roles[0], true) / gathered(bf16.roles[0], true), 0.5);
  EXPECT_DOUBLE_EQ(gathered(fp8.roles[0], false), gathered(bf16.roles[0], false));
  // Without it Transformer Engine holds an fp8 weight and its transpose beside the bf16 weight: 2 bytes
  // more per layer parameter.
  const auto& r = bf16.roles[0];
  const double layer_params = r.params - 2 * 512.0 * 256 / 2;  // the input and the output embedding
  EXPECT_DOUBLE_EQ(r.memory.weights - fp8.roles[0].memory.weights, 2 * layer_params);
}

// Megatron-FSDP with --fp8-param-gather: the per-layer all-gathers of fully sharded parameters carry the
// linear weights as fp8 (one byte) and the norms in bf16 (megatron-fsdp profile, ZeRO-3).
TEST(Fp8Training, FullyShardedGathersCarryFp8Weights) {
  const auto sharded = [](bool param_gather) {
    auto j = fp8_llama("delayed", param_gather);
    j["parallelism"]["data"]["zero"] = 3;
    j["framework"] = {{"profile", "megatron-fsdp"}};
    return pw::lower(paratwin::test::workload(j));
  };
  const auto gathered = [](const pw::Program& p) {
    double sum = 0;
    for (const auto& op : p.roles[0].ops)
      if (op.kind == pw::OpKind::all_gather && std::string(op.name) == "zero3.all_gather") sum += op.bytes;
    return sum;
  };
  // Per layer and tensor rank (h 256, q 384, f 704, t 2): linear weights 49,152 + 32,768 + 180,224 +
  // 90,112 = 352,256, RMSNorm weights 2 x 256 = 512.
  const double weights = 352256, norms = 512;
  EXPECT_DOUBLE_EQ(gathered(sharded(true)) / gathered(sharded(false)),
                   (weights + 2 * norms) / (2 * weights + 2 * norms));
}

// Without gradient-accumulation fusion each layer's backward adds its fresh gradients to the main
// gradients: one kernel per layer and micro-batch reading both and writing the main gradient.
TEST(Fp8Training, UnfusedGradientAccumulationAddsAKernelPerLayer) {
  auto j = fp8_llama("delayed", false);
  const auto fused = pw::lower(paratwin::test::workload(j));
  EXPECT_EQ(named(fused.roles[0], "grad.accumulate"), 0);
  j["optimizations"] = {{"gradient_accumulation_fusion", false}};
  j["training"]["gradient_reduce_dtype"] = "fp32";
  const auto unfused = pw::lower(paratwin::test::workload(j));
  const auto& r = unfused.roles[0];
  EXPECT_EQ(named(r, "grad.accumulate"), 2 * 2);  // 2 layers x 2 micro-batches
  for (const auto& op : r.ops)
    if (std::string(op.name) == "grad.accumulate") {
      const double layer = 352256 + 512;
      EXPECT_DOUBLE_EQ(op.bytes, layer * (2 + 2 * 4));
    }
}

// Qwen2's layer: no biases but on q, k and v (model.qkv_bias). On one rank the lowered parameters are
// the model's, and with tensor parallelism the biases split with their outputs.
TEST(LlamaModel, QueryKeyValueBiasesAloneAreLoweredAndCounted) {
  auto j = paratwin::test::base_gpt();
  j["model"]["kv_heads"] = 2;
  j["model"]["mlp"] = "swiglu";
  j["model"]["norm"] = "rmsnorm";
  j["model"]["position"] = "rope";
  j["model"]["bias"] = false;
  j["model"]["qkv_bias"] = true;
  j["model"]["tied_embeddings"] = false;
  const auto w = paratwin::test::workload(j);
  const auto& m = w.model;
  const double h = 256, per_layer = h + 2 * 2 * (h / 8);
  auto without = m;
  without.qkv_bias = false;
  EXPECT_DOUBLE_EQ(pw::count_parameters(m).total() - pw::count_parameters(without).total(), 4 * per_layer);
  EXPECT_DOUBLE_EQ(pw::lower(w).roles[0].params, pw::count_parameters(m).total());
  j["parallelism"] = {{"tensor", {{"mode", "optimus"}, {"rows", 2}, {"cols", 2}}}};
  EXPECT_THROW(paratwin::test::workload(j), pw::WorkloadError);
}

// A GPT with tied embeddings on one stage holds the word embedding once: its output layer is that
// weight (Megatron-LM share_embeddings_and_output_weights); on two stages the last keeps a copy.
TEST(LlamaModel, TiedEmbeddingsOnOneStageAreOneWeight) {
  auto j = paratwin::test::base_gpt();
  const auto one = paratwin::test::workload(j);
  const auto p = pw::lower(one);
  EXPECT_DOUBLE_EQ(p.roles[0].params, pw::count_parameters(one.model).total());
  j["parallelism"] = {{"pipeline", {{"stages", 2}}}};
  const auto two = pw::lower(paratwin::test::workload(j));
  const double word = 512.0 * 256;
  EXPECT_DOUBLE_EQ(two.roles[0].params + two.roles[1].params, pw::count_parameters(one.model).total() + word);
}
