#pragma once
// The summary a run produces, predicted (SimGrid) or measured (`paratwin exec`): one typed record, one
// JSON document and one text layout, so that the two compare field by field.
#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "topology/machine.hpp"
#include "workloads/program.hpp"
#include "workloads/workload.hpp"

namespace paratwin::reports {

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
  // Simulated: of `seconds`, before the group's last member arrived; and the calls' own time (from that
  // arrival to the last member's end). Measured: 0 and -1 (unknown).
  double waiting = 0, call_seconds = -1;
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
  // Of `seconds`: the wait for the group's last member to reach each call (the members' arrival skew,
  // caused by what each did before), which is not the collective's own cost; and the calls' own time,
  // each from its last member's arrival to its last member's end, as nccl-tests times ranks that start
  // together. Simulated runs know both; measured (and older saved) ones have no waiting and
  // call_seconds < 0: their own spans stand for the calls'.
  double waiting = 0, call_seconds = -1;
  double own_seconds() const { return call_seconds >= 0 ? call_seconds : seconds; }
  double algbw() const { return own_seconds() > 0 ? bytes / own_seconds() : 0; }  // bytes/s
  double busbw() const;                                                           // algbw × the kind's bus factor
  // One call's buffer per rank and own time (the mean call's, from its last member's arrival).
  double bytes_per_call() const { return count > 0 ? bytes / static_cast<double>(count) : 0; }
  double seconds_per_call() const { return count > 0 ? own_seconds() / static_cast<double>(count) : 0; }
};

struct RunSummary {
  std::string workload, machine;
  std::string framework;  // the workload's framework profile (empty in summaries saved before it was kept)
  int64_t ranks = 0;
  double iteration_seconds = 0, tokens_per_second = 0;
  // FLOP/s per device and their share of the device's advertised peak in the workload's dtype, as
  // workloads::iteration_flops counts them (full S×S attention): model FLOPs (MFU; no recomputation,
  // so proportional to throughput for a fixed model) and hardware FLOPs (HFU; with the recomputation
  // named by `recomputation`).
  double model_tflops_per_device = 0, percent_of_peak = 0;
  double hardware_tflops_per_device = 0, percent_of_peak_hardware = 0;
  std::string recomputation;         // the workload's checkpointing: none, full, selective
  int64_t recompute_num_layers = 0;  // with full: the first N layers of each model chunk only (0: all)
  // The dtype whose advertised peak the percentages are of: the workload's, or the machine's first
  // where it lists none for the workload's (a CPU machine given a bf16 run). Not saved.
  std::string peak_dtype;
  std::optional<double> percent_of_empirical_peak;  // model FLOP/s of its best measured GEMM rate, where published
  // Read from a summary saved before model and hardware FLOPs were told apart: its model TFLOP/s
  // counted recomputation, so it is kept as the hardware figures and the model figures are unknown (0).
  bool legacy_flops = false;
  double bubble_measured = 0;    // bubble over compute, from the timeline
  double bubble_analytical = 0;  // (p-1)/(v·m)
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

// Throughput and efficiency (model and hardware FLOPs), the bubble, the stages, the collectives and
// memory of one iteration that took `iteration_seconds`.
RunSummary summarize(const workloads::Workload& w, const workloads::Program& program, const topology::Machine& machine,
                     double iteration_seconds, const std::vector<RankRow>& ranks,
                     const std::vector<CollectiveRow>& collectives);

// The summary as `simulate --json` and `exec --json` write it (schemas/run-summary.schema.json, version
// kSchemaVersion): schema_version, workload, machine, framework, ranks, iteration_s,
// tokens_per_s, model_tflops_per_gpu and percent_of_peak (MFU; and of the measured GEMM peak),
// hardware_tflops_per_gpu and percent_of_peak_hardware (HFU), flops_convention (attention,
// recomputation), bubble_fraction, stages, ranks_compute_exposed_bubble_other_s, collectives and memory.
// A legacy summary (legacy_flops) has no model figure.
nlohmann::json to_json(const RunSummary& s);
// The summary back from that document (a child process's result; a user's saved one goes through
// read_saved_summary, which also reads the names of summaries saved before version 1). A document
// without model_tflops_per_gpu is a legacy one (legacy_flops). Throws nlohmann::json::exception when a
// field is missing.
RunSummary run_summary_from_json(const nlohmann::json& j);

}  // namespace paratwin::reports
