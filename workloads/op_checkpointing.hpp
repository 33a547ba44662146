#pragma once
// Where TorchTitan's per-op selective checkpointing (Checkpointing::selective_op) is modelled: the
// lowering knows its policy on a dense block with flash attention under no or Megatron-style tensor
// parallelism.
#include <string>

#include "workloads/workload.hpp"

namespace paratwin::workloads {

// Why the policy is not modelled for `w`'s model and tensor parallelism, as the end of validate()'s
// message ("... and Megatron-style tensor parallelism: not with model.moe"); empty where it is.
// validate() refuses the mode with it, and search proposes the mode only where it is empty.
std::string op_checkpointing_unmodelled(const Workload& w);

}  // namespace paratwin::workloads
