// A calibrated library's costs: per collective kind a step cost and a cost per byte moved
// instead of the profile's one step cost; an extra step cost while the rank computes; GEMM shapes
// timed one by one priced at their measured seconds.
#include <gtest/gtest.h>

#include "sim/collectives.hpp"
#include "sim/cost_model.hpp"
#include "topology/machine.hpp"
#include "workloads/workload.hpp"

namespace pw = paratwin::workloads;
namespace ps = paratwin::sim;

TEST(StepCosts, PerKindStepAndBytesReplaceTheProfileStep) {
  auto machine = paratwin::topology::resolve_machine("localhost");
  machine.profile.collective_step = 10e-6;
  machine.profile.collective_costs["all_gather"] = {30e-6, 2e-9};
  machine.profile.overlapped_step_extra = 100e-6;
  const auto costs = ps::StepCosts::of(machine, "nccl");
  ps::Step step;
  step.sends = {{1, 1000}};
  step.recvs = {{1, 4000}};
  // all-gather: its own step cost plus 2 ns for each of the 4000 bytes (the larger direction).
  EXPECT_NEAR(costs.after_transfers(step, 0, pw::OpKind::all_gather), 30e-6 + 8e-6, 1e-15);
  EXPECT_NEAR(costs.after_transfers(step, 0, pw::OpKind::all_gather, true), 130e-6 + 8e-6, 1e-15);
  // all-reduce: no cost of its own, the profile's step.
  EXPECT_NEAR(costs.after_transfers(step, 0, pw::OpKind::all_reduce), 10e-6, 1e-15);
  EXPECT_NEAR(costs.after_transfers(step, 0, pw::OpKind::all_reduce, true), 110e-6, 1e-15);
}

TEST(CostModel, MeasuredGemmShapesAreTakenAsMeasured) {
  auto machine = paratwin::topology::resolve_machine("localhost");
  machine.profile.gemm_seconds["fp32"][{256, 1024, 256, 1, 0, 1}] = 1.5e-3;
  const ps::CostModel model(machine);
  pw::Op op;
  op.kind = pw::OpKind::gemm;
  op.dtype = pw::Dtype::fp32;
  op.gemm = {256, 1024, 256, 1, false, true};
  op.flops = 2.0 * 256 * 1024 * 256;
  EXPECT_DOUBLE_EQ(model.compute_seconds(op), 1.5e-3);
  op.gemm.trans_b = false;  // another shape: the GEMM model
  EXPECT_DOUBLE_EQ(model.compute_seconds(op), model.gemm_timing(op).seconds + machine.profile.launch_overhead);
  EXPECT_NE(model.compute_seconds(op), 1.5e-3);
  op.dtype = pw::Dtype::bf16;  // measured in fp32 only
  op.gemm.trans_b = true;
  EXPECT_NE(model.compute_seconds(op), 1.5e-3);
}

// A batched GEMM (attention's per-head products) is one kernel: its entries' tiles share the waves, so
// 128 products of 2048×2048×128 cost far less than 128 kernels of one product each (each of which
// fills barely more than one wave of Perlmutter's 108 SMs), and no less than the FLOPs at peak.
TEST(CostModel, ABatchedGemmSharesItsWaves) {
  const auto machine = paratwin::topology::resolve_machine("perlmutter");
  const ps::CostModel model(machine);
  pw::Op batched;
  batched.kind = pw::OpKind::gemm;
  batched.dtype = pw::Dtype::bf16;
  batched.gemm = {2048, 2048, 128, 128, false, true};
  batched.flops = 2.0 * 2048 * 2048 * 128 * 128;
  pw::Op one = batched;
  one.gemm.batch = 1;
  one.flops /= 128;
  EXPECT_LT(model.compute_seconds(batched), 0.8 * 128 * model.compute_seconds(one));
  EXPECT_GT(model.gemm_timing(batched).seconds, batched.flops / 312e12);
  EXPECT_LT(model.gemm_timing(batched).waves, 128 * model.gemm_timing(one).waves);
}

