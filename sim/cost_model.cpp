#include "sim/cost_model.hpp"

#include <algorithm>

namespace paratwin::sim {

namespace {

const char* dtype_key(workloads::Dtype d) {
  return workloads::to_string(d);
}

}  // namespace

CostModel::CostModel(const topology::Machine& machine, const workloads::Framework& f) : CostModel(machine, 1.0) {
  gemm_efficiency_ = f.kernel_efficiency;
  attention_efficiency_ = f.attention_efficiency;
  elementwise_efficiency_ = f.elementwise_efficiency;
  optimizer_efficiency_ = f.optimizer_efficiency;
}

double CostModel::efficiency(const workloads::Op& op) const {
  if (workloads::is_attention_kernel(op)) return attention_efficiency_;
  switch (op.kind) {
    case workloads::OpKind::gemm:
      return gemm_efficiency_;
    case workloads::OpKind::optimizer:
      return optimizer_efficiency_;
    default:
      return elementwise_efficiency_;
  }
}

CostModel::CostModel(const topology::Machine& machine, double kernel_efficiency)
    : machine_(machine),
      gemm_efficiency_(kernel_efficiency),
      attention_efficiency_(kernel_efficiency),
      elementwise_efficiency_(kernel_efficiency),
      optimizer_efficiency_(kernel_efficiency) {
  for (const char* dtype : {"bf16", "fp16", "fp32", "tf32", "fp64"})
    if (machine.node.device.peak_flops.count(dtype)) {
      host_speed_ = machine.node.device.peak_flops.at(dtype);
      break;
    }
  for (const auto dtype :
       {workloads::Dtype::bf16, workloads::Dtype::fp16, workloads::Dtype::fp32, workloads::Dtype::fp8}) {
    gemm_devices_[static_cast<size_t>(dtype)] = topology::gemm_device(
        machine.node.device, peak_flops(dtype), machine.node.device.hbm_bandwidth, workloads::bytes_of(dtype));
    if (const auto it = machine.profile.gemm.find(dtype_key(dtype)); it != machine.profile.gemm.end())
      gemm_models_[static_cast<size_t>(dtype)] = it->second;
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

topology::GemmTiming CostModel::gemm_timing(const workloads::Op& op) const {
  const auto d = static_cast<size_t>(op.dtype);
  return topology::gemm_timing({op.gemm.m, op.gemm.n, op.gemm.k, op.gemm.batch}, gemm_devices_[d], gemm_models_[d]);
}

double CostModel::compute_seconds(const workloads::Op& op) const {
  using workloads::OpKind;
  if (op.host_seconds > 0) return op.host_seconds;  // the stack's host work, not a kernel
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
      // A batched GEMM (attention's per-head products) is one kernel whose batch entries share the waves.
      const auto timing = gemm_timing(op);
      return timing.seconds / efficiency(op) + launch;
    }
    case OpKind::elementwise:
    case OpKind::optimizer:
      return std::max(op.bytes / device.hbm_bandwidth, op.flops / peak_flops(workloads::Dtype::fp32)) / efficiency(op) +
             launch;
    case OpKind::host_transfer:
      return op.bytes / host_link_ + launch;
    default:
      return 0;
  }
}

}  // namespace paratwin::sim
