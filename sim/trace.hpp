#pragma once
// The Trace: every recorded op of every traced rank in the Chrome trace event format (opens in
// Perfetto or chrome://tracing): one process per rank, one thread per stream.
#include <string>

#include "sim/engine.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

std::string chrome_trace(const workloads::Program& program, const std::vector<OpEvent>& events);

}  // namespace paratwin::sim