// The framework profile's kernel_efficiency stretches every kernel (GEMM and memory-bound) but not
// the launch overhead, and a workload's framework reaches the program the simulator runs.
TEST(CostModel, FrameworkKernelEfficiencyStretchesKernels) {
  const auto machine = paratwin::topology::resolve_machine("selene");
  const ps::CostModel full(machine), stack(machine, 0.8);
  pw::Op gemm;
  gemm.kind = pw::OpKind::gemm;
  gemm.dtype = pw::Dtype::fp16;
  gemm.gemm = {4096, 4096, 4096, 1, false, false};
  gemm.flops = 2.0 * 4096 * 4096 * 4096;
  pw::Op softmax;
  softmax.kind = pw::OpKind::elementwise;
  softmax.bytes = 3e9;
  softmax.flops = 5e8;
  const double launch = machine.profile.launch_overhead;
  for (const auto& op : {gemm, softmax})
    EXPECT_NEAR(stack.compute_seconds(op) - launch, (full.compute_seconds(op) - launch) / 0.8, 1e-12);
  const auto w = pw::load_workload_file(std::string(PARATWIN_EXAMPLES_DIR) + "/gpt-1.7b-selene-32.json");
  EXPECT_EQ(w.framework.profile, "megatron-lm-2021");
  EXPECT_LT(w.framework.kernel_efficiency, 1.0);
  EXPECT_EQ(pw::builtin_framework("generic").kernel_efficiency, 1.0);
}

// NVLink ports run at the library's achievable share (NCCL rates an A100 NVLink at 20 of 25 GB/s);
// host and NIC links keep theirs.
TEST(Topology, DeviceLinksCarryTheLibraryShare) {
  const auto machine = paratwin::topology::resolve_machine("selene");
  EXPECT_DOUBLE_EQ(machine.profile.device_link_efficiency, 0.8);
}

// By op class: the attention core's kernels ("attn.*") take the stack's attention efficiency, other
// GEMMs its GEMM efficiency, element-wise kernels theirs.
TEST(CostModel, KernelEfficiencyByOpClass) {
  const auto machine = paratwin::topology::resolve_machine("selene");
  pw::Framework f;
  f.kernel_efficiency = 0.8;
  f.attention_efficiency = 0.5;
  f.elementwise_efficiency = 0.4;
  f.optimizer_efficiency = 0.9;
  const ps::CostModel full(machine), stack(machine, f);
  pw::Op gemm;
  gemm.kind = pw::OpKind::gemm;
  gemm.dtype = pw::Dtype::fp16;
  gemm.gemm = {4096, 4096, 4096, 1, false, false};
  gemm.flops = 2.0 * 4096 * 4096 * 4096;
  gemm.name = "fc1";
  pw::Op score = gemm;
  score.name = "attn.score";
  pw::Op softmax;
  softmax.kind = pw::OpKind::elementwise;
  softmax.bytes = 3e9;
  softmax.name = "ln1";
  pw::Op adam = softmax;
  adam.kind = pw::OpKind::optimizer;
  adam.name = "adam";
  const double launch = machine.profile.launch_overhead;
  auto stretch = [&](const pw::Op& op) {
    return (stack.compute_seconds(op) - launch) / (full.compute_seconds(op) - launch);
  };
  EXPECT_NEAR(stretch(gemm), 1 / 0.8, 1e-9);
  EXPECT_NEAR(stretch(score), 1 / 0.5, 1e-9);
  EXPECT_NEAR(stretch(softmax), 1 / 0.4, 1e-9);
  EXPECT_NEAR(stretch(adam), 1 / 0.9, 1e-9);
  // Host work of the stack takes its own seconds, not a kernel's.
  pw::Op hook = softmax;
  hook.host_seconds = 2e-4;
  EXPECT_EQ(stack.compute_seconds(hook), 2e-4);
}
