#pragma once
// The summary a run produces, predicted (SimGrid) or measured (`paratwin exec`): one typed record, one
// JSON document and one text layout, so that the two compare field by field.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "topology/machine.hpp"
#include "workloads/program.hpp"
#include "workloads/workload.hpp"

namespace paratwin::predict {

// Where one rank's compute stream spent the iteration (seconds).
struct RankRow {
  double compute = 0, exposed_comm = 0, bubble = 0, other_idle = 0;
};

// One collective kind over one group, per rank (summed over the iteration's calls), as a run reports it.
struct CollectiveRow {
  workloads::OpKind kind = workloads::OpKind::all_reduce;
  workloads::AxisMask group = 0;
  std::string algorithm;  // empty when unknown (measured)
  int64_t count = 0;
  double bytes = 0, seconds = 0, exposed = 0;
};

// A pipeline stage: the mean over its ranks.
struct StageSummary {
  int64_t stage = 0;
  double compute = 0, exposed_comm = 0, bubble = 0, other_idle = 0;
};

// A collective row with its group named and sized, and nccl-tests' bandwidth columns.
struct CollectiveSummary {
  workloads::OpKind kind = workloads::OpKind::all_reduce;
  std::string algorithm;  // "measured" when the run does not know it
  std::string group;
  int64_t group_size = 1, count = 0;
  double bytes = 0, seconds = 0, exposed = 0;
  double algbw() const { return seconds > 0 ? bytes / seconds : 0; }  // bytes/s
  double busbw() const;                                               // algbw × the kind's bus factor
  // One call's buffer per rank and time (the mean call's).
  double bytes_per_call() const { return count > 0 ? bytes / static_cast<double>(count) : 0; }
  double seconds_per_call() const { return count > 0 ? seconds / static_cast<double>(count) : 0; }
};

struct RunSummary {
  std::string workload, machine;
  int64_t ranks = 0;
  double iteration_seconds = 0, tokens_per_second = 0, model_tflops_per_device = 0;
  double percent_of_peak = 0;                       // of the device's advertised peak in the workload's dtype
  std::optional<double> percent_of_empirical_peak;  // of its best measured GEMM rate, where published
  double bubble_measured = 0;                       // bubble over compute, from the timeline
  double bubble_analytical = 0;                     // (p-1)/(v·m)
  std::vector<StageSummary> stages;
  std::vector<RankRow> per_rank;  // in rank order
  std::vector<CollectiveSummary> collectives;
  double max_bytes_per_rank = 0, device_bytes = 0;
  bool fits = true;

  // The stage with the most compute: its time is the iteration's.
  const StageSummary& busiest_stage() const;
  // Seconds per rank that the collectives of the group named `group` were not hidden.
  double exposed_seconds(const std::string& group) const;
};

// Throughput and efficiency (seed 003 eq. 3 model FLOPs), the bubble, the stages, the collectives and
// memory of one iteration that took `iteration_seconds`.
RunSummary summarize(const workloads::Workload& w, const workloads::Program& program, const topology::Machine& machine,
                     double iteration_seconds, const std::vector<RankRow>& ranks,
                     const std::vector<CollectiveRow>& collectives);

// iteration_seconds, tokens_per_second, model_tflops_per_device, percent_of_peak (and of the measured
// GEMM peak), bubble_fraction, stages, ranks_compute_exposed_bubble_other, collectives and memory.
nlohmann::json to_json(const RunSummary& s);
// The summary back from that document (a child process's result). Throws nlohmann::json::exception
// when a field is missing.
RunSummary run_summary_from_json(const nlohmann::json& j);

// The lines after a report's header: iteration time, throughput, bubble, the stage and collective
// tables and the memory verdict. `what` ends the out-of-memory warning ("simulated anyway").
void print_summary(const workloads::Workload& w, const RunSummary& s, const char* what);
// The collective table in nccl-tests' terms: per call size in bytes and time in µs, algbw and busbw in
// GB/s, then the iteration's total and exposed milliseconds per rank.
void print_collective_table(const std::vector<CollectiveSummary>& collectives);

}  // namespace paratwin::predict
