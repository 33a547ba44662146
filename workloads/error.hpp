#pragma once
// Errors in a workload description (see common/input_error.hpp).
#include "common/input_error.hpp"

namespace paratwin::workloads {

class WorkloadError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace paratwin::workloads
