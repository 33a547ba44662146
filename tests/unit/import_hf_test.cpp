// `paratwin import hf`: released models' config.json files (tests/e2e/hf/) to model sections whose
// parameter counts equal the published ones; what the format cannot express refused at once, by name.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "importers/hf.hpp"
#include "tests/unit/test_util.hpp"
#include "workloads/arithmetic.hpp"
#include "workloads/error.hpp"

namespace pw = paratwin::workloads;
namespace pi = paratwin::importers;

namespace {

nlohmann::json config(const std::string& name) {
  std::ifstream in(std::string(PARATWIN_HF_DIR) + "/" + name);
  EXPECT_TRUE(in) << name;
  return nlohmann::json::parse(in);
}

// The model section in a one-rank workload, parsed as a workload file is.
pw::ModelConfig model_of(const pi::HfImport& r) {
  nlohmann::json doc = {{"name", "hf"},
                        {"model", r.model},
                        {"training", {{"global_batch", 1}, {"micro_batch", 1}}},
                        {"parallelism", {{"data", {{"size", 1}}}}}};
  return paratwin::test::workload(doc).model;
}

std::string error_of(const nlohmann::json& c, const pi::HfImportOptions& o = {}) {
  try {
    pi::import_hf_config(c, "config.json", o);
  } catch (const pw::WorkloadError& e) {
    return e.what();
  }
  return "(no error)";
}

pi::HfImportOptions seq(int64_t s) {
  pi::HfImportOptions o;
  o.seq_len = s;
  return o;
}

}  // namespace

// Meta's Llama 3 8B: 8,030,261,248 parameters (the released checkpoint's tensors; Meta's model card
// "8B"); Mixtral 8x7B: 46.7 B in all, 12.9 B active per token (Mistral AI, "Mixtral of experts", 2024).
TEST(ImportHf, ReleasedModelsCountAsPublished) {
  const auto llama = pi::import_hf_config(config("llama-3-8b.json"), "llama-3-8b.json", seq(8192));
  EXPECT_EQ(llama.architecture, "LlamaForCausalLM");
  const auto m = model_of(llama);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.mlp, pw::Mlp::swiglu);
  EXPECT_EQ(m.norm, pw::Norm::rmsnorm);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_DOUBLE_EQ(pw::count_parameters(m).total(), 8030261248.0);

  const auto mixtral = model_of(pi::import_hf_config(config("mixtral-8x7b.json"), "mixtral.json", seq(4096)));
  EXPECT_EQ(mixtral.moe.experts, 8);
  EXPECT_EQ(mixtral.moe.top_k, 2);
  EXPECT_DOUBLE_EQ(pw::count_parameters(mixtral).total(), 46702792704.0);
  EXPECT_NEAR(pw::active_parameters(mixtral) / 1e9, 12.9, 0.05);
  EXPECT_EQ(pw::parameters_label(mixtral), "46.7 B parameters (12.9 B active per token)");
}

// DeepSeek-V3: multi-latent attention, 256 fine-grained routed experts and a shared one, 3 dense first
// layers; its multi-token prediction module is not modelled, refused unless --approximate. The main
// model is the report's 671 B parameters, 37 B activated.
TEST(ImportHf, DeepSeekV3TranslatesAllButItsPredictionModule) {
  const std::string e = error_of(config("deepseek-v3.json"), seq(4096));
  EXPECT_NE(e.find("num_nextn_predict_layers 1 (multi-token prediction"), std::string::npos) << e;
  auto o = seq(4096);
  o.approximate = true;
  const auto r = pi::import_hf_config(config("deepseek-v3.json"), "deepseek-v3.json", o);
  const auto m = model_of(r);
  EXPECT_EQ(m.mla.q_lora_rank, 1536);
  EXPECT_EQ(m.mla.kv_lora_rank, 512);
  EXPECT_EQ(m.mla.rope_head_dim, 64);
  EXPECT_EQ(m.moe.experts, 256);
  EXPECT_EQ(m.moe.shared_ffn, 2048);
  EXPECT_EQ(m.moe.first_dense, 3);
  EXPECT_DOUBLE_EQ(pw::count_parameters(m).total(), 671'026'404'352.0);
  EXPECT_EQ(pw::parameters_label(m), "671 B parameters (37.6 B active per token)");
}

// Qwen2's attention has biases on q, k and v alone (model.qkv_bias): 28 × (3584 + 2 × 4 × 128) =
// 129,024 of Qwen2-7B's parameters, which the import keeps.
TEST(ImportHf, QwenTwoKeepsItsQueryKeyValueBiases) {
  const auto r = pi::import_hf_config(config("qwen2-7b.json"), "qwen2.json", seq(4096));
  EXPECT_TRUE(r.dropped.empty());
  const auto m = model_of(r);
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_FALSE(m.bias);
  auto without = m;
  without.qkv_bias = false;
  EXPECT_DOUBLE_EQ(pw::count_parameters(m).total() - pw::count_parameters(without).total(), 129'024.0);
}

TEST(ImportHf, BadValuesNameTheKey) {
  auto c = config("llama-3-8b.json");
  c["num_key_value_heads"] = 5;
  EXPECT_NE(error_of(c).find("config.json: num_key_value_heads = 5 does not divide num_attention_heads 32"),
            std::string::npos);
  c = config("llama-3-8b.json");
  c["hidden_size"] = "big";
  EXPECT_NE(error_of(c).find("hidden_size = \"big\" is not an integer"), std::string::npos);
  c = config("llama-3-8b.json");
  c["architectures"] = {"MambaForCausalLM"};
  EXPECT_NE(error_of(c).find("MambaForCausalLM is not known; translated: LlamaForCausalLM"), std::string::npos);
  c = config("llama-3-8b.json");
  c["hidden_act"] = "gelu";
  EXPECT_NE(error_of(c).find("hidden_act gelu"), std::string::npos);
  // A sliding window shorter than the sequence (Mistral 7B v0.1's 4096).
  c = config("mixtral-8x7b.json");
  c["sliding_window"] = 4096;
  EXPECT_NE(error_of(c, seq(8192)).find("sliding_window 4096"), std::string::npos);
  EXPECT_EQ(error_of(c, seq(4096)), "(no error)");
  EXPECT_NE(error_of(config("llama-3-8b.json"), seq(16384)).find("exceeds"), std::string::npos);
}
