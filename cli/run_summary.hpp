#pragma once
// The summary a run produces, predicted (`simulate`) or measured (`exec`): one set of JSON fields and
// one text layout, so that the two compare field by field.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topology/machine.hpp"
#include "workloads/program.hpp"

namespace paratwin::cli {

// Where one rank's compute stream spent the iteration (seconds).
struct RankRow {
  double compute = 0, exposed_comm = 0, bubble = 0, other_idle = 0;
};

// One collective kind over one group, per rank (summed over the iteration's calls).
struct CollectiveRow {
  workloads::OpKind kind = workloads::OpKind::all_reduce;
  workloads::AxisMask group = 0;
  std::string algorithm;  // empty when unknown (measured)
  int64_t count = 0;
  double bytes = 0, seconds = 0, exposed = 0;
};

// iteration_seconds, tokens_per_second, model_tflops_per_device, percent_of_peak (and of the measured
// GEMM peak), bubble_fraction, stages, ranks_compute_exposed_bubble_other, collectives (nccl-tests
// columns) and memory.
nlohmann::json run_summary(const workloads::Workload& w, const workloads::Program& program,
                           const topology::Machine& machine, double iteration_seconds,
                           const std::vector<RankRow>& ranks, const std::vector<CollectiveRow>& collectives);

// The lines after a report's header: iteration time, throughput, bubble, the stage and collective
// tables and the memory verdict. `what` ends the out-of-memory warning ("simulated anyway").
void print_summary(const workloads::Workload& w, const nlohmann::json& summary, const char* what);

}  // namespace paratwin::cli
