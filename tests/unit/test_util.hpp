#pragma once
// Helpers for unit tests: workloads from inline JSON, and queries over a lowered Program.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workloads/lower.hpp"
#include "workloads/workload.hpp"

namespace paratwin::test {

// Unit tests of lowering check formulas against the ideal stack unless they name one: a workload
// without "framework" gets "generic" here (not the default stack a user's file gets).
inline workloads::Workload workload(nlohmann::json j) {
  if (!j.contains("framework")) j["framework"] = {{"profile", "generic"}};
  return workloads::parse_workload(j, "");
}

inline workloads::Workload example(const std::string& file) {
  return workloads::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/" + file);
}

// A small dense GPT; callers patch "parallelism", "training" or "model" as they need.
inline nlohmann::json base_gpt() {
  return {{"name", "test"},
          {"model", {{"layers", 4}, {"hidden", 256}, {"heads", 8}, {"seq_len", 64}, {"vocab", 512}}},
          {"training", {{"global_batch", 8}, {"micro_batch", 1}, {"dtype", "bf16"}, {"checkpointing", "full"}}}};
}

// A small DeepSeek-shaped model: 4 layers of multi-latent attention, 4 fine-grained routed experts (top 2,
// dropless) and a shared one, the first layer dense; SwiGLU, RMSNorm, rotary positions, no biases, an
// untied output layer.
inline nlohmann::json small_deepseek_model() {
  return {
      {"layers", 4},
      {"hidden", 256},
      {"heads", 8},
      {"ffn_hidden", 512},
      {"seq_len", 64},
      {"vocab", 512},
      {"attention", "flash"},
      {"mlp", "swiglu"},
      {"norm", "rmsnorm"},
      {"position", "rope"},
      {"bias", false},
      {"tied_embeddings", false},
      {"final_norm", true},
      {"moe",
       {{"experts", 4},
        {"top_k", 2},
        {"capacity_factor", 0},
        {"every", 1},
        {"ffn_hidden", 128},
        {"shared_ffn", 128},
        {"first_dense", 1}}},
      {"mla",
       {{"q_lora_rank", 96}, {"kv_lora_rank", 64}, {"qk_head_dim", 32}, {"rope_head_dim", 16}, {"v_head_dim", 32}}}};
}

using OpPred = std::function<bool(const workloads::Op&)>;

inline std::vector<workloads::Op> ops_where(const workloads::Role& r, const OpPred& pred) {
  std::vector<workloads::Op> out;
  for (const auto& op : r.ops)
    if (pred(op)) out.push_back(op);
  return out;
}

inline int count_where(const workloads::Role& r, const OpPred& pred) {
  return static_cast<int>(ops_where(r, pred).size());
}

inline double gemm_flops_all_ranks(const workloads::Program& p) {
  double sum = 0;
  for (const auto& r : p.roles)
    for (const auto& op : r.ops)
      if (op.kind == workloads::OpKind::gemm) sum += op.flops * static_cast<double>(r.ranks);
  return sum;
}

}  // namespace paratwin::test
