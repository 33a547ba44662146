#include "importers/hf.hpp"

#include <algorithm>
#include <cstdio>

#include "workloads/error.hpp"

namespace paratwin::importers {

using namespace paratwin::workloads;  // the format the importers write  NOLINT(google-build-using-namespace)

namespace {

// The architectures' config classes (transformers v4.46: models/llama/configuration_llama.py,
// mistral/, mixtral/, qwen2/): the same decoder layer (pre-RMSNorm, rotary attention with grouped
// KV heads, a SwiGLU MLP or a mixture of SwiGLU experts), the keys and defaults below.
struct Architecture {
  const char* name;
  bool moe;
  bool qkv_bias;  // Qwen2's attention has biases on q, k and v only (modeling_qwen2.py Qwen2Attention)
  bool deepseek;  // DeepSeek-V2/V3 (modeling_deepseek_v3.py): MLA, fine-grained and shared experts
};
constexpr Architecture kArchitectures[] = {
    {"LlamaForCausalLM", false, false, false},    {"MistralForCausalLM", false, false, false},
    {"MixtralForCausalLM", true, false, false},   {"Qwen2ForCausalLM", false, true, false},
    {"DeepseekV2ForCausalLM", true, false, true}, {"DeepseekV3ForCausalLM", true, false, true}};

// Architectures known but not translatable, each with what paratwin's layer lacks.
struct Refused {
  const char* name;
  const char* why;
};
constexpr Refused kRefused[] = {
    {"GptOssForCausalLM", "gpt-oss's layer: attention sinks, alternating sliding-window attention, clamped experts"},
    {"Qwen3MoeForCausalLM", "Qwen3-MoE's layer: query/key RMSNorm, experts of their own size"},
    {"Qwen3ForCausalLM", "Qwen3's layer: query/key RMSNorm"},
    {"Gemma2ForCausalLM", "Gemma 2's layer: sliding-window layers, logit soft-capping, four norms per layer"},
    {"BertForMaskedLM", "BERT, a bidirectional encoder"},
    {"T5ForConditionalGeneration", "T5, an encoder-decoder"}};

class Reader {
 public:
  Reader(const nlohmann::json& j, std::string file) : j_(j), file_(std::move(file)) {}
  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  int64_t integer(const char* key, int64_t fallback, int64_t max = int64_t{1} << 30) const {
    if (!has(key)) {
      if (fallback >= 0) return fallback;
      throw WorkloadError(file_ + ": " + key, "is required");
    }
    const auto& v = j_.at(key);
    if (!v.is_number_integer()) throw WorkloadError(file_ + ": " + key, "= " + v.dump() + " is not an integer");
    const int64_t out = v.get<int64_t>();
    if (out < 1 || out > max)
      throw WorkloadError(file_ + ": " + key, "= " + v.dump() + " is out of range [1, " + std::to_string(max) + "]");
    return out;
  }
  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_boolean())
      throw WorkloadError(file_ + ": " + key, "= " + j_.at(key).dump() + " is not true/false");
    return j_.at(key).get<bool>();
  }
  double number(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_number()) throw WorkloadError(file_ + ": " + key, "= " + j_.at(key).dump() + " is not a number");
    return j_.at(key).get<double>();
  }
  std::string text(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!j_.at(key).is_string()) throw WorkloadError(file_ + ": " + key, "= " + j_.at(key).dump() + " is not a string");
    return j_.at(key).get<std::string>();
  }
  std::string dump(const char* key) const { return has(key) ? j_.at(key).dump() : "null"; }

 private:
  const nlohmann::json& j_;
  std::string file_;
};

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// The architecture: `architectures` names the model class; `model_type` alone is enough too. Throws
// WorkloadError naming what an architecture paratwin does not translate lacks.
const Architecture& architecture_of(const nlohmann::json& config, const Reader& r, const std::string& file) {
  std::string arch;
  if (config.contains("architectures") && config.at("architectures").is_array() &&
      !config.at("architectures").empty() && config.at("architectures").at(0).is_string())
    arch = config.at("architectures").at(0).get<std::string>();
  const std::string type = r.text("model_type", "");
  if (arch.empty()) {
    static const std::pair<const char*, const char*> kTypes[] = {{"llama", "LlamaForCausalLM"},
                                                                 {"mistral", "MistralForCausalLM"},
                                                                 {"mixtral", "MixtralForCausalLM"},
                                                                 {"qwen2", "Qwen2ForCausalLM"},
                                                                 {"deepseek_v2", "DeepseekV2ForCausalLM"},
                                                                 {"deepseek_v3", "DeepseekV3ForCausalLM"}};
    for (const auto& [t, a] : kTypes)
      if (type == t) arch = a;
  }
  const Architecture* known = nullptr;
  for (const auto& a : kArchitectures)
    if (arch == a.name) known = &a;
  if (known) return *known;
  std::string names;
  for (const auto& a : kArchitectures) names += (names.empty() ? "" : ", ") + std::string(a.name);
  for (const auto& refused : kRefused)
    if (arch == refused.name) {
      // Everything the layer lacks, at once, from the keys that say it.
      std::vector<std::string> lacks;
      if (r.has("q_lora_rank") || r.has("kv_lora_rank"))
        lacks.push_back("multi-latent attention (q_lora_rank " + r.dump("q_lora_rank") + ", kv_lora_rank " +
                        r.dump("kv_lora_rank") + ")");
      if (r.has("n_shared_experts"))
        lacks.push_back("shared experts (n_shared_experts " + r.dump("n_shared_experts") + ")");
      if (r.has("moe_intermediate_size"))
        lacks.push_back("experts of their own size (moe_intermediate_size " + r.dump("moe_intermediate_size") + ")");
      if (r.has("first_k_dense_replace"))
        lacks.push_back("dense first layers (first_k_dense_replace " + r.dump("first_k_dense_replace") + ")");
      if (r.has("num_nextn_predict_layers"))
        lacks.push_back("multi-token prediction (num_nextn_predict_layers " + r.dump("num_nextn_predict_layers") + ")");
      if (r.has("topk_group") || r.has("n_group"))
        lacks.push_back("group-limited routing (n_group " + r.dump("n_group") + ", topk_group " + r.dump("topk_group") +
                        ")");
      std::string why = std::string(refused.why) + (lacks.empty() ? "" : ": " + join(lacks));
      throw WorkloadError(file + ": architectures", arch + " is not modelled (" + why + "); translated: " + names);
    }
  throw WorkloadError(file + ": architectures",
                      (arch.empty() ? "names no architecture (nor does model_type)" : arch + " is not known") +
                          std::string("; translated: ") + names);
}

