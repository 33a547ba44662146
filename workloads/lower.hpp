#pragma once
// lower(): a Workload becomes a Program — the grid, the placement, and one op list per pipeline
// stage with every GEMM, collective, point-to-point message and memory event of one iteration.
#include <cstdint>

#include "workloads/program.hpp"
#include "workloads/workload.hpp"

namespace paratwin::workloads {

struct LowerOptions {
  int64_t devices_per_node = 0;  // overrides placement.devices_per_node when > 0
  // Check the Program's graph (workloads/program_graph.hpp). Off only where many variants of an
  // already tested lowering are built for a quick estimate (configuration search).
  bool validate_program = true;
};

Program lower(const Workload& w, const LowerOptions& options = {});

}  // namespace paratwin::workloads
