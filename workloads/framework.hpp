#pragma once
// The software stack a run used (training framework and its year): what it makes of the machine's
// kernels. Published runs of one model on one machine differ between frameworks (kernel fusion,
// library versions, what overlaps what), so the stack is declared in the workload rather than folded
// into a machine's GEMM efficiency. Profiles ship in workloads/frameworks/ and are compiled in.
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/json_reader.hpp"

namespace paratwin::workloads {

struct Framework {
  std::string profile = "generic";  // the shipped profile it started from
  std::string description;
  // Fraction of the machine model's compute rate (the GEMM shape model, the memory bandwidth of
  // memory-bound kernels) that this stack's kernels sustain inside a training iteration.
  double kernel_efficiency = 1.0;
  std::string source;  // where kernel_efficiency comes from (sourced, or the points it was fitted to)
  // Bytes the optimizer step moves per parameter it updates, when the stack's optimizer makes more
  // passes than one fused Adam (e.g. Megatron-LM's fp16 optimizer: grad copy, unscale, norm, Adam,
  // parameter copy); 0: the fused Adam's own traffic (workloads/arithmetic.hpp).
  double optimizer_bytes_per_param = 0;
};

std::vector<std::string> builtin_framework_names();
// A shipped profile by name; throws WorkloadError listing the known ones.
Framework builtin_framework(const std::string& name);
// The workload's "framework" object: {"profile": NAME} with optional overrides.
Framework read_framework(JsonReader r);
nlohmann::json to_json(const Framework& f);

}  // namespace paratwin::workloads