// DeepSeek-V2/V3's layers in the workload's `model` section `m`: experts and MLA.
void deepseek_layers(const nlohmann::json& config, const Reader& r, const std::string& file, int64_t layers,
                     nlohmann::ordered_json& m) {
  // DeepseekV3MoE: n_routed_experts of moe_intermediate_size, n_shared_experts of it as one MLP,
  // dense layers before first_k_dense_replace; DeepseekV3Attention: MLA (no attention bias).
  const int64_t experts = r.integer("n_routed_experts", -1, int64_t{1} << 20);
  const int64_t top_k = r.integer("num_experts_per_tok", -1, int64_t{1} << 20);
  if (top_k > experts)
    throw WorkloadError(file + ": num_experts_per_tok",
                        "= " + std::to_string(top_k) + " exceeds n_routed_experts " + std::to_string(experts));
  const int64_t expert_ffn = r.integer("moe_intermediate_size", -1, int64_t{1} << 22);
  const int64_t shared = r.has("n_shared_experts") ? r.integer("n_shared_experts", 0, 1024) : 0;
  if (r.has("first_k_dense_replace") && !config.at("first_k_dense_replace").is_number_integer())
    throw WorkloadError(file + ": first_k_dense_replace",
                        "= " + r.dump("first_k_dense_replace") + " is not an integer");
  const int64_t dense = r.has("first_k_dense_replace") ? config.at("first_k_dense_replace").get<int64_t>() : 0;
  if (dense < 0 || dense >= layers)
    throw WorkloadError(file + ": first_k_dense_replace", "= " + std::to_string(dense) + " leaves no MoE layer");
  m["moe"] = {{"experts", experts}, {"top_k", top_k}, {"capacity_factor", 0}, {"every", 1}, {"ffn_hidden", expert_ffn}};
  if (shared > 0) m["moe"]["shared_ffn"] = shared * expert_ffn;
  if (dense > 0) m["moe"]["first_dense"] = dense;
  m["mla"] = nlohmann::ordered_json::object();
  if (r.has("q_lora_rank")) m["mla"]["q_lora_rank"] = r.integer("q_lora_rank", 0, int64_t{1} << 20);
  m["mla"]["kv_lora_rank"] = r.integer("kv_lora_rank", -1, int64_t{1} << 20);
  m["mla"]["qk_head_dim"] = r.integer("qk_nope_head_dim", -1, int64_t{1} << 20);
  m["mla"]["rope_head_dim"] = r.integer("qk_rope_head_dim", -1, int64_t{1} << 20);
  m["mla"]["v_head_dim"] = r.integer("v_head_dim", -1, int64_t{1} << 20);
  m["attention"] = "flash";  // MLA is modelled in the fused kernel
  m.erase("kv_heads");       // MLA has no key/value groups (num_key_value_heads = heads)
}

}  // namespace

