#pragma once
// Tensor 2 with sequence parallelism, 2 pipeline stages, data 2 on two Perlmutter nodes: every kind of
// wait (all-gathers, messages, the gradient all-reduce) occurs, so bubbles, exposed collectives and
// messages all show in a ledger or a trace.
#include <nlohmann/json.hpp>
#include <string>

#include "workloads/lower.hpp"

namespace paratwin::test {

inline workloads::Program megatron_pipeline(const std::string& name) {
  nlohmann::json j = {{"name", name},
                      {"model", {{"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"seq_len", 512}, {"vocab", 8192}}},
                      {"training", {{"global_batch", 16}, {"micro_batch", 2}, {"checkpointing", "selective"}}},
                      {"parallelism",
                       {{"data", {{"size", 2}}},
                        {"tensor", {{"mode", "megatron"}, {"size", 2}}},
                        {"sequence_parallel", true},
                        {"pipeline", {{"stages", 2}, {"schedule", "1f1b"}}}}},
                      {"optimizations", {{"overlap_gradient_sync", true}}}};
  return workloads::lower(workloads::parse_workload(j, ""));
}

}  // namespace paratwin::test
