#pragma once
// How long a compute op takes on one device of a machine: GEMMs by the shape model of
// topology/gemm_model.hpp (tiles, waves, operand reuse, memory bound) with the profile's parameters,
// unless the profile measured the shape itself; bandwidth-bound work at HBM speed; plus the per-kernel
// launch overhead.
#include <array>

#include "topology/machine.hpp"
#include "workloads/program.hpp"

namespace paratwin::sim {

class CostModel {
 public:
  // `kernel_efficiency`: the software stack's fraction of the modelled kernel rate, every op class.
  explicit CostModel(const topology::Machine& machine, double kernel_efficiency = 1.0);
  // The stack's efficiency by op class (GEMMs, attention core, element-wise, optimizer).
  CostModel(const topology::Machine& machine, const workloads::Framework& framework);
  // The stack's fraction of the modelled rate for this op's class.
  double efficiency(const workloads::Op& op) const;
  // Seconds for a compute op (gemm, elementwise, optimizer, host_transfer); 0 for memory events.
  double compute_seconds(const workloads::Op& op) const;
  // The GEMM model's timing of a gemm op (kernel only, no launch): the tile and waves it chose.
  topology::GemmTiming gemm_timing(const workloads::Op& op) const;
  // Peak FLOP/s of the dtype (the nearest available when the device lists no such dtype).
  double peak_flops(workloads::Dtype dtype) const;
  double host_speed() const { return host_speed_; }
  const topology::Machine& machine() const { return machine_; }

 private:
  const topology::Machine& machine_;
  double host_speed_ = 0;
  double gemm_efficiency_ = 1.0, attention_efficiency_ = 1.0, elementwise_efficiency_ = 1.0,
         optimizer_efficiency_ = 1.0;
  double host_link_ = 0;                                               // device <-> host copies (bytes/s)
  std::array<topology::GemmDevice, workloads::kDtypes> gemm_devices_;  // by workloads::Dtype
  std::array<topology::GemmModel, workloads::kDtypes> gemm_models_;
};

}  // namespace paratwin::sim
