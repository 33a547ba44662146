#include "sim/cost_model.hpp"

#include <algorithm>

namespace paratwin::sim {

namespace {

const char* dtype_key(workloads::Dtype d) {
  return workloads::to_string(d);
}

}  // namespace

CostModel::CostModel(const topology::Machine& machine) : machine_(machine) {
  for (const char* dtype : {"bf16", "fp16", "fp32", "tf32", "fp64"})
    if (machine.node.device.peak_flops.count(dtype)) {
      host_speed_ = machine.node.device.peak_flops.at(dtype);
      break;
    }
  // Host copies use the device's link to a CPU router when the node graph has one.
  host_link_ = machine.node.device.hbm_bandwidth;
  for (const auto& l : machine.node.links)
    if ((l.a == "gpu0" && l.b.rfind("cpu", 0) == 0) || (l.b == "gpu0" && l.a.rfind("cpu", 0) == 0))
      host_link_ = l.bandwidth;
}

double CostModel::peak_flops(workloads::Dtype dtype) const {
  const auto& peaks = machine_.node.device.peak_flops;
  if (auto it = peaks.find(dtype_key(dtype)); it != peaks.end()) return it->second;
  // A 16-bit dtype the device does not list runs at the other 16-bit rate, else at fp32.
  for (const char* fallback : {"bf16", "fp16", "fp32"})
    if (auto it = peaks.find(fallback); it != peaks.end()) return it->second;
  return peaks.begin()->second;
}

double CostModel::compute_seconds(const workloads::Op& op) const {
  using workloads::OpKind;
  const double launch = machine_.profile.launch_overhead;
  const auto& device = machine_.node.device;
  switch (op.kind) {
    case OpKind::gemm: {
      if (const auto table = machine_.profile.gemm_seconds.find(dtype_key(op.dtype));
          table != machine_.profile.gemm_seconds.end()) {
        const auto& g = op.gemm;
        const auto it = table->second.find({g.m, g.n, g.k, g.batch, g.trans_a ? 1 : 0, g.trans_b ? 1 : 0});
        if (it != table->second.end()) return it->second;  // measured whole: launch included
      }
      const double peak = peak_flops(op.dtype);
      auto it = machine_.profile.gemm.find(dtype_key(op.dtype));
      // A batched GEMM (attention's per-head products) is one kernel that fills the device with its whole
      // batch: its efficiency follows the FLOPs of the whole op, not of one product.
      const double eff = it != machine_.profile.gemm.end() ? it->second.efficiency(op.flops) : 1.0;
      return op.flops / (peak * std::max(eff, 1e-6)) + launch;
    }
    case OpKind::elementwise:
    case OpKind::optimizer:
      return std::max(op.bytes / device.hbm_bandwidth, op.flops / peak_flops(workloads::Dtype::fp32)) + launch;
    case OpKind::host_transfer:
      return op.bytes / host_link_ + launch;
    default:
      return 0;
  }
}

}  // namespace paratwin::sim
