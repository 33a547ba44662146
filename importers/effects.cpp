#include "importers/effects.hpp"

#include <array>
#include <cstdio>
#include <string_view>

#include "workloads/arithmetic.hpp"

namespace paratwin::importers {

using namespace paratwin::workloads;  // the format the importers write  NOLINT(google-build-using-namespace)

namespace {

// Arguments whose dropping changes the model itself (its parameters or FLOPs per token), not only how a
// stack runs it; matched as prefixes of the argument.
constexpr std::array<std::string_view, 19> kModelChanging = {"--kv-channels",
                                                             "--normalization",
                                                             "--position-embedding-type",
                                                             "--moe-layer-freq",
                                                             "--window-size",
                                                             "--window-attn-skip-freq",
                                                             "--quick-geglu",
                                                             "--activation-func-clamp-value",
                                                             "--enable-gpt-oss",
                                                             "--glu-linear-offset",
                                                             "--softmax-type",
                                                             "--hybrid-",
                                                             "--linear-attention",
                                                             "--heterogeneous-layers",
                                                             "--spec",
                                                             "--decoder-num-layers",
                                                             "--encoder-",
                                                             "--yaml-cfg",
                                                             "sliding_window"};

// "11.6 B parameters", "10.7 GFLOP".
std::string figure(double v, bool flops) {
  char text[64];
  if (v >= 1e9)
    std::snprintf(text, sizeof text, flops ? "%.3g GFLOP" : "%.3g B parameters", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(text, sizeof text, flops ? "%.3g MFLOP" : "%.3g M parameters", v / 1e6);
  else
    std::snprintf(text, sizeof text, flops ? "%.3g FLOP" : "%.3g parameters", v);
  return text;
}

// Training FLOPs (forward and backward) per token of `m`: one sequence stands for any batch.
double training_flops_per_token(const ModelConfig& m) {
  Workload w;
  w.model = m;
  w.training.global_batch = 1;
  return iteration_flops(w).model / static_cast<double>(m.seq_len);
}

std::string percent(double part, double whole) {
  char text[32];
  std::snprintf(text, sizeof text, "+%.1f %%", 100.0 * part / whole);
  return text;
}

std::string mtp_effect(const ModelConfig& m, int64_t modules) {
  if (modules <= 0) return "";
  const AddedCost added = multi_token_prediction_cost(m, modules);
  const double base = training_flops_per_token(m);
  return "leaves out " + figure(added.parameters, false) + " (" +
         percent(added.parameters, count_parameters(m).total()) + ") and " + figure(added.flops_per_token, true) +
         " per token of training (" + percent(added.flops_per_token, base) +
         "), and their weights, optimizer state and activations on the last pipeline stage";
}

}  // namespace

// DeepSeek-V3's multi-token prediction (Megatron-Core multi_token_prediction.py, main 2026-11): each of
// the modules is a transformer layer of the decoder's kind, two input norms and a final norm, and a
// projection of the concatenated [h, h] to h, sharing the embedding and the output layer, whose logits
// it computes once more (Megatron-LM num_floating_point_operations: the logits term times
// 1 + mtp_num_layers).
AddedCost multi_token_prediction_cost(const ModelConfig& m, int64_t modules) {
  ModelConfig more = m;
  more.layers += modules;
  const double h = static_cast<double>(m.hidden), n = static_cast<double>(modules);
  AddedCost out;
  out.parameters = count_parameters(more).total() - count_parameters(m).total() + n * (2 * h * h + 3 * h);
  out.flops_per_token = training_flops_per_token(more) - training_flops_per_token(m) +
                        3.0 * 2.0 * n * (2 * h * h + h * static_cast<double>(m.vocab));
  return out;
}

std::string approximation_effect(const std::string& dropped, const ModelConfig& m) {
  const std::string flag = dropped.substr(0, dropped.find(' '));
  if (flag == "--mtp-num-layers" || flag == "num_nextn_predict_layers") {
    const size_t at = dropped.find_first_of("0123456789");
    const int64_t modules = at == std::string::npos ? 0 : std::stoll(dropped.substr(at, 6));
    const std::string effect = mtp_effect(m, modules);
    if (!effect.empty()) return effect;
  }
  // An importer that counted what it drops says so in the reason (Qwen2's q/k/v biases).
  if (dropped.find(" parameters") != std::string::npos && dropped.find("removes") != std::string::npos)
    return "changes the model's parameters by the count given; its FLOPs per token only by the bias adds";
  for (const auto prefix : kModelChanging)
    if (flag.rfind(prefix, 0) == 0)
      return "changes the model itself: its parameters and FLOPs per token differ from the imported ones by an "
             "amount paratwin does not count";
  return "the model's parameters and FLOPs per token are unchanged; the time and the memory per rank may differ";
}

}  // namespace paratwin::importers
