#include "workloads/embedded_examples.hpp"

#include "embedded_examples_text.hpp"

namespace paratwin::workloads {

const char* default_workload_text() {
  return generated::kDefaultWorkload;
}

}  // namespace paratwin::workloads
