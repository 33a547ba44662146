#pragma once
// The software stack a workload gets when it names none: the current stack that runs its
// configuration (the ideal "generic" stack must be asked for by name).
#include <string>
#include <vector>

#include "workloads/workload.hpp"

namespace paratwin::workloads {

struct DefaultStack {
  std::string profile;  // a shipped profile
  std::string reason;   // why, e.g. "ZeRO-3 without model parallelism"
};

DefaultStack default_stack(const Workload& w);

}  // namespace paratwin::workloads