const std::vector<std::string>& hf_architectures() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> out;
    for (const auto& a : kArchitectures) out.emplace_back(a.name);
    return out;
  }();
  return kNames;
}

HfImport import_hf_config(const nlohmann::json& config, const std::string& file, const HfImportOptions& o) {
  if (!config.is_object()) throw WorkloadError(file, "is not a JSON object (a Hugging Face config.json)");
  const Reader r(config, file);
  HfImport out;
  const Architecture* known = &architecture_of(config, r, file);
  const std::string arch = known->name;
  std::vector<std::string> cannot;
  out.architecture = arch;

  const int64_t layers = r.integer("num_hidden_layers", -1, 1'000'000);
  const int64_t hidden = r.integer("hidden_size", -1, int64_t{1} << 20);
  const int64_t heads = r.integer("num_attention_heads", -1, int64_t{1} << 20);
  const int64_t kv_heads = r.integer("num_key_value_heads", heads, int64_t{1} << 20);
  const int64_t ffn = r.integer("intermediate_size", -1, int64_t{1} << 22);
  const int64_t vocab = r.integer("vocab_size", -1, int64_t{1} << 24);
  const int64_t positions = r.integer("max_position_embeddings", 0, int64_t{1} << 30);
  if (hidden % heads != 0)
    throw WorkloadError(
        file + ": hidden_size",
        "= " + std::to_string(hidden) + " is not divisible by num_attention_heads " + std::to_string(heads));
  if (heads % kv_heads != 0)
    throw WorkloadError(
        file + ": num_key_value_heads",
        "= " + std::to_string(kv_heads) + " does not divide num_attention_heads " + std::to_string(heads));
  const int64_t head_dim = hidden / heads;
  if (r.has("head_dim") && r.integer("head_dim", 0) != head_dim)
    cannot.push_back("head_dim " + r.dump("head_dim") +
                     " (heads of another width than hidden_size / num_attention_heads = " + std::to_string(head_dim) +
                     ")");
  const std::string act = r.text("hidden_act", "silu");
  if (act != "silu") cannot.push_back("hidden_act " + act + " (the gated MLP is modelled with SiLU: SwiGLU)");
  if (r.boolean("attention_bias", false)) cannot.push_back("attention_bias true (biases on the attention only)");
  if (r.boolean("mlp_bias", false)) cannot.push_back("mlp_bias true (biases on the MLP only)");
  // Sliding-window attention shorter than the sequence: Mistral 7B v0.1's 4096.
  int64_t seq = o.seq_len;
  if (seq > 0 && positions > 0 && seq > positions)
    throw WorkloadError("--seq-len", "= " + std::to_string(seq) + " exceeds " + file + "'s max_position_embeddings " +
                                         std::to_string(positions));
  const bool sliding = r.has("sliding_window") && r.boolean("use_sliding_window", true);
  if (sliding) {
    const int64_t window = r.integer("sliding_window", 0, int64_t{1} << 30);
    if (seq == 0 || seq > window)
      cannot.push_back("sliding_window " + std::to_string(window) + " (sliding-window attention is not modelled" +
                       (seq == 0 ? ")" : "; the sequence of " + std::to_string(seq) + " is longer)"));
  }
  if (known->deepseek && r.has("num_nextn_predict_layers")) {
    // DeepSeek-V3's multi-token prediction module (report §2.2): one more MoE layer, the 2h×h projection
    // of its two normed inputs and its loss; transformers' DeepseekV3ForCausalLM leaves it out too.
    cannot.push_back("num_nextn_predict_layers " + r.dump("num_nextn_predict_layers") +
                     " (multi-token prediction modules: each one more MoE layer, a projection of 2·hidden × hidden "
                     "and a second loss, not modelled)");
  }
  for (const char* key : {"n_group", "topk_group", "topk_method", "scoring_func", "routed_scaling_factor",
                          "norm_topk_prob", "aux_loss_alpha", "seq_aux", "ep_size", "moe_layer_freq"})
    if (known->deepseek && r.has(key)) out.not_modelled.push_back(std::string(key) + " " + r.dump(key));
  if (r.has("rope_scaling")) out.not_modelled.push_back("rope_scaling " + r.dump("rope_scaling"));
  for (const char* key : {"rope_theta", "rms_norm_eps", "initializer_range", "torch_dtype", "bos_token_id",
                          "eos_token_id", "use_cache", "router_aux_loss_coef", "output_router_logits"})
    if (r.has(key)) out.not_modelled.push_back(std::string(key) + " " + r.dump(key));

  if (!cannot.empty() && !o.approximate)
    throw WorkloadError(file, std::to_string(cannot.size()) + " feature" + (cannot.size() == 1 ? "" : "s") + " of " +
                                  arch + " the workload format cannot express: " + join(cannot) +
                                  " (--approximate imports without them, listing each)");
  if (o.approximate) out.dropped = cannot;

  auto& m = out.model;
  m["layers"] = layers;
  m["hidden"] = hidden;
  m["heads"] = heads;
  if (kv_heads != heads) m["kv_heads"] = kv_heads;
  m["ffn_hidden"] = ffn;
  if (seq > 0) m["seq_len"] = seq;
  m["vocab"] = vocab;
  const double dropout = r.number("attention_dropout", 0.0);
  if (dropout < 0 || dropout >= 1)
    throw WorkloadError(file + ": attention_dropout", "= " + r.dump("attention_dropout") + " is outside [0, 1)");
  m["attention_dropout"] = dropout;
  m["mlp"] = "swiglu";
  m["norm"] = "rmsnorm";
  m["position"] = "rope";
  m["bias"] = false;
  if (known->qkv_bias) m["qkv_bias"] = true;  // Qwen2's attention: biases on q, k and v alone
  m["tied_embeddings"] = r.boolean("tie_word_embeddings", false);
  m["final_norm"] = true;
  if (known->deepseek) {
    deepseek_layers(config, r, file, layers, m);
  } else if (known->moe) {
    const int64_t experts = r.integer("num_local_experts", -1, int64_t{1} << 20);
    const int64_t top_k = r.integer("num_experts_per_tok", 2, int64_t{1} << 20);
    if (top_k > experts)
      throw WorkloadError(file + ": num_experts_per_tok",
                          "= " + std::to_string(top_k) + " exceeds num_local_experts " + std::to_string(experts));
    // transformers' MixtralSparseMoeBlock routes every token to its top-k experts without a capacity.
    m["moe"] = {{"experts", experts}, {"top_k", top_k}, {"capacity_factor", 0}, {"every", 1}};
  }
  return out;
}

}  // namespace paratwin::importers
