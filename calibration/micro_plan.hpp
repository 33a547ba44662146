#pragma once
// The micro-benchmarks as one Program (GEMMs of many shapes, element-wise sweeps, every collective kind
// over message sizes and group sizes, GEMMs with a collective in flight, point-to-point messages) and the
// profile fitted to their times. Building and fitting need no MPI; micro.hpp runs the plan.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topology/machine.hpp"
#include "workloads/program.hpp"

namespace paratwin::calibration {

struct MicroOptions {
  bool quick = false;  // fewer and smaller sizes (tests)
  int repeats = 5;     // each op; the median counts
  // GEMM shapes to time one by one besides the sweep (the shapes of the workloads to be predicted):
  // the profile lists their seconds, which the simulator uses for exactly these shapes.
  std::vector<workloads::GemmShape> shapes;
};

// Appends the GEMM shapes of a Program (every role's) that `shapes` does not hold yet.
void add_gemm_shapes(const workloads::Program& program, std::vector<workloads::GemmShape>& shapes);

// A layer's GEMMs back to back: the lead-in GEMM this many times, alone and with a collective in flight.
constexpr int kLayerGemms = 8;

// One role's ops, in this order: [first_shape, first_sweep_gemm) the workloads' GEMM shapes, then the
// GEMM sweep, element-wise sweeps and collectives up to `flush` (a 64 MB sweep that evicts the caches),
// `lead_in` (a GEMM of a layer's size), and from `first_interference` the collectives started before a
// layer's GEMMs. Messages are timed outside the Program, at `message_sizes`.
struct MicroPlan {
  workloads::Program program;
  bool gpu = false;  // fp32 and bf16 GEMMs, larger sizes
  uint32_t first_shape = 0, first_sweep_gemm = 0, flush = 0, lead_in = 0, first_interference = 0;
  std::vector<double> message_sizes;
};

MicroPlan plan_micro(int ranks, bool gpu, const MicroOptions& options);

// A layer's GEMMs alone and with the collective `collective` (an op of the plan) in flight.
struct Interference {
  uint32_t collective = 0;
  double alone = 0, shared = 0;      // the GEMMs' seconds
  double collective_in_compute = 0;  // the collective's seconds while the GEMMs run
};

// What a run of the plan measured: the median seconds of every op before `flush` (slowest rank for
// compute, fastest for a collective), the interference pairs, and the messages' seconds (empty without
// rank pairs).
struct MicroTimes {
  std::vector<double> seconds;
  std::vector<Interference> interference;
  std::vector<double> message_seconds;
};

// The profile: raw measurements, fitted parameters (launch overhead, memory bandwidth, the GEMM model
// and the workloads' shapes, per-kind collective costs and link bandwidth, message costs, the compute
// core's cost of communication) and fit errors.
nlohmann::json fit_micro(const MicroPlan& plan, const MicroTimes& times, const topology::Machine& machine,
                         const std::string& backend, int ranks);

}  // namespace paratwin::calibration
