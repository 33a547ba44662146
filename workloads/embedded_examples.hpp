#pragma once
// The workload built into the binary, used when no --workload is given.
#include <string>

#include "workloads/workload.hpp"

namespace paratwin::workloads {

const char* default_workload_text();
inline constexpr const char* kDefaultWorkloadName = "built-in example (workloads/examples/tiny-gpt-3d.json)";

// The workload in `path`, or the built-in one when `path` is empty (the CLI's --workload).
Workload load_workload_or_default(const std::string& path);

}  // namespace paratwin::workloads
