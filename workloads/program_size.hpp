#pragma once
// The size of the Program that lower() builds for a workload, estimated from the workload's shape
// alone: validate() refuses a workload whose Program would not fit in memory before any of it is
// allocated, instead of lower() ending in std::bad_alloc or swapping for minutes.
#include "workloads/workload.hpp"

namespace paratwin::workloads {

struct ProgramSize {
  double ops = 0;         // every role's
  double bytes = 0;       // peak memory of lowering: the ops, their dependencies and the checks over them
  double bucket_ops = 0;  // of `ops`: the gradient buckets' collectives (framework.gradient_bucket_bytes)
};

// Not below the ops lower() emits (tested on the shipped examples and variants of their options, and
// checked by the workload fuzzer), and within 2.5 times them for the shipped examples.
ProgramSize estimate_program_size(const Workload& w);

}  // namespace paratwin::workloads
