#pragma once
// The analytical (closed-form) model: iteration time = compute + non-overlapped communication +
// pipeline bubble, without SimGrid, fast enough to rank every configuration of a search.
// - collectives cost as rings ([singh2025dissertation] eq. 5.1-5.5) plus the library's per-step latency;
// - each axis' bandwidth is placement-aware (eq. 5.7), generalised by loading the real node graph
//   and NICs with every ring of the axis at once (topology::Topology::rings);
// - 4-D per-layer costs of eq. 5.6 with transposed layers swapping G_x and G_y; Megatron's PTD-P
//   tensor all-reduces, pipeline messages and bubble ([narayanan2021megatron] §3); TED's all-to-alls
//   ([singh2025dissertation] ch. 7);
// - OAR/ORS/OAG and gradient-sync overlap hide communication behind the compute it overlaps.
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "topology/topology.hpp"
#include "workloads/program.hpp"
#include "workloads/workload.hpp"

namespace paratwin::sim {

struct AnalyticalOptions {
  // false: every axis gets the same inter-node bandwidth, as if placement did not matter (the
  // placement-agnostic baseline of [singh2025dissertation] §5.1.2).
  bool placement_aware = true;
  std::string library;  // empty: the machine profile's
};

// One collective kind over one group axis, per rank and iteration.
struct AxisCost {
  workloads::OpKind kind = workloads::OpKind::all_reduce;
  std::string group;  // axis names, as Grid::mask_name
  int64_t group_size = 1;
  int64_t count = 0;     // calls per rank
  double bytes = 0;      // summed buffer sizes per rank (nccl-tests convention)
  double bandwidth = 0;  // bytes/s each ring flow gets (placement-aware or not)
  double seconds = 0;    // summed time of the calls
  double exposed = 0;    // of which not hidden behind compute
};

struct AnalyticalEstimate {
  double iteration = 0;     // seconds
  double compute = 0;       // per rank of the busiest stage: GEMMs, element-wise, optimizer
  double exposed_comm = 0;  // communication not hidden behind compute (incl. pipeline messages)
  double bubble = 0;        // pipeline fill and drain, (p-1)/(v·m) of the stage's compute, and message_wait
  double message_wait = 0;  // the compute stream waiting for a message within the stage's own schedule
  double other_idle = 0;    // waiting for anything else (optimizer state copied from the host)
  double bubble_fraction = 0;
  double micro_batch = 0;  // one micro-batch's forward and backward on the slowest stage, messages included
  std::vector<AxisCost> collectives;
  double p2p_seconds = 0;
  workloads::MemoryEstimate memory;  // per rank of the busiest stage
  double device_memory = 0;          // bytes of one device
  bool fits() const { return memory.total() <= device_memory; }
  // Per iteration, all ranks: model FLOPs (no recomputation) and hardware FLOPs (with it), as
  // workloads::iteration_flops counts them.
  double model_flops = 0, hardware_flops = 0;
  double tokens_per_second = 0;
  double percent_of_peak = 0;           // MFU: model FLOP/s per device over the dtype's advertised peak
  double percent_of_peak_hardware = 0;  // HFU: hardware FLOP/s per device over the same peak
};

class CollectiveTimes;
class CostModel;

// Estimates workloads on one machine; remembers what the configurations of a search share (the
// bandwidth of every group structure), so ranking hundreds of them stays cheap.
class AnalyticalModel {
 public:
  explicit AnalyticalModel(const topology::Topology& topology, AnalyticalOptions options = {});
  ~AnalyticalModel();
  AnalyticalModel(const AnalyticalModel&) = delete;
  AnalyticalModel& operator=(const AnalyticalModel&) = delete;

  // Throws workloads::WorkloadError (through validate) when the workload is invalid, and
  // std::invalid_argument when the machine (slice) has fewer devices than the workload has ranks.
  AnalyticalEstimate estimate(const workloads::Workload& w);
  // As estimate(), but a workload that does not fit in device memory is only lowered, not timed: its
  // estimate has the memory fields alone (a search needs no time of what it drops; timing is most of
  // an estimate's cost).
  AnalyticalEstimate estimate_if_fits(const workloads::Workload& w);

  const topology::Topology& topology() const { return topology_; }
  const AnalyticalOptions& options() const { return options_; }

 private:
  AnalyticalEstimate estimate(const workloads::Workload& w, bool time_what_does_not_fit);
  // Seconds of one GEMM op (the shape model is a third of an estimate's time, and every layer and
  // micro-batch repeats the same few shapes), by shape, transposes, dtype and kernel efficiency.
  double gemm_seconds(const CostModel& cost, const workloads::Op& op);

  const topology::Topology& topology_;
  AnalyticalOptions options_;
  std::unique_ptr<CollectiveTimes> collectives_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int, int, double>, double> gemm_seconds_;
};

// One estimate (a model built for it).
AnalyticalEstimate estimate(const workloads::Workload& w, const topology::Topology& topology,
                            const AnalyticalOptions& options = {});

}  // namespace paratwin::sim
