#pragma once
// What a workload asks of its software stack, checked against what the stack offers
// (Framework::features): a run cannot use a ZeRO stage, schedule or kernel its framework lacks.
#include <string>
#include <vector>

#include "workloads/workload.hpp"

namespace paratwin::workloads {

struct MissingFeature {
  std::string path;     // the workload's JSON path that asks for it
  std::string message;  // what the stack lacks, e.g. "megatron-lm-2021 has no sequence parallelism"
};

// Every feature the workload uses that its framework profile does not offer (empty: none).
std::vector<MissingFeature> missing_stack_features(const Workload& w);
// Throws WorkloadError for the first of them.
void require_stack_features(const Workload& w);

}  // namespace paratwin::workloads
