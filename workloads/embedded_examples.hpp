#pragma once
// The workload built into the binary, used when no --workload is given.
#include <string>

namespace paratwin::workloads {

const char* default_workload_text();
inline constexpr const char* kDefaultWorkloadName = "built-in example (workloads/examples/tiny-gpt-3d.json)";

}  // namespace paratwin::workloads
