#pragma once
// The Trace: one format for predicted (sim/) and measured (exec/) runs, the Chrome trace event format
// (reports/trace_writer.hpp writes it as the run goes). This header has what both kinds of run share:
// the default traced ranks, and a measured run's whole trace at once.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/op_walker.hpp"
#include "workloads/program.hpp"

namespace paratwin::reports {

// The trace of a recorded run (the executor's): its events replayed in time order through
// ChromeTraceWriter. Every rank that has an event is traced.
std::string chrome_trace(const workloads::Program& program, const std::vector<workloads::OpEvent>& events);

// The ranks traced by default: one pipeline column end to end (one rank per pipeline stage: data
// replica 0, tensor and expert coordinates 0), and stage 0's tensor-parallel group when it has at most
// kSmallTensorGroup members, else the lines through stage 0's first rank along each tensor axis (x, y
// and z of a 3-D tensor grid), so that every kind of tensor collective shows its members. Ascending.
constexpr int64_t kSmallTensorGroup = 16;
std::vector<int64_t> default_trace_ranks(const workloads::Program& program);

}  // namespace paratwin::reports
