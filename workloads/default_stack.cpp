#include "workloads/default_stack.hpp"

#include "workloads/framework.hpp"
#include "workloads/stack_features.hpp"

namespace paratwin::workloads {

namespace {

// The stacks that run a configuration, most likely first, and why.
std::vector<DefaultStack> candidates(const Workload& w) {
  const auto& p = w.parallel;
  if (p.tensor.mode == TensorMode::axonn || p.pipeline.schedule == Schedule::axonn)
    return {{"axonn", "AxoNN's tensor parallelism or message-driven schedule"}};
  // Optimus's SUMMA layers exist in no framework profiled here: the machine model as it is.
  if (p.tensor.mode == TensorMode::optimus) return {};
  const bool model_parallel = p.tensor.degree() > 1 || p.pipeline.stages > 1 || p.context > 1;
  const std::string zero = "ZeRO-" + std::to_string(p.zero_stage);
  if (p.zero_stage == 3)
    return {{"fsdp2", zero + (model_parallel ? " with model parallelism" : " without model parallelism")},
            {"deepspeed", zero + " without model parallelism"}};
  if (p.zero_stage == 2)
    return {{"deepspeed", zero + " without model parallelism"}, {"fsdp2", zero + " with model parallelism"}};
  return {{"megatron-core", model_parallel ? "tensor, pipeline or context parallelism" : "data parallelism"},
          {"fsdp2", "data parallelism"},
          {"deepspeed", "data parallelism"}};
}

}  // namespace

DefaultStack default_stack(const Workload& w) {
  Workload trial = w;
  for (const auto& c : candidates(w)) {
    trial.framework = builtin_framework(c.profile);
    if (missing_stack_features(trial).empty()) return c;
  }
  return {"generic", "no profiled stack runs this configuration"};
}

}  // namespace paratwin::workloads
