#include "workloads/embedded_examples.hpp"

#include "embedded_examples_text.hpp"

namespace paratwin::workloads {

const char* default_workload_text() {
  return generated::kDefaultWorkload;
}

Workload load_workload_or_default(const std::string& path) {
  return path.empty() ? parse_workload_text(default_workload_text(), kDefaultWorkloadName) : load_workload_file(path);
}

}  // namespace paratwin::workloads
