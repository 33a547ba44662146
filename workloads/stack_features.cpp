#include "workloads/stack_features.hpp"

#include <algorithm>

#include "workloads/error.hpp"

namespace paratwin::workloads {

namespace {

std::string stages_list(const std::vector<int>& stages) {
  std::string out;
  for (const int s : stages) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

}  // namespace

std::vector<MissingFeature> missing_stack_features(const Workload& w) {
  const Framework& f = w.framework;
  const StackFeatures& x = f.features;
  const std::string stack = "framework \"" + f.profile + "\"";
  std::vector<MissingFeature> out;
  const auto& p = w.parallel;
  const int zero = static_cast<int>(p.zero_stage);
  if (std::find(x.zero_stages.begin(), x.zero_stages.end(), zero) == x.zero_stages.end())
    out.push_back({"parallelism.data.zero", "= " + std::to_string(zero) + ": " + stack + " has no ZeRO stage " +
                                                std::to_string(zero) + " (it offers " + stages_list(x.zero_stages) +
                                                ")"});
  else if (p.pipeline.stages > 1 && zero > x.zero_with_pipeline)
    out.push_back({"parallelism.data.zero", "= " + std::to_string(zero) + ": " + stack + " runs ZeRO stages above " +
                                                std::to_string(x.zero_with_pipeline) +
                                                " only without pipeline stages (parallelism.pipeline.stages = " +
                                                std::to_string(p.pipeline.stages) + ")"});
  const std::string mode = to_string(p.tensor.mode);
  if (std::find(x.tensor_modes.begin(), x.tensor_modes.end(), mode) == x.tensor_modes.end())
    out.push_back({"parallelism.tensor.mode", "= \"" + mode + "\": " + stack + " has no such tensor parallelism"});
  if (p.pipeline.stages > 1 && !x.pipeline)
    out.push_back({"parallelism.pipeline.stages",
                   "= " + std::to_string(p.pipeline.stages) + ": " + stack + " has no pipeline parallelism"});
  if (p.pipeline.schedule == Schedule::interleaved && !x.interleaved)
    out.push_back({"parallelism.pipeline.schedule", "= \"interleaved\": " + stack + " has no interleaved schedule"});
  if (p.sequence_parallel && !x.sequence_parallel)
    out.push_back({"parallelism.sequence_parallel", "= true: " + stack + " has no sequence parallelism"});
  if (w.training.checkpointing == Checkpointing::selective && !x.selective_recompute)
    out.push_back({"training.checkpointing", "= \"selective\": " + stack + " has no selective recomputation"});
  if (w.training.checkpointing == Checkpointing::selective_op && !x.op_selective_recompute)
    out.push_back({"training.checkpointing",
                   "= \"selective_op\": " + stack + " has no per-op selective checkpointing (TorchTitan's policy)"});
  if (w.model.attention == Attention::flash && !x.flash_attention)
    out.push_back({"model.attention", "= \"flash\": " + stack + " has no flash attention"});
  if (w.model.moe.enabled() && !x.moe)
    out.push_back({"model.moe", "experts = " + std::to_string(w.model.moe.experts) + ": " + stack +
                                    " has no mixture-of-experts layers"});
  if (w.opt.overlap_param_gather && !x.param_gather_overlap)
    out.push_back({"optimizations.overlap_param_gather",
                   "= true: " + stack +
                       " all-gathers the updated parameters after the optimizer step, not during the "
                       "next forward"});
  if (w.opt.overlap_tensor_comm && !x.tensor_comm_overlap)
    out.push_back({"optimizations.overlap_tensor_comm",
                   "= true: " + stack + " does not pipeline tensor-parallel collectives with GEMMs"});
  if (p.context > 1 && !x.context_parallel)
    out.push_back(
        {"parallelism.context.size", "= " + std::to_string(p.context) + ": " + stack + " has no context parallelism"});
  const auto& pp = p.pipeline;
  if ((pp.first_stage_layers > 0 || pp.last_stage_layers > 0 || pp.embedding_in_split || pp.loss_in_split) &&
      !x.uneven_stages)
    out.push_back({pp.first_stage_layers > 0  ? "parallelism.pipeline.first_stage_layers"
                   : pp.last_stage_layers > 0 ? "parallelism.pipeline.last_stage_layers"
                   : pp.embedding_in_split    ? "parallelism.pipeline.embedding_in_split"
                                              : "parallelism.pipeline.loss_in_split",
                   (pp.first_stage_layers > 0  ? "= " + std::to_string(pp.first_stage_layers)
                    : pp.last_stage_layers > 0 ? "= " + std::to_string(pp.last_stage_layers)
                                               : std::string("= true")) +
                       ": " + stack + " splits the layers evenly over its pipeline stages"});
  if (w.training.fp8 != Fp8::none && !x.fp8)
    out.push_back(
        {"training.fp8", std::string("= \"") + to_string(w.training.fp8) + "\": " + stack + " has no fp8 GEMMs"});
  return out;
}

void require_stack_features(const Workload& w) {
  const auto missing = missing_stack_features(w);
  if (!missing.empty())
    throw WorkloadError(missing.front().path,
                        missing.front().message + " (choose a framework.profile that has it, or \"generic\")");
}

}  // namespace paratwin::workloads
