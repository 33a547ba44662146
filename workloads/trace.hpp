#pragma once
// The Trace: one format for predicted (sim/) and measured (exec/) runs. Every recorded op of every
// traced rank in the Chrome trace event format (opens in Perfetto or chrome://tracing): one process per
// rank, one thread per stream.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/program.hpp"

namespace paratwin::workloads {

// One op of one rank: its index in the rank's role and its start and end (seconds).
struct OpEvent {
  int64_t rank = 0;
  uint32_t op = 0;
  double start = 0, end = 0;
};

std::string chrome_trace(const Program& program, const std::vector<OpEvent>& events);

}  // namespace paratwin::workloads
