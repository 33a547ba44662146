#pragma once
// How long a compute op takes on one device of a machine: GEMMs at the profile's efficiency for
// their size (seed 002 §5.2.3's measured peaks as the ceiling), bandwidth-bound work at HBM speed,
// plus the per-kernel launch overhead.
#include "topology/machine.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

class CostModel {
 public:
  explicit CostModel(const topology::Machine& machine);
  // Seconds for a compute op (gemm, elementwise, optimizer, host_transfer); 0 for memory events.
  double compute_seconds(const workloads::Op& op) const;
  // Peak FLOP/s of the dtype (the nearest available when the device lists no such dtype).
  double peak_flops(workloads::Dtype dtype) const;
  double host_speed() const { return host_speed_; }
  const topology::Machine& machine() const { return machine_; }

 private:
  const topology::Machine& machine_;
  double host_speed_ = 0;
  double host_link_ = 0;  // device <-> host copies (bytes/s)
};

}  // namespace paratwin::sim
